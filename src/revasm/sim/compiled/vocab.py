"""The template vocabulary (``isa/vocabulary.py``) as scalar numba functions, bit for bit.

Every word is a ``uint64`` (W = 32 words keep their top half zero), every signed view
and BR an ``int64``; no function ever goes through floats.  The generated kernels
(``generate.py``) call these names -- one per row of the primitives table
(``isa/primitives.py``), and the helpers below them -- with the width as a constant last
argument (``fmul(x, y, 64)``, ``fn_sin(x, 64)``); the elementary functions' algorithms
are ``isa/elementary.py``'s, step for step, with
the same constants (``elementary.TABLES``): where an intermediate of the Python code
exceeds 64 bits, it is held here as a signed 128-bit pair ``(hi: int64, lo: uint64)``.

Faults are not raised here: the generated code checks each faulting function's domain
(its row's ``Fault`` conditions: ``fdiv`` by zero, ``log`` of x <= 0, ...) before it calls
it, in the reference's order.

numba typing rules kept throughout: operands of one operator have one type (uint64 with
int64 gives float64), every literal is typed (``U(1)``, ``I(0)``), shift amounts take the
type of the shifted word.
"""
from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from revasm.isa import elementary
from revasm.isa.fixed_point import word_format
from revasm.isa.rotation import pi_raw

# The kernels' worker threads (numba's OpenMP pool, loaded at the first parallel run)
# sleep between runs instead of spinning: libgomp's default spins, and on a machine
# shared with other jobs a spinning pool holds the cores the next run needs -- 10^4 lanes
# took 2.7x the CPU time (bench/compiled_speed.py).  A policy the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

U = np.uint64
I = np.int64  # noqa: E741 - short names keep the arithmetic readable
LOW32 = U(0xFFFFFFFF)
JIT: dict[str, Any] = dict(cache=True, nogil=True)
#: The function unit and rotations: compiled once, called (never inlined) by the kernels,
#: whose compile time would otherwise grow with every CORDIC loop copied into them.
OPAQUE: dict[str, Any] = dict(cache=True, nogil=True, debug=True)

# --- LLVM intrinsics: the 128-bit product and count-leading-zeros ------------------------


@intrinsic
def umul128(typingctx, a, b):
    """(hi, lo) of the unsigned 128-bit product of two uint64."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        lo = builder.trunc(p, ir.IntType(64))
        hi = builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, [hi, lo])
    return sig, codegen


@intrinsic
def smul128(typingctx, a, b):
    """(hi: int64, lo: uint64) of the signed 128-bit product of two int64."""
    sig = types.Tuple((types.int64, types.uint64))(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.sext(args[0], wide), builder.sext(args[1], wide))
        lo = builder.trunc(p, ir.IntType(64))
        hi = builder.trunc(builder.ashr(p, ir.Constant(wide, 64)), ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, [hi, lo])
    return sig, codegen


@intrinsic
def nlz64(typingctx, a):
    """Leading zeros of a uint64 (64 for zero)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
    return sig, codegen


# --- signed 128-bit pairs (hi: int64, lo: uint64) ----------------------------------------


@njit(**JIT)
def w_of(x):
    """An int64 as a 128-bit pair."""
    return x >> I(63), U(x)


@njit(**JIT)
def w_add(ah, al, bh, bl):
    lo = al + bl
    carry = I(1) if lo < al else I(0)
    return ah + bh + carry, lo


@njit(**JIT)
def w_sub(ah, al, bh, bl):
    lo = al - bl
    borrow = I(1) if al < bl else I(0)
    return ah - bh - borrow, lo


@njit(**JIT)
def w_neg(h, lo):
    return w_sub(I(0), U(0), h, lo)


@njit(**JIT)
def w_shl(h, lo, n):
    """(h, lo) << n for 0 <= n < 128 (mod 2**128)."""
    if n == 0:
        return h, lo
    if n < 64:
        return (h << I(n)) | I(lo >> U(64 - n)), lo << U(n)
    return I(lo << U(n - 64)), U(0)


@njit(**JIT)
def w_sar(h, lo, n):
    """(h, lo) >> n (arithmetic, Python's floor shift) for 0 <= n < 128."""
    if n == 0:
        return h, lo
    if n < 64:
        return h >> I(n), (lo >> U(n)) | (U(h) << U(64 - n))
    return h >> I(63), U(h >> I(n - 64))


@njit(**JIT)
def w_lt(ah, al, bh, bl):
    return ah < bh or (ah == bh and al < bl)


@njit(**JIT)
def w_mul_i(h, lo, k):
    """(h, lo) * k mod 2**128 for an int64 k."""
    ph, pl = umul128(lo, U(k))  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    hi = I(ph) + h * k
    if k < 0:
        hi -= I(lo)
    return hi, pl


@njit(**JIT)
def w_fits64(h, lo):
    """Whether the pair is an int64 value."""
    return h == (I(lo) >> I(63))


