"""A tree-walking Janus interpreter, forward and backward: the oracle for the compiler.

It runs the checked tree of ``tree.py`` under the integer rule of ``words.py`` (32-bit
words, every operation wrapped) and raises :class:`JanusFault` at the statement whose
run-time condition fails: an ``fi`` assertion or ``from`` entry assertion, a
``delocal`` value, an ``assert``, popping into a non-zero variable or from an empty
stack, a full stack, division by zero, an index out of range, an element updated from
itself.  Running backward executes each statement's inverse in reverse order
(``uncall``), as jana does.

    store = run(program)                      # main's variables after a forward run
    again = run(program, store, backward=True)  # backward from there: the initial store
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import SourcePos
from . import tree as t
from .checks import STACK_CAPACITY
from .words import floor_div, floor_mod, wrap

#: Store values: an int, a flat list of ints (an array, row-major) or a stack (a list,
#: top last).  Arrays and stacks are shared between a caller and its callee (by reference).
Value = int | list


class JanusFault(Exception):
    """A run-time failure at a statement, with the direction it was running in."""

    def __init__(self, pos: SourcePos, message: str, backward: bool) -> None:
        super().__init__(f"{pos}: error: {message}" + (" (running backward)" if backward
                                                       else ""))
        self.pos = pos
        self.message = message
        self.backward = backward


class StepLimit(Exception):
    """The run took more statements than its ``max_steps``."""


@dataclass
class _Cell:
    value: int


#: What a name refers to in a frame: an int's cell, or an array's or a stack's words.
_Ref = _Cell | list[int]


@dataclass
class _Run:
    program: t.Program
    max_steps: int | None
    steps: int = 0
    output: list[str] = field(default_factory=list)


def initial_store(program: t.Program) -> dict[str, Value]:
    """Main's variables before a run: their declared values, zero where none is given."""
    store: dict[str, Value] = {}
    for d in program.main.params:
        if d.type == "stack":
            store[d.name] = []
        elif d.dims:
            store[d.name] = t.initial_words(d)
        else:
            store[d.name] = t.initial_words(d)[0]
    return store


def run(program: t.Program, store: dict[str, Value] | None = None, *, backward: bool = False,
        max_steps: int | None = None, output: list[str] | None = None) -> dict[str, Value]:
    """Run main forward (or backward) from ``store`` (default: the initial store); return
    main's variables afterwards (stacks as lists, bottom first)."""
    start = initial_store(program) if store is None else store
    frame: dict[str, _Ref] = {}
    for d in program.main.params:
        value = start[d.name]
        frame[d.name] = list(value) if isinstance(value, list) else _Cell(int(value))
    state = _Run(program, max_steps)
    _Interpreter(state, frame, program.main.params).block(program.main.body, not backward)
    if output is not None:
        output.extend(state.output)
    return {name: (list(ref) if isinstance(ref, list) else ref.value)
            for name, ref in frame.items()}


