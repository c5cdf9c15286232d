"""A compiled Janus program's run-time checks in Janus terms.

The backend words its checks in the IR's terms (``postcondition not i == 0 of the loop``,
``ancilla pop__x__2``, ``s__len``); a Janus programmer wrote ``from i = 0``, ``pop(x, s)``
and ``delocal``.  :class:`JanusChecks` finds the Janus statement a check came from (by
the source position every IR node keeps) and says what failed in the statement's own
words: a ``fi`` or ``from`` assertion, a ``delocal`` value, a pop from an empty stack or
into a non-zero variable, a push onto a full one, an ``assert``.  Index checks keep the
backend's wording, which names the Janus array and the index value (``{$r}`` markers, the
run's values), with the IR's operators spelt as Janus's.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ...errors import SourcePos
from . import tree as t
from .checks import STACK_CAPACITY

_BACKWARD = "running backward"
#: The IR's spelling of operators and names -> Janus's, in the backend's notes.
_SPELLING = ((re.compile(r" // "), " / "), (re.compile(r" == "), " = "),
             (re.compile(r"\bnot (?=\w)"), "!"), (re.compile(r"\b(\w+)__len\b"), r"size(\1)"))


class JanusChecks:
    """The Janus statement behind each source position of a program, and the wording of
    its checks (:meth:`describe`)."""

    def __init__(self, program: t.Program) -> None:
        self.program = program
        self._at: dict[tuple[int, int], t.Stmt] | None = None
        self.decls: dict[tuple[int, int], t.Local] = {}
        #: each expression's text, by the node's identity (the program holds every node):
        #: an if's test and assertion go into two checks' words, ~10^5 on a long program
        self._texts: dict[int, str] = {}

    def text(self, e: t.Expr) -> str:
        """``tree.text(e)``, each node's made once."""
        got = self._texts.get(id(e))
        if got is None:
            got = self._texts[id(e)] = t.text(e)
        return got

    @property
    def at(self) -> dict[tuple[int, int], t.Stmt]:
        """Each statement by its position (found on the first check described: a program
        with none is not walked for them)."""
        if self._at is None:
            self._at = {}
            for proc in [self.program.main, *self.program.procedures.values()]:
                for s in t.walk(proc.body):
                    self._at.setdefault((s.pos.line, s.pos.column), s)
                    if isinstance(s, t.Local):
                        self.decls[(s.decl.pos.line, s.decl.pos.column)] = s
                        self.decls[(s.delocal.pos.line, s.delocal.pos.column)] = s
        return self._at

    def describe(self, pos: SourcePos, note: str, check: str = "",
                 role: str = "check") -> tuple[str, SourcePos]:
        """``note``, of an instruction the statement at ``pos`` compiled to, in Janus terms,
        and the place it is reported at: a check's (``role``) at a ``fi`` assertion's or
        ``until`` condition's own line where it tests that, else at ``pos``."""
        if role != "check":
            return janus_spelling(note), pos
        key = (pos.line, pos.column)
        backward = _BACKWARD in note
        at = self.at  # (finds the declarations too)
        local = self.decls.get(key)
        if local is not None:
            return _local(local, key, backward), pos
        s = at.get(key)
        if isinstance(s, t.If):
            return _if(s, note, backward, self.text), (pos if backward else s.assertion.pos)
        if isinstance(s, t.From):
            return _from(s, backward), (s.until.pos if backward else pos)
        if isinstance(s, t.Push):
            return _push(s, note, check, backward), pos
        if isinstance(s, t.Assert):
            where = " (running backward)" if backward else ""
            return f"the assertion {t.text(s.cond)} is false{where}", pos
        return janus_spelling(note), pos


@lru_cache(maxsize=1 << 12)
def janus_spelling(note: str) -> str:
    """A backend note with the IR's operators and stack depths spelt as in Janus (a long
    program's notes repeat: each spelt once)."""
    for pattern, replacement in _SPELLING:
        note = pattern.sub(replacement, note)
    return note


def _if(s: t.If, note: str, backward: bool, text: Callable[[t.Expr], str]) -> str:
    test, assertion = text(s.test), text(s.assertion)
    if backward:
        return (f"running backward, the fi assertion {assertion} chose a branch that the if "
                f"test {test} does not agree with after it (the test must be true after the "
                "then branch and false after the else branch)")
    if "else branch" in note:
        return (f"the fi assertion {assertion} is true after the else branch (the test "
                f"{test} was false, so {assertion} must be false)")
    return (f"the fi assertion {assertion} is false after the then branch (the test {test} "
            f"was true, so {assertion} must be true)")


def _from(s: t.From, backward: bool) -> str:
    if backward:
        until = t.text(s.until)
        return (f"running backward, the until condition {until} of this loop must be true "
                "where the backward run enters the loop and false after every backward "
                "iteration, and it is not")
    entry = t.text(s.entry)
    return (f"the from assertion {entry} of this loop must be true when the loop is entered "
            "and false after every iteration (each time the loop comes back around), and it "
            "is not")


def _local(s: t.Local, key: tuple[int, int], backward: bool) -> str:
    d, dd = s.decl, s.delocal
    if key == (d.pos.line, d.pos.column):  # the local's own check runs only backward
        return (f"running backward, {d.name} does not hold {t.text(d.value)} where it goes "
                f"out of scope (local int {d.name} = {t.text(d.value)})")
    where = " (running backward)" if backward else ""
    return (f"delocal int {dd.name} = {t.text(dd.value)}: {dd.name} does not hold "
            f"{t.text(dd.value)} here{where}")


def _push(s: t.Push, note: str, check: str, backward: bool) -> str:
    verb = "pop" if s.pop else "push"
    statement = f"{verb}({s.var}, {s.stack})"
    if check == "bounds":
        high = bool(re.search(r"\{\$\d+\+\d+", note))  # the index reached the capacity
        if high:
            what = f"the stack {s.stack} is full (a stack holds {STACK_CAPACITY} elements)"
        else:
            what = f"the stack {s.stack} is empty"
        if (s.pop and high) or (not s.pop and not high):  # the inverse, running backward
            return f"running backward, undoing {statement}: {what}"
        return f"{statement}: {what}"
    # the zero assertion on the variable: before a pop, after a push
    if s.pop:
        if backward:
            return f"running backward, undoing {statement} leaves {s.var} non-zero"
        return f"{statement} pops into {s.var}, which must be 0 and is not"
    if backward:
        return (f"running backward, undoing {statement} pops into {s.var}, which must be 0 "
                "and is not")
    return f"{statement} leaves {s.var} non-zero (the word above the top of {s.stack} was not 0)"
