"""The peephole's pair scans (``peephole.py``) over integer codes, compiled: for long code.

On a 10^5-statement program the inverse and exchange scans of ``lowering._pairs_cancelled``
and the inverse scan after the immediates are combined visited ~9*10^5 instructions each,
a Python call per instruction and scan: ~5 s of a ~27 s compilation.  Here each instruction
is a number (its spelling's: mnemonic and operands) and a label flag; each spelling carries
what the scans ask of it (its inverse's number, its register masks, whether it may start a
pair, the exchange's registers), and the scans run as one numba loop over a doubly linked
list.  They are the reference form that asks every instruction again after each dropped
pair -- which ``peephole._drop_pairs``'s kept answers reproduce exactly
(``tests/compiler/backend/test_peephole.py``) -- so both give the same code
(``tests/compiler/backend/test_pair_scans.py`` holds them to it on random code).

``stack_slots.cancel_stack_exchanges`` (a push ``exch $r $1`` and the pass from the same
slot that undoes it) runs in the same numba call, after the pair scans, on the same linked
list (``pairs_cancelled(..., stack=True)``, which ``lowering._stack_pairs_cancelled`` calls):
each spelling says which register an ``exch $r $1`` moves, by which constant an ``addi $1
c`` moves the stack pointer, and which registers it touches; spelled exactly ``$n``, as the
Python scan compares names as strings (``tests/compiler/backend/test_stack_scans.py``).

``immediates.combine_immediates``'s loop (an ``addi`` added into the next one of its
register) runs here too, on the same spelling numbers: each spelling says whether it is an
ADDI, of which register bit and literal amount, and which registers it touches
(``tests/compiler/backend/test_immediate_scans.py``).

Code of fewer than ``peephole.COMPILED_FROM`` instructions keeps the Python scans (and this
module, numba with it, is not imported): numba's import and the cached loop's load (~0.3 s)
would cost a small program more than they save.  So does code the integer codes cannot say
exactly (a register not spelled ``$n``, an instruction too short for its fields, a stack
step too wide for an int64 sum): each entry point returns None for it, and the Python
passes, which stay the reference, run instead.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numba import njit

from revasm.isa.table import INSTRUCTIONS

from .code import Instr, literal_amount
from .layout import SP
from .peephole import CANCELLABLE, WINDOW, inverse_of, register_masks, touched_registers
from .stack_slots import WINDOW as STACK_WINDOW

#: The mnemonics whose register masks the scans read (``peephole.register_masks``: the data
#: instructions and LI); any other stops a scan.
_MASKED = frozenset({i.mnemonic for i in INSTRUCTIONS if i.kind == "data"} | {"LI"})
#: The spelling every other instruction (a branch, a call: a stop to every scan, the inverse
#: of none) is numbered as: one number for them all.  Each branch names a label of its own,
#: and numbering each apart made most of a branchy program's spellings.
_STOP = ("", ())
if not CANCELLABLE <= _MASKED:  # (a cancellable one could be some spelling's inverse)
    raise AssertionError("the peephole cancels a mnemonic the scans have no masks for")


class _Spellings:
    """Each distinct (mnemonic, operands) of some code numbered, and the per-number facts
    the scans read (as lists, made arrays by :meth:`arrays`)."""

    def __init__(self) -> None:
        self.number: dict[tuple[str, tuple[str, ...]], int] = {}
        self.keys: list[tuple[str, tuple[str, ...]]] = []

    def of(self, code: list[Instr]) -> tuple[list[int], list[bool]]:
        """Each instruction's spelling number, and whether it has a label."""
        number, keys, masked = self.number, self.keys, _MASKED
        spelled: list[int] = []
        labelled: list[bool] = []
        for instr in code:  # (one pass over the code: most of the compiled path's time)
            mnemonic = instr.mnemonic
            key = (mnemonic, instr.operands) if mnemonic in masked else _STOP
            n = number.get(key)
            if n is None:
                n = number[key] = len(keys)
                keys.append(key)
            spelled.append(n)
            labelled.append(bool(instr.label))
        return spelled, labelled

    def arrays(self) -> tuple[Any, ...]:
        """Per spelling: its inverse's number (-1: none), whether it may start an inverse
        pair, whether the scans may pass it (register masks known), its read and written
        register masks, whether it is an exchange, and an exchange's register and address
        bits.  (An inverse not in the code gets a number too: it simply never matches.)
        ValueError for a register not spelled exactly ``$n`` (n < 63), IndexError for an
        instruction too short for its fields."""
        inverse, starts, passable, reads, writes, exchange, register, address = \
            ([] for _ in range(8))
        k = 0
        while k < len(self.keys):  # (the list grows by the inverses' spellings)
            mnemonic, operands = self.keys[k]
            # (what the scans ask of a spelling is known from its mnemonic where that has
            # no masks: every such instruction is the one _STOP spelling)
            masks = register_masks(mnemonic, operands) if mnemonic in _MASKED else None
            if masks is not None and not all(_exact_bit(o) for o in operands if o[:1] == "$"):
                # (a register spelled otherwise, or beyond an int64's bits: the Python
                # exchange scan compares names as strings, where the masks read ``$03`` as
                # ``$3``)
                raise ValueError(operands)
            inverted = inverse_of(mnemonic, operands) if mnemonic in CANCELLABLE else None
            mate = -1
            if inverted is not None:
                mate = self.number.get(inverted, -1)
                if mate < 0:
                    mate = self.number[inverted] = len(self.keys)
                    self.keys.append(inverted)
            inverse.append(mate)
            starts.append(mnemonic in CANCELLABLE and masks is not None and mate >= 0)
            passable.append(masks is not None)
            reads.append(masks[0] if masks is not None else 0)
            writes.append(masks[1] if masks is not None else 0)
            is_exchange = mnemonic == "EXCH"
            exchange.append(is_exchange)
            register.append(_bit(operands[0]) if is_exchange else 0)
            address.append(_bit(operands[1]) if is_exchange else 0)
            k += 1
        return (np.array(inverse, dtype=np.int64), np.array(starts, dtype=np.bool_),
                np.array(passable, dtype=np.bool_), np.array(reads, dtype=np.int64),
                np.array(writes, dtype=np.int64), np.array(exchange, dtype=np.bool_),
                np.array(register, dtype=np.int64), np.array(address, dtype=np.int64))