class _Interpreter:
    def __init__(self, state: _Run, frame: dict[str, _Ref],
                 decls: tuple[t.Decl, ...]) -> None:
        self.state = state
        self.frame = frame
        self.dims = {d.name: tuple(n or 0 for n in d.dims) for d in decls if d.dims}
        self.forward = True

    # --- statements ---

    def block(self, body: tuple[t.Stmt, ...], forward: bool) -> None:
        for s in (body if forward else reversed(body)):
            self.stmt(s, forward)

    def fault(self, pos: SourcePos, message: str) -> JanusFault:
        return JanusFault(pos, message, not self.forward)

    def stmt(self, s: t.Stmt, forward: bool) -> None:
        self.forward = forward
        self.state.steps += 1
        if self.state.max_steps is not None and self.state.steps > self.state.max_steps:
            raise StepLimit(f"more than {self.state.max_steps} statements")
        if isinstance(s, t.Update):
            op = s.op if forward or s.op == "^" else {"+": "-", "-": "+"}[s.op]
            ref, at = self.place_ref(s.target)
            value = self.value(s.expr, exclude=(s.target.name, at))
            old = self.load(ref, at)
            new = wrap(old + value if op == "+" else old - value if op == "-" else old ^ value)
            self.store(ref, at, new)
        elif isinstance(s, t.Swap):
            left, i = self.place_ref(s.left)
            right, j = self.place_ref(s.right)
            if left is right and i == j:
                raise self.fault(s.pos, f"{t.text(s.left)} and {t.text(s.right)} are the same "
                                        "element: it is swapped with itself")
            a, b = self.load(left, i), self.load(right, j)
            self.store(left, i, b)
            self.store(right, j, a)
        elif isinstance(s, t.If):
            test, assertion = (s.test, s.assertion) if forward else (s.assertion, s.test)
            chosen = self.truth(test)
            self.block(s.then if chosen else s.orelse, forward)
            self.forward = forward
            if self.truth(assertion) != chosen:
                word = "assertion" if forward else "condition"
                raise self.fault(assertion.pos, f"the {word} of the if at line {s.pos.line} "
                                                f"should be {str(chosen).lower()}")
        elif isinstance(s, t.From):
            entry, until = (s.entry, s.until) if forward else (s.until, s.entry)
            if not self.truth(entry):
                raise self.fault(entry.pos, f"the entry condition of the loop at line "
                                            f"{s.pos.line} should be true")
            while True:
                self.block(s.do, forward)
                self.forward = forward
                if self.truth(until):
                    break
                self.block(s.loop, forward)
                self.forward = forward
                if self.truth(entry):
                    raise self.fault(entry.pos, f"the entry condition of the loop at line "
                                                f"{s.pos.line} should be false after an "
                                                "iteration")
        elif isinstance(s, t.Push):
            self.push(s, pop=s.pop == forward)
        elif isinstance(s, t.Local):
            first, last = (s.decl, s.delocal) if forward else (s.delocal, s.decl)
            self.frame[s.decl.name] = _Cell(self.value(first.value))
            self.block(s.body, forward)
            self.forward = forward
            cell = self.frame.pop(s.decl.name)
            assert isinstance(cell, _Cell)
            expected = self.value(last.value)
            if cell.value != expected:
                word = "delocal" if forward else "local"
                raise self.fault(last.pos, f"{s.decl.name} is {cell.value} at its {word}, "
                                           f"not {expected}")
        elif isinstance(s, t.Call):
            proc = self.state.program.procedures[s.name]
            frame = {p.name: self.frame[a.name] for p, a in zip(proc.params, s.args)}
            callee = _Interpreter(self.state, frame, proc.params)
            callee.block(proc.body, forward != s.uncall)
        elif isinstance(s, t.Assert):
            if not self.truth(s.cond):
                raise self.fault(s.pos, "assertion failed")
        elif isinstance(s, t.Show):
            if s.text is not None:  # printf's %d (and the like) take the variables in turn
                values = iter(self.show(self.frame[n]) for n in s.names)
                self.state.output.append(re.sub(r"%[-+ 0#]*\d*[a-zA-Z]",
                                                lambda _: next(values, "?"), s.text))
            else:
                self.state.output.append(", ".join(
                    f"{n} = {self.show(self.frame[n])}" for n in s.names))

    def push(self, s: t.Push, pop: bool) -> None:
        cell = self.frame[s.var]
        stack = self.frame[s.stack]
        assert isinstance(cell, _Cell) and isinstance(stack, list)
        if pop:
            if cell.value != 0:
                raise self.fault(s.pos, f"pop into {s.var}, which is {cell.value}, not 0")
            if not stack:
                raise self.fault(s.pos, f"pop from the empty stack {s.stack}")
            cell.value = stack.pop()
        else:
            if len(stack) >= STACK_CAPACITY:
                raise self.fault(s.pos, f"push onto the full stack {s.stack} "
                                        f"({STACK_CAPACITY} elements)")
            stack.append(cell.value)
            cell.value = 0

    # --- places and values ---

    def place_ref(self, p: t.Place) -> tuple[_Ref, int]:
        ref = self.frame[p.name]
        if isinstance(p, t.Name):
            return ref, 0
        return ref, self.flat_index(p)

    def flat_index(self, p: t.Element) -> int:
        proc_dims = self.dims[p.name]
        flat = 0
        for index, extent in zip(p.indices, proc_dims):
            i = self.value(index)
            if not 0 <= i < extent:
                raise self.fault(index.pos, f"index {i} is out of range 0..{extent - 1} of "
                                            f"{p.name}")
            flat = flat * extent + i
        return flat

    @staticmethod
    def load(ref: _Ref, at: int) -> int:
        return ref[at] if isinstance(ref, list) else ref.value

    @staticmethod
    def store(ref: _Ref, at: int, value: int) -> None:
        if isinstance(ref, list):
            ref[at] = value
        else:
            ref.value = value

    def truth(self, e: t.Expr) -> bool:
        return bool(self.evaluate(e, None))

    def value(self, e: t.Expr, exclude: tuple[str, int] | None = None) -> int:
        return int(self.evaluate(e, exclude))

    def evaluate(self, e: t.Expr, exclude: tuple[str, int] | None) -> int | bool:
        if isinstance(e, t.Number):
            return e.value
        if isinstance(e, t.Boolean):
            return e.value
        if isinstance(e, t.Name):
            return self.load(self.frame[e.name], 0)
        if isinstance(e, t.Element):
            at = self.flat_index(e)
            if exclude == (e.name, at):
                raise self.fault(e.pos, f"{t.text(e)} is the element this statement updates")
            return self.frame[e.name][at]  # type: ignore[index]
        if isinstance(e, t.Not):
            return not self.evaluate(e.operand, exclude)
        if isinstance(e, t.StackQuery):
            ref = self.frame[e.name]
            assert isinstance(ref, list)
            if e.query == "empty":
                return not ref
            if e.query == "size":
                return self.dims[e.name][0] if e.name in self.dims else len(ref)
            if not ref:
                raise self.fault(e.pos, f"top of the empty stack {e.name}")
            return ref[-1]
        assert isinstance(e, t.Binary)
        if e.op in ("&&", "||"):  # both sides are evaluated (and may fault), as on the machine
            left, right = bool(self.evaluate(e.left, exclude)), bool(self.evaluate(e.right,
                                                                                   exclude))
            return left and right if e.op == "&&" else left or right
        a = int(self.evaluate(e.left, exclude))
        b = int(self.evaluate(e.right, exclude))
        op = e.op
        if op in ("/", "%"):
            if b == 0:
                raise self.fault(e.right.pos, "division by zero")
            return floor_div(a, b) if op == "/" else floor_mod(a, b)
        arithmetic = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}
        if op in arithmetic:
            return wrap(arithmetic[op])
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b,
                "!=": a != b}[op]

    @staticmethod
    def show(ref: _Ref) -> str:
        if isinstance(ref, list):
            return "{" + ", ".join(map(str, ref)) + "}"
        return str(ref.value)
