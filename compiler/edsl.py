"""The names a ``@reversible`` Python file imports: markers, never executed.

The compiler reads the function's source with :mod:`ast`; these objects only
make the file importable and let Python tools resolve the names.  Calling a
reversible function directly is an error that says how to run it instead.
"""
from __future__ import annotations

import inspect
from typing import Any


class ReversibleFunction:
    """What ``@reversible`` returns: the function's file and name, for the compiler."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self.source_file = inspect.getsourcefile(function) or "<unknown>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.__name__} is a reversible program, not a Python function: "
                        f"run it with revasm.compiler.run({self.__name__}, ...)")

    def __invert__(self) -> Any:  # ``~f(...)`` only means something to the compiler
        return self

    def compile(self, **options: Any):
        from .api import compile_function
        return compile_function(self, **options)

    def run(self, inputs: dict | None = None, **options: Any):
        from .api import run
        return run(self, inputs or {}, **options)


def reversible(function: Any) -> ReversibleFunction:
    """Mark a function as a reversible program for ``revasm compile``."""
    return ReversibleFunction(function)


class _Type:
    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, item: Any) -> "_Type":
        return self

    def __repr__(self) -> str:
        return self.name


#: Scalar types: a fixed-point real (Q16.16 / Q32.32) or a raw integer.
Fixed = _Type("Fixed")
Int = _Type("Int")
#: ``Array[Fixed, 4]``, ``Array[Fixed, 3, 3]``: a fixed-size array in data memory.
Array = _Type("Array")
#: A parameter that is the loss (``.loss``) or an output (``.output``) of the entry function.
Loss = _Type("Loss")
Out = _Type("Out")


def _marker(name: str):
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
