"""The reversible IR: NiLang's statements (Liu & Zhao, Table I) as dataclasses.

Every statement has an inverse (``ir/inverse.py``); expressions are pure
(they read variables and never write them).  ``pos`` is the Python source
position each node came from, carried to the assembly and the source map.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from fractions import Fraction

from ..errors import SourcePos

# --- types ---------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class ScalarType:
    """``Fixed`` (a fixed-point real) or ``Int`` (a raw integer word)."""

    kind: str  # "fixed" | "int"

    def __str__(self) -> str:
        return "Fixed" if self.kind == "fixed" else "Int"


FIXED = ScalarType("fixed")
INT = ScalarType("int")


@dataclass(slots=True, unsafe_hash=True)
class ArrayType:
    """A fixed-size array of scalars, row-major, in data memory."""

    element: ScalarType
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        return f"Array[{self.element}, {', '.join(map(str, self.shape))}]"


# --- expressions ------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Expr:
    pos: SourcePos = field(compare=False, repr=False)


@dataclass(slots=True, unsafe_hash=True)
class Const(Expr):
    value: Fraction = Fraction(0)
    is_int: bool = True


@dataclass(slots=True, unsafe_hash=True)
class Var(Expr):
    name: str = ""


@dataclass(slots=True, unsafe_hash=True)
class Index(Expr):
    """``name[i, j]``: an element of an array (or of a constant table)."""

    name: str = ""
    indices: tuple[Expr, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class BinOp(Expr):
    op: str  # + - * / ** & | << >>
    left: Expr
    right: Expr


@dataclass(slots=True, unsafe_hash=True)
class Unary(Expr):
    op: str  # - not
    operand: Expr


@dataclass(slots=True, unsafe_hash=True)
class Compare(Expr):
    op: str  # == != < <= > >=
    left: Expr
    right: Expr


@dataclass(slots=True, unsafe_hash=True)
class BoolOp(Expr):
    op: str = "and"  # and | or
    values: tuple[Expr, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class FuncCall(Expr):
    """An elementary function: sin(x), sq(x), pow(x, y), atan2(y, x), abs(x), ..."""

    name: str = ""
    args: tuple[Expr, ...] = ()


LValue = Var | Index

# --- statements ---------------------------------------------------------------------


@dataclass
class Stmt:
    pos: SourcePos = field(compare=False, repr=False)


@dataclass
class Update(Stmt):
    """``target += expr`` / ``-=`` / ``^=`` (``op`` is ``+``, ``-`` or ``^``)."""

    target: Expr
    op: str
    expr: Expr


@dataclass
class Swap(Stmt):
    a: Expr
    b: Expr


@dataclass
class Rot(Stmt):
    """Givens rotation of (a, b) by theta; ``inverse`` rotates by -theta (IROT)."""

    a: Expr
    b: Expr
    theta: Expr
    inverse: bool = False


@dataclass
class Show(Stmt):
    """Write each value to the machine's output (``SHOW``), in either direction; changes
    nothing, so it is its own inverse (Janus's ``show`` and ``printf``).  ``text`` is the
    statement's source text, kept as the instructions' note."""

    values: tuple[Expr, ...] = ()
    text: str = ""


@dataclass
class Call(Stmt):
    """``f(args)``; ``uncall`` runs f backward (``~f(args)``)."""

    func: str = ""
    args: tuple[Expr, ...] = ()
    uncall: bool = False


@dataclass
class If(Stmt):
    """``if (pre, post)``: pre chooses the branch going forward, post going backward."""

    pre: Expr
    post: Expr
    then: list[Stmt] = field(default_factory=list)
    orelse: list[Stmt] = field(default_factory=list)
    post_given: bool = True  # False: ``if pre:`` (post is pre; the body may not change it)


@dataclass
class While(Stmt):
    """``while (pre, post)``: pre continues the loop; post is false on entry, true after.

    ``head`` runs before each test of pre (Janus's ``from e1 do head loop body until
    e2`` is ``While(not e2, not e1, body, head)``); NiLang's while has none.
    """

    pre: Expr
    post: Expr
    body: list[Stmt] = field(default_factory=list)
    head: list[Stmt] = field(default_factory=list)


@dataclass
class For(Stmt):
    """``for var in range(start, stop, step)`` with ``stop`` exact (start + n*step)."""

    var: str
    start: Expr
    stop: Expr
    step: int = 1
    body: list[Stmt] = field(default_factory=list)


@dataclass
class Alloc(Stmt):
    """``name = ancilla(value)``: a fresh variable, zero, then set to a known value."""

    name: str
    type: ScalarType | ArrayType
    value: Expr
    checked: bool = False  # the inverse of a checked free: its own free is checked too


@dataclass
class Free(Stmt):
    """``free(name, value)``: the variable must hold ``value``; it is cleared and released.

    ``checked`` marks a free the compiler could not prove, left to the run-time check.
    """

    name: str
    type: ScalarType | ArrayType
    value: Expr
    checked: bool = False


@dataclass
class Routine(Stmt):
    """``with routine():`` — a compute block that a later ``~routine`` undoes."""

    body: list[Stmt] = field(default_factory=list)
    label: str = ""


@dataclass
class Unroutine(Stmt):
    """``~routine``: the inverse of the matching routine's body."""

    body: list[Stmt] = field(default_factory=list)
    label: str = ""


@dataclass
class Block(Stmt):
    """A block; ``inverted`` runs its inverse (``with inverse():``, NiLang's ``~begin``)."""

    body: list[Stmt] = field(default_factory=list)
    inverted: bool = False


# --- functions and programs ---------------------------------------------------------


@dataclass
class Param:
    """A parameter; for the entry function, ``default`` (its value, or every element's,
    row-major) is what the host loads when the user gives none, and ``domain`` the
    values random checks draw from (both ends included; ``exact``: the default only)."""

    name: str
    type: ScalarType | ArrayType
    role: str = "input"  # input | output | loss
    pos: SourcePos = field(kw_only=True)
    default: tuple[Fraction, ...] | None = None
    domain: tuple[tuple[Fraction, ...], tuple[Fraction, ...]] | None = None  # per element
    exact: bool = False


@dataclass
class Function:
    name: str
    params: list[Param]
    body: list[Stmt]
    pos: SourcePos

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass
class ConstTable:
    """A module-level tuple of numbers: a read-only table in data memory."""

    name: str
    type: ArrayType
    values: tuple[Fraction, ...]
    pos: SourcePos


@dataclass
class Module:
    """``read_copies``: an array element read as a value is copied out (memory keeps it),
    so one statement may read an element twice (Janus); otherwise it is moved into a
    register and such reads are guarded as aliases (the eDSL, docs/language.md)."""

    file: str
    functions: dict[str, Function]
    constants: dict[str, Const]
    tables: dict[str, ConstTable]
    source_lines: list[str] = field(default_factory=list)
    read_copies: bool = False


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(node_type: type) -> tuple[str, ...]:
    """The field names of an IR node class, looked up once per class (``fields()`` per
    node was a tenth of a long program's compilation)."""
    names = _FIELD_NAMES.get(node_type)
    if names is None:
        names = _FIELD_NAMES[node_type] = tuple(f.name for f in fields(node_type))
    return names


def children(e: Expr) -> list[Expr]:
    """The expressions directly inside ``e`` (its fields, and the members of tuple fields),
    in field order: what the IR passes walk."""
    out: list[Expr] = []
    for name in field_names(type(e)):
        value = getattr(e, name)
        if isinstance(value, Expr):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, Expr)]
    return out


