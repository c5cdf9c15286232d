"""Stack slots: a register pushed and passed back from the same slot is never moved (-O2).

A portal call pushes every register of the caller onto the stack and then passes each
argument into the callee's parameter register from its slot (``calls.py``,
docs/abi.md).  When an argument already sits in the register the callee takes it in
(a caller and a callee with the same parameters in the same order), the push
``exch $r $1`` and the pass ``exch $r $1``, with the stack pointer back at the same
slot, are one exchange and its inverse: the register and the slot end as they were,
in the value bank and in the gradient and tangent banks alike (EXCH moves all of
them).  Between the two, in straight-line code, nothing else may read or write the
register or that slot: the stack pointer moves only by constant ``addi``, every other
memory access is an ``exch`` through the stack pointer at another slot.  Both are then
dropped (the ``addi`` between them are combined by ``immediates.py``).

Only a fault moves: a push past the end of data memory faults at a later push (every
remaining push of the call is at a higher slot), as a hoisted guard faults earlier
(docs/decisions.md, "Stack slots").

This scan is the reference.  Long code (``peephole.COMPILED_FROM`` instructions) runs it
compiled, in the pair scans' numba call right after them on the same numbering
(``pair_scans.pairs_cancelled(..., stack=True)``, from ``lowering._stack_pairs_cancelled``):
the same instructions dropped (``tests/compiler/backend/test_stack_scans.py``).
"""
from __future__ import annotations

from .code import Instr
from .layout import SP
from .peephole import Chain, touched_registers

#: How far ahead to look for the pass that undoes a push (a call with many parameters
#: pushes two instructions per register, then passes three per argument).
WINDOW = 160
_SP = f"${SP}"


def _sp_step(instr: Instr) -> int | None:
    """The constant an ``addi $1 c`` moves the stack pointer by, else None."""
    if instr.mnemonic != "ADDI" or instr.operands[0] != _SP:
        return None
    try:
        return int(instr.operands[1], 0)
    except ValueError:
        return None


def _stack_exchange(instr: Instr) -> str | None:
    """The register of an ``exch $r $1`` (an exchange with the stack slot at SP)."""
    if instr.mnemonic == "EXCH" and instr.operands[1] == _SP:
        return instr.operands[0]
    return None


def cancel_stack_exchanges(code: list[Instr]) -> list[Instr]:
    """``code`` without the pairs of ``exch $r $1`` at one slot with nothing between them
    that touches ``$r`` or the slot."""
    chain = Chain(list(code))  # a pair drops in O(1) (list deletions were quadratic)
    k = chain.first
    while k != chain.end:
        j = _partner(chain, k)
        if j is None:
            k = chain.next[k]
            continue
        chain.drop(j)
        after = chain.next[k]  # where the list scan went on: what followed k, j gone
        chain.drop(k)
        k = after
    return chain.live()


def _partner(chain: Chain, k: int) -> int | None:
    code = chain.code
    first = code[k]
    register = _stack_exchange(first)
    if register is None or first.label or register == _SP:
        return None
    offset = 0  # the stack pointer's distance from the first exchange's slot
    for j in chain.after(k, WINDOW):
        other = code[j]
        if other.label:
            return None
        step = _sp_step(other)
        if step is not None:
            offset += step
            continue
        other_register = _stack_exchange(other)
        if other_register is not None:
            if other_register == register:
                return j if offset == 0 else None
            if offset == 0 or other_register == _SP:
                return None  # another register in the slot
            continue
        touched = touched_registers(other)
        if touched is None or register in touched or _SP in touched or \
                other.mnemonic == "EXCH":
            return None  # a branch, the register, the stack pointer, or memory
    return None
