"""The operand-dependent cycles of unit calls as numba functions: ``isa/timing``'s timers.

A step whose unit call takes cycles that depend on its operands (tan, atan2, exp, sinh,
cosh, tanh, sigmoid, log, pow, rot, irot; ``isa/timing/units.py``) adds them to the lane's
``cycles`` right after its statements (``generate.py``, ``interpreter.py``), from the
registers the step does not write: ``cycles += cycles_fn_tan(r3, 32)`` (the width the
last argument, as the vocabulary's functions take it).  Each function
makes the unit's choice of path (``isa/timing.CallCosts``, its numbers baked in per
width) with the same integer tests as the unit: tan's denominator from the kernels' own
quadrant reduction and CORDIC (``vocab.sincos_reduce``), pow's range from ``y ln x`` as
``vocab.fx_pow`` forms it.  Exact for every word: ``tests/sim/compiled/test_timing.py``
compares them with the scalar timers over many words.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from revasm.isa.timing import TAN_POLE_WINDOW, call_costs

from .vocab import (
    JIT,
    I,
    S,
    U,
    circular_rotate,
    pow_exponent,
    sincos_reduce,
    w_lt,
    w_neg,
    w_shl,
)


def _costs(width: int) -> tuple[int, ...]:
    k = call_costs(width)
    return tuple(np.int64(v) for v in (
        k.begin, k.sincos, k.tan_division, k.atan, k.atan2_zero, k.exponential,
        k.tanh_division, k.log, k.log_exact, k.pow_extra, k.rotation, k.reduction,
        k.negation["rot"], k.negation["irot"], k.exp_limit, k.tanh_limit, k.tanh_k_limit,
        k.k_shift, k.inv_ln2_k, k.k_bits, k.pi, k.half_pi, width // 2, width,
        k.sigmoid_division, k.sigmoid_limit))


C32 = _costs(32)
C64 = _costs(64)
BEGIN, SINCOS, TAN_DIVISION, ATAN, ATAN2_ZERO, EXPONENTIAL, TANH_DIVISION, LOG, LOG_EXACT, \
    POW_EXTRA, ROTATION, REDUCTION, NEG_ROT, NEG_IROT, EXP_LIMIT, TANH_LIMIT, TANH_K_LIMIT, \
    K_SHIFT, INV_LN2_K, K_BITS, PI, HALF_PI, FRAC, WIDTH, SIGMOID_DIVISION, \
    SIGMOID_LIMIT = range(26)
WINDOW = np.int64(TAN_POLE_WINDOW)


@njit(**JIT)
def _c(width):
    return C32 if width == 32 else C64


@njit(**JIT)
def _signed(x, width):
    return S(x, width)


@njit(**JIT)
def tan_cycles(x, width):
    c = _c(width)
    sx = _signed(x, width)
    ax = U(0) - U(sx) if sx < 0 else U(sx)
    r, q = sincos_reduce(ax, width)
    divides = True
    if q & I(1) and -WINDOW < r < WINDOW:  # next to a pole: the CORDIC's sin r decides
        _x, s = circular_rotate(r, width)
        divides = s != 0
    return c[SINCOS] + (c[TAN_DIVISION] if divides else I(0))


@njit(**JIT)
def atan2_cycles(x, y, width):
    c = _c(width)
    mask = U((1 << 32) - 1) if width == 32 else U(0xFFFFFFFFFFFFFFFF)
    return c[ATAN] if (x | y) & mask != U(0) else c[ATAN2_ZERO]


@njit(**JIT)
def exponential_cycles(x, width):
    c = _c(width)
    sx = _signed(x, width)
    return c[EXPONENTIAL] if -c[EXP_LIMIT] < sx < c[EXP_LIMIT] else c[BEGIN]


@njit(**JIT)
def tanh_cycles(x, width):
    c = _c(width)
    sx = _signed(x, width)
    if not -c[TANH_LIMIT] < sx < c[TANH_LIMIT]:
        return c[BEGIN]
    ax = -sx if sx < 0 else sx
    scaled = ax << c[K_SHIFT] if c[K_SHIFT] >= 0 else ax >> -c[K_SHIFT]
    k = (scaled * c[INV_LN2_K] + (I(1) << (I(2) * c[K_BITS] - I(1)))) >> (I(2) * c[K_BITS])
    return c[EXPONENTIAL] + (c[TANH_DIVISION] if k < c[TANH_K_LIMIT] else I(0))


@njit(**JIT)
def sigmoid_cycles(x, width):
    """|x| / 2 below F + 4: the exponential routine and a division; else one or zero."""
    c = _c(width)
    sx = _signed(x, width)
    if -c[SIGMOID_LIMIT] < sx < c[SIGMOID_LIMIT]:
        return c[EXPONENTIAL] + c[SIGMOID_DIVISION]
    return c[BEGIN]


@njit(**JIT)
def _logarithm(sx, width):
    """The logarithm's cycles for sx > 0: no CORDIC when the normalised mantissa is one."""
    c = _c(width)
    y = sx >> I(1) if sx >= (I(1) << I(width - 2)) else sx
    return c[LOG_EXACT] if y & (y - I(1)) == I(0) else c[LOG]


