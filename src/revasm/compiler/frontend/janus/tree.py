"""The Janus syntax tree: what the parser builds and both the interpreter and the lowering read.

Every node carries the :class:`SourcePos` of its first token (file, line, column),
so that static errors, interpreter faults and the machine's source map all name the
same place in the ``.ja`` file.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...errors import SourcePos
from .words import wrap

# --- expressions ------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Expr:
    pos: SourcePos = field(compare=False)


@dataclass(slots=True, unsafe_hash=True)
class Number(Expr):
    value: int


@dataclass(slots=True, unsafe_hash=True)
class Boolean(Expr):
    value: bool


@dataclass(slots=True, unsafe_hash=True)
class Name(Expr):
    """A scalar variable, a whole array or a whole stack."""

    name: str


@dataclass(slots=True, unsafe_hash=True)
class Element(Expr):
    """``a[i][j]``: an element of an array."""

    name: str
    indices: tuple[Expr, ...]


@dataclass(slots=True, unsafe_hash=True)
class Binary(Expr):
    """``left op right``; op is one of ``+ - * / % & | ^ < <= > >= = != && ||``."""

    op: str
    left: Expr
    right: Expr


@dataclass(slots=True, unsafe_hash=True)
class Not(Expr):
    operand: Expr


@dataclass(slots=True, unsafe_hash=True)
class StackQuery(Expr):
    """``empty(s)``, ``top(s)`` or ``size(x)`` (an array's length or a stack's depth)."""

    query: str  # empty | top | size
    name: str


Place = Name | Element

# --- declarations ------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Decl:
    """``int x``, ``int a[3] = {1, 2, 3}``, ``stack s``, ``int x = e`` (local, main)."""

    pos: SourcePos
    type: str  # int | stack
    name: str
    dims: tuple[int | None, ...] = ()  # () for a scalar; None: size taken from the caller
    init: Expr | tuple | None = None  # an expression, or nested tuples of expressions

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def value(self) -> Expr:
        """A scalar's declared value (a local's always; main's variables default to 0)."""
        return self.init if isinstance(self.init, Expr) else Number(self.pos, 0)


# --- statements ----------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Stmt:
    pos: SourcePos


@dataclass(slots=True, unsafe_hash=True)
class Update(Stmt):
    """``x += e``, ``x -= e``, ``x ^= e`` (op is ``+``, ``-`` or ``^``)."""

    target: Place
    op: str
    expr: Expr


@dataclass(slots=True, unsafe_hash=True)
class Swap(Stmt):
    left: Place
    right: Place


@dataclass(slots=True, unsafe_hash=True)
class If(Stmt):
    """``if test then ... else ... fi assertion``."""

    test: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    assertion: Expr


@dataclass(slots=True, unsafe_hash=True)
class From(Stmt):
    """``from entry do ... loop ... until exit``."""

    entry: Expr
    do: tuple[Stmt, ...]
    loop: tuple[Stmt, ...]
    until: Expr


@dataclass(slots=True, unsafe_hash=True)
class Push(Stmt):
    """``push(x, s)`` (``pop`` when ``pop``): moves x onto s and zeroes it, or back."""

    var: str
    stack: str
    pop: bool = False


@dataclass(slots=True, unsafe_hash=True)
class Local(Stmt):
    """``local int x = e ... delocal int x = e'``."""

    decl: Decl
    body: tuple[Stmt, ...]
    delocal: Decl


@dataclass(slots=True, unsafe_hash=True)
class Call(Stmt):
    name: str
    args: tuple[Name, ...]
    uncall: bool = False


@dataclass(slots=True, unsafe_hash=True)
class Skip(Stmt):
    pass


@dataclass(slots=True, unsafe_hash=True)
class Assert(Stmt):
    cond: Expr


@dataclass(slots=True, unsafe_hash=True)
class Show(Stmt):
    """``show(x, y)``, ``print("text")`` or ``printf("%d", x)``: output in either direction
    (no effect on the store)."""

    names: tuple[str, ...] = ()
    text: str | None = None


# --- procedures and programs ------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Procedure:
    pos: SourcePos
    name: str
    params: tuple[Decl, ...]
    body: tuple[Stmt, ...]


@dataclass
class Program:
    file: str
    main: Procedure  # its params are main's declared variables
    procedures: dict[str, Procedure]
    source_lines: list[str] = field(default_factory=list)


def initial_words(d: Decl) -> list[int]:
    """A main variable's starting words, row-major: its declared value (a ``{...}`` value
    leaves the rest of its dimension 0), zero where none is given."""
    size = 1
    for n in d.dims:
        size *= n or 0
    if d.init is None:
        return [0] * size
    if not d.dims:
        return [wrap(d.init.value)]  # type: ignore[union-attr]
    flat: list[int] = []
    _fill(d.init, d.dims, flat)
    return flat


def _fill(value: Any, dims: tuple, flat: list[int]) -> None:
    """``value``'s words appended to ``flat`` (a function, not a recursive closure: that is
    a reference cycle)."""
    per = 1
    for n in dims[1:]:
        per *= n
    if not isinstance(value, tuple):  # one number: the first word of its block
        flat.extend([wrap(value.value)] + [0] * (per * dims[0] - 1) if dims else
                    [wrap(value.value)])
        return
    for item in value:
        _fill(item, dims[1:], flat)
    flat.extend([0] * (per * (dims[0] - len(value))))


def text(e: Expr) -> str:
    """Janus source for an expression (fully parenthesised inside)."""
    if isinstance(e, Number):
        return str(e.value)
    if isinstance(e, Boolean):
        return "true" if e.value else "false"
    if isinstance(e, Name):
        return e.name
    if isinstance(e, Element):
        return e.name + "".join(f"[{text(i)}]" for i in e.indices)
    if isinstance(e, Not):
        return f"!{_operand(e.operand)}"
    if isinstance(e, StackQuery):
        return f"{e.query}({e.name})"
    assert isinstance(e, Binary)
    return f"{_operand(e.left)} {e.op} {_operand(e.right)}"


def _operand(e: Expr) -> str:
    return f"({text(e)})" if isinstance(e, Binary) else text(e)


def children(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The statement blocks nested in ``s``."""
    if isinstance(s, If):
        return (s.then, s.orelse)
    if isinstance(s, From):
        return (s.do, s.loop)
    if isinstance(s, Local):
        return (s.body,)
    return ()


def walk(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement of ``body``, nested ones included, in program order (an explicit
    stack: nesting is not bounded by Python's recursion limit)."""
    todo: list[Stmt] = list(reversed(body))
    while todo:
        s = todo.pop()
        yield s
        for block in reversed(children(s)):
            todo.extend(reversed(block))


def reads(e: Expr) -> set[str]:
    """The variable names an expression reads (arrays and stacks by name)."""
    if isinstance(e, Name):
        return {e.name}
    if isinstance(e, Element):
        out = {e.name}
        for i in e.indices:
            out |= reads(i)
        return out
    if isinstance(e, Binary):
        return reads(e.left) | reads(e.right)
    if isinstance(e, Not):
        return reads(e.operand)
    if isinstance(e, StackQuery):
        return {e.name}
    return set()
