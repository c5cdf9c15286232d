"""sin, cos, tan, atan and atan2: circular CORDIC (Volder 1959).

sin, cos, tan: quadrant reduction by pi/2 with a wide constant, then circular
CORDIC in rotation mode (tan adds one division).  atan, atan2: octant
reduction and circular CORDIC in vectoring mode.  Odd functions are computed
on ``|x|`` and negated, so they are exactly odd (except at saturation).
"""
from __future__ import annotations

from ..fixed_point import WordFormat
from .cordic import Tables, circular_rotate, circular_vector, round_p, saturate, tables


def sincos_abs(ax: int, t: Tables) -> tuple[int, int, int]:
    """Reduce ``ax >= 0`` by pi/2: returns (cos r, sin r) * 2**P and the quadrant q mod 4.

    ``q = round(ax * 2/pi)`` from a W-bit constant (any q within one of the
    nearest integer works: CORDIC converges for |r| <= 1.74), then
    ``r = ax - q * pi/2`` with pi/2 held to ``P + E`` bits, ``E = W - F + 4``,
    so the reduction error stays below 2**-(P+2) even for the largest ``ax``.
    """
    q = (ax * t.two_over_pi + (1 << (t.frac + t.width - 1))) >> (t.frac + t.width)
    extra = t.reduce_extra
    wide = (ax << (t.guard + extra)) - q * t.half_pi_wide
    r = (wide + (1 << (extra - 1))) >> extra
    c, s = circular_rotate(r, t)
    return c, s, q & 3


def fx_sin(x: int, fmt: WordFormat) -> int:
    """sin(x): reduction by pi/2 plus circular CORDIC; exactly odd (computed on |x|)."""
    t = tables(fmt)
    c, s, q = sincos_abs(-x if x < 0 else x, t)
    v = round_p((s, c, -s, -c)[q], t)
    return -v if x < 0 else v


def fx_cos(x: int, fmt: WordFormat) -> int:
    """cos(x): reduction by pi/2 plus circular CORDIC; exactly even."""
    t = tables(fmt)
    c, s, q = sincos_abs(-x if x < 0 else x, t)
    return round_p((c, -s, -c, s)[q], t)


def _div_round(num: int, den: int, scale: int, t: Tables) -> int:
    """round(num * 2**scale / den), ties away from zero, not saturated.

    ``den == 0`` (only possible within 2**-P of a pole of tan) gives a value just
    outside the format with the sign of ``num``, so that it saturates.
    """
    neg = (num < 0) != (den < 0)
    n = -num if num < 0 else num
    d = -den if den < 0 else den
    if d == 0:
        v = t.max_signed + 1
    else:
        v = ((n << (scale + 1)) + d) // (2 * d)
    return -v if neg else v


def fx_tan(x: int, fmt: WordFormat) -> int:
    """tan(x) = sin/cos from one CORDIC run and one division; saturates near the poles.

    Odd: ``tan(-x) == -tan(x)`` except where the result saturates.
    """
    t = tables(fmt)
    c, s, q = sincos_abs(-x if x < 0 else x, t)
    if q & 1:
        num, den = c, -s  # tan(r + pi/2) = -cot r
    else:
        num, den = s, c
    v = _div_round(num, den, t.frac, t)
    return saturate(-v if x < 0 else v, t)


def fx_atan2(y: int, x: int, fmt: WordFormat) -> int:
    """atan2(y, x) in (-pi, pi]; atan2(0, 0) = 0.

    Octant reduction on (|x|, |y|) (swap so the first is larger), normalisation of
    the larger to [1/4, 1/2) * 2**P by its leading-one position, circular CORDIC
    vectoring, then ``pi/2 - a``, ``pi - a`` and the sign of ``y`` put back, so that
    ``atan2(-y, x) == -atan2(y, x)`` exactly.
    """
    t = tables(fmt)
    ax = -x if x < 0 else x
    ay = -y if y < 0 else y
    swap = ay > ax
    big, small = (ay, ax) if swap else (ax, ay)
    if big == 0:
        return 0
    shift = t.prec - 1 - big.bit_length()
    if shift >= 0:
        big, small = big << shift, small << shift
    else:
        big, small = big >> -shift, small >> -shift
    a = circular_vector(big, small, t)
    if swap:
        a = t.half_pi_p - a
    if x < 0:
        a = t.pi_p - a
    v = round_p(a, t)
    return -v if y < 0 else v


def fx_atan(x: int, fmt: WordFormat) -> int:
    """atan(x) = atan2(x, 1) (circular CORDIC vectoring); exactly odd."""
    return fx_atan2(x, 1 << fmt.frac_bits, fmt)
