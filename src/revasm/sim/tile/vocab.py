"""The tile engine's versions of vocabulary functions: the same words, in vector-friendly code.

The tile interpreter's loops run one template over the lanes of a tile, and LLVM turns a
loop into SIMD code only if every operation in it has a vector form.  The compiled
engine's fixed-point product at W = 64 is one 128-bit multiplication (``smul128``), which
has none; here it is four 32 x 32 -> 64-bit products of the operands' halves (AVX-512's
``vpmuludq``), summed with explicit carries, and the sign corrections of the signed
product.  Each function returns exactly what the compiled engine's function of the same
name returns (``tests/sim/tile/test_engine.py`` checks it on random and edge words), so the
tile kernels, which import these after the compiled vocabulary, compute the same bits.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from revasm.sim.compiled import overflow
from revasm.sim.compiled import vocab as compiled
from revasm.sim.compiled.vocab import nlz64

U = np.uint64
I = np.int64  # noqa: E741 - short names keep the arithmetic readable
LOW32 = U(0xFFFFFFFF)
#: ``error_model="numpy"``: numba's default model checks every float division for a zero
#: divisor, a branch out of the loop that stops LLVM from vectorising it (the divisors
#: here are never zero: the templates check a word divisor first).
JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")
#: The W = 64 division is inlined into its callers by numba (``inline="always"``): LLVM's
#: inliner finds it too large, and a call in a loop keeps the loop scalar.

__all__ = ["fdiv", "fdiv32", "fdiv_chain_ok64", "fdiv_ovf", "fdiv_ovf32", "fdiv_short64",
           "fdiv_short_ok64", "fmul", "fmul64", "fmul_ovf", "fmul_ovf64", "irot_planned",
           "ovf_irot_planned", "ovf_rot_planned", "rot_planned", "shear64", "smul_limbs"]


@njit(**JIT)
def smul_limbs(x, y):
    """(hi, lo) words of the signed 128-bit product of two int64 held as uint64 words:
    the unsigned product from 32-bit halves, then the signs' corrections of the top."""
    xl = x & LOW32
    xh = x >> U(32)
    yl = y & LOW32
    yh = y >> U(32)
    ll = xl * yl
    lh = xl * yh
    hl = xh * yl
    hh = xh * yh
    middle = (ll >> U(32)) + (lh & LOW32) + (hl & LOW32)
    lo = (middle << U(32)) | (ll & LOW32)
    hi = hh + (lh >> U(32)) + (hl >> U(32)) + (middle >> U(32))
    hi -= (y & (U(0) - (x >> U(63)))) + (x & (U(0) - (y >> U(63))))
    return hi, lo


@njit(**JIT)
def fmul_ovf64(x, y):
    """(fmul, ovf_mul) at W = 64: floor(S(x) S(y) / 2^32 + 1/2) mod 2^64, and 1 when the
    rounded product does not fit a signed word."""
    hi, lo = smul_limbs(x, y)
    rounded = lo + U(1 << 31)
    hi += U(1) if rounded < lo else U(0)
    word = (hi << U(32)) | (rounded >> U(32))
    fits = (I(hi) >> I(32)) == (I(word) >> I(63))
    return word, U(0) if fits else U(1)


@njit(**JIT)
def fmul64(x, y):
    """fmul at W = 64 (the low word of the rounded product)."""
    hi, lo = smul_limbs(x, y)
    rounded = lo + U(1 << 31)
    hi += U(1) if rounded < lo else U(0)
    return (hi << U(32)) | (rounded >> U(32))



# --- rotations by a planned angle (``isa/rotation.py``) at W = 64 -------------------------
# The compiled engine's versions take 128-bit products and return at the first shear that
# wraps; these take the products from limbs and test every shear without a branch, so a
# loop over a tile's lanes that share an angle (one plan) runs in vector registers.  The
# plan's ``negate`` is applied as a mask: x ^ m - m is -x when m is all ones.


@njit(**JIT, inline="always")
def shear64(word, coefficient, other, sign):
    """(wraps, new word) of ``S(word) + sign * round(coefficient * S(other) / 2^32)`` at
    W = 64: the rounded product is 96 bits, so the sum is taken in 128 bits and wraps when
    its top half is not the sign of its bottom half."""
    hi, lo = smul_limbs(U(coefficient), other)
    rounded = lo + U(1 << 31)
    hi += U(1) if rounded < lo else U(0)
    p_lo = (hi << U(32)) | (rounded >> U(32))
    p_hi = U(I(hi) >> I(32))
    w_hi = U(I(word) >> I(63))
    if sign > 0:
        total = word + p_lo
        top = w_hi + p_hi + (U(1) if total < word else U(0))
    else:
        total = word - p_lo
        top = w_hi - p_hi - (U(1) if word < p_lo else U(0))
    return U(0) if top == U(I(total) >> I(63)) else U(1), total


