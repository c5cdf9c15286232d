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
from .functions.circular import fx_atan, fx_atan2, fx_cos, fx_sin, fx_tan, sincos_abs
from .functions.cordic import MIN_WIDTH, TABLES, Tables, tables
from .functions.errors import DivideByZero, DomainError
from .functions.exp_log import exp_k, fx_exp, fx_log, fx_pow, ln_p
from .functions.hyperbolic import fx_cosh, fx_sinh, fx_tanh
from .functions.square_root import fx_sqrt
from .primitives import PRIMITIVES
from .rotation import pi_raw

#: The elementary functions by name (``sin``), on signed raw integers: ``f(x, fmt)``.
#: Derived from the primitives table (``isa/primitives.py``), whose rows hold the
#: algorithms, their error bounds and their faults.
FUNCTIONS: dict[str, Callable[[int, WordFormat], int]] = {}
#: The two-operand ones: ``f(x, y, fmt)``.
BINARY_FUNCTIONS: dict[str, Callable[[int, int, WordFormat], int]] = {}
# How ERROR_BOUND_ULP is measured (see docs/elementary.md):
#   "abs":   |result - f(x) * 2**F|                      (units of 2**-F)
#   "mixed": |result - f(x) * 2**F| / max(1, |f(x)|)     (absolute below 1, relative above)
ERROR_METRIC: dict[str, str] = {}
# Documented maximum error, in the unit of ERROR_METRIC, for every representable
# input (results that saturate are compared with the saturated value).  Measured
# with ``python tests/isa/test_elementary.py --points 200000`` (and an exhaustive
# sweep of pow's worst region, x within 2700 ulp of 1); see docs/elementary.md.
ERROR_BOUND_ULP: dict[tuple[str, int], float] = {}
for _row in PRIMITIVES:
    if _row.error is None:
        continue
    _name = _row.name.removeprefix("fn_")
    if _row.algorithm is None:
        raise ValueError(f"{_row.name} has an error bound but no algorithm")
    if _row.arity == 1:
        FUNCTIONS[_name] = _row.algorithm
    else:
        BINARY_FUNCTIONS[_name] = _row.algorithm
    ERROR_METRIC[_name] = _row.error.metric
    ERROR_BOUND_ULP.update({(_name, width): ulp for width, ulp in _row.error.ulp.items()})


__all__ = ["BINARY_FUNCTIONS", "ERROR_BOUND_ULP", "ERROR_METRIC", "FUNCTIONS", "MIN_WIDTH",
           "TABLES", "DivideByZero", "DomainError", "Tables", "exp_k", "fx_abs", "fx_atan",
           "fx_atan2", "fx_cos", "fx_cosh", "fx_div", "fx_exp", "fx_log", "fx_mul", "fx_pow",
           "fx_sin", "fx_sinh", "fx_sqrt", "fx_tan", "fx_tanh", "ln_p", "pi_raw", "sincos_abs",
           "tables"]
# TABLES (the per-width constants), Tables, sincos_abs, ln_p, exp_k and pi_raw are public
# for the engines that mirror the data path step for step: the vector and compiled
# engines and the RTL function unit (and its timing model).
