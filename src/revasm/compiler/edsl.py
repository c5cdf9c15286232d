"""The names a ``@reversible`` Python file imports: markers, never executed.

The compiler reads the function's source with :mod:`ast`; these objects only
make the file importable and let Python tools resolve the names.  Calling a
reversible function directly is an error that says how to run it instead.

``reversible`` and the handle it returns (``ReversibleFunction``, which
compiles and runs itself) live in ``compiler/api.py`` next to the calls they
make, and are re-exported here: the API reads no marker, so the import goes
one way (edsl -> api).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .api import ReversibleFunction, reversible  # noqa: F401 - re-exported


class _Type:
    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, item: Any) -> _Type:
        return self

    def __repr__(self) -> str:
        return self.name


#: Scalar types: a fixed-point real (Q16.16 / Q32.32) or a raw integer.  ``Int[1, 20]``,
#: ``Fixed[-1, 1]`` (and ``Array[Fixed[-1, 1], 4]``) give an input a domain, the values
#: ``revasm check --random`` draws (both ends included).
Fixed = _Type("Fixed")
Int = _Type("Int")
#: ``Array[Fixed, 4]``, ``Array[Fixed, 3, 3]``: a fixed-size array in data memory.
Array = _Type("Array")
#: A parameter that is the loss (``.loss``) or an output (``.output``) of the entry function.
Loss = _Type("Loss")
Out = _Type("Out")


def _marker(name: str) -> Callable[..., Any]:
    def marker(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{name}() only has a meaning inside a @reversible function")
    marker.__name__ = name
    return marker


ancilla = _marker("ancilla")
free = _marker("free")
SWAP = _marker("SWAP")
ROT = _marker("ROT")
IROT = _marker("IROT")
sq = _marker("sq")
routine = _marker("routine")
inverse = _marker("inverse")


def exactly(value: Any) -> Any:
    """``x: Array[Int, 5] = exactly(X0)``: the default is the only value of x's domain
    (evaluated as a Python default when the file is imported: it returns ``value``)."""
    return value

# Elementary functions (the table's function families, plus sq): markers too.
sin = _marker("sin")
cos = _marker("cos")
tan = _marker("tan")
tanh = _marker("tanh")
exp = _marker("exp")
log = _marker("log")
sqrt = _marker("sqrt")
atan = _marker("atan")
sinh = _marker("sinh")
cosh = _marker("cosh")
atan2 = _marker("atan2")
