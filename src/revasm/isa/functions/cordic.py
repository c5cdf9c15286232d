"""The CORDIC data path shared by every elementary function, on plain integers.

Per-width constant tables (``TABLES``), computed exactly at import time with
:mod:`decimal` at 100 digits; the four CORDIC kernels -- circular and
hyperbolic, rotation (Volder 1959) and vectoring (Walther 1971) -- that hold
``P = W - 2`` fraction bits, so every register fits a signed W-bit word; and
the roundings from P bits back to the format's ``F`` bits.

Every CORDIC shift rounds to nearest, ``(v + 2**(i-1)) >> i`` (in hardware: the
last bit shifted out is the adder's carry-in); plain floor shifts bias the
result by about N/2 units of 2**-P, which showed up as 30-ulp errors of tan
next to its poles.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from ..fixed_point import WIDTHS, WordFormat

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
class Tables:
    """Per-width constants of the function unit (all plain integers)."""

    width: int
    frac: int  # F
    prec: int  # P = W - 2, fraction bits of the CORDIC data path
    guard: int  # G = P - F
    half_guard: int  # 2**(G-1), for rounding P -> F
    max_signed: int
    min_signed: int
    one: int  # 2**F
    #: (i, 2**(i-1) or 0, round(atan(2**-i) * 2**P)), i = 0..P
    circular: tuple[tuple[int, int, int], ...]
    circular_x0: int  # round(2**P / K), K = prod sqrt(1 + 4**-i)
    #: (i, 2**(i-1), round(atanh(2**-i) * 2**P)), with repeats
    hyperbolic: tuple[tuple[int, int, int], ...]
    hyperbolic_x0: int  # round(2**P / K_h), K_h = prod sqrt(1 - 4**-i)
    reduce_extra: int  # E: extra bits of the pi/2 constant for argument reduction
    half_pi_wide: int  # round(pi/2 * 2**(P+E))
    two_over_pi: int  # round(2/pi * 2**W)
    pi_p: int  # round(pi * 2**P)
    half_pi_p: int  # round(pi/2 * 2**P)
    ln2_wide: int  # round(ln2 * 2**(P+8)); 8 extra bits so k*ln2 stays exact to 2**-P
    k_bits: int  # K = min(20, P): fraction bits of exp's estimate of k = round(z / ln2)
    inv_ln2_k: int  # round(2**K / ln2)
    sqrt2_s: int  # round(sqrt2 * 2**(P-1)): threshold of the log mantissa
    sqrt_bits: int  # result bits of the digit-by-digit square root


def _make_tables(width: int) -> Tables:
    frac = width // 2
    prec = width - 2
    guard = prec - frac
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        pi, ln2, sqrt2 = _C["pi"], _C["ln2"], _C["sqrt2"]
        one = Decimal(1)

        circ_idx = list(range(prec + 1))
        circ_angles = [pi / 4 if i == 0 else _atan_series(one / (Decimal(2) ** i))
                       for i in circ_idx]
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
        return Tables(
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
            k_bits=min(20, prec),
            inv_ln2_k=_scaled(one / ln2, min(20, prec)),
            sqrt2_s=_scaled(sqrt2, prec - 1),
            sqrt_bits=(width - 1 + frac + 1) // 2,
        )


#: The narrowest word the functions are defined for: two guard bits (``G = W/2 - 2``) under
#: the CORDIC's fraction.  Reduced widths serve the bounded proofs of the RTL function unit
#: (``rtl/verification/unit_proofs.py``); the engines run W = 32 and 64.
MIN_WIDTH = 6


class _PerWidth(dict[int, Tables]):
    """The tables of every width, made on first use (32 and 64 at import)."""

    def __missing__(self, width: int) -> Tables:
        if width < MIN_WIDTH or width % 2:
            raise KeyError(width)
        self[width] = tables = _make_tables(width)
        return tables


TABLES: dict[int, Tables] = _PerWidth({w: _make_tables(w) for w in WIDTHS})


def tables(fmt: WordFormat) -> Tables:
    try:
        return TABLES[fmt.width]
    except KeyError:
        raise ValueError(f"no elementary-function tables for width {fmt.width} (even widths "
                         f"from {MIN_WIDTH})") from None


# --------------------------------------------------------------------------
# CORDIC kernels.  All operands carry P fraction bits; the loops are fixed.
# --------------------------------------------------------------------------


def circular_rotate(z: int, t: Tables) -> tuple[int, int]:
    """(cos z, sin z) * 2**P for |z| <= 1.74 (Volder's rotation mode, gain pre-divided)."""
    x = t.circular_x0
    y = 0
    for i, h, a in t.circular:
        if z >= 0:
            x, y, z = x - ((y + h) >> i), y + ((x + h) >> i), z - a
        else:
            x, y, z = x + ((y + h) >> i), y - ((x + h) >> i), z + a
    return x, y


def circular_vector(x: int, y: int, t: Tables) -> int:
    """atan(y / x) * 2**P for x > 0 (Volder's vectoring mode: drive y to 0)."""
    z = 0
    for i, h, a in t.circular:
        if y >= 0:
            x, y, z = x + ((y + h) >> i), y - ((x + h) >> i), z + a
        else:
            x, y, z = x - ((y + h) >> i), y + ((x + h) >> i), z - a
    return z


def hyperbolic_rotate(z: int, t: Tables) -> tuple[int, int]:
    """(cosh z, sinh z) * 2**P for |z| <= 1.11 (Walther's hyperbolic rotation mode)."""
    x = t.hyperbolic_x0
    y = 0
    for i, h, a in t.hyperbolic:
        if z >= 0:
            x, y, z = x + ((y + h) >> i), y + ((x + h) >> i), z - a
        else:
            x, y, z = x - ((y + h) >> i), y - ((x + h) >> i), z + a
    return x, y


def hyperbolic_vector(x: int, y: int, t: Tables) -> int:
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


def round_p(v: int, t: Tables) -> int:
    """Round a P-bit value to F bits, half-up (floor(v / 2**G + 1/2))."""
    return (v + t.half_guard) >> t.guard


def scale_round(v: int, shift: int) -> int:
    """round(v / 2**shift) half-up for shift > 0, exact ``v << -shift`` otherwise."""
    if shift > 0:
        return (v + (1 << (shift - 1))) >> shift
    return v << -shift


def saturate(v: int, t: Tables) -> int:
    if v > t.max_signed:
        return t.max_signed
    if v < t.min_signed:
        return t.min_signed
    return v