def _bit(register: str) -> int:
    """``$n``'s bit in a register mask (``peephole._mask``); ValueError for anything else."""
    if not register.startswith("$"):
        raise ValueError(register)
    return 1 << int(register[1:])


def pairs_cancelled(code: list[Instr], exchanges: bool, stack: bool = False
                    ) -> list[Instr] | None:
    """``code`` without its inverse pairs (``peephole.cancel_inverse_pairs``), or, with
    ``exchanges``, as ``lowering._pairs_cancelled`` leaves it: the inverse and the exchange
    pairs in turn until neither finds more; with ``stack`` too, then without the stack
    slots' pairs (``stack_slots.cancel_stack_exchanges`` of that code), in the same loop on
    the same numbering.  None for code these codes cannot say (an exchange of something
    that is not a register, a register not spelled ``$n`` with n < 63, an instruction too
    short for its fields; with ``stack``, what :func:`_stack_facts` leaves to Python): the
    Python scans take it (and raise where they raise)."""
    spellings = _Spellings()
    spelled, labelled = spellings.of(code)
    # (the stack facts first: over the code's own spellings, before arrays() adds inverses)
    stacked = _stack_facts(spellings.keys) if stack else _NO_STACK
    if stacked is None:
        return None
    try:
        facts = spellings.arrays()
    except (ValueError, IndexError):  # (not a register spelled $n; too few operands)
        return None
    scan: Any = _scan  # (numba's dispatcher, typed for fewer arguments)
    keep = scan(np.array(spelled, dtype=np.int64), np.array(labelled, dtype=np.bool_),
                *facts, exchanges, stack, *stacked)
    return [code[k] for k in np.flatnonzero(keep).tolist()]


