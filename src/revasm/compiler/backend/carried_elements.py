"""Carried elements: an element one iteration stores and the next loads stays in its register (-O2).

The Givens network's inner loop rotates ``x[i]`` and ``x[i + 1]`` for i = N - 2 down to
j: the element it stores through the pointer P (``x[i]``) is the one the next iteration
loads through Q (``x[i + 1]``, which the step has moved onto it).  The pair of exchanges
between -- ``exch A P`` at the end of one iteration, ``exch B Q`` at the start of the
next -- only moves the element from register A to register B through memory.  Unrolled
by two, the second copy can use the registers the other way round (A and B renamed), so
the element stays where it is: each copy loads one element instead of two and stores one
instead of two, and the pair tests the loop once.

A loop is rewritten when it is a counted loop (``top: bne C S1 bottom`` … ``bottom: bne
C S2 top``, a paired skip around it or not) whose body is straight-line data code and

* two pointers P and Q into the same array, live over the loop (the lowering records
  which pointer holds which address, ``control_flow.counted_loop``), are each stepped
  once by the same d, with Q - P = -d, and each is used otherwise only by two
  exchanges with one register (A for P, B for Q): the first and the last time the body
  touches that register;
* every other exchange of the body goes through a pointer into another array (so no
  other access can see the word that holds, for a moment, A's leftover instead of the
  element);
* the counter C is stepped once by +-1, and the bounds S1, S2 are registers the body
  does not name (S1 not ``$0``).

The rewritten loop runs one plain iteration when the trip count is odd (its parity is
bit 0 of S1 - S2: ``andix p S1 1; andix p S2 1`` into a register the function never
names, tested by a paired ``if``), then -- with S1 moved by one step for the test --
loads the first carried element into B, runs the two copies per iteration, and stores
the last carried element through Q; the skip around the pairs covers a trip count of one.

Why every word is -O0's: the fixed-point operations are the same, in the same order, on
the same elements (a register renamed holds the same word and gradient word), and the
scratch registers' leftover gradient words come back to their own registers: each store
returns to its register the word that register's own load left in memory (B's prologue
load parks B's leftover where the first store of B finds it; A's load in one copy parks
A's where A's store in the next copy finds it), and the epilogue gives B its own back.
The parity register, S1's move and the branches are integer code undone in reverse order.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .code import Instr
from .induction import addi_step, loop_at

#: A live pointer's address: (array, ((variable, stride), ...)) and its constant offset.
PointerKey = tuple[tuple[str, tuple[tuple[str, int], ...]], int]


def carry_elements(code: list[Instr], loop_pointers: dict[str, dict[str, PointerKey]],
                   parity: str | None, label: Callable[[str], str]) -> list[Instr]:
    """``code`` with each loop whose top label ``loop_pointers`` knows (register -> the
    address its pointer holds) rewritten as the module docstring says, when it qualifies;
    ``parity`` is a register the function never names (None: no rewrite)."""
    if parity is None:
        return code
    out = list(code)
    k = 0
    while k < len(out):
        top = out[k]
        pointers = loop_pointers.get(top.label) if top.label else None
        if pointers is None:
            k += 1
            continue
        labels = {instr.label: n for n, instr in enumerate(out) if instr.label}
        found = loop_at(out, k, labels)
        if found is None:
            k += 1
            continue
        _, bottom, _ = found
        new = _rewrite(out[k:bottom + 1], pointers, parity, label)
        if new is None:
            k += 1
            continue
        out[k:bottom + 1] = new
        k += len(new)
    return out


def _uses(body: list[Instr], register: str) -> list[int]:
    return [n for n, instr in enumerate(body) if register in instr.operands]


def _exchanges(body: list[Instr], pointer: str) -> tuple[str, int, int] | None:
    """(register, first, last) when ``pointer`` is used in ``body`` -- besides its one step,
    the last use -- by exactly two ``exch R pointer`` of one register R, which are the
    first and the last instructions of the body that name R."""
    uses = _uses(body, pointer)
    if len(uses) != 3 or addi_step(body[uses[2]]) is None:
        return None
    first, last = body[uses[0]], body[uses[1]]
    if not (first.mnemonic == last.mnemonic == "EXCH" and first.operands == last.operands
            and first.operands[1] == pointer):
        return None
    register = first.operands[0]
    named = _uses(body, register)
    if register in ("$0", "$1") or named[0] != uses[0] or named[-1] != uses[1]:
        return None
    return register, uses[0], uses[1]


def _rewrite(loop: list[Instr], pointers: dict[str, PointerKey], parity: str,
             label: Callable[[str], str]) -> list[Instr] | None:
    top, bottom, body = loop[0], loop[-1], loop[1:-1]
    if top.mnemonic != "BNE" or bottom.mnemonic != "BNE":
        return None
    counter, start = top.operands[:2]
    if bottom.operands[0] != counter:
        return None
    stop = bottom.operands[1]
    steps: dict[str, list[int]] = {}
    for instr in body:
        step = addi_step(instr)
        if step is not None:
            steps.setdefault(step[0], []).append(step[1])
    counter_step = steps.get(counter, [])
    if counter_step not in ([1], [-1]) or start == "$0" or parity in (counter, start, stop):
        return None
    if _uses(body, start) or _uses(body, stop) or _uses(body, parity):
        return None
    pair = _carried_pair(body, pointers, steps)
    if pair is None:
        return None
    (a, p, p_load, p_store), (b, q, q_load) = pair
    if len({a, b, p, q, start, stop}) != 6 or counter in (a, b, start, stop):
        return None  # the counter may be P or Q (``induction.py`` makes it a pointer)
    pos = top.pos

    def i(mnemonic: str, *operands: str, name: str = "", note: str = "") -> Instr:
        return Instr(mnemonic, operands, pos, "control", note, name)

    dropped = {q_load, p_store}
    copy1 = [x for n, x in enumerate(body) if n not in dropped]
    swap = {a: b, b: a}
    copy2 = [replace(x, operands=tuple(swap.get(o, o) for o in x.operands)) for x in copy1]
    odd, out_, even, join = (label(kind) for kind in ("odd", "oddout", "even", "oddjoin"))
    skip, back, first, last = (label(kind) for kind in ("pskip", "pempty", "ptop", "pbottom"))
    bits = [i("ANDIX", parity, start, "1", note="the trip count's parity"),
            i("ANDIX", parity, stop, "1")]
    move = i("ADD" if counter_step == [1] else "SUB", start, parity,
             note="the pairs start after the odd iteration")
    unmove = i("SUB" if counter_step == [1] else "ADD", start, parity)
    carry = replace(body[q_load], role="compute", label="", note="the carried element")
    return [*bits,
            i("BEQ", parity, "$0", even, name=odd, note="an odd trip count: one iteration"),
            *body,
            i("BRA", join, name=out_),
            i("BEQ", parity, "$0", odd, name=even),
            i("BNE", parity, "$0", out_, name=join),
            move,
            i("BEQ", counter, stop, skip, name=back, note="no pair"),
            carry,
            i("BNE", counter, start, last, name=first),
            *copy1, *copy2,
            i("BNE", counter, stop, first, name=last),
            carry,
            i("BEQ", counter, start, back, name=skip),
            unmove, *bits]


def _carried_pair(body: list[Instr], pointers: dict[str, PointerKey],
                  steps: dict[str, list[int]]
                  ) -> tuple[tuple[str, str, int, int], tuple[str, str, int]] | None:
    """((A, P, P's load, P's store), (B, Q, Q's load)): the element P's exchanges store
    is the one Q's load reads in the next iteration (see the module docstring)."""
    for instr in body:
        if instr.mnemonic == "EXCH" and instr.operands[1] not in pointers:
            return None  # an address the lowering did not record
    for p, (p_key, p_offset) in pointers.items():
        for q, (q_key, q_offset) in pointers.items():
            if p == q or p_key != q_key or len(steps.get(p, [])) != 1 or \
                    steps.get(p) != steps.get(q):
                continue
            d = steps[p][0]
            if q_offset - p_offset != -d:
                continue
            found_p, found_q = _exchanges(body, p), _exchanges(body, q)
            if found_p is None or found_q is None:
                continue
            same_array = [x.operands[1] for x in body if x.mnemonic == "EXCH"
                          and pointers[x.operands[1]][0][0] == p_key[0]]
            if set(same_array) != {p, q}:
                continue
            a, p_load, p_store = found_p
            b, q_load, _ = found_q
            return (a, p, p_load, p_store), (b, q, q_load)
    return None
