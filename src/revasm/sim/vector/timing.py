"""The operand-dependent cycles of unit calls, on lanes: ``isa/timing``'s timers vectorized.

A step whose unit call takes cycles that depend on its operands (tan, atan2, exp, sinh,
cosh, tanh, sigmoid, log, pow, rot, irot; ``isa/timing/units.py``) adds them per lane, from the
registers the step does not write (``StepTiming.expression``, evaluated here with
``R`` the lanes' rows).  Each timer below makes the unit's choice of path
(``CallCosts``) with array operations on the words; tan's pole and pow's range are
decided in float64 first, and only the lanes that float64 cannot decide for certain
(an angle within 1e-3 of a pole, ``y ln x`` within a millionth of the limit: rare) take
the scalar timer of ``isa/timing``, so every lane's count is exact.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

from revasm.isa.timing import TIMER_PREFIX, call_costs, call_timer, fixed_call_cycles
from revasm.isa.timing.units import UNIT_CALLS

#: float64 decides tan's division where the angle is farther than this from a pole (its
#: error there is below 1e-6; the unit's own window is below 1e-5)
TAN_MARGIN = 1e-3
#: ... and pow's range where |y ln x| is farther than this fraction from its limit
POW_MARGIN = 1e-6


def _signed(row: Any, width: int, xp: Any) -> Any:
    """A uint64 row of W-bit words as int64 signed values."""
    words = xp.asarray(row).astype(xp.uint64)
    if width == 64:
        return words.view(xp.int64)
    sign = 1 << (width - 1)
    return (words.astype(xp.int64) ^ sign) - sign


def _scalar_fix(cycles: Any, undecided: Any, op: str, width: int, xp: Any,
                *rows: Any) -> Any:
    """``cycles`` with the lanes of ``undecided`` timed by the scalar timer."""
    lanes = xp.nonzero(undecided)[0]
    if len(lanes):
        timer = call_timer(op, width)
        cycles = xp.asarray(cycles, dtype=xp.int64).copy()
        words = [xp.asarray(row).astype(xp.uint64) for row in rows]
        for lane in lanes.tolist():
            cycles[lane] = timer(*(int(w[lane]) for w in words))
    return cycles


@cache
def _timers(width: int, xp: Any) -> dict[str, Callable[..., Any]]:
    k = call_costs(width)
    frac = float(1 << (width // 2))
    half_pi = math.pi / 2
    shift = k.k_shift  # exp's k from |x| << G: |x| * 2**(K - F)
    timers: dict[str, Callable[..., Any]] = {}

    def tan(x: Any) -> Any:
        sx = _signed(x, width, xp)
        angle = xp.abs(sx.astype(xp.float64)) / frac
        q = xp.floor(angle / half_pi + 0.5)
        r = angle - q * half_pi
        undecided = (q % 2 == 1) & (xp.abs(r) < TAN_MARGIN)
        cycles = xp.full(sx.shape, k.sincos + k.tan_division, dtype=xp.int64)
        return _scalar_fix(cycles, undecided, "fn_tan", width, xp, x)

    def atan2(x: Any, y: Any) -> Any:
        mask = (1 << width) - 1
        zero = ((xp.asarray(x).astype(xp.uint64) | xp.asarray(y).astype(xp.uint64))
                & xp.uint64(mask)) == 0
        return xp.where(zero, k.atan2_zero, k.atan).astype(xp.int64)

    def exponential(x: Any) -> Any:
        sx = _signed(x, width, xp)
        inside = (sx > -k.exp_limit) & (sx < k.exp_limit)
        return xp.where(inside, k.exponential, k.begin).astype(xp.int64)

    def tanh(x: Any) -> Any:
        sx = _signed(x, width, xp)
        inside = (sx > -k.tanh_limit) & (sx < k.tanh_limit)
        ax = xp.where(inside, xp.abs(xp.where(inside, sx, 0)), 0)
        scaled = ax << shift if shift >= 0 else ax >> -shift
        exp_k = (scaled * k.inv_ln2_k + (1 << (2 * k.k_bits - 1))) >> (2 * k.k_bits)
        full = k.exponential + xp.where(exp_k < k.tanh_k_limit, k.tanh_division, 0)
        return xp.where(inside, full, k.begin).astype(xp.int64)

    def sigmoid(x: Any) -> Any:
        sx = _signed(x, width, xp)
        inside = (sx > -k.sigmoid_limit) & (sx < k.sigmoid_limit)
        return xp.where(inside, k.exponential + k.sigmoid_division, k.begin).astype(xp.int64)

    def logarithm(sx: Any) -> Any:
        # x > 0: the mantissa is exactly one when x (at W - 1 bits: x >> 1) is a power of 2
        y = xp.where(sx >= (1 << (width - 2)), sx >> 1, sx)
        exact = (y & (y - 1)) == 0
        return xp.where(exact, k.log_exact, k.log).astype(xp.int64)

    def log(x: Any) -> Any:
        return logarithm(_signed(x, width, xp))

    def power(x: Any, y: Any) -> Any:
        sx, sy = _signed(x, width, xp), _signed(y, width, xp)
        positive = sx > 0
        real_x = xp.where(positive, sx, 1).astype(xp.float64) / frac
        z = xp.abs(sy.astype(xp.float64) / frac * xp.log(real_x))
        limit = width + 2.0
        inside = z < limit
        undecided = positive & (xp.abs(z - limit) <= POW_MARGIN * limit)
        cycles = (logarithm(xp.where(positive, sx, 1)) + k.pow_extra
                  + xp.where(inside, k.exponential - k.begin, 0))
        cycles = xp.where(positive, cycles, k.begin).astype(xp.int64)
        return _scalar_fix(cycles, undecided, "fn_pow", width, xp, x, y)

    def rotation(op: str) -> Callable[[Any], Any]:
        negation = k.negation[op]

        def rotate(theta: Any) -> Any:
            s = _signed(theta, width, xp)
            reduced = (s > k.half_pi) | (s < -k.half_pi)
            # beyond pi/2: the span past it (wrapping only in lanes it does not choose)
            span = xp.where(s > 0, s - k.half_pi, -k.half_pi - s)
            odd = reduced & ((-((-span) // k.pi)) % 2 == 1)
            return (k.rotation + xp.where(reduced, k.reduction, 0)
                    + xp.where(odd, negation, 0)).astype(xp.int64)
        return rotate

    timers.update(fn_tan=tan, fn_atan2=atan2, fn_exp=exponential, fn_sinh=exponential,
                  fn_cosh=exponential, fn_tanh=tanh, fn_sigmoid=sigmoid, fn_log=log,
                  fn_pow=power,
                  rot=rotation("rot"), irot=rotation("irot"))
    return timers


def lane_timer_names(width: int, xp: Any) -> dict[str, Callable[..., Any]]:
    """The names ``StepTiming.expression`` calls, bound to timers over lane rows."""
    timers = _timers(width, xp)
    names = {f"{TIMER_PREFIX}{op}": timers[op] for op in UNIT_CALLS
             if fixed_call_cycles(op, width) is None}
    if len(names) != len(timers):  # pragma: no cover - a new timed operation
        raise RuntimeError("isa/timing times an operation the vector engine has no timer for")
    return names