#: The stack pointer's name and bit (``stack_slots._SP``).
_SP = f"${SP}"
_SP_BIT = 1 << SP
#: An ``addi $1 c`` the compiled stack scan takes has |c| below this: WINDOW of them sum
#: to less than 2^63 (an int64), where Python's sum has no bound.
_STEP_BOUND = 1 << 55
#: The stack facts of a scan without the stack pass (the same array types: one signature).
_NO_STACK = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_),
             np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def _stack_facts(keys: list[tuple[str, tuple[str, ...]]]) -> tuple[Any, ...] | None:
    """Per spelling, what ``stack_slots._partner`` asks of it: an ``exch $r $1``'s register
    bit (0: not one), whether it is an ``addi $1 c`` of an integer ``c`` and that ``c``,
    and the bits of the registers ``touched_registers`` names (exact ``$n`` only: Python
    compares names as strings, and a stack exchange's register is always exact here).
    None where the Python scan must decide: an ``exch $x $1`` of an ``$x`` not spelled
    ``$n`` (n < 63), a step of 2^55 or more, a spelling Python would raise on (an EXCH or
    an ``addi $1`` of too few operands, an ADDI of none, a data instruction too short for
    its fields) -- it raises as before."""
    n = len(keys)
    moves = np.zeros(n, dtype=np.bool_)
    register, step, touched = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for s, (mnemonic, operands) in enumerate(keys):
        if mnemonic not in _MASKED:  # a branch, a call: a stop (touched_registers: None)
            continue
        if mnemonic == "EXCH":
            if len(operands) < 2:
                return None
            if operands[1] == _SP:
                register[s] = _exact_bit(operands[0])
                if not register[s]:
                    return None
        elif mnemonic == "ADDI":
            if not operands or (operands[0] == _SP and len(operands) < 2):
                return None
            if operands[0] == _SP:
                value = literal_amount(operands[1])
                if value is not None:
                    if abs(value) >= _STEP_BOUND:
                        return None
                    moves[s], step[s] = True, value
        try:
            used = touched_registers(Instr(mnemonic, operands))
        except IndexError:
            return None
        if used is not None:  # (always, for a masked mnemonic: passable says so too)
            touched[s] = sum(_exact_bit(name) for name in used)
    return register, moves, step, touched


@njit(cache=True, nogil=True)
def _drop(nxt: Any, prv: Any, first: int, end: int, k: int) -> int:
    """Unlink position ``k`` (``peephole.Chain.drop``); the new first position."""
    p, n = prv[k], nxt[k]
    if p >= 0:
        nxt[p] = n
    else:
        first = n
    if n != end:
        prv[n] = p
    return first


@njit(cache=True, nogil=True)
def _ahead(k: int, nxt: Any, end: int, spelled: Any, labelled: Any, passable: Any,
           reads: Any, writes: Any, exchange: Any, mate: int, read_mask: int,
           write_mask: int, exchanges_stop: bool) -> int:
    """The first of the WINDOW live positions after ``k`` spelled ``mate``, or -1 when a
    label, the end, an instruction the scans cannot pass, one reading ``read_mask``'s or
    writing ``write_mask``'s registers, or (``exchanges_stop``) another exchange comes
    first: the forward walk both partner searches share."""
    j = nxt[k]
    for _ in range(WINDOW):
        if j == end or labelled[j]:
            return -1
        t = spelled[j]
        if t == mate:
            return j
        if (exchanges_stop and exchange[t]) or not passable[t] or \
                (reads[t] & read_mask) != 0 or (writes[t] & write_mask) != 0:
            return -1
        j = nxt[j]
    return -1


@njit(cache=True, nogil=True)
def _inverse_partner(k: int, nxt: Any, end: int, spelled: Any, labelled: Any, inverse: Any,
                     starts: Any, passable: Any, reads: Any, writes: Any,
                     exchange: Any) -> int:
    """``peephole._partner``: the later inverse ``k`` cancels with, or -1 (nothing between
    may write what ``k`` reads or writes, nor read what it writes)."""
    s = spelled[k]
    if labelled[k] or not starts[s]:
        return -1
    written = writes[s]
    return _ahead(k, nxt, end, spelled, labelled, passable, reads, writes, exchange,
                  inverse[s], written, reads[s] | written, False)


@njit(cache=True, nogil=True)
def _exchange_partner(k: int, nxt: Any, prv: Any, end: int, spelled: Any, labelled: Any,
                      passable: Any, reads: Any, writes: Any, exchange: Any, register: Any,
                      address: Any) -> int:
    """``peephole._exchange_partner`` (with ``_reached_before``): the later exchange that
    ``k`` cancels with, or -1 (nothing between may touch its registers, and no other
    exchange may come first)."""
    s = spelled[k]
    if not exchange[s] or labelled[k]:
        return -1
    reached = False  # the same exchange earlier, its address register unchanged since
    j = prv[k]
    for _ in range(WINDOW):
        if j < 0:
            break
        t = spelled[j]
        if t == s:
            reached = True
            break
        if labelled[j] or not passable[t] or (writes[t] & address[s]) != 0:
            break
        j = prv[j]
    if not reached:
        return -1
    both = register[s] | address[s]
    return _ahead(k, nxt, end, spelled, labelled, passable, reads, writes, exchange, s, both,
                  both, True)


