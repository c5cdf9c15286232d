"""The compiler: NiLang's reversible IR, a Python front end, lowering to the ISA.

``@reversible`` Python functions (read with ``ast``, never executed) become the
IR of ``compiler/ir`` (statements with exact inverses), pass the static checks
of ``compiler/frontend/checks.py``, and are lowered by ``compiler/backend`` to
PAL assembly with a PC -> Python line source map.  docs/language.md is the
language; docs/abi.md the calling convention.  Running and differentiating what it
compiles is the Python API's job (``revasm.run_program``, ``revasm.grad_program``).
"""
from .api import CompiledProgram, compile_file, compile_function, compile_source
from .edsl import (
    IROT,
    ROT,
    SWAP,
    Array,
    Fixed,
    Int,
    Loss,
    Out,
    ancilla,
    atan,
    atan2,
    cos,
    cosh,
    exactly,
    exp,
    free,
    inverse,
    log,
    reversible,
    routine,
    sin,
    sinh,
    sq,
    sqrt,
    tan,
    tanh,
)
from .errors import CompileError, SourcePos

__all__ = ["Array", "CompileError", "CompiledProgram", "Fixed", "IROT", "Int", "Loss", "Out",
           "ROT", "SWAP", "SourcePos", "ancilla", "atan", "atan2", "compile_file",
           "compile_function", "compile_source", "cos", "cosh", "exactly", "exp", "free",
           "inverse", "log",
           "reversible", "routine", "sin", "sinh", "sq", "sqrt", "tan", "tanh"]
