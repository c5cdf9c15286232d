"""exp, log and pow: reduction by ln 2, then hyperbolic CORDIC (Walther 1971).

exp: ``x = k ln2 + r``, then hyperbolic rotation giving ``cosh r`` and
``sinh r`` (``e**r = cosh r + sinh r``); log: normalisation by the leading-one
position, then hyperbolic vectoring, ``ln m = 2 atanh((m-1)/(m+1))``; pow:
``exp(y * ln x)`` with ``ln x`` kept at internal precision.  The split
``exp_parts`` also serves sinh, cosh and tanh (``isa/functions/hyperbolic.py``).
"""
from __future__ import annotations

from ..fixed_point import WordFormat
from .cordic import Tables, hyperbolic_rotate, hyperbolic_vector, round_p, scale_round, tables
from .errors import DivideByZero, DomainError


def exp_k(z: int, t: Tables) -> int:
    """exp's ``k``, about ``z * 2**-P / ln2`` rounded: z's top bits at K fraction bits times a
    K-bit 1/ln2 (exactness is not needed, only |r| < 1.11; K = 20 at W = 32 and 64)."""
    kb = t.k_bits
    return ((z >> (t.prec - kb)) * t.inv_ln2_k + (1 << (2 * kb - 1))) >> (2 * kb)


def exp_parts(z: int, t: Tables) -> tuple[int, int, int]:
    """Split ``z * 2**-P = k ln2 + r`` with |r| <= ln2/2 (+tiny) and return (k, cosh r, sinh r).

    ``k`` comes from the top bits of ``z`` times a K-bit 1/ln2 (``exp_k``); ``r = z - k
    ln2`` uses ln2 to ``P + 8`` bits.
    """
    k = exp_k(z, t)
    r = z - ((k * t.ln2_wide + 128) >> 8)
    c, s = hyperbolic_rotate(r, t)
    return k, c, s


def ln_p(x: int, t: Tables) -> int:
    """ln(x * 2**-F) * 2**P for raw ``x > 0``.

    ``x = m * 2**e`` with ``m`` in [1/sqrt2, sqrt2) by the leading-one position;
    ``ln m = 2 atanh((m-1)/(m+1))`` by hyperbolic vectoring on the unscaled pair
    ``(m+1, m-1)`` (only the ratio matters), held at ``S = P - 1`` bits.  An exact
    power of two (``m == 1``) skips the CORDIC so that ``ln(1) == 0`` exactly.
    """
    n = x.bit_length()
    e = n - 1 - t.frac
    s = t.prec - 1
    shift = s - (n - 1)
    a = x << shift if shift >= 0 else x >> -shift  # m * 2**S, m in [1, 2)
    if a >= t.sqrt2_s:
        e += 1
        u, v = a + (2 << s), a - (2 << s)  # ratio (m/2 - 1)/(m/2 + 1)
    else:
        u, v = a + (1 << s), a - (1 << s)
    z = hyperbolic_vector(u, v, t) if v else 0
    return ((e * t.ln2_wide + 128) >> 8) + 2 * z


def _exp_from_p(z: int, t: Tables) -> int:
    """round(exp(z * 2**-P) * 2**F), saturating; z is any integer."""
    # Cheap bound checks first (hardware: compares on the top bits of z).
    lim = (t.width + 2) << t.prec  # exp(W + 2) > 2**(W+2) saturates every width
    if z >= lim:
        return t.max_signed
    if z <= -lim:
        return 0
    k, c, s = exp_parts(z, t)
    if k >= t.width - t.frac:  # exp(z) >= 2**(W-F-1/2) > max_signed * 2**-F
        return t.max_signed
    if k <= -t.frac - 2:  # exp(z) < sqrt2 * 2**-(F+2) < half an ulp
        return 0
    v = scale_round(c + s, t.guard - k)  # exp(r) * 2**k, rounded to F bits
    return t.max_signed if v > t.max_signed else v


def fx_exp(x: int, fmt: WordFormat) -> int:
    """exp(x): reduction by ln2 plus hyperbolic CORDIC, ``e**r = cosh r + sinh r``; saturates."""
    t = tables(fmt)
    return _exp_from_p(x << t.guard, t)


def fx_log(x: int, fmt: WordFormat) -> int:
    """Natural log: leading-one normalisation plus hyperbolic CORDIC vectoring.

    Raises :class:`DomainError` for ``x <= 0``.
    """
    if x <= 0:
        raise DomainError(f"log of non-positive value (raw {x})")
    t = tables(fmt)
    return round_p(ln_p(x, t), t)


def fx_pow(x: int, y: int, fmt: WordFormat) -> int:
    """x**y = exp(y * ln x) with ln x kept at P bits; saturates.

    ``0**y`` is 0 for ``y > 0`` and 1 for ``y == 0``; ``0**y`` with ``y < 0``
    raises :class:`DivideByZero` (IEEE 754 signals divide-by-zero there), and
    ``x < 0`` raises :class:`DomainError`.
    """
    t = tables(fmt)
    if x < 0:
        raise DomainError(f"pow of negative base (raw {x})")
    if x == 0:
        if y < 0:
            raise DivideByZero("0 ** negative exponent")
        return t.one if y == 0 else 0
    z = (y * ln_p(x, t) + (1 << (t.frac - 1))) >> t.frac  # y*ln x at P bits
    return _exp_from_p(z, t)