@njit(cache=True, nogil=True)
def _drop_pairs(kind: int, nxt: Any, prv: Any, first: int, end: int, keep: Any,
                spelled: Any, labelled: Any, inverse: Any, starts: Any, passable: Any,
                reads: Any, writes: Any, exchange: Any, register: Any,
                address: Any) -> tuple[int, bool]:
    """One scan dropping each instruction and its partner (``kind``: 0 inverse pairs, 1
    exchange pairs), asking again from WINDOW before each dropped pair -- or from the
    labelled position nearest before it: no partner search crosses a label (a label is
    never dropped), so what the pair's going changes is only after it, and the positions
    before it would each find no partner again; the new first position and whether a
    pair went."""
    dropped = False
    k = first
    while k != end:
        if kind == 0:
            j = _inverse_partner(k, nxt, end, spelled, labelled, inverse, starts, passable,
                                 reads, writes, exchange)
        else:
            j = _exchange_partner(k, nxt, prv, end, spelled, labelled, passable, reads,
                                  writes, exchange, register, address)
        if j < 0:
            k = nxt[k]
            continue
        resume = first  # the live position WINDOW before k (``Chain.back``), or a label
        steps = 0
        q = prv[k]
        while q >= 0 and steps < WINDOW:
            steps += 1
            if steps == WINDOW or labelled[q]:
                resume = q
                break
            q = prv[q]
        first = _drop(nxt, prv, first, end, j)
        first = _drop(nxt, prv, first, end, k)
        keep[j] = False
        keep[k] = False
        dropped = True
        k = first if resume == k else resume
    return first, dropped


@njit(cache=True, nogil=True)
def _scan(spelled: Any, labelled: Any, inverse: Any, starts: Any, passable: Any,
          reads: Any, writes: Any, exchange: Any, register: Any, address: Any,
          exchanges: bool, stack: bool, stack_register: Any, moves: Any, step: Any,
          touched: Any) -> Any:
    """Which positions stay: the inverse scan, then (``exchanges``) the exchange and the
    inverse scans in turn until the exchange scan drops nothing, then (``stack``) the
    stack slots' scan on what is left."""
    n = spelled.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    nxt = np.arange(1, n + 2)
    prv = np.arange(-1, n)
    first = 0 if n else n
    first, _ = _drop_pairs(0, nxt, prv, first, n, keep, spelled, labelled, inverse, starts,
                           passable, reads, writes, exchange, register, address)
    while exchanges:
        first, dropped = _drop_pairs(1, nxt, prv, first, n, keep, spelled, labelled, inverse,
                                     starts, passable, reads, writes, exchange, register,
                                     address)
        if not dropped:
            break
        first, _ = _drop_pairs(0, nxt, prv, first, n, keep, spelled, labelled, inverse,
                               starts, passable, reads, writes, exchange, register, address)
    if stack:
        _drop_stack_pairs(nxt, prv, first, n, keep, spelled, labelled, passable, exchange,
                          stack_register, moves, step, touched)
    return keep


@njit(cache=True, nogil=True)
def _stack_partner(k: int, nxt: Any, end: int, spelled: Any, labelled: Any, passable: Any,
                   exchange: Any, stack_register: Any, moves: Any, step: Any,
                   touched: Any) -> int:
    """``stack_slots._partner``: the later ``exch $r $1`` at the same slot that the
    unlabelled ``exch $r $1`` at ``k`` undoes, or -1 (between them only constant moves of
    the stack pointer, exchanges of other registers at other slots, and instructions
    touching neither ``$r`` nor the stack pointer)."""
    s = spelled[k]
    r = stack_register[s]
    if labelled[k] or r == 0 or r == _SP_BIT:
        return -1
    offset = 0  # the stack pointer's distance from the first exchange's slot
    j = nxt[k]
    for _ in range(STACK_WINDOW):
        if j == end or labelled[j]:
            return -1
        t = spelled[j]
        if moves[t]:
            offset += step[t]
        elif stack_register[t] != 0:
            if stack_register[t] == r:
                return j if offset == 0 else -1
            if offset == 0 or stack_register[t] == _SP_BIT:
                return -1  # another register in the slot
        elif not passable[t] or (touched[t] & (r | _SP_BIT)) != 0 or exchange[t]:
            return -1  # a branch, the register, the stack pointer, or memory
        j = nxt[j]
    return -1


