"""abs, mul and div: one saturated magnitude, one rounded product, one rounded quotient."""
from __future__ import annotations

from ..fixed_point import WordFormat
from .errors import DivideByZero


def fx_abs(x: int, fmt: WordFormat) -> int:
    """|x|; ``abs(min_signed)`` saturates to ``max_signed``."""
    if x >= 0:
        return x
    return -x if x > fmt.min_signed else fmt.max_signed


def fx_mul(a: int, b: int, fmt: WordFormat) -> int:
    """Rounded product ``floor(a*b / 2**F + 1/2)`` (half-up); not wrapped (one 2W-bit product)."""
    f = fmt.frac_bits
    return (a * b + (1 << (f - 1))) >> f


def fx_div(a: int, b: int, fmt: WordFormat) -> int:
    """Rounded quotient ``round(a * 2**F / b)``, ties away from zero; not wrapped.

    Computed on magnitudes as ``floor((2|a| 2**F + |b|) / (2|b|))`` so that
    ``div(-a, b) == -div(a, b)``.  Raises :class:`DivideByZero` when ``b == 0``.
    """
    if b == 0:
        raise DivideByZero(f"division by zero (raw dividend {a})")
    n = -a if a < 0 else a
    d = -b if b < 0 else b
    q = ((n << (fmt.frac_bits + 1)) + d) // (2 * d)
    return q if (a < 0) == (b < 0) else -q
