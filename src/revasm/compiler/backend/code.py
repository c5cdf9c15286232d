"""Emitted code: instructions with their source position and role, and their inverses.

Roles (used by the instruction-count report): ``compute`` (the forward work),
``uncompute`` (clearing temporaries, ~routine, frees), ``control`` (the branch
that decides an if/while, loop counters, calls), ``check`` (paired catching
branches and the guards that make failed postconditions fault) and ``call``
(saving registers and passing arguments).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from revasm.isa.fixed_point import WordFormat, word_format
from revasm.isa.table import INSTRUCTIONS

from ..errors import CompileError, SourcePos

_BY_NAME = {i.mnemonic: i for i in INSTRUCTIONS}


@dataclass(slots=True, unsafe_hash=True)
class Instr:
    mnemonic: str
    operands: tuple[str, ...]
    pos: SourcePos | None = None
    role: str = "compute"
    note: str = ""
    label: str = ""
    check: str = ""  # a trap pad's kind of check (compiler/backend/guards.py CHECK_KINDS)

    def text(self) -> str:
        return instruction_text(self.mnemonic, self.operands)


@dataclass(slots=True, unsafe_hash=True)
class Loop(Instr):
    """``body`` run ``count`` times, a pseudo-instruction until ``expand_loops``.

    The body must not depend on the iteration (it reads no counter), so the loop's
    inverse is the same loop over the inverse body: code that holds loops stays
    invertible with ``inverse_code``.  ``counter`` is a zero scratch register the
    expansion counts in, ``spare`` one that is zero between iterations (it holds the
    count while the exit is tested).
    """

    body: tuple[Instr, ...] = ()
    count: int = 0
    counter: str = ""
    spare: str = ""


def instruction_text(mnemonic: str, operands: tuple[str, ...]) -> str:
    """An instruction as PAL writes it: the mnemonic in lower case, padded to 7 columns,
    then the operands."""
    return f"{mnemonic.lower():<7} {' '.join(operands)}".rstrip()


def expand_loops(code: list[Instr], label: Callable[[str], str]) -> list[Instr]:
    """Every :class:`Loop` of ``code`` as paired branches (``label(kind)`` names them).

    ``counter`` runs 0 .. count: the top branch (taken when counter != 0) catches the
    back edge and the exit branch (taken when counter == count, held in ``spare``)
    catches the test, as a while loop's (docs/abi.md); counter is cleared after.
    """
    out: list[Instr] = []
    for instr in code:
        out += _expand(instr, label) if isinstance(instr, Loop) else [instr]
    return out


def _expand(loop: Loop, label: Callable[[str], str]) -> list[Instr]:
    top, test, bottom, exit_ = (label(k) for k in ("dtop", "dtest", "dback", "dexit"))
    c, k, n = loop.counter, loop.spare, str(loop.count)

    def i(mnemonic: str, *operands: str, name: str = "") -> Instr:
        return Instr(mnemonic, operands, loop.pos, loop.role, loop.note, name)
    body = expand_loops([replace(b, role=loop.role) for b in loop.body], label)
    return [i("BNE", c, "$0", bottom, name=top), i("ADDI", k, n),
            i("BEQ", c, k, exit_, name=test), i("ADDI", k, "-" + n), *body,
            i("ADDI", c, "1"), i("BNE", c, "$0", top, name=bottom),
            i("BEQ", c, k, test, name=exit_), i("ADDI", k, "-" + n), i("ADDI", c, "-" + n)]


def inverse_instr(instr: Instr) -> Instr:
    """The instruction whose effect undoes ``instr`` (a data instruction, LI or a Loop)."""
    if isinstance(instr, Loop):
        return replace(instr, body=tuple(inverse_code(list(instr.body))), label="")
    m = instr.mnemonic
    operands: tuple[str, ...]
    if m in ("LI", "ADDI"):
        reg, value = instr.operands
        mnemonic, operands = m, (reg, _negate(value))
    else:
        entry = _BY_NAME[m]
        if entry.kind != "data":
            raise ValueError(f"{m} is not a data instruction")
        mnemonic, operands = entry.inverse, instr.operands
    if type(instr) is Instr:  # (``replace`` looks the fields up each time: 3x slower)
        return Instr(mnemonic, operands, instr.pos, instr.role, instr.note, "", instr.check)
    return replace(instr, mnemonic=mnemonic, operands=operands, label="")


def inverse_code(code: list[Instr]) -> list[Instr]:
    """Undo a straight-line sequence: the inverses, in reverse order."""
    return [inverse_instr(i) for i in reversed(code)]


def with_role(code: list[Instr], role: str) -> list[Instr]:
    return [Instr(i.mnemonic, i.operands, i.pos, role, i.note, i.label, i.check)
            if type(i) is Instr else replace(i, role=role) for i in code]


def literal_amount(text: str) -> int | None:
    """An ``addi``'s amount as a number; None for a symbolic one."""
    try:
        return int(text, 0)
    except ValueError:
        return None  # a symbolic immediate


def _negate(value: str) -> str:
    if value.startswith("-"):
        return value[1:]
    if value.startswith("+"):
        return "-" + value[1:]
    return "-" + value


def fixed_literal(value: Fraction) -> str:
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


def literal_word(value: Fraction, integer: bool, fmt: WordFormat, pos: SourcePos,
                 text: str, *, bits: bool = False) -> int:
    """The signed raw word of a constant, or a CompileError at ``pos`` when the word cannot
    hold it (never a silently wrapped constant).

    An integer is itself (``bits``, for ``^=`` masks, also takes unsigned words up to
    2**W - 1); a Fixed value is rounded to the nearest step of the format.
    """
    wide = word_format(64)
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