@njit(cache=True, nogil=True)
def _drop_stack_pairs(nxt: Any, prv: Any, first: int, end: int, keep: Any, spelled: Any,
                      labelled: Any, passable: Any, exchange: Any, stack_register: Any,
                      moves: Any, step: Any, touched: Any) -> int:
    """``stack_slots.cancel_stack_exchanges``'s loop: each pair dropped, the scan going on
    at what followed its first (no look back); the new first position."""
    k = first
    while k != end:
        j = _stack_partner(k, nxt, end, spelled, labelled, passable, exchange,
                           stack_register, moves, step, touched)
        if j < 0:
            k = nxt[k]
            continue
        first = _drop(nxt, prv, first, end, j)
        after = nxt[k]  # what followed k, j gone
        first = _drop(nxt, prv, first, end, k)
        keep[j] = False
        keep[k] = False
        k = after
    return first


def immediates_combined(code: list[Instr], window: int, bounds: tuple[int, int]
                        ) -> list[Instr] | None:
    """``immediates.combine_immediates(code)`` (its ``WINDOW`` and ``IMMEDIATE_RANGE``:
    ``window`` and ``bounds``): the same instructions in the same order, a partner whose
    amount changed made anew.  None for code these codes cannot say (an ADDI
    of other than two operands, of a register not spelled ``$n``, of an amount beyond
    2^62; an instruction too short for its fields): the Python loop takes it."""
    combined = _combined(code, window, bounds)
    return None if combined is None else combined[0]


def combined_and_cancelled(code: list[Instr], window: int, bounds: tuple[int, int]
                           ) -> list[Instr] | None:
    """``pairs_cancelled(immediates_combined(code, window, bounds), exchanges=False)``, the
    code numbered once (each merged ADDI's new spelling numbered alone); None where either
    would be."""
    combined = _combined(code, window, bounds)
    if combined is None:
        return None
    out, spellings, spelled, labelled = combined
    try:
        facts = spellings.arrays()
    except (ValueError, IndexError):  # (as pairs_cancelled: the Python scans take it)
        return None
    scan: Any = _scan  # (numba's dispatcher, typed for fewer arguments)
    keep = scan(spelled, labelled, *facts, False, False, *_NO_STACK)
    return [out[k] for k in np.flatnonzero(keep).tolist()]


def _combined(code: list[Instr], window: int, bounds: tuple[int, int]
              ) -> tuple[list[Instr], _Spellings, Any, Any] | None:
    """:func:`immediates_combined`'s code, with its spellings and each kept instruction's
    spelling number and label flag (arrays)."""
    spellings = _Spellings()
    spelled, labelled = spellings.of(code)
    facts = _immediate_facts(spellings.keys)
    if facts is None:
        return None
    low, high = bounds
    numbers = np.array(spelled, dtype=np.int64)
    flags = np.array(labelled, dtype=np.bool_)
    combine: Any = _combine  # (numba's dispatcher, typed for fewer arguments)
    keep, amounts, changed = combine(numbers, flags, *facts, window, low, high)
    out = list(code)
    moved = np.flatnonzero(changed & keep)
    number, keys = spellings.number, spellings.keys
    for k, total in zip(moved.tolist(), amounts[moved].tolist()):
        later = out[k]
        operands = (later.operands[0], str(total))
        # (an Instr made directly: ``replace`` looks its fields up each time, ~3 us, and a
        # long program's ADDIs merge by the 10^5)
        out[k] = Instr(later.mnemonic, operands, later.pos, later.role, later.note,
                       later.label, later.check) if type(later) is Instr else \
            replace(later, operands=operands)
        key = (later.mnemonic, operands)  # (an ADDI: a masked spelling, as ``of`` keys it)
        n = number.get(key)
        if n is None:
            n = number[key] = len(keys)
            keys.append(key)
        numbers[k] = n
    kept = np.flatnonzero(keep)
    return [out[k] for k in kept.tolist()], spellings, numbers[kept], flags[kept]


