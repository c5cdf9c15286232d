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


def cancel_exchange_pairs(code: list[Instr]) -> list[Instr]:
    """``code`` without the pairs ``exch $r $a`` ... ``exch $r $a`` (-O2) where the code
    between touches neither register and no memory (no other ``exch``), in straight-line
    code, and the same exchange was made before the pair with ``$a`` unchanged since (so
    the address was reached already: dropping the pair moves no fault).

    A statement moves an element into a register, uses it and moves it back; the next
    code moves it in again (a condition's undo, the next statement).  The two exchanges
    are one and its inverse, in the value bank and in the gradient and tangent banks
    alike; dropping them leaves the element in the register in between."""
    code = list(code)
    k = 0
    while k < len(code):
        j = _exchange_partner(code, k)
        if j is None:
            k += 1
            continue
        del code[j]
        del code[k]
        k = max(0, k - WINDOW)
    return code


def _exchange_partner(code: list[Instr], k: int) -> int | None:
    first = code[k]
    if first.mnemonic != "EXCH" or first.label:
        return None
    register, address = first.operands
    if not _reached_before(code, k):
        return None
    for j in range(k + 1, min(len(code), k + 1 + WINDOW)):
        other = code[j]
        if other.label:
            return None
        if other.mnemonic == "EXCH":
            return j if other.operands == first.operands else None
        touched = touched_registers(other)
        if touched is None or register in touched or address in touched:
            return None
    return None


def _reached_before(code: list[Instr], k: int) -> bool:
    """Whether ``code[k]``'s exchange was made earlier in its straight-line code with its
    address register unchanged since."""
    first = code[k]
    address = first.operands[1]
    for j in range(k - 1, max(-1, k - 1 - WINDOW), -1):
        other = code[j]
        if other.mnemonic == "EXCH" and other.operands == first.operands:
            return True
        if other.label:
            return False  # control may enter here without the code before
        sets = _registers(other)
        if sets is None or address in sets[1]:
            return False
    return False
