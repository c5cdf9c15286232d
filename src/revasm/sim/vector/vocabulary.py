"""The template vocabulary (``isa/vocabulary.py``) on lane arrays, bit for bit.

Each row of the primitives table (``isa/primitives.py``) gets a lane version here: the
names, result shapes and faults come from the rows.  Vectorized:
``S``, the shifts and rotates, ``slt``, ``fmul`` and ``fdiv`` (both widths;
W = 64 through 32-bit halves and 96-bit long division), ``fn_abs``, ``fn_sqrt``,
at W = 32 every elementary function but ``pow`` (``circular.py``,
``hyperbolic.py``), the gradient helpers, and the shears of ``rot``/``irot``.
The overflow predicates ``ovf_*`` are vectorized too (at W = 64 the product's and the
quotient's size come from float64 where it is clear, the scalar definition deciding the
few lanes within 2**-40 of the limit).  Every other name -- ``pow``, the elementary
functions at W = 64 and the rotation plan (:data:`LANEWISE`) -- runs through
:func:`lanewise`, a documented stop-gap that calls the scalar function (the
definition itself) once per distinct argument tuple, so the bits are the scalar
bits by construction.  A row the table adds later runs lanewise too, and
``tests/isa/test_primitives.py`` fails until it is vectorized or listed in :data:`LANEWISE`.

Faults are per lane, from the rows: before a vectorized function runs, each of its
row's faults (``Fault.when``, evaluated on the lanes) records the lanes where it holds in
the :class:`LaneContext` with the row's kind and message; the function then computes a
harmless value for them (the engine discards that lane's effects).
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from typing import Any

from revasm.isa import elementary
from revasm.isa.fixed_point import WordFormat
from revasm.isa.primitives import OPERANDS, PRIMITIVES, Fault, Primitive
from revasm.isa.rotation import rotation_plan
from revasm.isa.vocabulary import vocabulary as scalar_vocabulary
from revasm.machine.faults import Trap

from . import circular, hyperbolic
from .words import MASK64, mul_round, reinterpret

Describe = Callable[[int], str]

#: The rows this engine runs through :func:`lanewise` on purpose, per width (everything
#: else is vectorized below).
_ELEMENTARY = frozenset({"fn_sin", "fn_cos", "fn_tan", "fn_tanh", "fn_exp", "fn_log",
                         "fn_atan", "fn_sinh", "fn_cosh", "fn_atan2", "fn_pow"})
LANEWISE: dict[int, frozenset[str]] = {32: frozenset({"fn_pow", "fn_sigmoid"}),
                                       64: _ELEMENTARY | {"fn_sigmoid"}}


def fault_kind(exc: BaseException) -> str:
    """The reference machine's fault kind for an exception raised by a template."""
    if isinstance(exc, Trap):
        return exc.kind
    if isinstance(exc, (elementary.DivideByZero, ZeroDivisionError)):
        return "divide-by-zero"
    return "domain-error"


def fault_detail(exc: BaseException) -> str:
    return exc.message if isinstance(exc, Trap) else str(exc)


class GuardTripped(Exception):
    """A lane faulted inside a fused block (``LaneContext.strict``): the block stops at
    the guarded template and its lanes run it again one instruction at a time."""


