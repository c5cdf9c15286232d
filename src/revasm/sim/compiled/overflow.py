"""The overflow predicates of the vocabulary (``isa/primitives.py``) as numba functions.

``ovf_add``, ``ovf_sub``, ``ovf_mul``, ``ovf_div``, ``ovf_sat``, ``ovf_rot`` and
``ovf_irot``, with the width as the last argument like the rest of ``vocab.py``: 1 (as a
uint64 word) when the exact result of the operation leaves the signed W-bit range, else
0.  Where the exact value needs more than 64 bits it is held as a signed 128-bit pair
``(hi: int64, lo: uint64)`` (``vocab.w_*``).  The generated kernels import these
names next to the vocabulary's; the ``overflow`` device itself is written inline by
the translator (``translate.py``): count, or fault when the lane is strict.
"""
from __future__ import annotations

from numba import njit

from .vocab import (
    JIT,
    OPAQUE,
    I,
    S,
    U,
    fdiv_ovf,
    fmul_ovf,
    mul_round32,
    rotation_plan,
    smul128,
    w_add,
    w_fits64,
    w_of,
    w_sar,
    w_sub,
    word_mask,
)


@njit(**JIT)
def ovf_add(x, y, width):
    total = (x + y) & word_mask(width)
    return (((x ^ total) & (y ^ total)) >> U(width - 1)) & U(1)


@njit(**JIT)
def ovf_sub(x, y, width):
    difference = (x - y) & word_mask(width)
    return (((x ^ y) & (x ^ difference)) >> U(width - 1)) & U(1)


@njit(**JIT)
def ovf_sat(x, width):
    top = word_mask(width) >> U(1)
    return U(1) if x == top or x == top + U(1) else U(0)


@njit(**JIT)
def ovf_mul(x, y, width):
    return fmul_ovf(x, y, width)[1]


@njit(**JIT)
def ovf_div(x, y, width):
    return U(0) if y == U(0) else fdiv_ovf(x, y, width)[1]


# --- rotations: a shear wraps, or the reduction negates -2**(W-1) ----------------------

@njit(**JIT)
def _shear(word, coefficient, other, sign, width):
    """(wraps?, new word) of ``word + sign * round(coefficient * S(other))``: exact in
    int64 at W = 32, in 128 bits at W = 64."""
    if width == 32:
        total = S(word, 32) + sign * mul_round32(coefficient, S(other, 32))
        fits = I(-(1 << 31)) <= total <= I((1 << 31) - 1)
        return not fits, U(total) & word_mask(32)
    h, lo = smul128(coefficient, I(other))  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    h, lo = w_add(h, lo, I(0), U(1 << 31))
    ph, pl = w_sar(h, lo, 32)
    wh, wl = w_of(I(word))
    if sign > 0:
        h, lo = w_add(wh, wl, ph, pl)
    else:
        h, lo = w_sub(wh, wl, ph, pl)
    return not w_fits64(h, lo), lo


@njit(**JIT)
def ovf_rot_planned(x, y, negate, t, sn, width):
    mask = word_mask(width)
    lowest = (mask >> U(1)) + U(1)
    if negate:
        if x == lowest or y == lowest:
            return U(1)
        x, y = (U(0) - x) & mask, (U(0) - y) & mask
    bad, x = _shear(x, t, y, I(-1), width)
    if bad:
        return U(1)
    bad, y = _shear(y, sn, x, I(1), width)
    if bad:
        return U(1)
    bad, x = _shear(x, t, y, I(-1), width)
    return U(1) if bad else U(0)


@njit(**JIT)
def ovf_irot_planned(x, y, negate, t, sn, width):
    lowest = (word_mask(width) >> U(1)) + U(1)
    bad, x = _shear(x, t, y, I(1), width)
    if bad:
        return U(1)
    bad, y = _shear(y, sn, x, I(-1), width)
    if bad:
        return U(1)
    bad, x = _shear(x, t, y, I(1), width)
    if bad:
        return U(1)
    return U(1) if negate and (x == lowest or y == lowest) else U(0)


@njit(**OPAQUE)
def ovf_rot(x, y, theta, width):
    negate, t, sn = rotation_plan(theta, width)
    return ovf_rot_planned(x, y, negate, t, sn, width)


@njit(**OPAQUE)
def ovf_irot(x, y, theta, width):
    negate, t, sn = rotation_plan(theta, width)
    return ovf_irot_planned(x, y, negate, t, sn, width)


__all__ = ["ovf_add", "ovf_div", "ovf_irot", "ovf_irot_planned", "ovf_mul", "ovf_rot",
           "ovf_rot_planned", "ovf_sat", "ovf_sub"]
