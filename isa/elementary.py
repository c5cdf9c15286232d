"""Fixed-point elementary functions as exact integer algorithms.

Every engine (the reference simulator, the batched simulator and the RTL
function unit) must produce the same bits for ``d += f(s)``, so each function is
defined here once, on signed raw integers: a word ``x`` of a :class:`WordFormat`
with ``F = W/2`` fraction bits stands for the real ``x / 2**F``.

Algorithms (details, widths and measured error bounds: ``docs/elementary.md``):

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
computed on ``|x|`` and negated, so they are exactly odd (except at saturation).  Results that do not fit the format saturate to
``fmt.max_signed`` / ``fmt.min_signed``.  No floats are used at run time; the
constant tables are computed once at import with :mod:`decimal` at 100 digits.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Callable

from .fixed_point import WordFormat


class DomainError(ArithmeticError):
    """The argument lies outside the function's domain (e.g. ``log(x <= 0)``)."""


class DivideByZero(DomainError):
    """Division by zero (``s / 0``, or ``0 ** y`` with ``y < 0``)."""


# --------------------------------------------------------------------------
# Constants, computed exactly at import time with decimal arithmetic.
# --------------------------------------------------------------------------

_DIGITS = 100  # ~332 bits, far more than the widest constant needs (~100 bits)


def _atan_series(t: Decimal) -> Decimal:
    """atan(t) for |t| <= 1/2 by its Taylor series (each term shrinks by >= 4x)."""
    total = Decimal(0)
    power = t
    t2 = t * t
    n = 1
    eps = Decimal(10) ** (-_DIGITS - 5)
    while abs(power) > eps:
        total += power / n
        power *= -t2
        n += 2
    return total


def _decimal_constants() -> dict[str, Decimal]:
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        pi = 16 * _atan_series(Decimal(1) / 5) - 4 * _atan_series(Decimal(1) / 239)  # Machin
        ln2 = Decimal(2).ln()
        return {"pi": pi, "ln2": ln2, "sqrt2": Decimal(2).sqrt()}


