"""Word arithmetic on lane arrays, written against the array API (an ``xp`` namespace).

Machine words of both widths live in ``uint64`` arrays (W = 32 words simply
keep their top half zero); BR and signed views (``S``) are ``int64``.  The
table's templates mix these with Python integers (immediates, masks, branch
offsets), which NEP 50 promotion refuses when the integer does not fit the
array's type (``BR & M`` with ``M = 2**64 - 1``, ``R + (imm << 48)``).  Every
template operator is therefore routed through :class:`Arithmetic`, which
reduces Python integers modulo 2**64 into the array's type first.  That is
exact because all ring operations (+ - * & | ^ <<) commute with reduction
mod 2**64, and every template masks its result to W <= 64 bits.

The W = 64 rounded product needs 128 bits, which numpy lacks: :func:`mul_round`
builds the bits it keeps from 32-bit halves with wrapping 64-bit products.
"""
from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any

MASK64 = (1 << 64) - 1
_LOW32 = 0xFFFFFFFF


def _is_array(value: Any) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape")


def accepts_out(xp: Any) -> bool:
    """Whether the namespace's elementwise functions take numpy's ``out=`` (the array
    API does not require it); without it the engine simply allocates results."""
    try:
        x = xp.zeros(2, dtype=xp.uint64)
        xp.add(x, x, out=x)
        return True
    except Exception:  # any refusal means "no out="
        return False