@njit(**JIT)
def log_cycles(x, width):
    return _logarithm(_signed(x, width), width)


@njit(**JIT)
def pow_cycles(x, y, width):
    """pow of x >= 0: 0 ** y finishes in BEGIN; else the logarithm, the product y ln x,
    and exp of it when it is within exp's range (``vocab.fx_pow``'s z, clamped as there)."""
    c = _c(width)
    sx, sy = _signed(x, width), _signed(y, width)
    if sx <= 0:
        return c[BEGIN]
    cycles = _logarithm(sx, width) + c[POW_EXTRA]
    zh, zl = pow_exponent(sx, sy, width)
    # exp_from_p's range: -(W + 2) 2**P < z < (W + 2) 2**P
    lh2, ll2 = w_shl(I(0), U(width + 2), width - 2)
    nh, nl = w_neg(lh2, ll2)
    if w_lt(zh, zl, lh2, ll2) and w_lt(nh, nl, zh, zl):
        cycles += c[EXPONENTIAL] - c[BEGIN]
    return cycles


@njit(**JIT)
def rotation_cycles(theta, negation, width):
    c = _c(width)
    s = _signed(theta, width)
    cycles = c[ROTATION]
    if s > c[HALF_PI] or s < -c[HALF_PI]:
        span = s - c[HALF_PI] if s > 0 else -c[HALF_PI] - s
        turns = -((-span) // c[PI])
        cycles += c[REDUCTION]
        if turns & I(1):
            cycles += negation
    return cycles


# The names the translated timing expressions call (``TIMER_PREFIX`` + operation), the
# width their last argument.

@njit(**JIT)
def cycles_fn_tan(x, width):
    return tan_cycles(x, width)


@njit(**JIT)
def cycles_fn_atan2(x, y, width):
    return atan2_cycles(x, y, width)


@njit(**JIT)
def cycles_fn_exp(x, width):
    return exponential_cycles(x, width)


@njit(**JIT)
def cycles_fn_sinh(x, width):
    return exponential_cycles(x, width)


@njit(**JIT)
def cycles_fn_cosh(x, width):
    return exponential_cycles(x, width)


@njit(**JIT)
def cycles_fn_tanh(x, width):
    return tanh_cycles(x, width)


@njit(**JIT)
def cycles_fn_sigmoid(x, width):
    return sigmoid_cycles(x, width)


@njit(**JIT)
def cycles_fn_log(x, width):
    return log_cycles(x, width)


@njit(**JIT)
def cycles_fn_pow(x, y, width):
    return pow_cycles(x, y, width)


@njit(**JIT)
def cycles_rot(theta, width):
    return rotation_cycles(theta, _c(width)[NEG_ROT], width)


@njit(**JIT)
def cycles_irot(theta, width):
    return rotation_cycles(theta, _c(width)[NEG_IROT], width)


#: Every timer by its kernel name (the operations ``isa/timing`` times): what a kernel
#: module imports from here.
__all__ = sorted(name for name in dict(globals()) if name.startswith("cycles_"))
