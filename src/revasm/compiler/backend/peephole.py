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

from collections.abc import Callable, Iterator
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
#: Code of at least this many instructions is scanned by the compiled loop of
#: ``pair_scans.py`` (the same pairs dropped), shorter code here.
COMPILED_FROM = 100_000


def _registers(instr: Instr) -> tuple[frozenset[str], frozenset[str]] | None:
    """(read, written) registers of a data instruction (or LI); None for anything else."""
    return _register_sets(instr.mnemonic, instr.operands)


@lru_cache(maxsize=1 << 16)
def _register_sets(mnemonic: str, operands: tuple[str, ...]
                   ) -> tuple[frozenset[str], frozenset[str]] | None:
    # keyed by what decides the answer, not by the whole Instr (whose hash covers its
    # source position and note: most of the peephole's time on a long program)
    regs = frozenset(o for o in operands if o.startswith("$"))
    if mnemonic == "LI":
        return regs, regs
    entry = _BY_NAME.get(mnemonic)
    if entry is None or entry.kind != "data":
        return None
    written = frozenset(operands[_FIELD[f]] for f in entry.writes)
    return regs, written - {"$0"}


@lru_cache(maxsize=1 << 16)
def register_masks(mnemonic: str, operands: tuple[str, ...]) -> tuple[int, int] | None:
    """:func:`_register_sets` as bit masks (bit n for ``$n``): the scans below test
    thousands of pairs per statement, and an ``&`` of two ints is what they need."""
    sets = _register_sets(mnemonic, operands)
    if sets is None:
        return None
    return _mask(sets[0]), _mask(sets[1])


def _mask(registers: frozenset[str]) -> int:
    bits = 0
    for register in registers:
        bits |= 1 << int(register[1:])
    return bits


def touched_registers(instr: Instr) -> frozenset[str] | None:
    """Every register a data instruction (or LI) reads or writes; None for any other
    instruction (a branch, a call, a label's landing: code must not be moved across it)."""
    sets = _registers(instr)
    return None if sets is None else sets[0] | sets[1]


def _inverse(instr: Instr) -> tuple[str, tuple[str, ...]] | None:
    """The mnemonic and operands of ``instr``'s inverse (None: it has none here)."""
    return inverse_of(instr.mnemonic, instr.operands)


