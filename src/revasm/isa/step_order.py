"""One gradient-mode step as engines execute it: every fault check before any write.

A step runs several templates (``isa/adjoint.mode_statements``: the value template and
the adjoint/tangent rules, or their inverses).  Each template on its own computes
whatever can fault -- the calls of :data:`FAULTING_CALLS` -- into local definitions
(``_x = ...``) before it writes a word.  Run one after another, a later template could
still fault after an earlier one wrote (SUBATAN2 forward in gradient mode: the value
step writes ``a``, then the inverse adjoint divides by ``b^2 + c^2 = 0``), and the
machine's contract (``MachineFault``) is that a faulting instruction has no effect.

:func:`checks_first` therefore moves each template's *guard* -- its lines up to the last
one that can fault, all definitions -- to the top of the step, in template order, and
runs the rest of every template after them in the same order: a fault then stops the
step before any write, and is the fault the templates in order would have raised first.
The move is checked, never assumed: a guard may not read a word or local that the
templates it moves above write, nor define a local they use, with registers named by two
operands treated as one unless the entry declares them ``distinct``.  A table entry that
broke this would raise :class:`StepOrderError` when its step is built (every entry, mode
and direction is built by ``tests/sim/test_step_faults.py``).  Faulting calls inside a write
(``OV[0] = (OV[0] + overflow(e)) & M``) are first lifted into a definition of their own.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .primitives import FAULTING

#: The engines' devices that can fault: ``addr`` (a code cell), ``unemit`` (an empty tape)
#: and ``overflow`` (a strict machine).
FAULTING_DEVICES = frozenset({"addr", "unemit", "overflow"})
#: Vocabulary calls and devices that can fault: the primitives that declare a fault
#: (``isa/primitives.py``) and the devices; nothing else in a template can.
FAULTING_CALLS = FAULTING | FAULTING_DEVICES

_PLACEHOLDER = re.compile(r"^\{(\w+)\}$")


class StepOrderError(ValueError):
    """A step whose fault checks cannot be moved before its writes (a table bug)."""


@dataclass(frozen=True)
class _Line:
    text: str
    defines: frozenset[str]  # locals written
    writes: frozenset[tuple[str, str]]  # (bank, index text) written
    reads: frozenset[tuple[str, str]]
    uses: frozenset[str]  # locals read
    faults: bool

    @property
    def definition(self) -> bool:
        return not self.writes


def _calls_that_fault(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id in FAULTING_CALLS for n in ast.walk(node))


def _slot(node: ast.Subscript) -> tuple[str, str]:
    return node.value.id, ast.unparse(node.slice)  # type: ignore[attr-defined]


def _analyse(text: str) -> _Line:
    tree = ast.parse(text)
    if len(tree.body) != 1:
        raise StepOrderError(f"one statement per line expected: {text!r}")
    stmt = tree.body[0]
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            targets += target.elts if isinstance(target, ast.Tuple) else [target]
        value: ast.AST = stmt.value
    elif isinstance(stmt, ast.AugAssign):
        targets = [stmt.target]
        value = stmt
    else:
        value = stmt
    defines = {t.id for t in targets if isinstance(t, ast.Name)}
    writes = {_slot(t) for t in targets if isinstance(t, ast.Subscript)}
    if any(not isinstance(t, (ast.Name, ast.Subscript)) for t in targets) or (
            not isinstance(stmt, (ast.Assign, ast.AugAssign))):
        writes.add(("?", text))  # anything else (a branch, a device call): a barrier
    if any(name in ("BR", "DIR") for name in defines):
        writes.add(("?", text))
    reads, uses = set(), set()
    for node in ast.walk(value):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Name):
            reads.add(_slot(node))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id.startswith("_"):
            uses.add(node.id)
    for target in targets:  # an index read to find the written word
        if isinstance(target, ast.Subscript):
            uses.update(node.id for node in ast.walk(target.slice)
                        if isinstance(node, ast.Name) and node.id.startswith("_"))
    return _Line(text, frozenset(d for d in defines if d.startswith("_")), frozenset(writes),
                 frozenset(reads), frozenset(uses), _calls_that_fault(value))


def _outermost_faulting_calls(node: ast.AST) -> list[ast.Call]:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FAULTING_CALLS):
        return [node]
    return [call for child in ast.iter_child_nodes(node)
            for call in _outermost_faulting_calls(child)]


def _lift(part: str, index: int) -> list[str]:
    """The part's lines, each faulting call inside a write made a definition of its own
    (``_f<part>_<line>_<n> = call``) just before it, so that checks are definitions."""
    out: list[str] = []
    for number, text in enumerate(part.split("\n")):
        line = _analyse(text)
        if line.definition or not line.faults:
            out.append(text)
            continue
        stmt = ast.parse(text).body[0]
        if not isinstance(stmt, (ast.Assign, ast.AugAssign)):
            raise StepOrderError(f"cannot lift the faulting call out of {text!r}")
        calls = _outermost_faulting_calls(stmt.value)
        names = [f"_f{index}_{number}_{n}" for n in range(len(calls))]
        out += [f"{name} = {ast.get_source_segment(text, call)}"
                for name, call in zip(names, calls)]
        for name, call in reversed(list(zip(names, calls))):  # right to left: offsets hold
            text = text[:call.col_offset] + name + text[call.end_col_offset:]
        out.append(text)
    return out


def _may_alias(x: tuple[str, str], y: tuple[str, str],
               distinct: frozenset[frozenset[str]]) -> bool:
    if x[0] == "?" or y[0] == "?":
        return True
    if x[0] != y[0]:
        return False
    if x[1] == y[1]:
        return True
    px, py = _PLACEHOLDER.match(x[1]), _PLACEHOLDER.match(y[1])
    if px and py:  # two operand registers: one register unless declared distinct
        return frozenset((px[1], py[1])) not in distinct
    try:  # two constant indexes (OV[0], R[3] after substitution)
        int(x[1]), int(y[1])
    except ValueError:
        return True  # a computed index (MEM[_i]): anything
    return False


def checks_first(parts: list[str], distinct: tuple[tuple[str, str], ...] = (),
                 name: str = "") -> str:
    """The step of ``parts`` (templates in execution order) with every guard first.

    ``distinct`` (the entry's operand pairs that name different registers) decides
    which operand registers may be one; ``name`` is for the error message.
    """
    pairs = frozenset(frozenset(p) for p in distinct)
    guards: list[list[_Line]] = []
    rests: list[list[_Line]] = []
    for index, part in enumerate(parts):
        lines = [_analyse(text) for text in _lift(part, index)]
        end = max((i + 1 for i, line in enumerate(lines) if line.faults), default=0)
        guard, rest = lines[:end], lines[end:]
        for line in guard:
            if not line.definition:
                raise StepOrderError(f"{name}: {line.text!r} writes before a fault check of "
                                     "its own template")
        guards.append(guard)
        rests.append(rest)
    if len(parts) <= 1:  # checked, and left as the table wrote it
        return parts[0] if parts else ""
    hoisted: list[_Line] = []
    for index, guard in enumerate(guards):
        passed = [line for rest in rests[:index] for line in rest]
        for line in guard:
            repeated = not line.uses and any(line.text == h.text for h in hoisted)
            problem = _crossing_problem(line, passed, hoisted, pairs, repeated)
            if problem:
                raise StepOrderError(f"{name}: cannot check {line.text!r} first: {problem}")
            if not repeated:  # a repeat computes the same word: the first one stands
                hoisted.append(line)
    return "\n".join(line.text for line in hoisted + [x for rest in rests for x in rest])


def _crossing_problem(line: _Line, passed: list[_Line], hoisted: list[_Line],
                      distinct: frozenset[frozenset[str]], repeated: bool) -> str | None:
    """Why ``line`` may not move above the lines ``passed`` (None: it may).  A
    ``repeated`` line (the same definition as one already moved, from words only) need
    only read no word they write: it then defines the same value."""
    for other in passed:
        if any(_may_alias(r, w, distinct) for r in line.reads for w in other.writes):
            return f"it reads a word {other.text!r} writes"
        if repeated:  # nothing in between may give the local another value
            if line.defines & other.defines and other.text != line.text:
                return f"{other.text!r} redefines its local"
            continue
        if line.uses & other.defines or line.defines & (other.defines | other.uses):
            return f"it shares a local with {other.text!r}"
    if repeated:
        return None
    for other in hoisted:
        if line.defines & (other.defines | other.uses):
            return f"it redefines a local of {other.text!r}"
    return None