@njit(**JIT)
def divlu(u1, u0, v):
    """(q, r) of (u1 2**64 + u0) / v for u1 < v (Hacker's Delight, divlu): uint64."""
    b = U(1) << U(32)
    s = nlz64(v)  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    v = v << s
    vn1 = v >> U(32)
    vn0 = v & LOW32
    if s > U(0):
        un32 = (u1 << s) | (u0 >> (U(64) - s))
    else:
        un32 = u1
    un10 = u0 << s
    un1 = un10 >> U(32)
    un0 = un10 & LOW32
    q1 = un32 // vn1
    rhat = un32 - q1 * vn1
    while q1 >= b or q1 * vn0 > b * rhat + un1:
        q1 -= U(1)
        rhat += vn1
        if rhat >= b:
            break
    un21 = un32 * b + un1 - q1 * v
    q0 = un21 // vn1
    rhat = un21 - q0 * vn1
    while q0 >= b or q0 * vn0 > b * rhat + un0:
        q0 -= U(1)
        rhat += vn1
        if rhat >= b:
            break
    r = (un21 * b + un0 - q0 * v) >> s
    return q1 * b + q0, r


@intrinsic
def _divq(typingctx, hi, lo, d):
    """x86-64 ``div``: (q, r) of (hi 2**64 + lo) / d for hi < d, one instruction."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        word = ir.IntType(64)
        fnty = ir.FunctionType(ir.LiteralStructType([word, word]), [word, word, word])
        asm = ir.InlineAsm(fnty, "divq $4", "={rax},={rdx},{rax},{rdx},r,~{flags}")
        pair = builder.call(asm, [args[1], args[0], args[2]])
        q = builder.extract_value(pair, 0)
        r = builder.extract_value(pair, 1)
        return context.make_tuple(builder, signature.return_type, [q, r])
    return sig, codegen


X86_64 = platform.machine().lower() in ("x86_64", "amd64")
if X86_64:
    import llvmlite.binding as _llvm

    _llvm.initialize_native_asmparser()  # numba's JIT needs it for the ``div`` above


@njit(**JIT)
def divide_low(u1, u0, v):
    """(q, r) of (u1 2**64 + u0) / v for u1 < v: the hardware's 128/64 division on
    x86-64, else :func:`divlu` (two 64-bit divisions)."""
    if X86_64:
        return _divq(u1, u0, v)  # type: ignore[call-arg]  # numba intrinsic: typing context is implicit
    return divlu(u1, u0, v)


@njit(**JIT)
def udiv128(nh, nl, d):
    """(qh, ql) = floor((nh 2**64 + nl) / d), all unsigned, d > 0."""
    if nh < d:
        q, _ = divide_low(nh, nl, d)
        return U(0), q
    qh = nh // d
    q, _ = divide_low(nh - qh * d, nl, d)
    return qh, q


# --- the width tables --------------------------------------------------------------------


def _bits(value: int) -> int:
    """A non-negative integer below 2**64 as the int64 with the same bits."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _table(width: int) -> tuple[int, ...]:
    t = elementary.TABLES[width]  # the one definition of the constants
    return tuple(np.int64(v) for v in (
        t.frac, t.prec, t.guard, t.half_guard, t.max_signed, t.min_signed, t.one,
        t.circular_x0, t.hyperbolic_x0, t.reduce_extra, t.half_pi_wide >> 64,
        _bits(t.half_pi_wide), _bits(t.two_over_pi), _bits(t.pi_p), t.half_pi_p, t.ln2_wide >> 64,
        _bits(t.ln2_wide), t.inv_ln2_k, t.sqrt2_s, t.sqrt_bits, width,
        pi_raw(word_format(width))))


def _steps(steps: tuple) -> np.ndarray:
    return np.array(steps, dtype=np.int64).reshape(-1, 3)


T32 = _table(32)
T64 = _table(64)
#: exp's estimate of k reads z at K fraction bits (``exp_log.exp_k``): the same K at both widths
K_BITS = elementary.TABLES[32].k_bits
if elementary.TABLES[64].k_bits != K_BITS:
    raise ImportError("the compiled kernels assume one K for W = 32 and 64")
CIRC32 = _steps(elementary.TABLES[32].circular)
CIRC64 = _steps(elementary.TABLES[64].circular)
HYP32 = _steps(elementary.TABLES[32].hyperbolic)
HYP64 = _steps(elementary.TABLES[64].hyperbolic)

# Field positions in T32 / T64.
FRAC, PREC, GUARD, HALF_GUARD, MAX_S, MIN_S, ONE, CX0, HX0, EXTRA, HPW_HI, HPW_LO, \
    TWO_OVER_PI, PI_P, HALF_PI_P, LN2_HI, LN2_LO, INV_LN2, SQRT2_S, SQRT_BITS, WIDTH, PI_RAW \
    = range(22)


@njit(**JIT)
def _t(width):
    return T32 if width == 32 else T64


@njit(**JIT)
def _circ(width):
    return CIRC32 if width == 32 else CIRC64


@njit(**JIT)
def _hyp(width):
    return HYP32 if width == 32 else HYP64


@njit(**JIT)
def half_up(v, i):
    """(v + 2**(i-1)) >> i (v for i = 0) without the sum overflowing int64."""
    if i == 0:
        return v
    return (v >> i) + ((v >> (i - 1)) & I(1))


# --- CORDIC (int64 registers: every value stays in (-2, 2) * 2**P) -------------------------