def _scaled(value: Decimal, bits: int) -> int:
    """round(value * 2**bits), ties to even, computed in decimal."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return int((value * (Decimal(2) ** bits)).to_integral_value(rounding=ROUND_HALF_EVEN))


_C = _decimal_constants()


def _half(i: int) -> int:
    """The rounding constant of a right shift by i: 2**(i-1) (0 for i = 0)."""
    return (1 << (i - 1)) if i else 0


# Hyperbolic CORDIC must repeat iterations 4, 13, 40, 121, ... (i_{k+1} = 3 i_k + 1)
# to converge (Walther 1971).
_HYPERBOLIC_REPEATS = (4, 13, 40, 121)


@dataclass(frozen=True)
class _Tables:
    """Per-width constants of the function unit (all plain integers)."""

    width: int
    frac: int  # F
    prec: int  # P = W - 2, fraction bits of the CORDIC data path
    guard: int  # G = P - F
    half_guard: int  # 2**(G-1), for rounding P -> F
    max_signed: int
    min_signed: int
    one: int  # 2**F
    circular: tuple[tuple[int, int, int], ...]  # (i, 2**(i-1) or 0, round(atan(2**-i) * 2**P)), i = 0..P
    circular_x0: int  # round(2**P / K), K = prod sqrt(1 + 4**-i)
    hyperbolic: tuple[tuple[int, int, int], ...]  # (i, 2**(i-1), round(atanh(2**-i) * 2**P)), with repeats
    hyperbolic_x0: int  # round(2**P / K_h), K_h = prod sqrt(1 - 4**-i)
    reduce_extra: int  # E: extra bits of the pi/2 constant for argument reduction
    half_pi_wide: int  # round(pi/2 * 2**(P+E))
    two_over_pi: int  # round(2/pi * 2**W)
    pi_p: int  # round(pi * 2**P)
    half_pi_p: int  # round(pi/2 * 2**P)
    ln2_wide: int  # round(ln2 * 2**(P+8)); 8 extra bits so k*ln2 stays exact to 2**-P
    inv_ln2_20: int  # round(2**20 / ln2)
    sqrt2_s: int  # round(sqrt2 * 2**(P-1)): threshold of the log mantissa
    sqrt_bits: int  # result bits of the digit-by-digit square root


def _make_tables(width: int) -> _Tables:
    frac = width // 2
    prec = width - 2
    guard = prec - frac
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        pi, ln2, sqrt2 = _C["pi"], _C["ln2"], _C["sqrt2"]
        one = Decimal(1)

        circ_idx = list(range(prec + 1))
        circ_angles = [pi / 4 if i == 0 else _atan_series(one / (Decimal(2) ** i)) for i in circ_idx]
        gain = Decimal(1)
        for i in circ_idx:
            gain *= (one + (Decimal(4) ** -i)).sqrt()

        hyp_idx: list[int] = []
        for i in range(1, prec + 1):
            hyp_idx.append(i)
            if i in _HYPERBOLIC_REPEATS:
                hyp_idx.append(i)
        hyp_gain = Decimal(1)
        hyp_angles = []
        for i in hyp_idx:
            t = one / (Decimal(2) ** i)
            hyp_angles.append(((one + t) / (one - t)).ln() / 2)
            hyp_gain *= (one - t * t).sqrt()

        extra = width - frac + 4
        return _Tables(
            width=width,
            frac=frac,
            prec=prec,
            guard=guard,
            half_guard=1 << (guard - 1),
            max_signed=(1 << (width - 1)) - 1,
            min_signed=-(1 << (width - 1)),
            one=1 << frac,
            circular=tuple((i, _half(i), _scaled(a, prec)) for i, a in zip(circ_idx, circ_angles)),
            circular_x0=_scaled(one / gain, prec),
            hyperbolic=tuple((i, _half(i), _scaled(a, prec)) for i, a in zip(hyp_idx, hyp_angles)),
            hyperbolic_x0=_scaled(one / hyp_gain, prec),
            reduce_extra=extra,
            half_pi_wide=_scaled(pi / 2, prec + extra),
            two_over_pi=_scaled(2 / pi, width),
            pi_p=_scaled(pi, prec),
            half_pi_p=_scaled(pi / 2, prec),
            ln2_wide=_scaled(ln2, prec + 8),
            inv_ln2_20=_scaled(one / ln2, 20),
            sqrt2_s=_scaled(sqrt2, prec - 1),
            sqrt_bits=(width - 1 + frac + 1) // 2,
        )


_TABLES: dict[int, _Tables] = {w: _make_tables(w) for w in (32, 64)}


def _tables(fmt: WordFormat) -> _Tables:
    try:
        return _TABLES[fmt.width]
    except KeyError:
        raise ValueError(f"no elementary-function tables for width {fmt.width}") from None


# --------------------------------------------------------------------------
# CORDIC kernels.  All operands carry P fraction bits; the loops are fixed.
# --------------------------------------------------------------------------


def _circular_rotate(z: int, t: _Tables) -> tuple[int, int]:
    """(cos z, sin z) * 2**P for |z| <= 1.74 (Volder's rotation mode, gain pre-divided)."""
    x = t.circular_x0
    y = 0
    for i, h, a in t.circular:
        if z >= 0:
            x, y, z = x - ((y + h) >> i), y + ((x + h) >> i), z - a
        else:
            x, y, z = x + ((y + h) >> i), y - ((x + h) >> i), z + a
    return x, y


def _circular_vector(x: int, y: int, t: _Tables) -> int:
    """atan(y / x) * 2**P for x > 0 (Volder's vectoring mode: drive y to 0)."""
    z = 0
    for i, h, a in t.circular:
        if y >= 0:
            x, y, z = x + ((y + h) >> i), y - ((x + h) >> i), z + a
        else:
            x, y, z = x - ((y + h) >> i), y + ((x + h) >> i), z - a
    return z


def _hyperbolic_rotate(z: int, t: _Tables) -> tuple[int, int]:
    """(cosh z, sinh z) * 2**P for |z| <= 1.11 (Walther's hyperbolic rotation mode)."""
    x = t.hyperbolic_x0
    y = 0
    for i, h, a in t.hyperbolic:
        if z >= 0:
            x, y, z = x + ((y + h) >> i), y + ((x + h) >> i), z - a
        else:
            x, y, z = x - ((y + h) >> i), y - ((x + h) >> i), z + a
    return x, y


def _hyperbolic_vector(x: int, y: int, t: _Tables) -> int:
    """atanh(y / x) * 2**P for x > |y| (Walther's hyperbolic vectoring mode)."""
    z = 0
    for i, h, a in t.hyperbolic:
        if y >= 0:
            x, y, z = x - ((y + h) >> i), y - ((x + h) >> i), z + a
        else:
            x, y, z = x + ((y + h) >> i), y + ((x + h) >> i), z - a
    return z


# --------------------------------------------------------------------------
# Shared reductions.
# --------------------------------------------------------------------------


def _round_p(v: int, t: _Tables) -> int:
    """Round a P-bit value to F bits, half-up (floor(v / 2**G + 1/2))."""
    return (v + t.half_guard) >> t.guard


def _scale_round(v: int, shift: int) -> int:
    """round(v / 2**shift) half-up for shift > 0, exact ``v << -shift`` otherwise."""
    if shift > 0:
        return (v + (1 << (shift - 1))) >> shift
    return v << -shift


def _saturate(v: int, t: _Tables) -> int:
    if v > t.max_signed:
        return t.max_signed
    if v < t.min_signed:
        return t.min_signed
    return v


def _sincos_abs(ax: int, t: _Tables) -> tuple[int, int, int]:
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
    c, s = _circular_rotate(r, t)
    return c, s, q & 3


def _exp_parts(z: int, t: _Tables) -> tuple[int, int, int]:
    """Split ``z * 2**-P = k ln2 + r`` with |r| <= ln2/2 (+tiny) and return (k, cosh r, sinh r).

    ``k`` comes from the top bits of ``z`` times a 20-bit 1/ln2 (exactness is not
    needed, only |r| < 1.11); ``r = z - k ln2`` uses ln2 to ``P + 8`` bits.
    """
    k = ((z >> (t.prec - 20)) * t.inv_ln2_20 + (1 << 39)) >> 40
    r = z - ((k * t.ln2_wide + 128) >> 8)
    c, s = _hyperbolic_rotate(r, t)
    return k, c, s


def _ln_p(x: int, t: _Tables) -> int:
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
    z = _hyperbolic_vector(u, v, t) if v else 0
    return ((e * t.ln2_wide + 128) >> 8) + 2 * z


def _exp_from_p(z: int, t: _Tables) -> int:
    """round(exp(z * 2**-P) * 2**F), saturating; z is any integer."""
    # Cheap bound checks first (hardware: compares on the top bits of z).
    lim = (t.width + 2) << t.prec  # exp(W + 2) > 2**(W+2) saturates every width
    if z >= lim:
        return t.max_signed
    if z <= -lim:
        return 0
    k, c, s = _exp_parts(z, t)
    if k >= t.width - t.frac:  # exp(z) >= 2**(W-F-1/2) > max_signed * 2**-F
        return t.max_signed
    if k <= -t.frac - 2:  # exp(z) < sqrt2 * 2**-(F+2) < half an ulp
        return 0
    v = _scale_round(c + s, t.guard - k)  # exp(r) * 2**k, rounded to F bits
    return t.max_signed if v > t.max_signed else v


# --------------------------------------------------------------------------
# Public functions.
# --------------------------------------------------------------------------


def fx_sin(x: int, fmt: WordFormat) -> int:
    """sin(x): reduction by pi/2 plus circular CORDIC; exactly odd (computed on |x|)."""
    t = _tables(fmt)
    c, s, q = _sincos_abs(-x if x < 0 else x, t)
    v = _round_p((s, c, -s, -c)[q], t)
    return -v if x < 0 else v


def fx_cos(x: int, fmt: WordFormat) -> int:
    """cos(x): reduction by pi/2 plus circular CORDIC; exactly even."""
    t = _tables(fmt)
    c, s, q = _sincos_abs(-x if x < 0 else x, t)
    return _round_p((c, -s, -c, s)[q], t)


def _div_round(num: int, den: int, scale: int, t: _Tables) -> int:
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
    t = _tables(fmt)
    c, s, q = _sincos_abs(-x if x < 0 else x, t)
    if q & 1:
        num, den = c, -s  # tan(r + pi/2) = -cot r
    else:
        num, den = s, c
    v = _div_round(num, den, t.frac, t)
    return _saturate(-v if x < 0 else v, t)


def fx_atan2(y: int, x: int, fmt: WordFormat) -> int:
    """atan2(y, x) in (-pi, pi]; atan2(0, 0) = 0.

    Octant reduction on (|x|, |y|) (swap so the first is larger), normalisation of
    the larger to [1/4, 1/2) * 2**P by its leading-one position, circular CORDIC
    vectoring, then ``pi/2 - a``, ``pi - a`` and the sign of ``y`` put back, so that
    ``atan2(-y, x) == -atan2(y, x)`` exactly.
    """
    t = _tables(fmt)
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
    a = _circular_vector(big, small, t)
    if swap:
        a = t.half_pi_p - a
    if x < 0:
        a = t.pi_p - a
    v = _round_p(a, t)
    return -v if y < 0 else v


def fx_atan(x: int, fmt: WordFormat) -> int:
    """atan(x) = atan2(x, 1) (circular CORDIC vectoring); exactly odd."""
    return fx_atan2(x, 1 << fmt.frac_bits, fmt)


def fx_exp(x: int, fmt: WordFormat) -> int:
    """exp(x): reduction by ln2 plus hyperbolic CORDIC, ``e**r = cosh r + sinh r``; saturates."""
    t = _tables(fmt)
    return _exp_from_p(x << t.guard, t)


def fx_log(x: int, fmt: WordFormat) -> int:
    """Natural log: leading-one normalisation plus hyperbolic CORDIC vectoring.

    Raises :class:`DomainError` for ``x <= 0``.
    """
    if x <= 0:
        raise DomainError(f"log of non-positive value (raw {x})")
    t = _tables(fmt)
    return _round_p(_ln_p(x, t), t)


def fx_pow(x: int, y: int, fmt: WordFormat) -> int:
    """x**y = exp(y * ln x) with ln x kept at P bits; saturates.

    ``0**y`` is 0 for ``y > 0`` and 1 for ``y == 0``; ``0**y`` with ``y < 0``
    raises :class:`DivideByZero` (IEEE 754 signals divide-by-zero there), and
    ``x < 0`` raises :class:`DomainError`.
    """
    t = _tables(fmt)
    if x < 0:
        raise DomainError(f"pow of negative base (raw {x})")
    if x == 0:
        if y < 0:
            raise DivideByZero("0 ** negative exponent")
        return t.one if y == 0 else 0
    z = (y * _ln_p(x, t) + (1 << (t.frac - 1))) >> t.frac  # y*ln x at P bits
    return _exp_from_p(z, t)


def _hyperbolic_abs(ax: int, t: _Tables) -> tuple[int, int, int]:
    """For ``ax >= 0`` at F bits: ``(k, e**r * 2**P, round(e**-r * 4**-k * 2**P))``.

    With ``|x| = k ln2 + r``: ``e**|x| = 2**k e**r`` and ``e**-|x| = 2**k (e**-r 4**-k)``,
    so both terms share the scale 2**k and every value fits P + 2 bits.
    """
    k, c, s = _exp_parts(ax << t.guard, t)
    em = c - s
    sh = 2 * k
    return k, c + s, (em + (1 << (sh - 1))) >> sh if sh else em


def fx_sinh(x: int, fmt: WordFormat) -> int:
    """sinh(x) = 2**(k-1) (e**r - 4**-k e**-r) from one hyperbolic CORDIC run; saturates.

    Odd: ``sinh(-x) == -sinh(x)`` except where the result saturates.
    """
    t = _tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.width + 2) << t.frac:
        v = t.max_signed + 1
    else:
        k, ep, em = _hyperbolic_abs(ax, t)
        if k > t.width - t.frac:
            v = t.max_signed + 1
        else:
            v = _scale_round(ep - em, t.guard + 1 - k)
    return _saturate(-v if x < 0 else v, t)