class Arithmetic:
    """The operators templates use, for one array namespace ``xp``."""

    def __init__(self, xp: Any, pool: RowPool | None = None) -> None:
        self.xp = xp
        self.u64 = xp.uint64
        self.i64 = xp.int64
        self.out = accepts_out(xp)
        self.pool = pool if self.out else None

    # --- operand unification ---------------------------------------------------

    def _fit(self, constant: int, dtype: Any) -> int:
        """A Python integer reduced mod 2**64 into the range of ``dtype``."""
        c = int(constant) & MASK64
        if dtype == self.i64:
            return c - (1 << 64) if c >> 63 else c
        return c

    def unify(self, x: Any, y: Any) -> tuple[Any, Any]:
        xa, ya = _is_array(x), _is_array(y)
        if xa and ya:
            if x.dtype == y.dtype:
                return x, y
            return reinterpret(x, self.u64, self.xp), reinterpret(y, self.u64, self.xp)
        if xa:
            if x.dtype == self.xp.bool:
                x = self.xp.astype(x, self.i64)
            return x, self._fit(y, x.dtype)
        if ya:
            if y.dtype == self.xp.bool:
                y = self.xp.astype(y, self.i64)
            return self._fit(x, y.dtype), y
        return x, y

    def ring(self, op: Callable[[Any, Any], Any],
             ufunc_name: str = "") -> Callable[[Any, Any], Any]:
        """A wrapping operation (+ - * & | ^): exact modulo 2**64.

        A full-length ``uint64`` result goes into a recycled row from the pool
        when one is free (a fresh 8 MB array costs more than the addition)."""
        unify = self.unify
        pool = self.pool
        ufunc = getattr(self.xp, ufunc_name, None) if ufunc_name else None
        u64 = self.u64

        def apply(x: Any, y: Any) -> Any:
            if type(x) is int and type(y) is int:
                return op(x, y)
            x, y = unify(x, y)
            if (pool is not None and pool.spare and ufunc is not None and _is_array(x)
                    and x.dtype == u64 and x.shape == pool.shape
                    and (not _is_array(y) or (y.dtype == u64 and y.shape == x.shape))):
                return ufunc(x, y, out=pool.spare.pop())
            return op(x, y)
        return apply

    def ring_in_place(self, op: Callable[[Any, Any], Any], ufunc_name: str) -> Callable:
        """The same operation, overwriting ``x`` when it is an array of the result's
        shape and type (the templates call it only on a fresh temporary)."""
        unify = self.unify
        ufunc = getattr(self.xp, ufunc_name, None) if self.out else None
        keeps_all = ufunc_name == "bitwise_and"

        def apply(x: Any, y: Any) -> Any:
            if type(x) is int and type(y) is int:
                return op(x, y)
            if keeps_all and type(y) is int and y & MASK64 == MASK64 and _is_array(x) \
                    and x.ndim == 1 and x.dtype in (self.u64, self.i64):
                return x  # x & (2**64 - 1): the W = 64 mask keeps every bit
            x, y = unify(x, y)
            if (ufunc is not None and _is_array(x) and x.ndim == 1
                    and (not _is_array(y) or (y.shape == x.shape and y.dtype == x.dtype))):
                return ufunc(x, y, out=x)
            return op(x, y)
        return apply

    def shift(self, op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """``<<`` / ``>>``: the amount takes the word's type; ``>>`` is logical on
        ``uint64`` words and arithmetic on ``int64`` signed views, as on Python ints."""
        xp = self.xp

        def apply(x: Any, n: Any) -> Any:
            if not _is_array(x) and not _is_array(n):
                return op(x, n)
            if not _is_array(x):
                x = xp.asarray(int(x) & MASK64 if int(x) >= 0 else int(x),
                               dtype=self.u64 if int(x) >= 0 else self.i64)
            if _is_array(n):
                if n.dtype != x.dtype:
                    n = xp.astype(n, x.dtype)
            return op(x, n)
        return apply

    def where(self, condition: Any, new: Any, old: Any) -> Any:
        """``if condition: target = new`` for each lane."""
        if not _is_array(condition):
            return new if condition else old
        xp = self.xp
        if _is_array(old):
            if _is_array(new) and new.dtype != old.dtype:
                new = xp.astype(new, old.dtype)
            elif not _is_array(new):
                new = self._fit(new, old.dtype)
            return xp.where(condition, new, old)
        if _is_array(new):
            return xp.where(condition, new, self._fit(old, new.dtype))
        dtype = self.i64 if min(int(new), int(old)) < 0 else self.u64
        return xp.where(condition, xp.asarray(new, dtype=dtype), xp.asarray(old, dtype=dtype))

    def namespace(self) -> dict[str, Any]:
        """Helper names the vectorized templates call (see ``templates.py``)."""
        xp = self.xp

        def neg(x: Any) -> Any:
            if _is_array(x) and x.dtype == xp.bool:
                x = xp.astype(x, self.i64)
            return -x

        def invert(x: Any) -> Any:
            return ~x

        def logical_not(x: Any) -> Any:
            return xp.logical_not(x) if _is_array(x) else not x

        def logical_and(x: Any, y: Any) -> Any:
            if _is_array(x) or _is_array(y):
                return xp.logical_and(x, y)
            return x and y

        def logical_or(x: Any, y: Any) -> Any:
            if _is_array(x) or _is_array(y):
                return xp.logical_or(x, y)
            return x or y

        return {
            "_add": self.ring(operator.add, "add"),
            "_sub": self.ring(operator.sub, "subtract"),
            "_mul": self.ring(operator.mul, "multiply"),
            "_and": self.ring(operator.and_, "bitwise_and"),
            "_or": self.ring(operator.or_, "bitwise_or"),
            "_xor": self.ring(operator.xor, "bitwise_xor"),
            "_lshift": self.shift(operator.lshift), "_rshift": self.shift(operator.rshift),
            "_floordiv": self.ring(operator.floordiv), "_mod": self.ring(operator.mod),
            "_add_": self.ring_in_place(operator.add, "add"),
            "_sub_": self.ring_in_place(operator.sub, "subtract"),
            "_mul_": self.ring_in_place(operator.mul, "multiply"),
            "_and_": self.ring_in_place(operator.and_, "bitwise_and"),
            "_or_": self.ring_in_place(operator.or_, "bitwise_or"),
            "_xor_": self.ring_in_place(operator.xor, "bitwise_xor"),
            "_neg": neg, "_invert": invert, "_not": logical_not,
            "_land": logical_and, "_lor": logical_or, "_where": self.where,
        }


def _unreferenced_count() -> int:
    """``sys.getrefcount`` of an array held only by one local (calibrated, so the
    check below means "nothing else refers to it" on any Python version)."""
    holder: list[bytearray | None] = [bytearray(1)]
    old = holder[0]
    holder[0] = None
    return sys.getrefcount(old)


_UNREFERENCED = _unreferenced_count()


class RowPool:
    """Rows a full-group commit replaced and nothing else refers to, kept for reuse.

    Only whole-machine rows (``shape == (lanes,)``, ``uint64``) are pooled, and a
    row enters the pool only when the reference count proves it unreachable.
    """

    def __init__(self, lanes: int, limit: int = 6) -> None:
        self.shape = (lanes,)
        self.limit = limit
        self.spare: list[Any] = []

    def replace(self, rows: Any, key: Any, value: Any) -> None:
        """``rows[key] = value``, recycling the replaced row when it is garbage."""
        old = rows.get(key) if isinstance(rows, dict) else rows[key]
        rows[key] = value
        if (old is not None and len(self.spare) < self.limit
                and getattr(old, "shape", None) == self.shape
                and sys.getrefcount(old) == _UNREFERENCED):
            self.spare.append(old)


def reinterpret(x: Any, dtype: Any, xp: Any) -> Any:
    """The same 64 bits as another 64-bit integer type: numpy's free ``view`` when the
    namespace has it, else ``astype`` (which wraps, the same bits at a copy's cost)."""
    if x.dtype == dtype:
        return x
    view = getattr(x, "view", None)
    return view(dtype) if view is not None else xp.astype(x, dtype)


def mul_round(a: Any, b: Any, width: int, xp: Any, ua: Any = None, ub: Any = None) -> Any:
    """Low 64 bits (as ``uint64``) of ``floor((a*b + 2**(F-1)) / 2**F)``, F = W/2.

    ``a`` and ``b`` are ``int64`` signed words.  W = 32: the product fits
    ``int64`` (|a|, |b| <= 2**31).  W = 64: with ``a = ah 2**32 + al`` and
    ``b = bh 2**32 + bl`` (``ah``, ``bh`` signed, ``al``, ``bl`` in [0, 2**32)),

        a b = ah bh 2**64 + (ah bl + al bh) 2**32 + al bl,

    and every term but the last is a multiple of 2**32, so the rounded shift is
    ``a bh + ah bl + ((al bl + 2**31) >> 32)``, where ``al bl + 2**31 < 2**64``
    is exact in ``uint64`` and the rest only needs its low 64 bits: wrapping
    products.  Exact for every pair of words, no 128-bit type needed.
    ``ua``, ``ub``: the same words as ``uint64`` when the caller has them.
    """
    if width == 32:
        p = a * b + (1 << 15)
        return reinterpret(p >> 16, xp.uint64, xp)
    u64 = xp.uint64
    if ua is None:
        ua = reinterpret(a, u64, xp)
    if ub is None:
        ub = reinterpret(b, u64, xp)
    low_a = ua & u64(_LOW32)
    low_b = ub & u64(_LOW32)
    result = ua * reinterpret(b >> 32, u64, xp)
    result += reinterpret(a >> 32, u64, xp) * low_b
    low_a *= low_b
    low_a += u64(1 << 31)
    low_a >>= u64(32)
    result += low_a
    return result