@njit(**JIT)
def cordic(x, y, z, steps, hyperbolic, vectoring):
    """One CORDIC loop for both families and both modes (``isa/functions/cordic.py``):
    each step turns by +-a, towards z = 0 (rotation) or y = 0 (vectoring); the hyperbolic
    family's x update has the opposite sign.

    The turn's direction is data (a sign), so it is applied without a branch: ``k`` is 0
    to turn one way and -1 the other, and ``(v ^ k) - k`` is ``v`` or ``-v`` (mod 2**64,
    as the branches' sums and differences were) -- a mispredicted branch per step cost
    more than the step's arithmetic (docs/decisions.md)."""
    for j in range(steps.shape[0]):
        i = steps[j, 0]
        a = steps[j, 2]
        dx = half_up(y, i)
        dy = half_up(x, i)
        if hyperbolic:
            dx = -dx
        k = ~(y >> I(63)) if vectoring else z >> I(63)  # 0: x - dx, y + dy, z - a
        x = x - ((dx ^ k) - k)
        y = y + ((dy ^ k) - k)
        z = z - ((a ^ k) - k)
    return x, y, z


@njit(**JIT)
def circular_rotate(z, width):
    x, y, _ = cordic(_t(width)[CX0], I(0), z, _circ(width), False, False)
    return x, y


@njit(**JIT)
def circular_rotate2(z1, z2, width):
    """Two ``circular_rotate`` runs in one loop: each step of one does not wait for the
    other's, so the processor overlaps them (a rotation plan needs two)."""
    steps = _circ(width)
    x1 = x2 = _t(width)[CX0]
    y1 = y2 = I(0)
    for j in range(steps.shape[0]):
        i = steps[j, 0]
        a = steps[j, 2]
        k1 = z1 >> I(63)  # as in ``cordic``: 0 turns one way, -1 the other
        k2 = z2 >> I(63)
        dx1, dy1 = half_up(y1, i), half_up(x1, i)
        dx2, dy2 = half_up(y2, i), half_up(x2, i)
        x1, y1, z1 = x1 - ((dx1 ^ k1) - k1), y1 + ((dy1 ^ k1) - k1), z1 - ((a ^ k1) - k1)
        x2, y2, z2 = x2 - ((dx2 ^ k2) - k2), y2 + ((dy2 ^ k2) - k2), z2 - ((a ^ k2) - k2)
    return x1, y1, x2, y2


@njit(**JIT)
def circular_vector(x, y, width):
    return cordic(x, y, I(0), _circ(width), False, True)[2]


@njit(**JIT)
def hyperbolic_rotate(z, width):
    x, y, _ = cordic(_t(width)[HX0], I(0), z, _hyp(width), True, False)
    return x, y


@njit(**JIT)
def hyperbolic_vector(x, y, width):
    return cordic(x, y, I(0), _hyp(width), True, True)[2]


@njit(**JIT)
def round_p(v, width):
    t = _t(width)
    return (v + t[HALF_GUARD]) >> t[GUARD]


@njit(**JIT)
def saturate(v, width):
    t = _t(width)
    if v > t[MAX_S]:
        return t[MAX_S]
    if v < t[MIN_S]:
        return t[MIN_S]
    return v


@njit(**JIT)
def sincos_reduce(ax, width):
    """``sincos_abs``'s argument reduction: CORDIC's angle (in [-pi/4, pi/4]) and the
    quadrant."""
    t = _t(width)
    frac = t[FRAC]
    extra = t[EXTRA]
    ph, pl = umul128(ax, U(t[TWO_OVER_PI]))  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    rh, rl = w_add(I(ph), pl, *w_shl(I(0), U(1), frac + width - 1))
    qh, ql = w_sar(rh, rl, frac + width)
    q = I(ql)
    # wide = (ax << (G + E)) - q * half_pi_wide, exact mod 2**128 (its value is small)
    ah, al = w_shl(I(0), ax, t[GUARD] + extra)
    bh, bl = w_mul_i(t[HPW_HI], U(t[HPW_LO]), q)
    wh, wl = w_sub(ah, al, bh, bl)
    wh, wl = w_add(wh, wl, *w_shl(I(0), U(1), extra - 1))
    rh, rl = w_sar(wh, wl, extra)
    return I(rl), q & I(3)


@njit(**JIT)
def sincos_abs(ax, width):
    """``elementary.sincos_abs`` for a uint64 ``ax >= 0`` (|min_signed| included)."""
    z, q = sincos_reduce(ax, width)
    c, s = circular_rotate(z, width)
    return c, s, q


@njit(**JIT)
def exp_parts(zh, zl, width):
    """``elementary._exp_parts`` for a 128-bit z with |z| < 2**(P+7): (k, cosh r, sinh r)."""
    t = _t(width)
    sh, sl = w_sar(zh, zl, t[PREC] - K_BITS)
    k = (I(sl) * t[INV_LN2] + (I(1) << I(2 * K_BITS - 1))) >> I(2 * K_BITS)
    mh, ml = w_mul_i(t[LN2_HI], U(t[LN2_LO]), k)
    mh, ml = w_add(mh, ml, I(0), U(128))
    mh, ml = w_sar(mh, ml, 8)
    rh, rl = w_sub(zh, zl, mh, ml)
    c, s = hyperbolic_rotate(I(rl), width)
    return k, c, s


@njit(**JIT)
def scale_round(vh, vl, shift):
    """round(v / 2**shift) half-up for shift > 0, else v << -shift (128-bit)."""
    if shift > 0:
        hh, hl = w_shl(I(0), U(1), shift - 1)
        sh, sl = w_add(vh, vl, hh, hl)
        return w_sar(sh, sl, shift)
    return w_shl(vh, vl, -shift)


