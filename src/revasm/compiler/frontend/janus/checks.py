"""Static checks of a Janus program, each a CompileError at file:line:col.

Names and types (``int`` scalars, ``int`` arrays, stacks; conditions are comparisons),
calls (arity, argument kinds, no argument passed twice), and Janus's reversibility
rules that can be decided before running: the updated variable read in its own update
(``x += x``), a variable swapped with itself, ``delocal`` naming another variable than
its ``local``.  What only a run decides -- an ``fi`` or ``from`` assertion, a ``delocal``
value, popping into a non-zero variable -- is checked by the interpreter and, compiled,
by the machine's guards.

``check_program`` also gives every array parameter declared without a size
(``int a[]``) the size its callers pass.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import Any

from ...errors import CompileError, SourcePos
from . import tree as t
from .words import MAX_INT, MIN_INT

#: A stack holds at most this many elements (on the machine, an array of this size).
STACK_CAPACITY = 64


@dataclass(unsafe_hash=True)
class Kind:
    """What a name holds: ``int`` (dims () for a scalar) or ``stack``."""

    type: str
    dims: tuple[int | None, ...] = ()
    line: int = 0

    def text(self) -> str:
        if self.type == "stack":
            return "a stack"
        if self.dims:
            return f"an array of {len(self.dims)} dimension(s)"
        return "an int"


def check_program(program: t.Program) -> t.Program:
    """Raise a CompileError for the first ill-formed statement; return the program with
    every ``int a[]`` parameter sized."""
    program = _size_parameters(program)
    for proc in [program.main, *program.procedures.values()]:
        _ProcedureChecker(program, proc).run()
    return program


def _error(pos: SourcePos, message: str, hint: str = "") -> CompileError:
    return CompileError(pos, message, hint)


def _size_parameters(program: t.Program) -> t.Program:
    """Sizes of ``int a[]`` parameters, from the arrays the callers pass (one size each)."""
    procs = dict(program.procedures)
    sizes: dict[tuple[str, str], set] = {}
    if not any(None in p.dims for proc in procs.values() for p in proc.params):
        # no int a[] parameter: the walks below would find nothing to size
        return t.Program(program.file, program.main, procs, program.source_lines)
    for _ in range(len(procs) + 1):
        changed = False
        for caller in [program.main, *procs.values()]:
            kinds = {d.name: d.dims for d in caller.params}
            for s in t.walk(caller.body):
                if not isinstance(s, t.Call) or s.name not in procs:
                    continue
                callee = procs[s.name]
                for p, a in zip(callee.params, s.args):
                    dims = kinds.get(a.name)
                    if p.dims and None in p.dims and dims and None not in dims:
                        sizes.setdefault((callee.name, p.name), set()).add((dims, s.pos))
        for (name, param), found in sizes.items():
            distinct = {d for d, _ in found}
            if len(distinct) > 1:
                first, *_ = sorted(found, key=lambda f: (f[1].line, f[1].column))
                shown = " and ".join(str(list(d)) for d in sorted(distinct))
                raise _error(first[1], f"procedure {name} is called with arrays of different "
                                       f"sizes {shown} for its parameter {param}",
                             "give the parameter its size, int a[N], and call it with "
                             "arrays of that size")
            (dims,) = distinct
            proc = procs[name]
            params = tuple(replace(p, dims=dims) if p.name == param and None in p.dims else p
                           for p in proc.params)
            if params != proc.params:
                procs[name] = replace(proc, params=params)
                changed = True
        if not changed:
            break
    return t.Program(program.file, program.main, procs, program.source_lines)


class _ProcedureChecker:
    def __init__(self, program: t.Program, proc: t.Procedure) -> None:
        self.program = program
        self.proc = proc
        self.scope: dict[str, Kind] = {}

    def run(self) -> None:
        for d in self.proc.params:
            self.declare(d)
            if d.init is not None:
                self.initial_value(d)
        self.block(self.proc.body)

    # --- names ---

    def declare(self, d: t.Decl) -> None:
        _check_name(d.name, d.pos)
        if d.name in self.scope:
            raise _error(d.pos, f"{d.name} is already declared (line {self.scope[d.name].line})",
                         "give the new variable another name")
        self.scope[d.name] = Kind(d.type, d.dims, d.pos.line)

    def lookup(self, name: str, pos: SourcePos) -> Kind:
        kind = self.scope.get(name)
        if kind is None:
            match = difflib.get_close_matches(name, list(self.scope), n=1, cutoff=0.7)
            raise _error(pos, f"undefined variable '{name}'",
                         f"did you mean '{match[0]}'?" if match else
                         "declare it: as a parameter, in main (int x), or with local")
        return kind

    def initial_value(self, d: t.Decl) -> None:
        if d.dims:
            if None in d.dims:
                raise _error(d.pos, f"array {d.name} needs a size")
            self.literal_shape(d.init, d.dims, d.pos, d.name)
        elif d.init is not None:
            self.number(d.value, d.name)

    def number(self, value: t.Expr, name: str) -> None:
        """A value main's variable starts from: a number (the host loads it)."""
        if not isinstance(value, t.Number):
            raise _error(value.pos, f"the initial value of {name} must be a number",
                         f"start from a number and update it: int {name} = 0 ... "
                         f"{name} += e")
        self.int_expr(value)

    def literal_shape(self, value: Any, dims: tuple, pos: SourcePos, name: str) -> None:
        if not isinstance(value, tuple):
            self.number(value, name)
            return
        if not dims:
            raise _error(pos, f"too many levels of {{...}} for {name}")
        if len(value) > dims[0]:
            raise _error(pos, f"{len(value)} values for a dimension of size {dims[0]} of {name}")
        for item in value:
            self.literal_shape(item, dims[1:], pos, name)

    # --- statements ---

    def block(self, body: tuple[t.Stmt, ...]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: t.Stmt) -> None:
        if isinstance(s, t.Update):
            self.place(s.target, write=True)
            self.int_expr(s.expr)
            target = s.target.name
            if not isinstance(s.target, t.Element) and _reads(s.expr, target):
                at = _first_read(s.expr, target) or s.expr.pos
                raise _error(at, f"'{target}' is both updated and read by this statement",
                             f"{target} {s.op}= f({target}) is not reversible; copy it into a "
                             "local variable first")
            if isinstance(s.target, t.Element):
                same = _first_element(s.expr, s.target)
                if same is not None:
                    raise _error(same, f"{_place_text(s.target)} is both updated and read by "
                                       "this statement", "copy it into a local variable first")
                for i in s.target.indices:
                    if _reads(i, target):
                        raise _error(i.pos, f"the index of {target} reads {target}, "
                                            "which this statement updates")
        elif isinstance(s, t.Swap):
            self.place(s.left, write=True)
            self.place(s.right, write=True)
            if s.left == s.right:
                raise _error(s.pos, f"{_place_text(s.left)} is swapped with itself")
        elif isinstance(s, t.If):
            self.condition(s.test)
            self.block(s.then)
            self.block(s.orelse)
            self.condition(s.assertion)
        elif isinstance(s, t.From):
            self.condition(s.entry)
            self.block(s.do)
            self.block(s.loop)
            self.condition(s.until)
        elif isinstance(s, t.Push):
            kind = self.lookup(s.var, s.pos)
            if kind != Kind("int", (), kind.line):
                raise _error(s.pos, f"{'pop' if s.pop else 'push'} moves an int variable, and "
                                    f"{s.var} is {kind.text()}")
            stack = self.lookup(s.stack, s.pos)
            if stack.type != "stack":
                raise _error(s.pos, f"{s.stack} is {stack.text()}, not a stack")
        elif isinstance(s, t.Local):
            self.local(s)
        elif isinstance(s, t.Call):
            self.call(s)
        elif isinstance(s, t.Assert):
            self.condition(s.cond)
        elif isinstance(s, t.Show):
            for name in s.names:
                self.lookup(name, s.pos)

    def local(self, s: t.Local) -> None:
        d, dd = s.decl, s.delocal
        if d.type != "int" or d.dims:
            raise _error(d.pos, "a local variable is an int scalar here",
                         "declare arrays and stacks in main or as parameters")
        if dd.name != d.name:
            raise _error(dd.pos, f"delocal {dd.name} does not match local {d.name} "
                                 f"(line {d.pos.line})",
                         "local and delocal name the same variable")
        if dd.type != d.type or dd.dims != d.dims:
            raise _error(dd.pos, f"delocal {dd.name} is declared {dd.type}, local {d.type}")
        self.int_expr(d.value)
        if d.name in t.reads(d.value):
            raise _error(d.pos, f"the value of local {d.name} reads {d.name} itself")
        self.declare(d)
        self.block(s.body)
        self.int_expr(dd.value)
        if d.name in t.reads(dd.value):
            raise _error(dd.pos, f"the value of delocal {d.name} reads {d.name} itself")
        del self.scope[d.name]

    def call(self, s: t.Call) -> None:
        verb = "uncall" if s.uncall else "call"
        if s.name == "main":
            raise _error(s.pos, f"procedure main cannot be {verb}ed",
                         "main is the program's entry")
        callee = self.program.procedures.get(s.name)
        if callee is None:
            known = list(self.program.procedures)
            match = difflib.get_close_matches(s.name, known, n=1, cutoff=0.6)
            raise _error(s.pos, f"unknown procedure '{s.name}'",
                         f"did you mean '{match[0]}'?" if match else "")
        if len(s.args) != len(callee.params):
            raise _error(s.pos, f"{s.name} takes {len(callee.params)} argument(s), got "
                                f"{len(s.args)}",
                         f"procedure {s.name} is on line {callee.pos.line}")
        seen: set[str] = set()
        for a, p in zip(s.args, callee.params):
            kind = self.lookup(a.name, a.pos)
            if a.name in seen:
                raise _error(a.pos, f"{a.name} is passed twice to {s.name}; the parameters "
                                    "would alias", "pass a copy held in a local variable")
            seen.add(a.name)
            want = Kind(p.type, p.dims)
            # None: a size not known (yet): an int a[] its callers size, or never called
            same_dims = len(kind.dims) == len(p.dims) and all(
                w is None or k is None or w == k for w, k in zip(p.dims, kind.dims))
            if kind.type != want.type or not same_dims:
                raise _error(a.pos, f"parameter {p.name} of {s.name} is {_decl_text(p)}, and "
                                    f"{a.name} is {_kind_text(kind)}")

    # --- expressions ---

    def place(self, p: t.Place, write: bool = False) -> None:
        kind = self.lookup(p.name, p.pos)
        if kind.type == "stack":
            raise _error(p.pos, f"{p.name} is a stack; use push, pop, top and empty")
        if isinstance(p, t.Name):
            if kind.dims:
                raise _error(p.pos, f"{p.name} is an array; name one element: {p.name}[i]")
            return
        if not kind.dims:
            raise _error(p.pos, f"{p.name} is an int, not an array")
        if len(p.indices) != len(kind.dims):
            raise _error(p.pos, f"{p.name} has {len(kind.dims)} dimension(s); "
                                f"{len(p.indices)} index(es) given")
        for index, extent in zip(p.indices, kind.dims):
            self.int_expr(index)
            if isinstance(index, t.Number) and extent is not None and \
                    not 0 <= index.value < extent:
                raise _error(index.pos, f"index {index.value} is out of range 0..{extent - 1} "
                                        f"of {p.name}")

    def int_expr(self, e: t.Expr) -> None:
        if self.expr(e) != "int":
            raise _error(e.pos, f"{_expr_kind(e)} is a condition where an integer is needed",
                         "Janus has no conversion from conditions to integers; use if")

    def condition(self, e: t.Expr) -> None:
        if self.expr(e) != "bool":
            raise _error(e.pos, "a condition must be a comparison or a logical operation",
                         "compare explicitly: x != 0")

    def expr(self, e: t.Expr) -> str:
        """The type of ``e``: ``int`` or ``bool``."""
        if isinstance(e, t.Number):
            if not MIN_INT <= e.value <= MAX_INT:
                raise _error(e.pos, f"{e.value} does not fit a 32-bit int "
                                    f"(from {MIN_INT} to {MAX_INT})")
            return "int"
        if isinstance(e, t.Boolean):
            return "bool"
        if isinstance(e, (t.Name, t.Element)):
            self.place(e)
            return "int"
        if isinstance(e, t.StackQuery):
            kind = self.lookup(e.name, e.pos)
            if e.query == "size":
                if kind.type != "stack" and not kind.dims:
                    raise _error(e.pos, f"size takes an array or a stack; {e.name} is an int")
                return "int"
            if kind.type != "stack":
                raise _error(e.pos, f"{e.query} takes a stack; {e.name} is {kind.text()}")
            return "bool" if e.query == "empty" else "int"
        if isinstance(e, t.Not):
            if self.expr(e.operand) != "bool":
                raise _error(e.operand.pos, "! negates a condition, not an integer")
            return "bool"
        if isinstance(e, t.Binary):
            left, right = self.expr(e.left), self.expr(e.right)
            if e.op in ("&&", "||"):
                for side, side_type in ((e.left, left), (e.right, right)):
                    if side_type != "bool":
                        raise _error(side.pos, f"{e.op} joins conditions, and this is an integer",
                                     "compare explicitly: x != 0")
                return "bool"
            for side, side_type in ((e.left, left), (e.right, right)):
                if side_type != "int":
                    raise _error(side.pos, f"{e.op} takes integers, and this is a condition",
                                 "&& and || join conditions" if e.op in "&|" else "")
            return "bool" if e.op in ("<", "<=", ">", ">=", "=", "!=") else "int"
        raise _error(e.pos, "unknown expression")