@njit(**JIT, inline="always")
def rot_planned(x, y, negate, t, sn, width):
    """ROT's three shears by a planned angle (the compiled engine's ``rot_planned``)."""
    if width != 64:
        return compiled.rot_planned(x, y, negate, t, sn, width)
    m = U(0) - U(negate)
    x = (x ^ m) - m
    y = (y ^ m) - m
    x = x - fmul64(U(t), y)
    y = y + fmul64(U(sn), x)
    x = x - fmul64(U(t), y)
    return x, y


@njit(**JIT, inline="always")
def irot_planned(x, y, negate, t, sn, width):
    """IROT's shears by a planned angle (the compiled engine's ``irot_planned``)."""
    if width != 64:
        return compiled.irot_planned(x, y, negate, t, sn, width)
    x = x + fmul64(U(t), y)
    y = y - fmul64(U(sn), x)
    x = x + fmul64(U(t), y)
    m = U(0) - U(negate)
    return (x ^ m) - m, (y ^ m) - m


@njit(**JIT, inline="always")
def ovf_rot_planned(x, y, negate, t, sn, width):
    """1 when ROT by a planned angle wraps anywhere (``overflow.ovf_rot_planned``): every
    shear tested, the first wrap's result kept by an or."""
    if width != 64:
        return overflow.ovf_rot_planned(x, y, negate, t, sn, width)
    lowest = U(1) << U(63)
    n = U(negate)
    bad = n & ((U(1) if x == lowest else U(0)) | (U(1) if y == lowest else U(0)))
    m = U(0) - n
    x = (x ^ m) - m
    y = (y ^ m) - m
    b1, x = shear64(x, t, y, -1)
    b2, y = shear64(y, sn, x, 1)
    b3, x = shear64(x, t, y, -1)
    return bad | b1 | b2 | b3


@njit(**JIT, inline="always")
def ovf_irot_planned(x, y, negate, t, sn, width):
    """1 when IROT by a planned angle wraps anywhere (``overflow.ovf_irot_planned``)."""
    if width != 64:
        return overflow.ovf_irot_planned(x, y, negate, t, sn, width)
    lowest = U(1) << U(63)
    b1, x = shear64(x, t, y, 1)
    b2, y = shear64(y, sn, x, -1)
    b3, x = shear64(x, t, y, 1)
    bad = U(negate) & ((U(1) if x == lowest else U(0)) | (U(1) if y == lowest else U(0)))
    return bad | b1 | b2 | b3


TWO64 = 18446744073709551616.0


@njit(**JIT)
def bit_length(word):
    """The number of significant bits of a uint64 word (0 for 0): ``lzcnt``."""
    return U(64) - nlz64(word)  # type: ignore[call-arg]  # numba intrinsic: typing context is implicit


@njit(**JIT, inline="always")
def fdiv_short_ok64(x, y):
    """Whether :func:`fdiv_short64` gives ``fdiv_ovf64(x, y)``: the divisor's magnitude is
    below 2^62 and the quotient's below 2^51 (the dividend's magnitude at most 18 bits
    longer than the divisor's), so one float64 quotient is within one of it."""
    n = (U(0) - x) if I(x) < I(0) else x
    d = (U(0) - y) if I(y) < I(0) else y
    return d >> U(62) == U(0) and bit_length(n) <= bit_length(d) + U(18)


@njit(**JIT, inline="always")
def fdiv_chain_ok64(x, y, z):
    """:func:`fdiv_short_ok64` ``(q, z)`` for the quotient ``q`` of ``fdiv_short64(x, y)``
    (itself admitted), from the operands' lengths alone, so a guard need not divide: q <=
    (|x| 2^32 + |y|/2) / |y| < 2^(len|x| + 33 - len|y|) + 1/2, so len q <= len|x| + 34 -
    len|y|, and that at most len|z| + 18 admits q / z.  It may refuse a quotient the
    exact test would admit (by up to two bits: that lane takes the exact loop), never the
    reverse (``tests/sim/tile/test_engine.py``)."""
    n = (U(0) - x) if I(x) < I(0) else x
    d = (U(0) - y) if I(y) < I(0) else y
    e = (U(0) - z) if I(z) < I(0) else z
    return e >> U(62) == U(0) and \
        bit_length(n) + U(34) <= bit_length(e) + U(18) + bit_length(d)