@njit(**JIT)
def exp_from_p(zh, zl, width):
    """``elementary._exp_from_p``: round(exp(z 2**-P) 2**F), saturating; z a 128-bit pair."""
    t = _t(width)
    lh, ll = w_shl(I(0), U(width + 2), t[PREC])
    if not w_lt(zh, zl, lh, ll):
        return t[MAX_S]
    nh, nl = w_neg(lh, ll)
    if not w_lt(nh, nl, zh, zl):
        return I(0)
    k, c, s = exp_parts(zh, zl, width)
    if k >= width - t[FRAC]:
        return t[MAX_S]
    if k <= -t[FRAC] - 2:
        return I(0)
    vh, vl = w_of(c + s)
    vh, vl = scale_round(vh, vl, t[GUARD] - k)
    if vh != 0 or vl > U(t[MAX_S]):
        return t[MAX_S]
    return I(vl)


@njit(**JIT)
def ln_p(x, width):
    """``elementary.ln_p`` for an int64 x > 0: ln(x 2**-F) 2**P as a 128-bit pair."""
    t = _t(width)
    n = I(64) - I(nlz64(U(x)))  # type: ignore[call-arg]  # numba intrinsic: typing context is implicit
    e = n - 1 - t[FRAC]
    s = t[PREC] - 1
    shift = s - (n - 1)
    a = x << shift if shift >= 0 else x >> -shift
    if a >= t[SQRT2_S]:
        e += 1
        u = a + (I(2) << s)
        v = a - (I(2) << s)
    else:
        u = a + (I(1) << s)
        v = a - (I(1) << s)
    z = hyperbolic_vector(u, v, width) if v != 0 else I(0)
    mh, ml = w_mul_i(t[LN2_HI], U(t[LN2_LO]), e)
    mh, ml = w_add(mh, ml, I(0), U(128))
    mh, ml = w_sar(mh, ml, 8)
    return w_add(mh, ml, *w_of(2 * z))


@njit(**JIT)
def div_round_mag(n, d, scale):
    """round(n 2**scale / d) for uint64 n >= 0, d > 0, ties up: (hi, lo) unsigned.

    floor((n 2**(scale+1) + d) / (2d)) == floor((n 2**scale + floor(d/2)) / d), so the
    divisor stays a uint64."""
    nh, nl = w_shl(I(0), n, scale)
    nh, nl = w_add(nh, nl, I(0), d >> U(1))
    return udiv128(U(nh), nl, d)


@njit(**JIT)
def hyperbolic_abs(ax, width):
    """``elementary._hyperbolic_abs`` for 0 <= ax < 2**40: (k, e**r 2**P, e**-r 4**-k 2**P)."""
    t = _t(width)
    zh, zl = w_shl(I(0), U(ax), t[GUARD])
    k, c, s = exp_parts(zh, zl, width)
    em = c - s
    sh = 2 * k
    if sh > 0:
        if sh >= 64:
            em = I(0)
        else:
            em = I((U(em) + (U(1) << U(sh - 1))) >> U(sh))
    return k, c + s, em


# --- the elementary functions on signed raw words (int64), returning int64 ----------------


@njit(**JIT)
def fx_sin(x, width):
    ax = U(0) - U(x) if x < 0 else U(x)
    c, s, q = sincos_abs(ax, width)
    return sin_result(x, c, s, q, width)


@njit(**JIT)
def sin_result(x, c, s, q, width):
    """sin x from ``sincos_abs(|x|)``."""
    if q == 0:
        r = s
    elif q == 1:
        r = c
    elif q == 2:
        r = -s
    else:
        r = -c
    v = round_p(r, width)
    return -v if x < 0 else v


@njit(**JIT)
def fx_cos(x, width):
    ax = U(0) - U(x) if x < 0 else U(x)
    c, s, q = sincos_abs(ax, width)
    if q == 0:
        r = c
    elif q == 1:
        r = -s
    elif q == 2:
        r = -c
    else:
        r = s
    return round_p(r, width)


@njit(**JIT)
def fx_tan(x, width):
    ax = U(0) - U(x) if x < 0 else U(x)
    c, s, q = sincos_abs(ax, width)
    return tan_result(x, c, s, q, width)


@njit(**JIT)
def tan_result(x, c, s, q, width):
    """tan x from ``sincos_abs(|x|)``."""
    t = _t(width)
    if q & I(1):
        num, den = c, -s
    else:
        num, den = s, c
    negative = (num < 0) != (den < 0)
    if x < 0:
        negative = not negative
    n = U(-num) if num < 0 else U(num)
    d = U(-den) if den < 0 else U(den)
    if d == U(0):
        big = True
        v = I(0)
    else:
        qh, ql = div_round_mag(n, d, t[FRAC])
        big = qh != U(0) or ql > U(t[MAX_S])
        v = I(ql)
    if big:
        return t[MIN_S] if negative else t[MAX_S]
    return saturate(-v if negative else v, width)