def _immediate_facts(keys: list[tuple[str, tuple[str, ...]]]) -> tuple[Any, ...] | None:
    """Per spelling: whether it is an ADDI, whether of a literal amount, the amount, the
    ADDI's register bit, whether the scan may pass it (``touched_registers`` says which
    registers it uses) and those registers' bits; None where the Python loop must decide."""
    n = len(keys)
    addi, literal, passable = (np.zeros(n, dtype=np.bool_) for _ in range(3))
    amount, bit, touched = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for s, (mnemonic, operands) in enumerate(keys):
        if mnemonic not in _MASKED:  # a branch (most spellings: each names its label): a stop
            continue
        if mnemonic == "ADDI":
            if len(operands) != 2:
                return None
            register, value = _exact_bit(operands[0]), literal_amount(operands[1])
            if not register or (value is not None and abs(value) >= 1 << 62):
                return None
            addi[s], bit[s], literal[s], amount[s] = True, register, value is not None, value or 0
        try:
            used = touched_registers(Instr(mnemonic, operands))
        except IndexError:  # too few operands: whatever Python does with it, it does
            return None
        if used is not None:
            passable[s] = True
            touched[s] = sum(_exact_bit(name) for name in used)
    return addi, literal, amount, bit, passable, touched


def _exact_bit(name: str) -> int:
    """``$n``'s bit (n < 63) when ``name`` is spelled exactly so, else 0: the Python loop
    compares register names as strings, and no other string equals an ADDI's ``$n``."""
    if not name.startswith("$"):
        return 0
    try:
        n = int(name[1:])
    except ValueError:
        return 0
    return 1 << n if 0 <= n < 63 and name == f"${n}" else 0


@njit(cache=True, nogil=True)
def _immediate_partner(k: int, nxt: Any, end: int, spelled: Any, labelled: Any, addi: Any,
                       literal: Any, bit: Any, passable: Any, touched: Any,
                       window: int) -> int:
    """The later ADDI that the literal, unlabelled ADDI at ``k`` adds into, or -1: the
    first ADDI of its register within ``window`` (-1 if its amount is symbolic), nothing
    before it that uses the register, is labelled, or the scan cannot pass."""
    s = spelled[k]
    if labelled[k] or not literal[s]:
        return -1
    register = bit[s]
    j = nxt[k]
    for _ in range(window):
        if j == end or labelled[j]:
            return -1
        t = spelled[j]
        if addi[t] and bit[t] == register:
            return j if literal[t] else -1
        if not passable[t] or (touched[t] & register) != 0:
            return -1
        j = nxt[j]
    return -1


@njit(cache=True, nogil=True)
def _combine(spelled: Any, labelled: Any, addi: Any, literal: Any, amount: Any, bit: Any,
             passable: Any, touched: Any, window: int, low: int, high: int) -> Any:
    """``combine_immediates``'s loop: which positions stay, each position's amount, and
    which positions' amounts a merge changed."""
    n = spelled.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    changed = np.zeros(n, dtype=np.bool_)
    amounts = amount[spelled]
    nxt = np.arange(1, n + 2)
    prv = np.arange(-1, n)
    first = k = 0
    while k != n:
        j = _immediate_partner(k, nxt, n, spelled, labelled, addi, literal, bit, passable,
                               touched, window)
        total = amounts[k] + amounts[j] if j >= 0 else 0
        if j < 0 or total < low or total > high:  # no partner, or a sum ADDI cannot hold
            k = nxt[k]
            continue
        if total != 0:
            amounts[j] = total
            changed[j] = True
        else:
            first = _drop(nxt, prv, first, n, j)
            keep[j] = False
        before = prv[k]
        first = _drop(nxt, prv, first, n, k)
        keep[k] = False
        # a merge may let an earlier addi reach further: look again a little before
        k = before if before >= 0 else first
    return keep, amounts, changed


def warm() -> None:
    """Compile the loops into numba's cache now (``make install`` does): the first long
    program compiled after an install or a change of this file would otherwise wait ~3 s
    for them.  (Called from an import: numba keys its cache by the module's name, and a
    ``python -m`` run's is ``__main__``.)"""
    code = [Instr("ADDI", ("$3", "1")), Instr("EXCH", ("$4", "$3")),
            Instr("ADDI", ("$3", "-1"))]
    pairs_cancelled(code, exchanges=True, stack=True)
    immediates_combined(code, 256, (-(1 << 15), (1 << 15) - 1))  # (the types are what count)