@njit(**JIT, inline="always")
def fdiv_short64(x, y):
    """(fdiv, ovf_div) at W = 64 where :func:`fdiv_short_ok64` holds (y != 0): the
    quotient q = floor((|x| 2^32 + floor(|y|/2)) / |y|) < 2^51 from one float64 division
    (within one of q), settled by the sign and size of the exact remainder -- which fits a
    signed word, so 64-bit products compute it.  No divide instruction and no branch: a
    loop over a tile's lanes runs in vector registers.  A quotient that small never
    overflows (the flag is 0)."""
    a_negative = x >> U(63)
    b_negative = y >> U(63)
    n = (x ^ (U(0) - a_negative)) + a_negative
    d = (y ^ (U(0) - b_negative)) + b_negative
    half = d >> U(1)
    n_lo = (n << U(32)) + half
    n_hi = (n >> U(32)) + (U(1) if n_lo < half else U(0))
    q = U((float(n_hi) * TWO64 + float(n_lo)) / float(d))
    r = I(n_lo - q * d)
    q = q - (U(1) if r < I(0) else U(0)) + (U(1) if r >= I(d) else U(0))
    return (U(0) - q) if a_negative != b_negative else q, U(0)


TOP32 = U(0x7FFFFFFF)


@njit(**JIT)
def fdiv_ovf32(x, y):
    """(fdiv, ovf_div) at W = 32 for y != 0: floor(((|x| << 17) + |y|) / (2 |y|)), both
    below 2^53, from the float64 quotient (within one) and the exact remainder."""
    a = I(x) - I((x & U(0x80000000)) << U(1))
    b = I(y) - I((y & U(0x80000000)) << U(1))
    n = -a if a < 0 else a
    d = -b if b < 0 else b
    numerator = (n << I(17)) + d
    divisor = d << I(1)
    q = I(float(numerator) / float(divisor))
    r = numerator - q * divisor
    q = q - (I(1) if r < 0 else I(0)) + (I(1) if r >= divisor else I(0))
    negative = (a < 0) != (b < 0)
    flag = U(1) if U(q) > (TOP32 + (U(1) if negative else U(0))) else U(0)
    word = (U(0) - U(q)) if negative else U(q)
    return word & LOW32, flag


@njit(**JIT)
def fdiv32(x, y):
    """fdiv at W = 32 for y != 0."""
    return fdiv_ovf32(x, y)[0]


# --- the names the translated templates call ------------------------------------------------
# The compiled engine's vocabulary is one function per name with the width as its last
# argument (``fmul_ovf(x, y, 64)``): these take the same arguments, so the tile kernels,
# which import this module after that vocabulary, call the versions above.  Inlined by
# numba, the width a constant in the caller: the other width's branch folds away.


@njit(**JIT, inline="always")
def fmul_ovf(x, y, width):
    """(fmul, ovf_mul): at W = 64 from 32-bit limbs (:func:`fmul_ovf64`), else the
    compiled engine's (one 64-bit product, which vectorises)."""
    if width == 64:
        return fmul_ovf64(x, y)
    return compiled.fmul_ovf(x, y, width)


@njit(**JIT, inline="always")
def fmul(x, y, width):
    """fmul: at W = 64 from 32-bit limbs, else the compiled engine's."""
    if width == 64:
        return fmul64(x, y)
    return compiled.fmul(x, y, width)


@njit(**JIT, inline="always")
def fdiv_ovf(x, y, width):
    """(fdiv, ovf_div) for y != 0: at W = 32 from a float64 quotient (:func:`fdiv_ovf32`),
    at W = 64 the compiled engine's 128/64 division (the fast loops call
    :func:`fdiv_short64` where their guard admits it: ``source.short_division_checks``)."""
    if width == 32:
        return fdiv_ovf32(x, y)
    return compiled.fdiv_ovf(x, y, width)


@njit(**JIT, inline="always")
def fdiv(x, y, width):
    """fdiv for y != 0 (:func:`fdiv_ovf`'s word)."""
    return fdiv_ovf(x, y, width)[0]