@njit(**JIT)
def fx_atan2(y, x, width):
    t = _t(width)
    ax = U(0) - U(x) if x < 0 else U(x)
    ay = U(0) - U(y) if y < 0 else U(y)
    swap = ay > ax
    big, small = (ay, ax) if swap else (ax, ay)
    if big == U(0):
        return I(0)
    shift = t[PREC] - 1 - (I(64) - I(nlz64(big)))  # type: ignore[call-arg]  # numba intrinsic: typing context is implicit
    if shift >= 0:
        big, small = big << U(shift), small << U(shift)
    else:
        big, small = big >> U(-shift), small >> U(-shift)
    a = circular_vector(I(big), I(small), width)
    if swap:
        a = t[HALF_PI_P] - a
    if x < 0:  # pi - a reaches pi 2**P, beyond int64 at W = 64: unsigned
        v = I((U(t[PI_P]) - U(a) + U(t[HALF_GUARD])) >> U(t[GUARD]))
    else:
        v = round_p(a, width)
    return -v if y < 0 else v


@njit(**JIT)
def fx_atan(x, width):
    return fx_atan2(x, _t(width)[ONE], width)


@njit(**JIT)
def fx_exp(x, width):
    zh, zl = w_shl(*w_of(x), _t(width)[GUARD])
    return exp_from_p(zh, zl, width)


@njit(**JIT)
def fx_log(x, width):
    """For x > 0 (the caller faults the others)."""
    t = _t(width)
    h, lo = ln_p(x, width)
    h, lo = w_add(h, lo, I(0), U(t[HALF_GUARD]))
    h, lo = w_sar(h, lo, t[GUARD])
    return I(lo)


@njit(**JIT)
def pow_exponent(x, y, width):
    """y * ln x for x > 0 as the double word exp_from_p takes: a 192-bit product at W = 64,
    clamped to +-2**110 when larger (exp saturates or vanishes long before), then
    (p + 2**(F-1)) >> F.  fx_pow and the function unit's timer (timing.pow_cycles) share it."""
    t = _t(width)
    lh, ll = ln_p(x, width)
    negative = (y < 0) != (lh < 0)
    ay = U(0) - U(y) if y < 0 else U(y)
    if lh < 0:
        mh, ml = w_neg(lh, ll)
    else:
        mh, ml = lh, ll
    ph, pl = umul128(ay, ml)  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    top_h, top_l = umul128(ay, U(mh))
    big = top_h != U(0) or top_l >= (U(1) << U(46))
    ph2 = ph + top_l
    if ph2 < ph:
        big = True
    if ph2 >= (U(1) << U(46)):
        big = True
    if big:
        ph2, pl = U(1) << U(46), U(0)
    zh, zl = I(ph2), pl
    if negative:
        zh, zl = w_neg(zh, zl)
    zh, zl = w_add(zh, zl, *w_shl(I(0), U(1), t[FRAC] - 1))
    return w_sar(zh, zl, t[FRAC])


@njit(**JIT)
def fx_pow(x, y, width):
    """For x >= 0 and not (x == 0 and y < 0) (the caller faults those)."""
    if x == 0:
        return _t(width)[ONE] if y == 0 else I(0)
    zh, zl = pow_exponent(x, y, width)
    return exp_from_p(zh, zl, width)


@njit(**JIT)
def fx_sinh(x, width):
    t = _t(width)
    frac = t[FRAC]
    ax = U(0) - U(x) if x < 0 else U(x)
    if ax >= U((width + 2) << frac):
        big = True
        vh, vl = I(0), U(0)
    else:
        k, ep, em = hyperbolic_abs(I(ax), width)
        if k > width - frac:
            big = True
            vh, vl = I(0), U(0)
        else:
            vh, vl = scale_round(*w_of(ep - em), t[GUARD] + 1 - k)
            big = not w_fits64(vh, vl) or I(vl) > t[MAX_S]
    if big:  # v > max_signed: saturates with x's sign
        return t[MIN_S] if x < 0 else t[MAX_S]
    v = I(vl)
    return saturate(-v if x < 0 else v, width)


@njit(**JIT)
def fx_cosh(x, width):
    t = _t(width)
    frac = t[FRAC]
    ax = U(0) - U(x) if x < 0 else U(x)
    if ax >= U((width + 2) << frac):
        return t[MAX_S]
    k, ep, em = hyperbolic_abs(I(ax), width)
    if k > width - frac:
        return t[MAX_S]
    sh, sl = w_add(*w_of(ep), *w_of(em))
    vh, vl = scale_round(sh, sl, t[GUARD] + 1 - k)
    if not w_fits64(vh, vl) or I(vl) > t[MAX_S]:
        return t[MAX_S]
    return I(vl)


@njit(**JIT)
def fx_tanh(x, width):
    t = _t(width)
    frac = t[FRAC]
    ax = U(0) - U(x) if x < 0 else U(x)
    if ax >= U((frac + 4) << frac):
        v = t[ONE]
    else:
        k, ep, em = hyperbolic_abs(I(ax), width)
        if k >= frac // 2 + 2:
            v = t[ONE]
        else:
            num = ep - em
            den = U(ep) + U(em)
            if num >= 0:
                qh, ql = div_round_mag(U(num), den, frac)
                v = I(ql)
            else:  # floor((num 2**(F+1) + den) / (2 den)) for a (tiny) negative num
                nh, nl = w_shl(I(0), U(-num), frac)
                nh, nl = w_add(nh, nl, I(0), (den - U(1)) >> U(1))
                qh, ql = udiv128(U(nh), nl, den)
                v = -I(ql)
    return -v if x < 0 else v


