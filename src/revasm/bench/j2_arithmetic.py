"""The arithmetic floor of the J2 gradient: examples/bessel_j2.pal's gradient protocol at
W = 64 written by hand as one numba loop over lanes, with no interpreter around it.

It computes what the compiled engine computes -- the forward pass in value mode, then
grad[J2] = 1 and the backward pass in gradient mode, instruction by instruction in the
table's order (values uncomputed, adjoints accumulated, the spent terms pushed on and
popped off a stack in memory) -- with the same exact fixed-point primitives
(``fmul_ovf``, ``fdiv_ovf`` at W = 64), but without dispatch, step and cycle counts, fault
checks, the per-lane register file or the memory table.  So its time per lane is a floor
under any engine that runs this program bit-exactly on this machine:
``bench/bessel.py`` times it next to the engine and numpy's forward over the same lanes,
and checks that its gradient words equal the engine's on every lane (so this second form
of the program cannot drift from the first unnoticed).

Its cost is set by the divider: the protocol takes 128 exact 128-by-64-bit divisions per
lane (32 forward, 96 backward: each ADDDIV/SUBDIV uncomputes its quotient and its adjoint
needs 1/d and q/d), ``division_ns`` measures one, and those alone come to most of the floor.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit, prange

from revasm.sim.compiled.vocab import fdiv_ovf, fmul_ovf

U = np.uint64
TERMS = 16
#: Exact divisions per lane in the gradient protocol (2 per iteration forward, 6 backward).
DIVISIONS = 8 * TERMS
_JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")  # njit's options


@njit(inline="always", **_JIT)
def _product_adjoint(a, b, g):
    """A product register's backward step: p = a * b (with its overflow flag) and the
    adjoint's terms g * b (for a's gradient) and g * a (for b's)."""
    p, f = fmul_ovf(a, b, 64)
    ta, _ = fmul_ovf(g, b, 64)
    tb, _ = fmul_ovf(g, a, 64)
    return p, f, ta, tb


@njit(inline="always", **_JIT)
def _quotient_adjoint(n, d, g):
    """A quotient register's backward step: q = n / d (with its overflow flag) and the
    adjoint's terms g / d and g * -(q / d) -- three divisions."""
    one = U(1 << 32)
    q, f = fdiv_ovf(n, d, 64)
    db, _ = fdiv_ovf(one, d, 64)
    dc, _ = fdiv_ovf(q, d, 64)
    tn, _ = fmul_ovf(g, db, 64)
    td, _ = fmul_ovf(g, U(0) - dc, 64)
    return q, f, tn, td


@njit(inline="always", **_JIT)
def _lane(x, mem, gm):
    """grad[x] of J2 at the word x (and a word that is 0 unless something went wrong:
    an overflow flag, or a register the backward pass failed to return to its start)."""
    one = U(1 << 32)
    r4 = one
    r5 = U(2 << 32)
    r8 = U(1 << 31)
    r17 = U(0)
    flag = U(0)
    r3, f = fmul_ovf(x, r8, 64)
    flag |= f
    r6, f = fmul_ovf(r3, r3, 64)
    flag |= f
    r7, f = fmul_ovf(r6, r8, 64)
    flag |= f
    r9 = r7
    r10 = r11 = r12 = r13 = r14 = r15 = U(0)
    for _ in range(TERMS):                       # forward, value mode
        r10 += r4
        r11 += r10
        r11 += r5
        t, f = fmul_ovf(r10, r11, 64)
        r12 -= t
        flag |= f
        t, f = fdiv_ovf(r6, r12, 64)
        r13 += t
        flag |= f
        t, f = fmul_ovf(r7, r13, 64)
        r14 += t
        flag |= f
        mem[r17] = r7
        r7 = U(0)
        r17 += U(1)
        r7, r14 = r14, r7
        r9 += r7
        t, f = fdiv_ovf(r6, r12, 64)
        r13 -= t
        flag |= f
        t, f = fmul_ovf(r10, r11, 64)
        r12 += t
        flag |= f
        r11 -= r5
        r11 -= r10
        r15 += U(1)
    r2 = r9
    g1 = g3 = g4 = g5 = g6 = g7 = g8 = g9 = g10 = g11 = g12 = g13 = g14 = U(0)
    g2 = one                                     # grad[J2] = 1, gradient switch on
    g9 += g2
    r2 -= r9
    for _ in range(TERMS):                       # backward, gradient mode
        r15 -= U(1)
        g10 -= g11
        r11 += r10
        g5 -= g11
        r11 += r5
        p, f, ta, tb = _product_adjoint(r10, r11, g12)   # ADDMUL $12 $10 $11
        flag |= f
        g10 += ta
        g11 += tb
        r12 -= p
        q, f, t6, t12 = _quotient_adjoint(r6, r12, g13)   # SUBDIV $13 $6 $12
        flag |= f
        g6 -= t6
        g12 -= t12
        r13 += q
        g7 += g9
        r9 -= r7
        g7, g14 = g14, g7
        r7, r14 = r14, r7
        r17 -= U(1)
        g7, gm[r17] = gm[r17], g7
        r7, mem[r17] = mem[r17], r7
        p, f, ta, tb = _product_adjoint(r7, r13, g14)     # ADDMUL $14 $7 $13
        flag |= f
        g7 += ta
        g13 += tb
        r14 -= p
        q, f, t6, t12 = _quotient_adjoint(r6, r12, g13)   # ADDDIV $13 $6 $12
        flag |= f
        g6 += t6
        g12 += t12
        r13 -= q
        p, f, ta, tb = _product_adjoint(r10, r11, g12)   # SUBMUL $12 $10 $11
        flag |= f
        g10 -= ta
        g11 -= tb
        r12 += p
        g5 += g11
        r11 -= r5
        g10 += g11
        r11 -= r10
        g4 += g10
        r10 -= r4
    g7 += g9
    r9 -= r7
    t, f = fmul_ovf(g7, r8, 64)
    g6 += t
    t, f = fmul_ovf(g7, r6, 64)
    g8 += t
    t, f = fmul_ovf(r6, r8, 64)
    r7 -= t
    t, f = fmul_ovf(g6, r3, 64)
    g3 += t
    g3 += t
    t, f = fmul_ovf(r3, r3, 64)
    r6 -= t
    t, f = fmul_ovf(g3, r8, 64)
    g1 += t
    t, f = fmul_ovf(g3, x, 64)
    g8 += t
    t, f = fmul_ovf(x, r8, 64)
    r3 -= t
    return g1, flag | r3 | r6 | r7 | r9 | r12 | r13 | r14 | r15 | r17 | r2


#: Lanes per task of the parallel loop (each task's stack is allocated once).
_CHUNK = 1024


@njit(parallel=True, **_JIT)
def _gradients(xs, out, bad):
    n = xs.shape[0]
    for chunk in prange((n + _CHUNK - 1) // _CHUNK):
        mem = np.zeros(TERMS, np.uint64)
        gm = np.zeros(TERMS, np.uint64)
        for lane in range(chunk * _CHUNK, min(n, (chunk + 1) * _CHUNK)):
            mem[:] = 0
            gm[:] = 0
            out[lane], bad[lane] = _lane(xs[lane], mem, gm)


def gradient_words(x_words: np.ndarray) -> np.ndarray:
    """grad[x] words (uint64) of J2 for each lane's x word, on every core; raises if a lane
    overflowed or did not run back to its start (the floor is only a floor when exact)."""
    xs = np.ascontiguousarray(x_words).astype(np.uint64, copy=False)
    out = np.empty(len(xs), np.uint64)
    bad = np.empty(len(xs), np.uint64)
    _gradients(xs, out, bad)
    if np.any(bad):
        raise ValueError(f"{int(np.count_nonzero(bad))} lanes overflowed or did not restore")
    return out


@njit(**_JIT)
def _divide_all(n, d, out):
    for i in range(n.shape[0]):
        out[i] = fdiv_ovf(n[i], d[i], 64)[0]


def division_ns(count: int = 1 << 20, repeats: int = 5) -> float:
    """ns per exact W = 64 division (``fdiv_ovf``) on one core, independent operands."""
    rng = np.random.default_rng(7)
    n = rng.integers(1, 1 << 40, count, dtype=np.uint64)
    d = rng.integers(1 << 20, 1 << 40, count, dtype=np.uint64)
    out = np.empty(count, np.uint64)
    _divide_all(n[:16], d[:16], out[:16])
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        _divide_all(n, d, out)
        best = min(best, time.perf_counter() - started)
    return best / count * 1e9
