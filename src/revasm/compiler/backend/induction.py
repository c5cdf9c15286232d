"""Merged induction registers: one register stepped per loop instead of several (-O2).

An innermost loop whose body is straight-line code often steps several registers by
the same constant every iteration: the Givens network's inner loop steps its counter
``i``, the two pointers into ``x`` (by -1), the ancilla ``k`` and the pointer into
``theta`` (by +1), five ``addi`` per rotation.  Two registers stepped alike keep their
difference over the loop, so one of them can stand for the other:

* **a dead induction register** (``k``): a register M that the body only steps
  (``addi M c``, read nowhere in the body nor by the loop's branches) is tied to a
  register R the body steps by ``c`` (or ``-c``) and otherwise only uses as an
  ``exch`` address: ``sub M R`` (``add M R``) before the loop, ``add M R``
  (``sub M R``) after it, and no ``addi M c`` inside.  M - R (M + R) does not change
  while the loop runs, so after it M holds what the steps would have made it.
* **a counter onto a pointer** (``i``): the loop counter I, which the body only steps
  and the loop's paired branches compare (``beq``/``bne``) with bound registers the
  body does not touch, is replaced in the branches by a pointer P stepped alike: each
  bound B becomes B + P - I before the loop (``add B P; sub B I``) and I becomes I - P
  (``sub I P``); after the loop the inverse sequence restores both.  P - I is the
  same at every test, so every branch decides as it did.

Both rewrite only the loop's entry and exit with additions and subtractions of integer
registers, undone in reverse order around the loop: the state at the loop's entry and
exit is unchanged, the body's fixed-point operations are the same in the same order, and
the adjoints of the added ADD/SUB pairs (a gradient word added and then subtracted while
it does not change) cancel exactly, so every value and gradient word is the same.  Only
loops whose body holds data instructions alone (no label, no branch, no guard: a fault
inside would see M or I in their moved form) are rewritten.
"""
from __future__ import annotations

from dataclasses import replace

from revasm.isa.table import INSTRUCTIONS

from .code import Instr, inverse_code

_BY_NAME = {i.mnemonic: i for i in INSTRUCTIONS}
#: The tests a counter may be compared in: equality survives adding the same to both.
_EQUALITY = frozenset({"BEQ", "BNE"})


def merge_inductions(code: list[Instr]) -> list[Instr]:
    """``code`` with every innermost straight-line loop's dead induction registers and
    counter tied to a pointer the loop steps alike (see the module docstring)."""
    out = list(code)
    labels = {instr.label: n for n, instr in enumerate(out) if instr.label}
    tops = _tops(out, 0)
    t = 0
    while t < len(tops):
        k = tops[t]
        found = loop_at(out, k, labels)
        if found is None:
            t += 1
            continue
        first, bottom, last = found
        rewritten = _rewrite(out[first:last + 1], k - first, bottom - first)
        if rewritten is None:
            t += 1
            continue
        pre, loop, post = rewritten
        out[first:last + 1] = pre + loop + post
        labels = {instr.label: n for n, instr in enumerate(out) if instr.label}
        tops, t = _tops(out, first + len(pre) + len(loop) + len(post)), 0
    return out


def _tops(code: list[Instr], start: int) -> list[int]:
    """The positions from ``start`` on where :func:`loop_at` may find a loop (a labelled
    BEQ or BNE: it finds none elsewhere), so that the scan skips the rest at once."""
    return [n for n in range(start, len(code))
            if code[n].label and code[n].mnemonic in _EQUALITY]


def _is_data(instr: Instr) -> bool:
    entry = _BY_NAME.get(instr.mnemonic)
    return entry is not None and entry.kind == "data" and not instr.label


def loop_at(code: list[Instr], k: int,
             labels: dict[str, int]) -> tuple[int, int, int] | None:
    """(first, bottom, last) indices of the loop whose top branch is ``code[k]``: ``top: bne ..
    bottom`` … ``bottom: bne .. top`` with data instructions alone between, with the
    paired skip around it (``e1: b.. e2`` just before, ``e2: b.. e1`` just after) when
    there is one."""
    top = code[k]
    if top.mnemonic not in _EQUALITY or not top.label or len(top.operands) != 3:
        return None
    bottom = labels.get(top.operands[2])
    if bottom is None or bottom <= k:
        return None
    end = code[bottom]
    if end.mnemonic not in _EQUALITY or end.operands[2:] != (top.label,):
        return None
    if not all(_is_data(i) for i in code[k + 1:bottom]):
        return None
    first, last = k, bottom
    if k > 0 and bottom + 1 < len(code):
        before, after = code[k - 1], code[bottom + 1]
        if before.label and after.label and before.mnemonic in _EQUALITY \
                and after.mnemonic in _EQUALITY and before.operands[2:] == (after.label,) \
                and after.operands[2:] == (before.label,):
            first, last = k - 1, bottom + 1
    return first, bottom, last