@njit(**JIT)
def fx_sigmoid(x, width):
    """``hyperbolic.fx_sigmoid``: one hyperbolic CORDIC run at |x|/2, one division."""
    t = _t(width)
    frac = t[FRAC]
    ax = U(0) - U(x) if x < 0 else U(x)
    if ax >= U((frac + 4) << (frac + 1)):
        return t[ONE] if x >= 0 else I(0)
    zh, zl = w_shl(I(0), ax, t[GUARD] - 1)
    k, c, s = exp_parts(zh, zl, width)
    em = c - s
    sh = 2 * k
    if sh >= 64:
        em = I(0)
    elif sh > 0:
        em = I((U(em) + (U(1) << U(sh - 1))) >> U(sh))
    ep = c + s
    _, q = div_round_mag(U(ep if x >= 0 else em), U(ep) + U(em), frac)
    return I(q)


@njit(**JIT)
def fx_sqrt(x, width):
    """For x >= 0: the digit-by-digit root of x 2**F, rounded from its remainder."""
    t = _t(width)
    nh, nl = w_shl(I(0), U(x), t[FRAC])
    rem = I(0)
    root = I(0)
    i = 2 * t[SQRT_BITS] - 2
    while i >= 0:
        dh, dl = w_sar(nh, nl, i)
        rem = (rem << I(2)) | I(dl & U(3))
        trial = (root << I(2)) | I(1)
        root <<= I(1)
        if rem >= trial:
            rem -= trial
            root |= I(1)
        i -= 2
    return root + 1 if rem > root else root


@njit(**JIT)
def fx_abs(x, width):
    t = _t(width)
    if x >= 0:
        return x
    return -x if x > t[MIN_S] else t[MAX_S]


# --- the vocabulary on words ------------------------------------------------------------------
#
# One definition per vocabulary function, for both widths: ``width`` is its last argument,
# which the generated kernels pass as a literal (``fmul(r3, r4, 64)``).  The small
# functions below are inlined into the kernels by LLVM, where the width is a constant and
# every ``if width == 32`` folds away (the same machine code as a function per width,
# measured: docs/decisions.md); the OPAQUE ones (the function unit's, the rotations) are
# called, and test the width once per call next to a CORDIC run.

ALL64 = U(0xFFFFFFFFFFFFFFFF)


@njit(**JIT)
def word_mask(width):
    """The W-bit word mask as a uint64."""
    return ALL64 >> U(64 - width)


@njit(**JIT)
def S(w, width):  # the vocabulary's name
    """The signed view of a W-bit word (an int64)."""
    return I(w << U(64 - width)) >> I(64 - width)


@njit(**JIT)
def word(v, width):
    """An int64 as a W-bit word."""
    return U(v) & word_mask(width)


@njit(**JIT)
def shl(w, n, width):
    return (w << (n & U(width - 1))) & word_mask(width)


@njit(**JIT)
def srl(w, n, width):
    return w >> (n & U(width - 1))


@njit(**JIT)
def sra(w, n, width):
    return U(S(w, width) >> I(n & U(width - 1))) & word_mask(width)


@njit(**JIT)
def rotl(w, n, width):
    k = n & U(width - 1)
    if k == U(0):
        return w
    return ((w << k) | (w >> (U(width) - k))) & word_mask(width)


@njit(**JIT)
def rotr(w, n, width):
    k = n & U(width - 1)
    if k == U(0):
        return w
    return ((w >> k) | (w << (U(width) - k))) & word_mask(width)


@njit(**JIT)
def slt(x, y, width):
    return U(1) if S(x, width) < S(y, width) else U(0)


@njit(**JIT)
def mul_round32(a, b):
    """elementary.fx_mul at W = 32 on signed int64 views: the product fits int64."""
    return (a * b + I(1 << 15)) >> I(16)


@njit(**JIT)
def mul_round64(a, b):
    """Low 64 bits of floor((a b + 2**31) / 2**32): one 128-bit product."""
    h, lo = smul128(a, b)  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    h, lo = w_add(h, lo, I(0), U(1 << 31))
    return U(h) << U(32) | lo >> U(32)


@njit(**JIT)
def mul_word(a, b, width):
    """The rounded product of two signed int64 views, as a W-bit word."""
    if width == 32:
        return U(mul_round32(a, b)) & LOW32
    return mul_round64(a, b)


@njit(**JIT)
def fmul_ovf(x, y, width):
    """(fmul, ovf_mul): the rounded product's word, and 1 if it does not fit (one product;
    at W = 64 a 128-bit one)."""
    if width == 32:
        p = mul_round32(S(x, 32), S(y, 32))
        return U(p) & LOW32, U(0) if I(-(1 << 31)) <= p <= I((1 << 31) - 1) else U(1)
    h, lo = smul128(I(x), I(y))  # type: ignore[call-arg, var-annotated]  # numba intrinsic: typing context is implicit
    h, lo = w_add(h, lo, I(0), U(1 << 31))
    h, lo = w_sar(h, lo, 32)
    return lo, U(0) if w_fits64(h, lo) else U(1)


@njit(**JIT)
def fmul(x, y, width):
    return mul_word(S(x, width), S(y, width), width)