class LaneContext:
    """Per-instruction scratch: the group size and the lanes that faulted, in order.

    In a fused block (``strict``) a fault is not recorded but raised as
    :class:`GuardTripped`; ``guard`` then holds the template index and the rows it
    would have written (``snap``)."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.n = 0
        self.failed: Any = None
        self.events: list[tuple[Any, str, Describe]] = []
        self.strict = False
        self.guard: tuple[int, list[tuple[list, int, Any]]] | None = None

    def snap(self, index: int) -> None:
        """Template ``index`` of a fused block may fault: its stores keep what they replace."""
        self.guard = (index, [])

    def unsnap(self) -> None:
        self.guard = None

    def reset(self, n: int) -> None:
        self.n = n
        self.failed = None
        self.events = []

    def fault(self, mask: Any, kind: str, describe: Describe) -> None:
        """Lanes (a boolean mask over the group) fault with ``kind``; first fault wins."""
        xp = self.xp
        if self.strict:
            if bool(xp.any(mask)):
                raise GuardTripped(kind)
            return
        if self.failed is None:
            fresh = mask
            self.failed = xp.asarray(mask, copy=True)
        else:
            fresh = mask & ~self.failed
            self.failed = self.failed | mask
        if bool(xp.any(fresh)):
            self.events.append((fresh, kind, describe))

    def column(self, value: Any) -> list:
        """A template argument as one Python int per lane."""
        if hasattr(value, "tolist"):
            listed = value.tolist()
            if isinstance(listed, list):
                return listed
            return [listed] * self.n
        return [int(value)] * self.n


def distinct(columns: list[Any], n: int, xp: Any) -> tuple[list[tuple[int, ...]], Any]:
    """The distinct argument tuples of ``n`` lanes (Python ints, one tuple each) and, per
    lane, the index of its tuple: a scalar function then runs once per distinct tuple,
    not once per lane (a batch that shares an angle or a weight pays for one call)."""
    rows = []
    for column in columns:
        if hasattr(column, "shape") and column.shape == (n,):
            rows.append(column)
        else:
            rows.append(xp.full(n, int(column) & MASK64, dtype=xp.uint64))
    key = None
    for row in rows:
        values, inverse = xp.unique_inverse(row)
        inverse = xp.astype(xp.reshape(inverse, (n,)), xp.int64)
        key = inverse if key is None else key * len(values) + inverse
    found = xp.unique_all(key)
    firsts = found.indices.tolist()
    listed = [row[xp.asarray(firsts, dtype=xp.int64)].tolist() for row in rows]
    return list(zip(*listed)), xp.reshape(found.inverse_indices, (n,))


def lanewise(function: Callable, ctx: LaneContext, xp: Any, name: str,
             results: int = 0) -> Callable:
    """Run a scalar vocabulary function once per distinct argument tuple of the lanes;
    ``results`` is the number of words it returns as a tuple (0: one word, not a tuple)."""
    probe_arity = results

    def apply(*args: Any) -> Any:
        n = ctx.n
        if n == 0:
            empty = xp.zeros(0, dtype=xp.uint64)
            return tuple(empty for _ in range(probe_arity)) if probe_arity else empty
        keys, inverse = distinct(list(args), n, xp)
        results: list = []
        errors: dict[int, BaseException] = {}
        for k, key in enumerate(keys):
            try:
                results.append(function(*key))
            except (Trap, ArithmeticError) as exc:
                errors[k] = exc
                results.append(None)
        arity = next((len(r) if isinstance(r, tuple) else 0 for r in results if r is not None),
                     probe_arity)
        if errors:
            zero = (0,) * arity if arity else 0
            by_kind: dict[str, list[int]] = {}
            for k, error in errors.items():
                results[k] = zero
                by_kind.setdefault(fault_kind(error), []).append(k)
            listed = inverse.tolist()
            for kind, positions in by_kind.items():
                kind_mask = xp.zeros(len(keys), dtype=xp.bool)
                kind_mask[xp.asarray(positions)] = True
                ctx.fault(kind_mask[inverse], kind,
                          lambda j: fault_detail(errors[listed[j]]))
        if arity:
            return tuple(xp.asarray([r[i] & MASK64 for r in results], dtype=xp.uint64)[inverse]
                         for i in range(arity))
        return xp.asarray([r & MASK64 for r in results], dtype=xp.uint64)[inverse]

    apply.__name__ = f"lanewise_{name}"
    return apply


def vector_vocabulary(fmt: WordFormat, xp: Any, ctx: LaneContext) -> dict[str, Any]:
    """Every name of the scalar vocabulary, bound for lane arrays of one format."""
    width, mask, frac = fmt.width, fmt.mask, fmt.frac_bits
    u64, i64 = xp.uint64, xp.int64
    amount_mask = width - 1
    scalar: dict[str, Any] = scalar_vocabulary(fmt)  # the reference's functions

    def as_words(word: Any) -> Any:
        if hasattr(word, "dtype"):
            return word if word.dtype == u64 else reinterpret(word, u64, xp)
        return xp.asarray(int(word) & MASK64, dtype=u64)

    def S(word: Any) -> Any:  # the vocabulary's name
        if not hasattr(word, "dtype"):
            return fmt.signed(int(word) & mask)
        s = reinterpret(as_words(word), i64, xp)
        if width == 64:
            return s
        s = s << 32  # a fresh array: the shift back sign-extends bit 31 in place
        s >>= 32
        return s

    def amount(n: Any) -> Any:
        if hasattr(n, "dtype"):
            return as_words(n) & u64(amount_mask)
        return int(n) & amount_mask

    def shl(word: Any, n: Any) -> Any:
        return (as_words(word) << amount(n)) & u64(mask)

    def srl(word: Any, n: Any) -> Any:
        return as_words(word) >> amount(n)

    def sra(word: Any, n: Any) -> Any:
        k = amount(n)
        if hasattr(k, "dtype"):
            k = xp.astype(k, i64)
        return reinterpret(S(as_words(word)) >> k, u64, xp) & u64(mask)

    def rotl(word: Any, n: Any) -> Any:
        w, k = as_words(word), amount(n)
        back = (width - k) if not hasattr(k, "dtype") else (u64(width) - k)
        return ((w << k) | (w >> back)) & u64(mask)

    def rotr(word: Any, n: Any) -> Any:
        w, k = as_words(word), amount(n)
        back = (width - k) if not hasattr(k, "dtype") else (u64(width) - k)
        return ((w >> k) | (w << back)) & u64(mask)

    def slt(x: Any, y: Any) -> Any:
        return xp.astype(S(as_words(x)) < S(as_words(y)), u64)

    def lane_words(word: Any) -> Any:
        """A word argument as a uint64 array of the group's length."""
        words = as_words(word)
        if words.shape != (ctx.n,):
            words = xp.asarray(xp.broadcast_to(words, (ctx.n,)), copy=True)
        return words

    def signed_array(word: Any) -> Any:
        return S(lane_words(word))

    one = fmt.one

    def fneg(x: Any) -> Any:
        return (-lane_words(x)) & u64(mask)

    def fadd(x: Any, y: Any) -> Any:
        return (lane_words(x) + as_words(y)) & u64(mask)

    def fsub(x: Any, y: Any) -> Any:
        return (lane_words(x) - as_words(y)) & u64(mask)

    def fsign(x: Any) -> Any:
        a = signed_array(x)
        return xp.where(a == 0, u64(0), xp.where(a < 0, u64(-one & mask), u64(one)))

    def fmul(x: Any, y: Any) -> Any:
        if width == 64:  # the words are the unsigned views mul_round also needs
            ux, uy = lane_words(x), lane_words(y)
            return mul_round(S(ux), S(uy), width, xp, ux, uy)
        return mul_round(signed_array(x), signed_array(y), width, xp) & u64(mask)

    def fdiv32(x: Any, y: Any) -> Any:
        """A zero divisor's lane (faulted by the row) divides by 1."""
        a, b = signed_array(x), signed_array(y)
        zero = b == 0
        d = xp.where(zero, i64(1), xp.abs(b))
        n = xp.abs(a)
        # floor(p / q) with p = |a| 2**17 + |b| < 2**50 and q = 2|b| < 2**33: float64
        # holds both exactly and the rounded quotient never crosses an integer (a
        # non-integer p/q is at least 1/q from one; the rounding moves it < p 2**-53 / q).
        p = xp.astype((n << (frac + 1)) + d, xp.float64)
        q = xp.astype(xp.floor(p / xp.astype(2 * d, xp.float64)), i64)
        q = xp.where((a < 0) != (b < 0), -q, q)
        return reinterpret(q, u64, xp) & u64(mask)

    def fdiv64(x: Any, y: Any) -> Any:
        """fx_div at W = 64: q = floor((|a| 2**32 + floor(|b|/2)) / |b|) (which equals
        floor((|a| 2**33 + |b|) / (2|b|))).  The 96-bit dividend is held in two uint64
        words and divided by long division in k-bit digits, k = 64 - bits(max |b|), so
        that ``remainder * 2**k + digit`` fits 64 bits and each digit is one exact
        uint64 division (4 steps for divisors below 2**40, 96 for the widest)."""
        a, b = signed_array(x), signed_array(y)
        quick = _divide_quickly(a, b)
        if quick is not None:
            return quick
        zero = b == 0
        if bool(xp.any(zero)):
            d = xp.astype(xp.abs(xp.where(zero, i64(1), b)), u64)
        else:
            d = xp.astype(xp.abs(b), u64)  # |-2**63| wraps to 2**63: right as uint64
        n = xp.astype(xp.abs(a), u64)
        negative = (a ^ b) < 0
        low = n << u64(32)
        lo = low + (d >> u64(1))
        hi = (n >> u64(32)) + xp.astype(lo < low, u64)
        smallest, largest = int(xp.min(d)), int(xp.max(d))
        if largest < 1 << 58 and (int(xp.max(hi)) + 1) << 14 < smallest:
            q = _divide_by_float(hi, lo, d)
            return xp.where(negative, -q, q)  # W = 64: the mask is every bit
        k = max(1, 64 - largest.bit_length())
        digit_mask = u64((1 << k) - 1)
        r = xp.zeros_like(n)
        q = xp.zeros_like(n)
        chunks = -(-96 // k)
        for c in range(chunks - 1, -1, -1):
            shift = c * k
            if shift >= 64:
                part = hi >> u64(shift - 64)
            elif shift == 0:
                part = lo
            else:
                part = (lo >> u64(shift)) | (hi << u64(64 - shift))
            current = (r << u64(k)) | (part & digit_mask)
            digit = current // d
            r = current - digit * d
            q = (q << u64(k)) | digit
        return xp.where(negative, -q, q)

    errstate = getattr(xp, "errstate", None)

    def quiet() -> Any:
        return errstate(divide="ignore", invalid="ignore") if errstate else nullcontext()

    def _divide_quickly(a: Any, b: Any) -> Any:
        """fdiv64 when every lane's quotient Q = (|a| 2**32 + floor(|b|/2)) / |b| is below
        2**48 and |b| < 2**62 (else None; a zero divisor makes the estimate inf or nan,
        which fails the test).  The float64 estimate is within 1 of Q: replacing
        floor(|b|/2) by |b|/2 moves Q by at most 1/2, and four roundings by at most
        Q 2**-51 < 1/8.  So q = floor(estimate) is floor(Q) - 1, floor(Q) or floor(Q) + 1,
        the remainder r = N - q |b| lies in [-|b|, 2|b|) -- exact in int64 from the low
        64 bits of N and q |b| -- and one step each way corrects q."""
        f64 = xp.float64
        divisor = xp.abs(xp.astype(b, f64))
        estimate = xp.abs(xp.astype(a, f64))
        estimate *= 2.0 ** 32
        estimate += divisor * 0.5
        with quiet():  # x / 0 is inf or nan here, on purpose
            estimate /= divisor
        if not bool(xp.all((estimate < 2.0 ** 48) & (divisor < 2.0 ** 62))):
            return None
        q = reinterpret(xp.astype(xp.floor(estimate), i64), u64, xp)
        d = reinterpret(xp.abs(b), u64, xp)
        low = reinterpret(xp.abs(a), u64, xp) << u64(32)
        low += d >> u64(1)
        low -= q * d
        r = reinterpret(low, i64, xp)
        q += xp.astype(r >= reinterpret(d, i64, xp), u64)
        q -= xp.astype(r < 0, u64)
        sign = reinterpret((a ^ b) >> 63, u64, xp)  # all ones where the signs differ
        q ^= sign
        q -= sign
        return q

    def _divide_by_float(hi: Any, lo: Any, d: Any) -> Any:
        """floor((hi 2**64 + lo) / d) when it is below 2**50 and d < 2**58: a float64
        estimate (off by at most 2), then exact integer corrections on the remainder
        ``lo - q d`` (mod 2**64, which holds it exactly since |remainder| < 4 d)."""
        f64 = xp.float64
        estimate = xp.astype(hi, f64) * 2.0 ** 64 + xp.astype(lo, f64)
        q = xp.astype(xp.floor(estimate / xp.astype(d, f64)), u64)
        r = xp.astype(lo - q * d, i64)
        di = xp.astype(d, i64)
        for _ in range(8):
            under, over = r < 0, r >= di
            if not bool(xp.any(under | over)):
                return q
            step = xp.astype(over, i64) - xp.astype(under, i64)
            q = q + xp.astype(step, u64)
            r = r - step * di
        raise AssertionError("fdiv64: the float estimate was further off than proven")

    sqrt_bits = (width - 1 + frac + 1) // 2

    def fn_sqrt(x: Any) -> Any:
        """fx_sqrt: the digit-by-digit root of x 2**F, two bits of the radicand at a time.
        At W = 32 the radicand fits int64; at W = 64 it has 95 bits, read from two words.
        Remainder and root fit int64 at both widths."""
        a = signed_array(x)
        a = xp.where(a < 0, i64(0), a)  # a negative lane (faulted by the row) takes 0
        if width == 32:
            radicand = a << frac

            def pair(i: int) -> Any:
                return (radicand >> i) & 3
        else:
            high, low = a >> 32, xp.astype(a, u64) << u64(32)

            def pair(i: int) -> Any:
                if i >= 64:
                    return (high >> (i - 64)) & 3
                return xp.astype((low >> u64(i)) & u64(3), i64)
        rem = xp.zeros_like(a)
        root = xp.zeros_like(a)
        for i in range(2 * sqrt_bits - 2, -1, -2):
            rem = (rem << 2) | pair(i)
            trial = (root << 2) | 1
            root = root << 1
            fits = rem >= trial
            rem = xp.where(fits, rem - trial, rem)
            root = root | xp.astype(fits, i64)
        root = root + xp.astype(rem > root, i64)
        return xp.astype(root, u64) & u64(mask)

    def fn_abs(x: Any) -> Any:
        a = signed_array(x)
        result = xp.where(a >= 0, a, xp.where(a > fmt.min_signed, -a, i64(fmt.max_signed)))
        return reinterpret(result, u64, xp) & u64(mask)

    def plan(theta: Any) -> tuple[Any, Any, Any]:
        """rotation_plan per lane, computed once per distinct angle."""
        angles, inverse = distinct([theta], ctx.n, xp)
        plans = [rotation_plan(fmt.signed(angle & mask), fmt) for (angle,) in angles]
        return (xp.asarray([p[0] for p in plans], dtype=xp.bool)[inverse],
                xp.asarray([p[1] for p in plans], dtype=i64)[inverse],
                xp.asarray([p[2] for p in plans], dtype=i64)[inverse])

    def rot(x: Any, y: Any, theta: Any) -> tuple[Any, Any]:
        # revasm.isa.rotation.rotate, with the three shears on lanes.
        negate, t, sn = plan(theta)
        x, y = as_words(x), as_words(y)
        x = xp.where(negate, -x, x) & u64(mask)
        y = xp.where(negate, -y, y) & u64(mask)
        x = (x - mul_round(t, S(y), width, xp)) & u64(mask)
        y = (y + mul_round(sn, S(x), width, xp)) & u64(mask)
        x = (x - mul_round(t, S(y), width, xp)) & u64(mask)
        return x, y

    def irot(x: Any, y: Any, theta: Any) -> tuple[Any, Any]:
        negate, t, sn = plan(theta)
        x, y = as_words(x), as_words(y)
        x = (x + mul_round(t, S(y), width, xp)) & u64(mask)
        y = (y - mul_round(sn, S(x), width, xp)) & u64(mask)
        x = (x + mul_round(t, S(y), width, xp)) & u64(mask)
        x = xp.where(negate, -x, x) & u64(mask)
        y = xp.where(negate, -y, y) & u64(mask)
        return x, y

    top_bit = width - 1
    highest, lowest = u64(mask >> 1), u64(1 << top_bit)

    def ovf_add(x: Any, y: Any) -> Any:
        """The signed sum leaves the range: both operands' signs differ from the sum's."""
        a, b = lane_words(x), as_words(y)
        total = (a + b) & u64(mask)
        return (((a ^ total) & (b ^ total)) >> u64(top_bit)) & u64(1)

    def ovf_sub(x: Any, y: Any) -> Any:
        """The signed difference leaves the range: x's sign differs from y's and the result's."""
        a, b = lane_words(x), as_words(y)
        difference = (a - b) & u64(mask)
        return (((a ^ b) & (a ^ difference)) >> u64(top_bit)) & u64(1)

    def ovf_sat(x: Any) -> Any:
        words = lane_words(x)
        return xp.astype((words == highest) | (words == lowest), u64)

    def exactly(flags: Any, unsure: Any, function: Callable, *words: Any) -> Any:
        """``flags`` with the lanes in ``unsure`` recomputed by the scalar ``function``."""
        if bool(xp.any(unsure)):
            lanes = xp.nonzero(unsure)[0].tolist()
            columns = [ctx.column(word) for word in words]
            flags = xp.asarray(flags, copy=True)
            for lane in lanes:
                flags[lane] = function(*(column[lane] for column in columns))
        return flags

    def near_the_limit(estimate: Any) -> tuple[Any, Any]:
        """(surely outside the signed W-bit range, too close to tell) of a float64
        estimate whose relative error is far below 2**-40."""
        size = xp.abs(estimate)
        limit = float(1 << top_bit)
        over = size > limit * (1 + 2.0 ** -40)
        return over, (size >= limit * (1 - 2.0 ** -40)) & ~over

    def ovf_mul64(x: Any, y: Any) -> Any:
        """W = 64: the rounded product's size from float64 (exact where it is clear), the
        scalar definition for the few lanes within 2**-40 of the limit."""
        ux, uy = lane_words(x), lane_words(y)
        estimate = xp.astype(S(ux), xp.float64) * xp.astype(S(uy), xp.float64) * 2.0 ** -frac
        over, unsure = near_the_limit(estimate)
        return exactly(xp.astype(over, u64), unsure, scalar["ovf_mul"], ux, uy)

    def ovf_div64(x: Any, y: Any) -> Any:
        ux, uy = lane_words(x), lane_words(y)
        b = xp.astype(S(uy), xp.float64)
        zero = b == 0
        estimate = xp.astype(S(ux), xp.float64) * 2.0 ** frac / xp.where(zero, 1.0, b)
        over, unsure = near_the_limit(estimate)
        return exactly(xp.astype(over & ~zero, u64), unsure & ~zero, scalar["ovf_div"], ux, uy)

    one_word = fmt.one

    def shear(word: Any, coefficient: Any, other: Any, sign: int) -> tuple[Any, Any, Any]:
        """One shear ``word ± round(coefficient * S(other))`` on words: (wrapped, new word,
        lanes where the product itself may not fit: coefficient +-1.0 times -2**(W-1))."""
        o = S(other)
        d = mul_round(coefficient, o, width, xp) & u64(mask)
        if sign > 0:
            new = (word + d) & u64(mask)
            wrapped = ((word ^ new) & (d ^ new)) >> u64(top_bit)
        else:
            new = (word - d) & u64(mask)
            wrapped = ((word ^ d) & (word ^ new)) >> u64(top_bit)
        edge = (o == S(lowest)) & (xp.abs(coefficient) == one_word)
        return (wrapped & u64(1)) != 0, new, edge

    def ovf_rotation(inverse: bool) -> Callable:
        name = "ovf_irot" if inverse else "ovf_rot"

        def apply(x: Any, y: Any, theta: Any) -> Any:
            negate, t, sn = plan(theta)
            x0, y0 = lane_words(x), lane_words(y)
            wx, wy = x0, y0
            flags = xp.zeros(ctx.n, dtype=xp.bool)
            edges = xp.zeros(ctx.n, dtype=xp.bool)
            if not inverse:
                flags |= negate & ((wx == lowest) | (wy == lowest))
                wx = xp.where(negate, -wx, wx) & u64(mask)
                wy = xp.where(negate, -wy, wy) & u64(mask)
            sign = 1 if inverse else -1
            for which, coefficient in (("x", t), ("y", sn), ("x", t)):
                if which == "x":
                    wrapped, wx, edge = shear(wx, coefficient, wy, sign)
                else:
                    wrapped, wy, edge = shear(wy, coefficient, wx, -sign)
                flags |= wrapped
                edges |= edge
            if inverse:
                flags |= negate & ((wx == lowest) | (wy == lowest))
            return exactly(xp.astype(flags, u64), edges, scalar[name], x0, y0, theta)
        return apply

    names: dict[str, Any] = {
        "ovf_add": ovf_add, "ovf_sub": ovf_sub, "ovf_sat": ovf_sat,
        "ovf_rot": ovf_rotation(False), "ovf_irot": ovf_rotation(True),
        "M": mask, "W": width, "F": frac, "S": S, "shl": shl, "srl": srl, "sra": sra,
        "rotl": rotl, "rotr": rotr, "slt": slt, "fmul": fmul, "rot": rot, "irot": irot,
        "fn_abs": fn_abs, "fn_sqrt": fn_sqrt, "one": one, "fneg": fneg, "fadd": fadd, "fsub": fsub,
        "fsign": fsign,
    }
    names["fdiv"] = fdiv32 if width == 32 else fdiv64
    if width == 64:
        names["ovf_mul"], names["ovf_div"] = ovf_mul64, ovf_div64
    if width == 32:
        def ovf_mul(x: Any, y: Any) -> Any:
            """The rounded product (exact in int64 at W = 32) leaves the signed range."""
            product = (signed_array(x) * signed_array(y) + i64(1 << 15)) >> i64(16)
            return xp.astype((product > i64(mask >> 1)) | (product < i64(-(1 << 31))), u64)
        names["ovf_mul"] = ovf_mul

        def ovf_div(x: Any, y: Any) -> Any:
            """The rounded quotient (fdiv32's exact float64 division) leaves the range;
            0 where y = 0 (the division faults there first)."""
            a, b = signed_array(x), signed_array(y)
            zero = b == 0
            d = xp.where(zero, i64(1), xp.abs(b))
            p = xp.astype((xp.abs(a) << (frac + 1)) + d, xp.float64)
            q = xp.astype(xp.floor(p / xp.astype(2 * d, xp.float64)), i64)
            limit = xp.where((a < 0) != (b < 0), i64(1 << 31), i64((1 << 31) - 1))
            return xp.astype((q > limit) & ~zero, u64)
        names["ovf_div"] = ovf_div

        for name in ("sin", "cos", "tan", "atan"):
            names[f"fn_{name}"] = _circular(getattr(circular, f"fx_{name}"), signed_array,
                                            xp, mask)

        for name in ("exp", "sinh", "cosh", "tanh"):
            names[f"fn_{name}"] = _circular(getattr(hyperbolic, f"fx_{name}"), signed_array,
                                            xp, mask)
        def fn_log(word: Any) -> Any:
            """x <= 0 (faulted by the row) computes log 1 on the side."""
            return xp.astype(hyperbolic.fx_log(signed_array(word), xp), u64) & u64(mask)
        names["fn_log"] = fn_log

        def fn_atan2(y: Any, x: Any) -> Any:
            value = circular.fx_atan2(signed_array(y), signed_array(x), xp)
            return xp.astype(value, u64) & u64(mask)
        names["fn_atan2"] = fn_atan2
    vocabulary: dict[str, Any] = {"M": mask, "W": width, "F": frac, "one": one, "S": S}
    for row in PRIMITIVES:
        function = names.get(row.name)
        if function is None:
            function = lanewise(scalar[row.name], ctx, xp, row.name,
                                2 if row.result == "pair" else 0)
        elif row.faults:
            function = _checked(function, row, S, lane_words, ctx, fmt, xp)
        vocabulary[row.name] = function
    return vocabulary


def lanewise_rows(fmt: WordFormat) -> frozenset[str]:
    """The rows :func:`vector_vocabulary` runs through :func:`lanewise` at ``fmt`` (numpy):
    :data:`LANEWISE` of its width, unless a row has no vectorized function yet."""
    import numpy

    names = vector_vocabulary(fmt, numpy, LaneContext(numpy))
    return frozenset(p.name for p in PRIMITIVES
                     if names[p.name].__name__.startswith("lanewise_"))


def _checked(function: Callable, row: Primitive, S: Callable, lane_words: Callable,
             ctx: LaneContext, fmt: WordFormat, xp: Any) -> Callable:
    """A vectorized function whose row's faults are recorded first, per lane: each fault's
    conditions (``Fault.when``, over the operand words and ``S``) evaluated on the lanes,
    in the row's order (the first fault of a lane wins), with the row's kind and message."""
    checks = [(fault, [compile(c, f"<{row.name} fault>", "eval") for c in fault.when])
              for fault in row.faults]

    def apply(*args: Any) -> Any:
        words = [lane_words(a) for a in args]
        env = {"S": S, **dict(zip(OPERANDS, words))}
        for fault, conditions in checks:
            holds = None
            for condition in conditions:
                part = eval(condition, env)  # the table's own text
                holds = part if holds is None else holds & part
            if bool(xp.any(holds)):
                xs = ctx.column(words[0])
                ctx.fault(holds, fault.kind, partial(_fault_detail, fault, fmt, xs))
        return function(*args)

    apply.__name__ = f"checked_{row.name}"
    return apply


def _fault_detail(fault: Fault, fmt: WordFormat, xs: list[int], j: int) -> str:
    """The message of a row's ``fault`` on the ``j``-th faulting lane, whose first
    operand words are ``xs``."""
    return fault.detail(fmt.signed(xs[j]))


def _circular(function: Callable, signed_array: Callable, xp: Any, mask: int) -> Callable:
    """A W = 32 vectorized circular function as a vocabulary name (word in, word out)."""
    def apply(word: Any) -> Any:
        return reinterpret(function(signed_array(word), xp), xp.uint64, xp) & xp.uint64(mask)
    return apply
