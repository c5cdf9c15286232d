"""Static checks that an instruction can run reversibly (docs/assembly.md, "Static checks").

All of them read the instruction table: ``writes`` (operands an instruction
writes, which must not be ``$0``), ``distinct`` (operand pairs that must name
different registers, or the update would read what it overwrites) and
``kind`` (which instructions catch a jump).
"""
from __future__ import annotations

from typing import NamedTuple

from revasm.isa.instruction import Instruction

#: Control kinds whose target is a jump: they add an offset to BR.
JUMP_KINDS = ("branch", "rbra")
#: The control kind that sets BR from a register, so it catches any jump.
PORTAL_KIND = "swapbr"


def register_problems(ins: Instruction, operands: dict[str, int],
                      written_as: str = "") -> list[tuple[str, str]]:
    """(operand name, message) for each write to ``$0`` and each aliased pair.

    ``written_as`` names the pseudo-instruction an expanded instruction came from.
    """
    problems = []
    for name in ins.writes:
        if operands.get(name) == 0:
            problems.append((name, f"{written_as or ins.mnemonic} would write $0, "
                                   "which always reads zero"))
    for first, second in ins.distinct:
        if operands[first] == operands[second]:
            problems.append((second, f"operands {first} and {second} are both ${operands[first]}: "
                                     f"{ins.mnemonic} ({ins.doc}) needs distinct registers "
                                     "to be reversible"))
    return problems


class Placed(NamedTuple):
    """An instruction at an address, with its field values and source line (a named tuple:
    a long program places hundreds of thousands, ``assemble._placed`` makes them)."""

    ins: Instruction
    operands: dict[str, int]
    line: int


def catch_problem(source_pc: int, target: int, code: dict[int, Placed], data: dict[int, int],
                  length: int) -> str | None:
    """Why a jump from ``source_pc`` to ``target`` would not be caught, or None.

    The landing instruction must leave BR = 0: a SWAPBR (which loads BR from a
    register), or the partner jump whose offset cancels this one's, i.e. a
    branch or RBRA whose own target is ``source_pc``.
    """
    if not 0 <= target < length:
        return (f"is outside the program (addresses 0..{length - 1})" if length
                else "is outside the program (which is empty)")
    if target in data:
        return f"is a DATA cell (line {data[target]}), not an instruction"
    landing = code[target]
    if landing.ins.kind in (PORTAL_KIND, "finish"):
        return None  # a jump onto FINISH halts there with BR = its offset (PendVM runs these)
    if landing.ins.kind in JUMP_KINDS:
        back = target + landing.operands["off"]
        if back == source_pc:
            return None
        return (f"holds {landing.ins.mnemonic} (line {landing.line}), which goes to pc {back}, "
                f"not back to pc {source_pc}, so BR stays non-zero; land on a SWAPBR or "
                f"on a branch back to pc {source_pc}")
    return (f"holds {landing.ins.mnemonic} (line {landing.line}), which leaves BR unchanged, "
            f"so the jump is not caught; land on a SWAPBR or on a branch back to "
            f"pc {source_pc}")
