"""Fixed-point elementary functions as exact integer algorithms.

Every engine (the reference simulator, the batched simulator and the RTL
function unit) must produce the same bits for ``d += f(s)``, so each function is
defined here once, on signed raw integers: a word ``x`` of a :class:`WordFormat`
with ``F = W/2`` fraction bits stands for the real ``x / 2**F``.

Algorithms (details, widths and measured error bounds: ``docs/elementary.md``;
the code: one module per family under ``isa/functions/``):

* sin, cos, tan -- quadrant reduction by pi/2 with a wide constant, then
  circular CORDIC in rotation mode (Volder 1959);
* atan, atan2 -- octant reduction and circular CORDIC in vectoring mode;
* exp, sinh, cosh, tanh -- reduction by ln 2 (``x = k ln2 + r``), then
  hyperbolic CORDIC in rotation mode giving ``cosh r`` and ``sinh r``
  (Walther 1971, "A unified algorithm for elementary functions");
* log -- normalisation by the leading-one position, then hyperbolic CORDIC in
  vectoring mode: ``ln m = 2 atanh((m-1)/(m+1))`` (Walther 1971);
* pow -- ``exp(y * ln x)`` with ``ln x`` kept at internal precision;
* sqrt -- digit-by-digit (shift-and-subtract) integer square root, rounded to
  nearest from its remainder;
* mul, div -- one rounded product / quotient.

Internally the CORDIC data path holds ``P = W - 2`` fraction bits, so every
CORDIC register fits a signed W-bit word (values stay in (-2, 2)), and the
result is rounded once to ``F`` bits.  Iteration counts are fixed per width.
Every CORDIC shift rounds to nearest, ``(v + 2**(i-1)) >> i`` (in hardware: the
last bit shifted out is the adder's carry-in); plain floor shifts bias the
result by about N/2 units of 2**-P, which showed up as 30-ulp errors of tan
next to its poles.

Final results are rounded once, half-up (``floor(v + 1/2)``); odd functions are
computed on ``|x|`` and negated, so they are exactly odd (except at saturation).
Results that do not fit the format saturate to ``fmt.max_signed`` /
``fmt.min_signed``.  No floats are used at run time; the constant tables are
computed once at import with :mod:`decimal` at 100 digits.
"""
from __future__ import annotations

from collections.abc import Callable

from .fixed_point import WordFormat
from .functions.arithmetic import fx_abs, fx_div, fx_mul
from .functions.circular import _sincos_abs, fx_atan, fx_atan2, fx_cos, fx_sin, fx_tan  # noqa: F401
from .functions.cordic import _TABLES  # noqa: F401
from .functions.errors import DivideByZero, DomainError
from .functions.exp_log import _ln_p, fx_exp, fx_log, fx_pow  # noqa: F401
from .functions.hyperbolic import fx_cosh, fx_sinh, fx_tanh
from .functions.square_root import fx_sqrt

FUNCTIONS: dict[str, Callable[[int, WordFormat], int]] = {
    "sin": fx_sin,
    "cos": fx_cos,
    "tan": fx_tan,
    "tanh": fx_tanh,
    "exp": fx_exp,
    "log": fx_log,
    "sqrt": fx_sqrt,
    "abs": fx_abs,
    "atan": fx_atan,
    "sinh": fx_sinh,
    "cosh": fx_cosh,
}

BINARY_FUNCTIONS: dict[str, Callable[[int, int, WordFormat], int]] = {
    "atan2": fx_atan2,
    "pow": fx_pow,
}

# How ERROR_BOUND_ULP is measured (see docs/elementary.md):
#   "abs":   |result - f(x) * 2**F|                      (units of 2**-F)
#   "mixed": |result - f(x) * 2**F| / max(1, |f(x)|)     (absolute below 1, relative above)
ERROR_METRIC: dict[str, str] = {
    "sin": "abs",
    "cos": "abs",
    "tan": "mixed",
    "tanh": "abs",
    "exp": "mixed",
    "log": "abs",
    "sqrt": "abs",
    "abs": "abs",
    "atan": "abs",
    "sinh": "mixed",
    "cosh": "mixed",
    "atan2": "abs",
    "pow": "mixed",
}

# Documented maximum error, in the unit of ERROR_METRIC, for every representable
# input (results that saturate are compared with the saturated value).  Measured
# with ``python tests/test_elementary.py --points 200000`` (and an exhaustive
# sweep of pow's worst region, x within 2700 ulp of 1); see docs/elementary.md.
# 0.5 is the final rounding; the rest is CORDIC error, scaled by 2**-G.
_CORRECTLY_ROUNDED = ("sqrt",)
_NEAR_HALF = ("sin", "cos", "tanh", "exp", "log", "atan", "sinh", "cosh", "atan2")
ERROR_BOUND_ULP: dict[tuple[str, int], float] = {
    **{(name, 32): 0.51 for name in _NEAR_HALF},
    **{(name, 64): 0.501 for name in _NEAR_HALF},
    **{(name, w): 0.5 for name in _CORRECTLY_ROUNDED for w in (32, 64)},
    ("abs", 32): 0.0,
    ("abs", 64): 0.0,
    # tan: 0.5 away from the poles; up to ~3 (relative) where |tan| nears 2**(W-1-F).
    ("tan", 32): 4.0,
    ("tan", 64): 4.0,
    # pow: 0.5 + |y| * e_ln * 2**-G with e_ln <= ~26 units of 2**-P, the error of the
    # internal ln x; reached only for x within a few ulp of 1 and |y| near 2**(W-1-F).
    ("pow", 32): 24.0,
    ("pow", 64): 48.0,
}


__all__ = ["BINARY_FUNCTIONS", "ERROR_BOUND_ULP", "ERROR_METRIC", "FUNCTIONS", "DivideByZero",
           "DomainError", "fx_abs", "fx_atan", "fx_atan2", "fx_cos", "fx_cosh", "fx_div", "fx_exp",
           "fx_log", "fx_mul", "fx_pow", "fx_sin", "fx_sinh", "fx_sqrt", "fx_tan", "fx_tanh"]
# Also importable from here for the vector engine and the RTL function unit, which
# mirror the data path step for step: _TABLES (the constants), _sincos_abs, _ln_p.
