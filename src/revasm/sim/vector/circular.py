"""sin, cos and tan at W = 32 on lanes: ``isa/elementary.py``'s own algorithm, vectorized.

Same steps, same constants (``elementary.TABLES``), same roundings: quadrant
reduction by pi/2 with the wide constant, circular CORDIC in rotation mode with
round-to-nearest shifts, one final half-up rounding.  At W = 32 every CORDIC
register fits ``int64``; the reduction ``ax 2**34 - q pi/2 2**50`` overflows
``int64`` in its terms but not in its value (|r| < 1.75), so it is computed with
wrapping arithmetic, exact modulo 2**64.  Bit-exactness is tested against the
scalar functions (tests/sim/vector/test_machine.py).
"""
from __future__ import annotations

from typing import Any

from revasm.isa import elementary

_T = elementary.TABLES[32]  # the one definition of the constants


def cordic(x: Any, y: Any, z: Any, steps: tuple, xp: Any, *, hyperbolic: bool = False,
           vectoring: bool = False) -> tuple[Any, Any, Any]:
    """``elementary``'s CORDIC iterations on int64 lanes (round-to-nearest shifts).

    Each step turns by d = +1 or -1: rotation mode takes d = sign z (drives z to 0),
    vectoring mode d = -sign y (drives y to 0); then x -= m d (y >> i), y += d (x >> i),
    z -= d a_i, with m = 1 (circular) or -1 (hyperbolic)."""
    for i, h, a in steps:
        turn = (y < 0) if vectoring else (z >= 0)  # d = +1
        dx = (y + h) >> i
        dy = (x + h) >> i
        x_less, x_more = (x + dx, x - dx) if hyperbolic else (x - dx, x + dx)
        x, y, z = (xp.where(turn, x_less, x_more), xp.where(turn, y + dy, y - dy),
                   xp.where(turn, z - a, z + a))
    return x, y, z


def _circular_rotate(z: Any, xp: Any) -> tuple[Any, Any]:
    x = xp.full(z.shape, _T.circular_x0, dtype=xp.int64)
    x, y, _ = cordic(x, xp.zeros(z.shape, dtype=xp.int64), z, _T.circular, xp)
    return x, y


def sincos_abs(ax: Any, xp: Any) -> tuple[Any, Any, Any]:
    """``elementary.sincos_abs`` for an int64 array ``ax >= 0``: (cos r, sin r) * 2**P, q mod 4."""
    q = (ax * _T.two_over_pi + (1 << (_T.frac + _T.width - 1))) >> (_T.frac + _T.width)
    extra = _T.reduce_extra
    wide = (ax << (_T.guard + extra)) - q * _T.half_pi_wide  # exact mod 2**64
    r = (wide + (1 << (extra - 1))) >> extra
    c, s = _circular_rotate(r, xp)
    return c, s, q & 3


def _round_p(v: Any) -> Any:
    return (v + _T.half_guard) >> _T.guard


def _quadrant(q: Any, choices: tuple[Any, Any, Any, Any], xp: Any) -> Any:
    return xp.where(q == 0, choices[0], xp.where(q == 1, choices[1],
                                                 xp.where(q == 2, choices[2], choices[3])))


def fx_sin(x: Any, xp: Any) -> Any:
    """``elementary.fx_sin`` on an int64 array of W = 32 signed words."""
    negative = x < 0
    c, s, q = sincos_abs(xp.where(negative, -x, x), xp)
    v = _round_p(_quadrant(q, (s, c, -s, -c), xp))
    return xp.where(negative, -v, v)


def fx_cos(x: Any, xp: Any) -> Any:
    c, s, q = sincos_abs(xp.where(x < 0, -x, x), xp)
    return _round_p(_quadrant(q, (c, -s, -c, s), xp))


def fx_tan(x: Any, xp: Any) -> Any:
    negative = x < 0
    c, s, q = sincos_abs(xp.where(negative, -x, x), xp)
    odd = (q & 1) == 1
    num = xp.where(odd, c, s)
    den = xp.where(odd, -s, c)
    flip = (num < 0) != (den < 0)
    n = xp.abs(num)
    d = xp.abs(den)
    pole = d == 0
    safe = xp.where(pole, 1, d)
    v = xp.where(pole, _T.max_signed + 1, ((n << (_T.frac + 1)) + safe) // (2 * safe))
    v = xp.where(flip, -v, v)
    v = xp.where(negative, -v, v)
    return xp.clip(v, _T.min_signed, _T.max_signed)


def bit_length(v: Any, xp: Any) -> Any:
    """``int.bit_length`` of each non-negative int64 value, by halving (no floats)."""
    n = xp.zeros(v.shape, dtype=xp.int64)
    for step in (32, 16, 8, 4, 2, 1):
        high = (v >> step) > 0
        v = xp.where(high, v >> step, v)
        n = n + xp.where(high, step, 0)
    return n + (v > 0)


def _circular_vector(x: Any, y: Any, xp: Any) -> Any:
    return cordic(x, y, xp.zeros(x.shape, dtype=xp.int64), _T.circular, xp, vectoring=True)[2]


def fx_atan2(y: Any, x: Any, xp: Any) -> Any:
    """``elementary.fx_atan2`` on int64 arrays of W = 32 signed words."""
    ax = xp.abs(x)
    ay = xp.abs(y)
    swap = ay > ax
    big = xp.where(swap, ay, ax)
    small = xp.where(swap, ax, ay)
    zero = big == 0
    shift = (_T.prec - 1) - bit_length(big, xp)
    left = xp.where(shift > 0, shift, 0)
    right = xp.where(shift < 0, -shift, 0)
    big = (big << left) >> right
    small = (small << left) >> right
    a = _circular_vector(xp.where(zero, 1, big), small, xp)
    a = xp.where(swap, _T.half_pi_p - a, a)
    a = xp.where(x < 0, _T.pi_p - a, a)
    v = _round_p(a)
    v = xp.where(y < 0, -v, v)
    return xp.where(zero, 0, v)


def fx_atan(x: Any, xp: Any) -> Any:
    return fx_atan2(x, xp.full(x.shape, _T.one, dtype=xp.int64), xp)
