"""Peephole: cancel an instruction against its inverse across code it commutes with.

Statements are lowered one at a time, each clearing its scratch registers, so
consecutive statements often recompute what the last one just cleared
(``sllx $2 $14 32`` for an ``Int`` read in a ``Fixed`` context, a ``li`` of
the same constant).  Within straight-line code (no label in between, no
branch) an instruction ``I`` followed later by its exact inverse, where every
instruction in between neither writes what ``I`` reads or writes nor reads
what ``I`` writes, is the identity: both are dropped.  Only instructions that
cannot fault are dropped (integer adds, XORs, shifts, set-less-than, LI), so
every fault the program can raise is still raised, at the same instruction.
Between statements a scratch register may then hold a value a little longer;
at every label and branch it is zero again, as docs/abi.md says.
"""
from __future__ import annotations

from functools import lru_cache

from revasm.isa.table import INSTRUCTIONS

from .code import Instr, inverse_instr

_BY_NAME = {i.mnemonic: i for i in INSTRUCTIONS}
#: Instructions that never fault and whose inverse is another (or the same) of them.
CANCELLABLE = frozenset({"ADD", "SUB", "ADDI", "LI", "XOR", "XORI", "SLLX", "SRAX", "SLTX",
                         "ANDX", "ORX", "NEG", "SWAP"})
_FIELD = {"a": 0, "b": 1, "c": 2}
#: How far ahead to look for the inverse.
WINDOW = 48


@lru_cache(maxsize=1 << 16)
def _registers(instr: Instr) -> tuple[frozenset[str], frozenset[str]] | None:
    """(read, written) registers of a data instruction (or LI); None for anything else."""
    regs = frozenset(o for o in instr.operands if o.startswith("$"))
    if instr.mnemonic == "LI":
        return regs, regs
    entry = _BY_NAME.get(instr.mnemonic)
    if entry is None or entry.kind != "data":
        return None
    written = frozenset(instr.operands[_FIELD[f]] for f in entry.writes)
    return regs, written - {"$0"}


def touched_registers(instr: Instr) -> frozenset[str] | None:
    """Every register a data instruction (or LI) reads or writes; None for any other
    instruction (a branch, a call, a label's landing: code must not be moved across it)."""
    sets = _registers(instr)
    return None if sets is None else sets[0] | sets[1]


@lru_cache(maxsize=1 << 16)
def _inverse(instr: Instr) -> Instr | None:
    try:
        return inverse_instr(instr)
    except (ValueError, KeyError):
        return None


def cancel_inverse_pairs(code: list[Instr]) -> list[Instr]:
    """``code`` without the pairs (instruction, later inverse) that commute with the code
    between them; repeated until nothing more cancels."""
    code = list(code)
    changed = True
    while changed:
        changed = False
        k = 0
        while k < len(code):
            j = _partner(code, k)
            if j is None:
                k += 1
                continue
            del code[j]
            del code[k]
            changed = True
            # what the pair blocked before it may cancel now: look again from there
            k = max(0, k - WINDOW)
    return code


def _partner(code: list[Instr], k: int) -> int | None:
    first = code[k]
    if first.label or first.mnemonic not in CANCELLABLE:
        return None
    sets = _registers(first)
    if sets is None:
        return None
    reads, writes = sets
    inverse = _inverse(first)
    if inverse is None:
        return None
    for j in range(k + 1, min(len(code), k + 1 + WINDOW)):
        other = code[j]
        if other.label:
            return None
        if other.mnemonic == inverse.mnemonic and other.operands == inverse.operands:
            return j
        between = _registers(other)
        if between is None:
            return None
        other_reads, other_writes = between
        if other_writes & (reads | writes) or writes & other_reads:
            return None
    return None