def addi_step(instr: Instr) -> tuple[str, int] | None:
    """The register an ``ADDI`` steps and by how much (None for anything else, or a
    symbolic immediate)."""
    if instr.mnemonic != "ADDI":
        return None
    try:
        return instr.operands[0], int(instr.operands[1], 0)
    except ValueError:
        return None


def _rewrite(loop: list[Instr], top: int, bottom: int) -> \
        tuple[list[Instr], list[Instr], list[Instr]] | None:
    """(pre, loop, post) with every merge applied, or None when there is none.  ``top``
    and ``bottom`` index the loop's own branches in ``loop``."""
    pre: list[Instr] = []
    changed = False
    while True:
        step = _merge_once(loop, top, bottom)
        if step is None:
            break
        more, loop, bottom = step
        pre += more
        changed = True
    if not changed:
        return None
    return pre, loop, inverse_code(pre)


def _merge_once(loop: list[Instr], top: int, bottom: int) -> \
        tuple[list[Instr], list[Instr], int] | None:
    branches = [n for n in range(len(loop)) if n < top + 1 or n >= bottom]
    body = range(top + 1, bottom)
    steps: dict[str, list[tuple[int, int]]] = {}
    others: dict[str, int] = {}  # uses other than a step
    addresses: dict[str, int] = {}  # of those, uses as an exch address
    for n in body:
        instr = loop[n]
        step = addi_step(instr)
        if step is not None:
            steps.setdefault(step[0], []).append((n, step[1]))
            continue
        for f, reg in enumerate(instr.operands):
            if reg.startswith("$"):
                others[reg] = others.get(reg, 0) + 1
                if instr.mnemonic == "EXCH" and f == 1:
                    addresses[reg] = addresses.get(reg, 0) + 1
    compared = {reg for n in branches for reg in loop[n].operands[:2]}
    pos = loop[top].pos

    def single(reg: str) -> int | None:
        found = steps.get(reg, [])
        return found[0][1] if len(found) == 1 and found[0][1] != 0 else None

    def pointer_like(reg: str) -> bool:
        return others.get(reg, 0) == addresses.get(reg, 0)

    def dropped(reg: str) -> list[Instr]:
        at = steps[reg][0][0]
        return loop[:at] + loop[at + 1:]

    def op(mnemonic: str, a: str, b: str) -> Instr:
        return Instr(mnemonic, (a, b), pos, "control", "a register stepped alike")

    amounts = {r: a for r in steps if r != "$0" and (a := single(r)) is not None}
    candidates = sorted(amounts)
    for m in candidates:
        c = amounts[m]
        if others.get(m, 0) or m in compared:
            continue
        for r in candidates:
            if r == m or not pointer_like(r) or single(r) not in (c, -c):
                continue
            return [op("SUB" if single(r) == c else "ADD", m, r)], dropped(m), bottom - 1
    for i in candidates:
        c = amounts[i]
        if others.get(i, 0) or i not in compared:
            continue
        tests = [loop[n] for n in branches]
        if not all(t.mnemonic in _EQUALITY and i in t.operands[:2]
                   and t.operands[0] != t.operands[1] for t in tests):
            continue
        bounds = list(dict.fromkeys(t.operands[1] if t.operands[0] == i else t.operands[0]
                                    for t in tests))
        if "$0" in bounds or any(b in steps or b in others for b in bounds):
            continue
        for p in candidates:
            if p == i or p in compared or not pointer_like(p) or single(p) != c:
                continue
            pre = [x for b in bounds for x in (op("ADD", b, p), op("SUB", b, i))]
            pre.append(op("SUB", i, p))
            new = dropped(i)
            for n, instr in enumerate(new):
                if n <= top or n >= bottom - 1:
                    ops = tuple(p if o == i else o for o in instr.operands)
                    new[n] = replace(instr, operands=ops)
            return pre, new, bottom - 1
    return None
