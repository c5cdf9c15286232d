"""The small vocabulary in which ``isa/table.py`` writes semantics.

A semantics template is a Python statement over ``R`` (registers), ``MEM``
(memory), ``BR``, ``DIR`` and the names below, all acting on W-bit words held
as unsigned integers.  Gradient-mode templates (``isa/adjoint.py``) also use
the banks ``G``, ``GM``, ``T``, ``TM``, ``TG``, ``TGM`` and the fixed-point
helpers ``one`` (1.0), ``fneg``, ``fadd``, ``fsub`` (mod 2^W) and ``fsign``.
Engines execute the templates in a namespace built by :func:`vocabulary`, adding
their own ``addr`` (memory address check), ``show``, ``emit`` and ``unemit``
(output devices) and ``overflow`` (the overflow-event device: returns its flag, or
faults when the machine is strict).

Overflow predicates (0 or 1, on words; no answer is silently wrong: docs/isa.md, "Overflow events"):
``ovf_add``/``ovf_sub`` (the exact signed sum/difference leaves the range),
``ovf_mul``/``ovf_div`` (the rounded product/quotient does not fit; ``ovf_div(x, 0)``
is 0, the division faults first), ``ovf_sat`` (a saturating function's result sits
at an end of the range), ``ovf_rot``/``ovf_irot`` (a shear of the rotation wraps).
"""
from __future__ import annotations

from collections.abc import Callable

from . import elementary
from .fixed_point import WordFormat
from .rotation import rotate, rotation_overflows, unrotate, unrotation_overflows
from .table import BINARY_FUNCTIONS, UNARY_FUNCTIONS


def vocabulary(fmt: WordFormat) -> dict[str, object]:
    """The names a template may use, bound for one word format."""
    width = fmt.width
    mask = fmt.mask
    sign = fmt.sign_bit
    amount_mask = width - 1

    def S(word: int) -> int:  # the vocabulary's name for "signed view"
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

    frac, half = fmt.frac_bits, 1 << (fmt.frac_bits - 1)

    def fmul(x: int, y: int) -> int:
        # elementary.fx_mul (floor(S(x) S(y) / 2^F + 1/2)), inlined: the hottest call
        return ((((x - ((x & sign) << 1)) * (y - ((y & sign) << 1)) + half) >> frac)
                & mask)

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

    lowest, highest = fmt.min_signed, fmt.max_signed
    top = width - 1

    # The sum leaves the range exactly when both operands' signs differ from the
    # wrapped result's (the difference: when x's sign differs from y's and the result's).
    def ovf_add(x: int, y: int) -> int:
        total = (x + y) & mask
        return (((x ^ total) & (y ^ total)) >> top) & 1

    def ovf_sub(x: int, y: int) -> int:
        difference = (x - y) & mask
        return (((x ^ y) & (x ^ difference)) >> top) & 1

    def ovf_mul(x: int, y: int) -> int:
        # elementary.fx_mul, inlined: floor(S(x) S(y) / 2^F + 1/2)
        product = ((x - ((x & sign) << 1)) * (y - ((y & sign) << 1)) + half) >> frac
        return 0 if lowest <= product <= highest else 1

    def ovf_div(x: int, y: int) -> int:
        if y == 0:
            return 0
        return 0 if lowest <= elementary.fx_div(S(x), S(y), fmt) <= highest else 1

    largest = mask >> 1

    def ovf_sat(x: int) -> int:
        return 1 if x == largest or x == sign else 0

    def ovf_rot(x: int, y: int, theta: int) -> int:
        return rotation_overflows(x, y, theta, fmt)

    def ovf_irot(x: int, y: int, theta: int) -> int:
        return unrotation_overflows(x, y, theta, fmt)

    names: dict[str, object] = {
        "M": mask, "W": width, "F": fmt.frac_bits, "S": S, "shl": shl, "srl": srl,
        "sra": sra, "rotl": rotl, "rotr": rotr, "slt": slt, "fmul": fmul, "fdiv": fdiv,
        "rot": rot, "irot": irot, "one": one, "fneg": fneg, "fadd": fadd, "fsub": fsub,
        "fsign": fsign, "ovf_add": ovf_add, "ovf_sub": ovf_sub, "ovf_mul": ovf_mul,
        "ovf_div": ovf_div, "ovf_sat": ovf_sat, "ovf_rot": ovf_rot, "ovf_irot": ovf_irot,
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
