"""The small vocabulary in which ``isa/table.py`` writes semantics.

A semantics template is a Python statement over ``R`` (registers), ``MEM``
(memory), ``BR``, ``DIR`` and the names below, all acting on W-bit words held
as unsigned integers.  Gradient-mode templates (``isa/adjoint.py``) also use
the banks ``G``, ``GM``, ``T``, ``TM``, ``TG``, ``TGM`` and the fixed-point
helpers ``one`` (1.0), ``fneg``, ``fadd``, ``fsub`` (mod 2^W) and ``fsign``.
Engines execute the templates in a namespace built by :func:`vocabulary`, adding
their own ``addr`` (memory address check), ``show``, ``emit`` and ``unemit``
(output devices).
"""
from __future__ import annotations

from collections.abc import Callable

from . import elementary
from .fixed_point import WordFormat
from .rotation import rotate, unrotate
from .table import BINARY_FUNCTIONS, UNARY_FUNCTIONS


def vocabulary(fmt: WordFormat) -> dict[str, object]:
    """The names a template may use, bound for one word format."""
    width = fmt.width
    mask = fmt.mask
    sign = fmt.sign_bit
    amount_mask = width - 1

    def S(word: int) -> int:  # noqa: N802 - the vocabulary's name for "signed view"
        return word - ((word & sign) << 1)

    def shl(word: int, amount: int) -> int:
        return (word << (amount & amount_mask)) & mask

    def srl(word: int, amount: int) -> int:
        return word >> (amount & amount_mask)

    def sra(word: int, amount: int) -> int:
        return (S(word) >> (amount & amount_mask)) & mask

    def rotl(word: int, amount: int) -> int:
        n = amount & amount_mask
        return ((word << n) | (word >> (width - n))) & mask

    def rotr(word: int, amount: int) -> int:
        n = amount & amount_mask
        return ((word >> n) | (word << (width - n))) & mask

    def slt(x: int, y: int) -> int:
        return 1 if S(x) < S(y) else 0

    def fmul(x: int, y: int) -> int:
        return elementary.fx_mul(S(x), S(y), fmt) & mask

    def fdiv(x: int, y: int) -> int:
        return elementary.fx_div(S(x), S(y), fmt) & mask

    one = fmt.one
    minus_one = -one & mask

    def fneg(x: int) -> int:
        return -x & mask

    def fadd(x: int, y: int) -> int:
        return (x + y) & mask

    def fsub(x: int, y: int) -> int:
        return (x - y) & mask

    def fsign(x: int) -> int:
        """1.0, -1.0 or 0 by the sign of the word: the derivative of abs."""
        return 0 if x == 0 else minus_one if x & sign else one

    def rot(x: int, y: int, theta: int) -> tuple[int, int]:
        return rotate(x, y, theta, fmt)

    def irot(x: int, y: int, theta: int) -> tuple[int, int]:
        return unrotate(x, y, theta, fmt)

    names: dict[str, object] = {
        "M": mask, "W": width, "F": fmt.frac_bits, "S": S, "shl": shl, "srl": srl,
        "sra": sra, "rotl": rotl, "rotr": rotr, "slt": slt, "fmul": fmul, "fdiv": fdiv,
        "rot": rot, "irot": irot, "one": one, "fneg": fneg, "fadd": fadd, "fsub": fsub,
        "fsign": fsign,
    }
    for name in UNARY_FUNCTIONS:
        names[f"fn_{name}"] = _unary(elementary.FUNCTIONS[name], fmt)
    for name in BINARY_FUNCTIONS:
        names[f"fn_{name}"] = _binary(elementary.BINARY_FUNCTIONS[name], fmt)
    return names


def _unary(function: Callable[[int, WordFormat], int], fmt: WordFormat) -> Callable[[int], int]:
    mask, signed = fmt.mask, fmt.signed
    return lambda word: function(signed(word), fmt) & mask


def _binary(function: Callable[[int, int, WordFormat], int],
            fmt: WordFormat) -> Callable[[int, int], int]:
    mask, signed = fmt.mask, fmt.signed
    return lambda x, y: function(signed(x), signed(y), fmt) & mask
