"""Immediates: two ``addi`` on one register combined (-O2); an ``addi`` too wide for its field
made an ``li`` (every level).

Pointers and base registers are moved to an element and back around each access
(``addi P 2; exch; addi P -2``); the next statement moves the same register again
(``addi P 3; exch; ...``).  Between two ``addi`` of one register, in straight-line
code, where no instruction reads or writes that register, the first may as well be
added by the second: ``addi P -2 ... addi P 3`` is ``... addi P 1``, and a sum of zero
drops both (the peephole's inverse pairs, for ``addi``).  ``addi`` never faults, and no
other instruction sees the register between the two, so the program computes the same
words; at every label and branch the register holds what it held before.

Long code (``peephole.COMPILED_FROM`` instructions) is combined by a compiled loop over
the pair scans' integer codes (``pair_scans.immediates_combined``: the same code; 1.05 s ->
0.45 s on the 6.4*10^5 instructions of 10^5 array updates); this Python loop is the
reference it is held to (``tests/compiler/backend/test_immediate_scans.py``).
"""
from __future__ import annotations

from dataclasses import replace

from .code import Instr, literal_amount
from .peephole import COMPILED_FROM, Chain, touched_registers

#: ADDI's immediate field: 16 bits, signed.
IMMEDIATE_RANGE = (-(1 << 15), (1 << 15) - 1)
#: How far an ``addi`` looks for its partner.  The search stops at the first instruction
#: that uses the register (or a label, a branch), so a long reach costs little; it lets
#: a pointer's step meet its inverse across a routine's body (the GMM's ``main_term``:
#: ``x[i, 1]``'s pointer moved back after the computing half and forward again in the
#: uncomputing half, 51 instructions apart).
WINDOW = 256


def _amount(instr: Instr) -> int | None:
    if instr.mnemonic != "ADDI" or instr.label:
        return None
    return literal_amount(instr.operands[1])


def combine_immediates(code: list[Instr], compiled_from: int | None = None) -> list[Instr]:
    """``code`` with each ``addi`` added into the next ``addi`` of its register when no
    instruction between them (within ``WINDOW``, no label, no branch) uses the register;
    a sum of zero leaves neither.  Code of ``compiled_from`` instructions (by default
    ``peephole.COMPILED_FROM``) is combined by the compiled loop of ``pair_scans.py``."""
    if len(code) >= (COMPILED_FROM if compiled_from is None else compiled_from):
        from .pair_scans import immediates_combined
        done = immediates_combined(code, WINDOW, IMMEDIATE_RANGE)
        if done is not None:
            return done
    chain = Chain(list(code))  # a merge drops in O(1) (list deletions were quadratic)
    code = chain.code
    k = chain.first
    while k != chain.end:
        first = code[k]
        amount = _amount(first)
        if amount is None:
            k = chain.next[k]
            continue
        register = first.operands[0]
        partner = None
        for j in chain.after(k, WINDOW):
            other = code[j]
            if other.label:
                break
            if other.mnemonic == "ADDI" and other.operands[0] == register:
                partner = j if _amount(other) is not None else None
                break
            touched = touched_registers(other)
            if touched is None or register in touched:
                break
        if partner is None:
            k = chain.next[k]
            continue
        later = code[partner]
        total = amount + (_amount(later) or 0)
        if not IMMEDIATE_RANGE[0] <= total <= IMMEDIATE_RANGE[1]:
            k = chain.next[k]
            continue
        if total:
            code[partner] = replace(later, operands=(register, str(total)))
        else:
            chain.drop(partner)
        before = chain.prev[k]
        chain.drop(k)
        # a merge may let an earlier addi reach further: look again a little before
        k = before if before >= 0 else chain.first
    return chain.live()


def widened_immediates(code: list[Instr]) -> list[Instr]:
    """``code`` with each ``addi`` whose amount does not fit ADDI's 16-bit field (an array's
    extent in a bounds check, a large frame's offset) written as ``li``, the
    pseudo-instruction that adds any word to its register (as ``addi`` does; its inverse is
    ``li`` of the negated amount, like ``addi``'s): every pass may emit ``addi`` of any
    amount, and the program still assembles."""
    out = []
    for instr in code:
        if instr.mnemonic == "ADDI":
            try:
                amount = int(instr.operands[1], 0)
            except ValueError:
                amount = None  # a symbolic immediate: the assembler checks it
            if amount is not None and not IMMEDIATE_RANGE[0] <= amount <= IMMEDIATE_RANGE[1]:
                instr = replace(instr, mnemonic="LI")
        out.append(instr)
    return out