#: The fields of a statement that hold statements (loops, branches, blocks).
BODY_FIELDS = ("head", "body", "then", "orelse")


def nested_bodies(s: Stmt) -> list[list[Stmt]]:
    """The statement lists directly inside ``s``, in field order."""
    return [getattr(s, a) for a in BODY_FIELDS if isinstance(getattr(s, a, None), list)]


def statements_in_order(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement of ``body`` and of the bodies inside it, each before the ones
    inside it (pre-order), by an explicit stack: no recursion limit, and no recursive
    closure (a reference cycle that holds what it walks until the cyclic collector runs)."""
    stack: list[Iterator[Stmt]] = [iter(body)]
    while stack:
        s = next(stack[-1], None)
        if s is None:
            stack.pop()
            continue
        yield s
        inner = nested_bodies(s)
        if inner:
            stack.append(iter([t for b in inner for t in b]))


def declared_types(f: Function, module: Module) -> dict[str, ScalarType | ArrayType]:
    """Every variable of ``f`` -> its type: parameters, tables, ancillas and loop
    variables (the first declaration of a name, in program order)."""
    types: dict[str, ScalarType | ArrayType] = {p.name: p.type for p in f.params}
    types.update({name: t.type for name, t in module.tables.items()})
    for s in statements_in_order(f.body):
        if isinstance(s, Alloc):
            types.setdefault(s.name, s.type)
        elif isinstance(s, For):
            types.setdefault(s.var, INT)
    return types
