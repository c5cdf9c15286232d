"""sinh, cosh and tanh from one hyperbolic CORDIC run (Walther 1971).

With ``|x| = k ln2 + r`` (the split of ``isa/functions/exp_log.py``),
``e**|x| = 2**k e**r`` and ``e**-|x| = 2**k (e**-r 4**-k)`` share one scale,
so sinh and cosh are one subtraction or addition and tanh one division.
"""
from __future__ import annotations

from ..fixed_point import WordFormat
from .cordic import Tables, saturate, scale_round, tables
from .exp_log import exp_parts


def _hyperbolic_abs(ax: int, t: Tables) -> tuple[int, int, int]:
    """For ``ax >= 0`` at F bits: ``(k, e**r * 2**P, round(e**-r * 4**-k * 2**P))``.

    With ``|x| = k ln2 + r``: ``e**|x| = 2**k e**r`` and ``e**-|x| = 2**k (e**-r 4**-k)``,
    so both terms share the scale 2**k and every value fits P + 2 bits.
    """
    k, c, s = exp_parts(ax << t.guard, t)
    em = c - s
    sh = 2 * k
    return k, c + s, (em + (1 << (sh - 1))) >> sh if sh else em


def fx_sinh(x: int, fmt: WordFormat) -> int:
    """sinh(x) = 2**(k-1) (e**r - 4**-k e**-r) from one hyperbolic CORDIC run; saturates.

    Odd: ``sinh(-x) == -sinh(x)`` except where the result saturates.
    """
    t = tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.width + 2) << t.frac:
        v = t.max_signed + 1
    else:
        k, ep, em = _hyperbolic_abs(ax, t)
        if k > t.width - t.frac:
            v = t.max_signed + 1
        else:
            v = scale_round(ep - em, t.guard + 1 - k)
    return saturate(-v if x < 0 else v, t)


def fx_cosh(x: int, fmt: WordFormat) -> int:
    """cosh(x) = 2**(k-1) (e**r + 4**-k e**-r) from one hyperbolic CORDIC run; even; saturates."""
    t = tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.width + 2) << t.frac:
        return t.max_signed
    k, ep, em = _hyperbolic_abs(ax, t)
    if k > t.width - t.frac:
        return t.max_signed
    return min(scale_round(ep + em, t.guard + 1 - k), t.max_signed)


def fx_tanh(x: int, fmt: WordFormat) -> int:
    """tanh(x) = (e**r - 4**-k e**-r) / (e**r + 4**-k e**-r): one CORDIC run, one division; odd."""
    t = tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.frac + 4) << t.frac:  # tanh rounds to one long before |x| = F + 4
        v = t.one
    else:
        k, ep, em = _hyperbolic_abs(ax, t)
        if k >= t.frac // 2 + 2:  # 1 - tanh|x| < 2**-(F+2): rounds to one
            v = t.one
        else:
            num, den = ep - em, ep + em
            v = ((num << (t.frac + 1)) + den) // (2 * den)
    return -v if x < 0 else v


def fx_sigmoid(x: int, fmt: WordFormat) -> int:
    """The logistic sigmoid 1 / (1 + e**-x) from one hyperbolic CORDIC run and one division.

    With ``a = |x|/2 = k ln2 + r`` (the split of ``exp_log.exp_parts``, at P bits, so the
    halving is exact): ``e**a = 2**k e**r`` and ``e**-a = 2**k (e**-r 4**-k)``, so
    ``sigmoid(|x|) = e**r / (e**r + 4**-k e**-r)`` and ``sigmoid(-|x|) = 4**-k e**-r /
    (e**r + 4**-k e**-r)``: one rounding each (half up), never saturating (the result is
    in [0, 1]).  ``sigmoid(x) + sigmoid(-x)`` is 1 within one ulp.
    """
    t = tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.frac + 4) << (t.frac + 1):  # e**-|x| < 2**-(F+2): rounds to one / zero
        return t.one if x >= 0 else 0
    k, c, s = exp_parts(ax << (t.guard - 1), t)
    em, sh = c - s, 2 * k
    em = (em + (1 << (sh - 1))) >> sh if sh else em
    ep = c + s
    num = ep if x >= 0 else em
    return ((num << (t.frac + 1)) + ep + em) // (2 * (ep + em))
