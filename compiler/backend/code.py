"""Emitted code: instructions with their source position and role, and their inverses.

Roles (used by the instruction-count report): ``compute`` (the forward work),
``uncompute`` (clearing temporaries, ~routine, frees), ``control`` (the branch
that decides an if/while, loop counters, calls), ``check`` (paired catching
branches and the guards that make failed postconditions fault) and ``call``
(saving registers and passing arguments).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from revasm.isa.fixed_point import WordFormat
from revasm.isa.table import INSTRUCTIONS

from ..errors import CompileError, SourcePos

_BY_NAME = {i.mnemonic: i for i in INSTRUCTIONS}


@dataclass(frozen=True)
class Instr:
    mnemonic: str
    operands: tuple[str, ...]
    pos: SourcePos | None = None
    role: str = "compute"
    note: str = ""
    label: str = ""
    check: str = ""  # a trap pad's kind of check (compiler/backend/guards.py CHECK_KINDS)

    def text(self) -> str:
        ops = " ".join(self.operands)
        return f"{self.mnemonic.lower():<7} {ops}".rstrip()


def inverse_instr(instr: Instr) -> Instr:
    """The instruction whose effect undoes ``instr`` (a data instruction or LI)."""
    m = instr.mnemonic
    if m in ("LI", "ADDI"):
        reg, value = instr.operands
        return replace(instr, operands=(reg, _negate(value)), label="")
    entry = _BY_NAME[m]
    if entry.kind != "data":
        raise ValueError(f"{m} is not a data instruction")
    return replace(instr, mnemonic=entry.inverse, label="")


def inverse_code(code: list[Instr]) -> list[Instr]:
    """Undo a straight-line sequence: the inverses, in reverse order."""
    return [inverse_instr(i) for i in reversed(code)]


def with_role(code: list[Instr], role: str) -> list[Instr]:
    return [replace(i, role=role) for i in code]


def _negate(value: str) -> str:
    if value.startswith("-"):
        return value[1:]
    if value.startswith("+"):
        return "-" + value[1:]
    return "-" + value


def _fixed_literal(value: Fraction) -> str:
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


def literal_word(value: Fraction, integer: bool, fmt: WordFormat, pos: SourcePos | None,
                 text: str, *, bits: bool = False) -> int:
    """The signed raw word of a constant, or a CompileError at ``pos`` when the word cannot
    hold it (never a silently wrapped constant).

    An integer is itself (``bits``, for ``^=`` masks, also takes unsigned words up to
    2**W - 1); a Fixed value is rounded to the nearest step of the format.
    """
    wide = WordFormat(64)
    fits_wide = wide.min_signed <= (int(value) if integer else wide.from_real(value)) \
        <= (wide.mask if bits and integer else wide.max_signed)
    hint = "use --width 64 for a wider range" if fmt.width == 32 and fits_wide else ""
    if integer:
        word, top = int(value), (fmt.mask if bits else fmt.max_signed)
        if fmt.min_signed <= word <= top:
            return word
        raise CompileError(pos, f"{text} does not fit a {fmt.width}-bit Int "
                                f"(from {fmt.min_signed} to {top})", hint)
    word = fmt.from_real(value)
    if fmt.min_signed <= word <= fmt.max_signed:
        return word
    raise CompileError(pos, f"{text} does not fit {fmt.name} ({fmt.range_text()})", hint)