def fx_cosh(x: int, fmt: WordFormat) -> int:
    """cosh(x) = 2**(k-1) (e**r + 4**-k e**-r) from one hyperbolic CORDIC run; even; saturates."""
    t = _tables(fmt)
    ax = -x if x < 0 else x
    if ax >= (t.width + 2) << t.frac:
        return t.max_signed
    k, ep, em = _hyperbolic_abs(ax, t)
    if k > t.width - t.frac:
        return t.max_signed
    return min(_scale_round(ep + em, t.guard + 1 - k), t.max_signed)


def fx_tanh(x: int, fmt: WordFormat) -> int:
    """tanh(x) = (e**r - 4**-k e**-r) / (e**r + 4**-k e**-r): one CORDIC run, one division; odd."""
    t = _tables(fmt)
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


def fx_sqrt(x: int, fmt: WordFormat) -> int:
    """sqrt(x) correctly rounded: digit-by-digit integer square root of ``x * 2**F``.

    Fixed ``ceil((W - 1 + F) / 2)`` iterations of shift-and-subtract; the result is
    rounded up iff the final remainder exceeds the root.  Raises
    :class:`DomainError` for ``x < 0``.
    """
    if x < 0:
        raise DomainError(f"sqrt of negative value (raw {x})")
    t = _tables(fmt)
    n = x << t.frac
    rem = 0
    root = 0
    for i in range(2 * t.sqrt_bits - 2, -1, -2):
        rem = (rem << 2) | ((n >> i) & 3)
        trial = (root << 2) | 1
        root <<= 1
        if rem >= trial:
            rem -= trial
            root |= 1
    return root + 1 if rem > root else root


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