@lru_cache(maxsize=1 << 16)
def inverse_of(mnemonic: str, operands: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """The mnemonic and operands of the inverse of this spelling (None: it has none here)."""
    try:
        inverse = inverse_instr(Instr(mnemonic, operands))
    except (ValueError, KeyError):
        return None
    return inverse.mnemonic, inverse.operands


class Chain:
    """``code`` as a doubly linked list: dropping a pair is O(1), not two O(n) list
    deletions (quadratic on a 10^5-statement program), and stepping over the live
    instructions visits them in the order the list would hold them."""

    def __init__(self, code: list[Instr]) -> None:
        self.code = code
        n = len(code)
        self.end = n  # the sentinel past the last instruction
        self.next = list(range(1, n + 2))
        self.prev = list(range(-1, n))
        self.first: int = 0 if n else n
        #: each position's (read, written) register masks, None where code must not move
        #: (made by :meth:`with_masks`: only the inverse-pair scan reads them)
        self.masks: list[tuple[int, int] | None] = []

    def with_masks(self) -> Chain:
        self.masks = [register_masks(i.mnemonic, i.operands) for i in self.code]
        return self

    def after(self, k: int, steps: int) -> Iterator[int]:
        """The up to ``steps`` live positions after ``k``, in order (lazily: most scans
        stop at the first or second)."""
        nxt, end = self.next, self.end
        j = nxt[k]
        for _ in range(steps):
            if j == end:
                return
            yield j
            j = nxt[j]

    def before(self, k: int, steps: int) -> Iterator[int]:
        """The up to ``steps`` live positions before ``k``, nearest first (lazily)."""
        prv = self.prev
        j = prv[k]
        for _ in range(steps):
            if j < 0:
                return
            yield j
            j = prv[j]

    def drop(self, k: int) -> None:
        p, n = self.prev[k], self.next[k]
        if p >= 0:
            self.next[p] = n
        else:
            self.first = n
        if n != self.end:
            self.prev[n] = p

    def back(self, k: int, steps: int) -> int:
        """The live position ``steps`` before ``k`` (the first if there are fewer): where a
        list scan resumes at ``max(0, k - steps)`` once the pair at ``k`` is gone."""
        behind = list(self.before(k, steps))
        return behind[-1] if len(behind) == steps else self.first

    def live(self) -> list[Instr]:
        out = []
        k = self.first
        while k != self.end:
            out.append(self.code[k])
            k = self.next[k]
        return out


def cancel_inverse_pairs(code: list[Instr]) -> list[Instr]:
    """``code`` without the pairs (instruction, later inverse) that commute with the code
    between them, until nothing more cancels -- in one scan: after each dropped pair the
    scan looks again from :data:`WINDOW` instructions before it, which covers every
    instruction whose partner the pair stood between (a second scan found nothing in
    ``tests/compiler/backend/test_peephole.py``'s random code; it had been run every time,
    a sixth of compiling a long program)."""
    chain = Chain(list(code)).with_masks()
    _drop_pairs(chain, _partner)
    return chain.live()


#: A partner function: the position ``k`` pairs with (or None), and the last position
#: its answer depended on, looking forward (``k`` itself when only ``k`` decided).
Partner = Callable[[Chain, int], tuple[int | None, int]]


def _drop_pairs(chain: Chain, partner: Partner) -> bool:
    """One scan of ``chain`` dropping each instruction and the later one ``partner`` pairs
    it with; whether any pair went.

    After each dropped pair the scan looks again from :data:`WINDOW` instructions before
    it; an instruction there whose earlier answer did not reach the pair (its look ahead
    stopped before it) keeps that answer instead of being asked again -- the same drops,
    without asking each instruction again after every pair near it (most of the
    peephole's time where half a long program's instructions cancel)."""
    dropped = False
    nxt, end = chain.next, chain.end
    #: the last position each scanned instruction's (no) answer depended on; -1 unknown
    stop = [-1] * (end + 1)
    front = -1  # the farthest position scanned
    k = chain.first
    while k != end:
        if stop[k] >= 0:
            k = nxt[k]
            continue
        j, last = partner(chain, k)
        if k > front:
            front = k
        if j is None:
            stop[k] = last
            k = nxt[k]
            continue
        # what the pair blocked before it may cancel now: look again from there
        resume = chain.back(k, WINDOW)
        chain.drop(j)
        chain.drop(k)
        dropped = True
        at, k = k, chain.first if resume == k else resume
        # forget the answers the pair's going may change: those that looked as far as
        # it, and every one after it (an exchange looks back, too)
        q = k
        while q != end and q <= front:
            if q > at or stop[q] >= at:
                stop[q] = -1
            q = nxt[q]
    return dropped


def _partner(chain: Chain, k: int) -> tuple[int | None, int]:
    code = chain.code
    first = code[k]
    if first.label or first.mnemonic not in CANCELLABLE:
        return None, k
    masks = chain.masks[k]
    if masks is None:
        return None, k
    inverse = _inverse(first)
    if inverse is None:
        return None, k
    mnemonic, operands = inverse
    writes = masks[1]
    touched = masks[0] | writes
    # chain.after inlined: this loop is most of the peephole's time on a long program
    nxt, end, every = chain.next, chain.end, chain.masks
    j = last = nxt[k]
    for _ in range(WINDOW):
        if j == end:
            return None, last
        last = j
        other = code[j]
        if other.label:
            return None, j
        if other.mnemonic == mnemonic and other.operands == operands:
            return j, j
        between = every[j]
        if between is None or between[1] & touched or writes & between[0]:
            return None, j
        j = nxt[j]
    return None, last


def cancel_exchange_pairs(code: list[Instr]) -> list[Instr]:
    """``code`` without the pairs ``exch $r $a`` ... ``exch $r $a`` (-O2) where the code
    between touches neither register and no memory (no other ``exch``), in straight-line
    code, and the same exchange was made before the pair with ``$a`` unchanged since (so
    the address was reached already: dropping the pair moves no fault).

    A statement moves an element into a register, uses it and moves it back; the next
    code moves it in again (a condition's undo, the next statement).  The two exchanges
    are one and its inverse, in the value bank and in the gradient and tangent banks
    alike; dropping them leaves the element in the register in between."""
    chain = Chain(list(code))
    _drop_pairs(chain, _exchange_partner)
    return chain.live()


def _exchange_partner(chain: Chain, k: int) -> tuple[int | None, int]:
    code = chain.code
    first = code[k]
    if first.mnemonic != "EXCH" or first.label:
        return None, k
    register, address = first.operands
    if not _reached_before(chain, k):
        return None, k
    last = k
    for j in chain.after(k, WINDOW):
        last = j
        other = code[j]
        if other.label:
            return None, j
        if other.mnemonic == "EXCH":
            return (j if other.operands == first.operands else None), j
        touched = touched_registers(other)
        if touched is None or register in touched or address in touched:
            return None, j
    return None, last


def _reached_before(chain: Chain, k: int) -> bool:
    """Whether ``code[k]``'s exchange was made earlier in its straight-line code with its
    address register unchanged since."""
    code = chain.code
    first = code[k]
    address = first.operands[1]
    for j in chain.before(k, WINDOW):
        other = code[j]
        if other.mnemonic == "EXCH" and other.operands == first.operands:
            return True
        if other.label:
            return False  # control may enter here without the code before
        sets = _registers(other)
        if sets is None or address in sets[1]:
            return False
    return False
