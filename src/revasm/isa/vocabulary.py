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

The functions (the word operations, ``fmul``, ``fdiv``, the elementary functions
``fn_*``, ``rot``/``irot`` and the overflow predicates ``ovf_*``) are the rows of the
primitives table, ``isa/primitives.py``: their arity, result, faults and unit are
declared there, with their one reference implementation.
"""
from __future__ import annotations

from .fixed_point import WordFormat
from .primitives import bound


def vocabulary(fmt: WordFormat) -> dict[str, object]:
    """The names a template may use, bound for one word format: the constants ``M``
    (the word mask), ``W``, ``F`` and ``one``, the signed view ``S``, and every row of
    the primitives table (``isa/primitives.py``) by its reference implementation."""
    sign = fmt.sign_bit

    def S(word: int) -> int:  # the vocabulary's name for "signed view"
        return word - ((word & sign) << 1)

    return {"M": fmt.mask, "W": fmt.width, "F": fmt.frac_bits, "one": fmt.one, "S": S,
            **bound(fmt)}
