"""Exactly reversible Givens rotation in fixed point (the ROT/IROT instructions).

A rotation by theta is three lifting shears (Paeth 1986; Hao & Shi 2001):
    x -= round(tan(theta/2) * y);  y += round(sin(theta) * x);  x -= round(tan(theta/2) * y)
Each shear adds a function of the *other* word, so the opposite shear undoes it
bit for bit, whatever the rounding.  Shears amplify rounding when |theta|
approaches pi (tan(theta/2) grows), so the angle is first reduced to
|theta| <= pi/2 by an exact rotation by pi (negating both words).
"""
from __future__ import annotations

from .fixed_point import WordFormat
from .functions.arithmetic import fx_mul
from .functions.circular import fx_sin, fx_tan

_PI_DIGITS = 314159265358979323846264338327950288419716939937510582097494459


def pi_raw(fmt: WordFormat) -> int:
    """pi in the format, rounded to nearest (an exact integer computation)."""
    scale = 10 ** (len(str(_PI_DIGITS)) - 1)
    return (_PI_DIGITS * (1 << fmt.frac_bits) * 2 + scale) // (2 * scale)


def rotation_plan(theta: int, fmt: WordFormat) -> tuple[bool, int, int]:
    """For a signed angle word: (negate first?, tan(theta'/2), sin(theta')).

    theta' is theta reduced by pi into [-pi/2, pi/2]; the coefficients are raw
    signed fixed-point integers.  ROT and IROT share this plan, so they agree.
    """
    pi = pi_raw(fmt)
    half_pi = pi >> 1
    negate = False
    reduced = theta
    # Rotating by pi negates both words exactly, so take out whole turns of pi
    # and remember their parity.
    if reduced > half_pi:
        turns = (reduced - half_pi + pi - 1) // pi
        reduced -= turns * pi
        negate = bool(turns & 1)
    elif reduced < -half_pi:
        turns = (-half_pi - reduced + pi - 1) // pi
        reduced += turns * pi
        negate = bool(turns & 1)
    return negate, fx_tan(reduced >> 1, fmt), fx_sin(reduced, fmt)


def rotate(x: int, y: int, theta: int, fmt: WordFormat) -> tuple[int, int]:
    """ROT: rotate the words (x, y) by the angle word theta; returns words."""
    s = fmt.signed
    negate, t, sn = rotation_plan(s(theta), fmt)
    if negate:
        x, y = -x, -y
    x = (x - fx_mul(t, s(y & fmt.mask), fmt)) & fmt.mask
    y = (y + fx_mul(sn, s(x), fmt)) & fmt.mask
    x = (x - fx_mul(t, s(y), fmt)) & fmt.mask
    return x, y


def unrotate(x: int, y: int, theta: int, fmt: WordFormat) -> tuple[int, int]:
    """IROT: the exact inverse of :func:`rotate` with the same angle."""
    s = fmt.signed
    negate, t, sn = rotation_plan(s(theta), fmt)
    x = (x + fx_mul(t, s(y), fmt)) & fmt.mask
    y = (y - fx_mul(sn, s(x), fmt)) & fmt.mask
    x = (x + fx_mul(t, s(y), fmt)) & fmt.mask
    if negate:
        x, y = -x & fmt.mask, -y & fmt.mask
    return x, y


def _shear_wraps(word: int, delta: int, fmt: WordFormat) -> bool:
    """Whether ``S(word) + delta`` leaves the signed range (the shear wraps)."""
    total = fmt.signed(word & fmt.mask) + delta
    return not fmt.min_signed <= total <= fmt.max_signed


def rotation_overflows(x: int, y: int, theta: int, fmt: WordFormat) -> int:
    """1 when ROT of the words (x, y) by theta wraps anywhere, else 0.

    The events: the reduction's negation of the word -2^(W-1) (which is its own
    negation), or a shear whose exact sum leaves the signed range.  The shears
    run as :func:`rotate` runs them, on the wrapped words.
    """
    s = fmt.signed
    negate, t, sn = rotation_plan(s(theta), fmt)
    sign = fmt.sign_bit
    if negate:
        if x == sign or y == sign:
            return 1
        x, y = -x & fmt.mask, -y & fmt.mask
    d = -fx_mul(t, s(y), fmt)
    if _shear_wraps(x, d, fmt):
        return 1
    x = (x + d) & fmt.mask
    d = fx_mul(sn, s(x), fmt)
    if _shear_wraps(y, d, fmt):
        return 1
    y = (y + d) & fmt.mask
    return 1 if _shear_wraps(x, -fx_mul(t, s(y), fmt), fmt) else 0


def unrotation_overflows(x: int, y: int, theta: int, fmt: WordFormat) -> int:
    """1 when IROT of the words (x, y) by theta wraps anywhere: the same shears as
    ROT of its result, run the other way (so ``unrotation_overflows(x, y) ==
    rotation_overflows(*unrotate(x, y))``)."""
    s = fmt.signed
    negate, t, sn = rotation_plan(s(theta), fmt)
    d = fx_mul(t, s(y), fmt)
    if _shear_wraps(x, d, fmt):
        return 1
    x = (x + d) & fmt.mask
    d = -fx_mul(sn, s(x), fmt)
    if _shear_wraps(y, d, fmt):
        return 1
    y = (y + d) & fmt.mask
    d = fx_mul(t, s(y), fmt)
    if _shear_wraps(x, d, fmt):
        return 1
    x = (x + d) & fmt.mask
    sign = fmt.sign_bit
    return 1 if negate and (x == sign or y == sign) else 0
