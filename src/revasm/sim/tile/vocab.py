"""The tile engine's versions of vocabulary functions: the same words, in vector-friendly code.

The tile interpreter's loops run one template over the lanes of a tile, and LLVM turns a
loop into SIMD code only if every operation in it has a vector form.  The compiled
engine's fixed-point product at W = 64 is one 128-bit multiplication (``smul128``), which
has none; here it is four 32 x 32 -> 64-bit products of the operands' halves (AVX-512's
``vpmuludq``), summed with explicit carries, and the sign corrections of the signed
product.  Each function returns exactly what the compiled engine's function of the same
name returns (``tests/test_tile_engine.py`` checks it on random and edge words), so the
tile kernels, which import these after the compiled vocabulary, compute the same bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit

U = np.uint64
I = np.int64  # noqa: E741 - short names keep the arithmetic readable
LOW32 = U(0xFFFFFFFF)
JIT = dict(cache=True, nogil=True)

__all__ = ["fmul64", "fmul_ovf64", "smul_limbs"]


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