def _check_name(name: str, pos: SourcePos) -> None:
    if "'" in name or "__" in name:
        raise _error(pos, f"the name {name} is reserved: revasm's Janus names are letters, "
                          "digits and single underscores", "rename the variable")


def _first_read(e: t.Expr, name: str) -> SourcePos | None:
    if isinstance(e, (t.Name, t.Element)) and e.name == name:
        return e.pos
    for child in (getattr(e, "left", None), getattr(e, "right", None),
                  getattr(e, "operand", None), *getattr(e, "indices", ())):
        if isinstance(child, t.Expr):
            found = _first_read(child, name)
            if found:
                return found
    return None


def _reads(e: t.Expr, name: str) -> bool:
    """``name in t.reads(e)``, without building the sets (they were a tenth of checking)."""
    if isinstance(e, t.Number):
        return False
    if isinstance(e, (t.Name, t.StackQuery)):
        return e.name == name
    if isinstance(e, t.Binary):
        return _reads(e.left, name) or _reads(e.right, name)
    if isinstance(e, t.Element):
        return e.name == name or any(_reads(i, name) for i in e.indices)
    if isinstance(e, t.Not):
        return _reads(e.operand, name)
    return False


def _first_element(e: t.Expr, target: t.Element) -> SourcePos | None:
    """Where ``e`` reads the element ``target`` with the same index expressions (an
    element's indices are not looked into)."""
    # by node type: only an Element can equal target, and only Binary and Not hold
    # expressions looked into (the == and three getattr of every node were a tenth of
    # checking an array program)
    if isinstance(e, t.Element):
        return e.pos if e == target else None
    if isinstance(e, t.Binary):
        return _first_element(e.left, target) or _first_element(e.right, target)
    if isinstance(e, t.Not):
        return _first_element(e.operand, target)
    return None


def _place_text(p: t.Place) -> str:
    return t.text(p)


def _decl_text(d: t.Decl) -> str:
    if d.type == "stack":
        return "a stack"
    if d.dims:
        return "an array " + "".join(f"[{'' if n is None else n}]" for n in d.dims)
    return "an int"


def _kind_text(k: Kind) -> str:
    if k.type == "stack" or not k.dims:
        return k.text()
    return "an array " + "".join(f"[{n}]" for n in k.dims)


def _expr_kind(e: t.Expr) -> str:
    if isinstance(e, t.Binary):
        return f"'{e.op}'"
    if isinstance(e, t.Not):
        return "'!'"
    if isinstance(e, t.StackQuery):
        return f"{e.query}()"
    return "this"
