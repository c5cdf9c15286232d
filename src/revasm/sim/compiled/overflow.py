"""The overflow predicates of the vocabulary (``isa/vocabulary.py``) as numba functions.

``ovf_add``, ``ovf_sub``, ``ovf_mul``, ``ovf_div``, ``ovf_sat``, ``ovf_rot`` and
``ovf_irot``, suffixed by the width like the rest of ``vocab.py``: 1 (as a uint64 word)
when the exact result of the operation leaves the signed W-bit range, else 0.  Where
the exact value needs more than 64 bits it is held as a signed 128-bit pair
``(hi: int64, lo: uint64)`` (``vocab.w_*``).  The generated kernels import these
names next to the vocabulary's; the ``overflow`` device itself is written inline by
the translator (``translate.py``): count, or fault when the lane is strict.
"""
from __future__ import annotations

from numba import njit

from .vocab import (
    JIT,
    LOW32,
    S32,
    SIGN32,
    SIGN64,
    TOP32,
    TOP64,
    I,
    U,
    fdiv_ovf32,
    fdiv_ovf64,
    fmul_ovf32,
    fmul_ovf64,
    mul_round32,
    rotation_plan32,
    rotation_plan64,
    smul128,
    w_add,
    w_fits64,
    w_of,
    w_sar,
    w_sub,
)


@njit(**JIT)
def ovf_add32(x, y):
    total = (x + y) & LOW32
    return (((x ^ total) & (y ^ total)) >> U(31)) & U(1)


@njit(**JIT)
def ovf_add64(x, y):
    total = x + y
    return ((x ^ total) & (y ^ total)) >> U(63)


@njit(**JIT)
def ovf_sub32(x, y):
    difference = (x - y) & LOW32
    return (((x ^ y) & (x ^ difference)) >> U(31)) & U(1)


@njit(**JIT)
def ovf_sub64(x, y):
    difference = x - y
    return ((x ^ y) & (x ^ difference)) >> U(63)


@njit(**JIT)
def ovf_sat32(x):
    return U(1) if x == TOP32 or x == SIGN32 else U(0)


@njit(**JIT)
def ovf_sat64(x):
    return U(1) if x == TOP64 or x == SIGN64 else U(0)


@njit(**JIT)
def _fits32(v):
    return I(-(1 << 31)) <= v <= I((1 << 31) - 1)


@njit(**JIT)
def ovf_mul32(x, y):
    return fmul_ovf32(x, y)[1]


@njit(**JIT)
def _product64(a, b):
    """floor((a b + 2**31) / 2**32) as a 128-bit pair (the exact rounded product)."""
    h, lo = smul128(a, b)
    h, lo = w_add(h, lo, I(0), U(1 << 31))
    return w_sar(h, lo, 32)


@njit(**JIT)
def ovf_mul64(x, y):
    return fmul_ovf64(x, y)[1]


@njit(**JIT)
def ovf_div32(x, y):
    return U(0) if y == U(0) else fdiv_ovf32(x, y)[1]


@njit(**JIT)
def ovf_div64(x, y):
    return U(0) if y == U(0) else fdiv_ovf64(x, y)[1]


# --- rotations: a shear wraps, or the reduction negates -2**(W-1) ----------------------

@njit(**JIT)
def _shear32(word, coefficient, other, sign):
    """(wraps?, new word) of ``word + sign * round(coefficient * S(other))`` at W = 32."""
    total = S32(word) + sign * mul_round32(coefficient, S32(other))
    return not _fits32(total), U(total) & LOW32


@njit(**JIT)
def _shear64(word, coefficient, other, sign):
    """The same at W = 64, exact in 128 bits."""
    ph, pl = _product64(coefficient, I(other))
    wh, wl = w_of(I(word))
    if sign > 0:
        h, lo = w_add(wh, wl, ph, pl)
    else:
        h, lo = w_sub(wh, wl, ph, pl)
    return not w_fits64(h, lo), lo


@njit(**JIT)
def ovf_rot32_planned(x, y, negate, t, sn):
    if negate:
        if x == SIGN32 or y == SIGN32:
            return U(1)
        x, y = (U(0) - x) & LOW32, (U(0) - y) & LOW32
    bad, x = _shear32(x, t, y, I(-1))
    if bad:
        return U(1)
    bad, y = _shear32(y, sn, x, I(1))
    if bad:
        return U(1)
    bad, x = _shear32(x, t, y, I(-1))
    return U(1) if bad else U(0)


@njit(**JIT)
def ovf_rot32(x, y, theta):
    negate, t, sn = rotation_plan32(theta)
    return ovf_rot32_planned(x, y, negate, t, sn)


@njit(**JIT)
def ovf_irot32_planned(x, y, negate, t, sn):
    bad, x = _shear32(x, t, y, I(1))
    if bad:
        return U(1)
    bad, y = _shear32(y, sn, x, I(-1))
    if bad:
        return U(1)
    bad, x = _shear32(x, t, y, I(1))
    if bad:
        return U(1)
    return U(1) if negate and (x == SIGN32 or y == SIGN32) else U(0)


@njit(**JIT)
def ovf_irot32(x, y, theta):
    negate, t, sn = rotation_plan32(theta)
    return ovf_irot32_planned(x, y, negate, t, sn)


@njit(**JIT)
def ovf_rot64_planned(x, y, negate, t, sn):
    if negate:
        if x == SIGN64 or y == SIGN64:
            return U(1)
        x, y = U(0) - x, U(0) - y
    bad, x = _shear64(x, t, y, I(-1))
    if bad:
        return U(1)
    bad, y = _shear64(y, sn, x, I(1))
    if bad:
        return U(1)
    bad, x = _shear64(x, t, y, I(-1))
    return U(1) if bad else U(0)


@njit(**JIT)
def ovf_rot64(x, y, theta):
    negate, t, sn = rotation_plan64(theta)
    return ovf_rot64_planned(x, y, negate, t, sn)


@njit(**JIT)
def ovf_irot64_planned(x, y, negate, t, sn):
    bad, x = _shear64(x, t, y, I(1))
    if bad:
        return U(1)
    bad, y = _shear64(y, sn, x, I(-1))
    if bad:
        return U(1)
    bad, x = _shear64(x, t, y, I(1))
    if bad:
        return U(1)
    return U(1) if negate and (x == SIGN64 or y == SIGN64) else U(0)


@njit(**JIT)
def ovf_irot64(x, y, theta):
    negate, t, sn = rotation_plan64(theta)
    return ovf_irot64_planned(x, y, negate, t, sn)


__all__ = ["ovf_add32", "ovf_add64", "ovf_div32", "ovf_div64", "ovf_irot32", "ovf_irot64",
           "ovf_irot32_planned", "ovf_irot64_planned", "ovf_rot32_planned",
           "ovf_rot64_planned",
           "ovf_mul32", "ovf_mul64", "ovf_rot32", "ovf_rot64", "ovf_sat32", "ovf_sat64",
           "ovf_sub32", "ovf_sub64"]