@njit(**JIT)
def fdiv_ovf(x, y, width):
    """(fdiv, ovf_div) for y != 0 (checked by the caller): the rounded quotient's word, and
    1 if it does not fit -- one division for both (at W = 64 a 128-bit one)."""
    a = S(x, width)
    b = S(y, width)
    n = U(0) - U(a) if a < 0 else U(a)
    d = U(0) - U(b) if b < 0 else U(b)
    if width == 32:
        qh = U(0)
        q = ((n << U(17)) + d) // (d << U(1))
    else:
        qh, q = div_round_mag(n, d, 32)
    negative = (a < 0) != (b < 0)
    top = word_mask(width) >> U(1)
    flag = U(1) if qh != U(0) or q > (top + U(1) if negative else top) else U(0)
    if negative:
        q = U(0) - q
    return q & word_mask(width), flag


@njit(**JIT)
def fdiv(x, y, width):
    """y != 0 (checked by the caller)."""
    return fdiv_ovf(x, y, width)[0]


@njit(**JIT)
def fsign(x, width):
    if x == U(0):
        return U(0)
    one = U(1) << U(width // 2)
    return (U(0) - one) & word_mask(width) if x >> U(width - 1) else one


@njit(**JIT)
def fneg(x, width):
    return (U(0) - x) & word_mask(width)


@njit(**JIT)
def fadd(x, y, width):
    return (x + y) & word_mask(width)


@njit(**JIT)
def fsub(x, y, width):
    return (x - y) & word_mask(width)


@njit(**JIT)
def plan_of_angle(theta, width):
    """``rotation.rotation_plan`` for a signed angle: (negate, tan(theta'/2), sin(theta'))."""
    t = _t(width)
    pi = t[PI_RAW]
    half_pi = pi >> I(1)
    negate = False
    reduced = theta
    if reduced > half_pi:
        turns = (U(reduced) - U(half_pi) + U(pi) - U(1)) // U(pi)
        reduced = I(U(reduced) - turns * U(pi))
        negate = (turns & U(1)) == U(1)
    elif reduced < -half_pi:
        turns = (U(-half_pi) - U(reduced) + U(pi) - U(1)) // U(pi)
        reduced = I(U(reduced) + turns * U(pi))
        negate = (turns & U(1)) == U(1)
    half = reduced >> I(1)
    z1, q1 = sincos_reduce(U(0) - U(half) if half < 0 else U(half), width)
    z2, q2 = sincos_reduce(U(0) - U(reduced) if reduced < 0 else U(reduced), width)
    c1, s1, c2, s2 = circular_rotate2(z1, z2, width)
    return negate, tan_result(half, c1, s1, q1, width), sin_result(reduced, c2, s2, q2, width)


@njit(**OPAQUE)
def rotation_plan(theta, width):
    """The plan of a rotation by the word ``theta``: computed once per instruction when its
    template rotates, or tests the overflow of rotating, by one angle more than once
    (``translate.ROTATIONS``); two CORDIC runs, most of a rotation's time."""
    return plan_of_angle(S(theta, width), width)


@njit(**JIT)
def rot_planned(x, y, negate, t, sn, width):
    mask = word_mask(width)
    if negate:
        x, y = (U(0) - x) & mask, (U(0) - y) & mask
    x = (x - mul_word(t, S(y, width), width)) & mask
    y = (y + mul_word(sn, S(x, width), width)) & mask
    x = (x - mul_word(t, S(y, width), width)) & mask
    return x, y


@njit(**JIT)
def irot_planned(x, y, negate, t, sn, width):
    mask = word_mask(width)
    x = (x + mul_word(t, S(y, width), width)) & mask
    y = (y - mul_word(sn, S(x, width), width)) & mask
    x = (x + mul_word(t, S(y, width), width)) & mask
    if negate:
        x, y = (U(0) - x) & mask, (U(0) - y) & mask
    return x, y


@njit(**OPAQUE)
def rot(x, y, theta, width):
    negate, t, sn = rotation_plan(theta, width)
    return rot_planned(x, y, negate, t, sn, width)


@njit(**OPAQUE)
def irot(x, y, theta, width):
    negate, t, sn = rotation_plan(theta, width)
    return irot_planned(x, y, negate, t, sn, width)


# The elementary functions on words (the template names ``fn_*``): each the signed
# algorithm above on the word's signed view, its result as a word.

@njit(**OPAQUE)
def fn_sin(w, width):
    return word(fx_sin(S(w, width), width), width)


@njit(**OPAQUE)
def fn_cos(w, width):
    return word(fx_cos(S(w, width), width), width)


@njit(**OPAQUE)
def fn_tan(w, width):
    return word(fx_tan(S(w, width), width), width)


@njit(**OPAQUE)
def fn_tanh(w, width):
    return word(fx_tanh(S(w, width), width), width)


@njit(**OPAQUE)
def fn_exp(w, width):
    return word(fx_exp(S(w, width), width), width)


@njit(**OPAQUE)
def fn_log(w, width):
    """For S(w) > 0 (the caller faults the others)."""
    return word(fx_log(S(w, width), width), width)


@njit(**OPAQUE)
def fn_sqrt(w, width):
    """For S(w) >= 0 (the caller faults the others)."""
    return word(fx_sqrt(S(w, width), width), width)


@njit(**OPAQUE)
def fn_abs(w, width):
    return word(fx_abs(S(w, width), width), width)


@njit(**OPAQUE)
def fn_atan(w, width):
    return word(fx_atan(S(w, width), width), width)


@njit(**OPAQUE)
def fn_sinh(w, width):
    return word(fx_sinh(S(w, width), width), width)


@njit(**OPAQUE)
def fn_cosh(w, width):
    return word(fx_cosh(S(w, width), width), width)


@njit(**OPAQUE)
def fn_sigmoid(w, width):
    return word(fx_sigmoid(S(w, width), width), width)


@njit(**OPAQUE)
def fn_atan2(w, v, width):
    return word(fx_atan2(S(w, width), S(v, width), width), width)


@njit(**OPAQUE)
def fn_pow(w, v, width):
    """For the operands the caller did not fault (S(w) >= 0, not 0 ** negative)."""
    return word(fx_pow(S(w, width), S(v, width), width), width)


# --- the per-lane memory: the window above the image and the table -----------------------
#
# A memory bank's row is ``[DATA cells | window | table]``: the image's DATA cells (dense),
# then the ``window`` words at the addresses just above the image (``dense_length``, the
# image's length, upward: where compiled code keeps its stacks), then the slots of an
# open-addressing table for every other address.  Both the window and the table grow on
# the host (``machine.py``): the kernel pauses the lane before an instruction that needs
# a word of either, and resumes it after.

#: An empty table entry. At W = 64 it is also an address (the top word, where a downward
#: stack from 0 pushes first): that address is stored under the key 0 instead, which no
#: other address takes (address 0 is the image's, always dense; see ``table_key``).
EMPTY = U(0xFFFFFFFFFFFFFFFF)

#: An address at most this many words above the window's end grows the window (instead of
#: taking a table slot), so the window's words are at worst 1 in ``WINDOW_REACH`` touched.
WINDOW_REACH = 16

#: ``window_slot``'s answer for an address that grows the window.
GROW_WINDOW = -2


@njit(**JIT)
def table_key(word):
    """The key ``word`` is stored under in a lane's table (never EMPTY)."""
    return U(0) if word == EMPTY else word


@njit(**JIT)
def probe_start(key, capacity):
    """The table slot where the probe for ``key`` (a ``table_key``) starts, in a table of
    ``capacity`` slots (a power of two): a multiplicative hash's high bits."""
    return ((key * U(0x9E3779B97F4A7C15)) >> U(32)) & U(capacity - 1)


@njit(**JIT)
def find_slot(keys, lane, word, dense):
    """The slot of ``word`` in the lane's open-addressing table (inserted if new), offset by
    ``dense`` (the words before the table); -1 when the table is full (the host grows it
    and resumes the lane)."""
    capacity = keys.shape[1]
    if capacity == 0:
        return I(-1)
    word = table_key(word)
    mask = U(capacity - 1)
    j = probe_start(word, capacity)
    for _ in range(capacity):
        key = keys[lane, j]
        if key == word:
            return I(dense) + I(j)
        if key == EMPTY:
            keys[lane, j] = word
            return I(dense) + I(j)
        j = (j + U(1)) & mask
    return I(-1)


@njit(**JIT)
def window_slot(keys, lane, word, dense_length, dense_words, window):
    """The slot of an address at or above the image's end (``dense_length``): its word of
    the window, or its table slot (inserted if new); ``GROW_WINDOW`` for an address just
    above the window, -1 when the table is full."""
    offset = word - U(dense_length)
    if offset < U(window):
        return I(dense_words) + I(offset)
    if offset < U(window + WINDOW_REACH):
        return I(GROW_WINDOW)
    return find_slot(keys, lane, word, dense_words + window)


@njit(**JIT)
def slots_of(keys, word, dense_length, dense_words, window, insert):
    """Every lane's slot of ``word`` (an address at or above ``dense_length``): its window
    word, or its table slot (inserted when ``insert``; -1 where absent or full)."""
    lanes = keys.shape[0]
    out = np.empty(lanes, dtype=np.int64)
    offset = word - U(dense_length)
    if offset < U(window):
        out[:] = I(dense_words) + I(offset)
        return out
    base = dense_words + window
    capacity = keys.shape[1]
    key_word = table_key(word)
    for lane in range(lanes):
        if insert:
            out[lane] = find_slot(keys, lane, word, base)
            continue
        out[lane] = -1
        if capacity == 0:
            continue
        mask = U(capacity - 1)
        j = probe_start(key_word, capacity)
        for _ in range(capacity):
            key = keys[lane, j]
            if key == key_word:
                out[lane] = I(base) + I(j)
                break
            if key == EMPTY:
                break
            j = (j + U(1)) & mask
    return out


@njit(**JIT)
def rehash(old_keys, new_keys, old_bank, new_bank, dense_length, dense_words, old_window,
           new_window):
    """Move every lane's table words of one bank into a larger window and table: a word
    the window now covers moves into it, the others into the new table."""
    old_base = dense_words + old_window
    new_base = dense_words + new_window
    for lane in range(old_keys.shape[0]):
        for j in range(old_keys.shape[1]):
            key = old_keys[lane, j]
            if key == EMPTY:
                continue
            word = EMPTY if key == U(0) else key
            offset = word - U(dense_length)
            if word >= U(dense_length) and offset < U(new_window):
                new_bank[lane, dense_words + I(offset)] = old_bank[lane, old_base + j]
            else:
                slot = find_slot(new_keys, lane, word, new_base)
                new_bank[lane, slot] = old_bank[lane, old_base + j]
