"""Janus to the reversible IR (``compiler/ir``): the Python eDSL's IR, compiled by the same backend.

| Janus                                   | IR                                              |
|-----------------------------------------|-------------------------------------------------|
| ``procedure main()`` and its variables  | the entry function; its variables are parameters |
|                                         | with their declared values as defaults          |
| ``x += e``, ``-=``, ``^=``              | ``Update`` (non-reversible parts of e are        |
|                                         | computed into scratch registers and uncomputed) |
| ``a <=> b``                             | ``Swap``                                        |
| ``if t then A else B fi a``             | ``If(pre=t, post=a)``                           |
| ``from e do A loop B until u``          | ``While(pre=!u, post=!e, head=A, body=B)``      |
| ``local int x = e ... delocal int x = f`` | ``Alloc(x, e)`` ... ``Free(x, f, checked)``   |
| ``call f(x)``, ``uncall f(x)``          | ``Call``, ``Call(uncall=True)``                 |
| ``stack s``                             | an array ``s`` of STACK_CAPACITY words and its  |
|                                         | depth ``s__len``; the words above the top are 0 |
| ``push(x, s)``                          | ``SWAP(x, s[s__len]); s__len += 1``; assert x = 0 |
| ``pop(x, s)``                           | assert x = 0; ``s__len -= 1; SWAP(x, s[s__len])`` |
| ``assert c``                            | an ancilla allocated with c's truth, freed      |
|                                         | (checked) as 1: a fault in either direction     |
| ``/``, ``%``                            | ``//``, ``%`` (floor division of Int words)     |
| ``skip``                                | nothing                                         |
| ``show(x, a)``, ``printf("..", x)``     | ``Show``: SHOW of each word (an array's in      |
|                                         | row-major order), in either direction           |
| ``print("text")`` (text alone)          | a CompileError (the output carries words)       |
"""
from __future__ import annotations

from fractions import Fraction
from math import prod

from ...errors import CompileError, SourcePos
from ...ir import nodes as ir
from ...ir.inverse import invert_block
from . import tree as t
from .checks import STACK_CAPACITY

#: The suffix of a stack's depth variable (Janus names may not contain "__").
DEPTH = "__len"
_BINARY = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%", "&": "&", "|": "|", "^": "^"}
_COMPARE = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "==", "!=": "!="}


def lower_program(program: t.Program) -> ir.Module:
    """The checked program as an IR module whose entry function is ``main``."""
    reachable = _reachable(program)
    functions: dict[str, ir.Function] = {}
    for proc in [program.main, *program.procedures.values()]:
        if proc.name in reachable:
            functions[proc.name] = _Lowering(program, proc).function()
    # the backend takes the entry by name; keep main last, as the eDSL's default entry
    functions = {name: f for name, f in functions.items() if name != "main"} | \
        {"main": functions["main"]}
    # Janus may read one element twice in an expression: element reads are copies
    return ir.Module(program.file, functions, {}, {}, list(program.source_lines),
                     read_copies=True)


def _reachable(program: t.Program) -> set[str]:
    seen = {"main"}
    todo = [program.main]
    while todo:
        proc = todo.pop()
        for s in t.walk(proc.body):
            if isinstance(s, t.Call) and s.name not in seen:
                seen.add(s.name)
                todo.append(program.procedures[s.name])
    return seen


class _Lowering:
    def __init__(self, program: t.Program, proc: t.Procedure) -> None:
        self.program = program
        self.proc = proc
        self.decls = {d.name: d for d in proc.params}
        self.asserts = 0

    def function(self) -> ir.Function:
        params: list[ir.Param] = []
        for d in self.proc.params:
            params += self.params(d)
        return ir.Function(self.proc.name, params, self.block(self.proc.body), self.proc.pos)

    def params(self, d: t.Decl) -> list[ir.Param]:
        main = self.proc.name == "main"
        if d.type == "stack":
            zeros = (Fraction(0),) * STACK_CAPACITY
            return [ir.Param(d.name, ir.ArrayType(ir.INT, (STACK_CAPACITY,)), pos=d.pos,
                             default=zeros if main else None),
                    ir.Param(d.name + DEPTH, ir.INT, pos=d.pos,
                             default=(Fraction(0),) if main else None)]
        if d.dims:
            dims = tuple(int(n or 0) for n in d.dims)
            default = tuple(map(Fraction, t.initial_words(d))) if main else None
            return [ir.Param(d.name, ir.ArrayType(ir.INT, dims), pos=d.pos, default=default)]
        default = None
        if main:
            value = d.init.value if isinstance(d.init, t.Number) else 0
            default = (Fraction(value),)
        return [ir.Param(d.name, ir.INT, pos=d.pos, default=default)]

    # --- statements ---

    def block(self, body: tuple[t.Stmt, ...]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            out += self.stmt(s)
        return out

    def stmt(self, s: t.Stmt) -> list[ir.Stmt]:
        pos = s.pos
        if isinstance(s, t.Update):
            return [ir.Update(pos, self.expr(s.target), s.op, self.expr(s.expr))]
        if isinstance(s, t.Swap):
            return [ir.Swap(pos, a=self.expr(s.left), b=self.expr(s.right))]
        if isinstance(s, t.If):
            return [ir.If(pos, pre=self.expr(s.test), post=self.expr(s.assertion),
                          then=self.block(s.then), orelse=self.block(s.orelse))]
        if isinstance(s, t.From):
            return [ir.While(pos, pre=_not(self.expr(s.until)), post=_not(self.expr(s.entry)),
                             body=self.block(s.loop), head=self.block(s.do))]
        if isinstance(s, t.Local):
            d, dd = s.decl, s.delocal
            return [ir.Alloc(d.pos, name=d.name, type=ir.INT, value=self.expr(d.value),
                             checked=True),
                    *self.block(s.body),
                    ir.Free(dd.pos, name=d.name, type=ir.INT, value=self.expr(dd.value),
                            checked=True)]
        if isinstance(s, t.Call):
            args: list[ir.Expr] = []
            for a in s.args:
                args.append(ir.Var(a.pos, name=a.name))
                if self.kind(a.name) == "stack":
                    args.append(ir.Var(a.pos, name=a.name + DEPTH))
            return [ir.Call(pos, func=s.name, args=tuple(args), uncall=s.uncall)]
        if isinstance(s, t.Push):
            x = ir.Var(pos, name=s.var)
            depth = ir.Var(pos, name=s.stack + DEPTH)
            slot = ir.Index(pos, name=s.stack, indices=(depth,))
            zero = self.assertion(ir.Compare(pos, op="==", left=x, right=_int(pos, 0)), pos,
                                  f"{'pop' if s.pop else 'push'}__{s.var}")
            move = [ir.Swap(pos, a=x, b=slot), ir.Update(pos, target=depth, op="+",
                                                         expr=_int(pos, 1))]
            if s.pop:  # pop is push run backward, checked before it
                return zero + invert_block(move)
            return move + zero
        if isinstance(s, t.Assert):
            return self.assertion(self.expr(s.cond), pos, "assert")
        if isinstance(s, t.Show):
            return self.show(s)
        return []  # skip

    def show(self, s: t.Show) -> list[ir.Stmt]:
        """``show``/``printf``: ``SHOW`` of each word named, in order (an array element by
        element, row-major), in either direction.  The output carries words, so printf's
        text is kept as the instructions' note, and a ``print`` of text alone is refused
        rather than run without the output it asks for."""
        pos = s.pos
        what = "print" if s.text is not None and not s.names else \
            "printf" if s.text is not None else "show"
        if not s.names:
            raise CompileError(pos, f"{what} of text alone is not compiled: the machine's "
                                    "output carries words, not text",
                               "printf the words you want with it, e.g. "
                               'printf("x = %d", x); the Janus interpreter '
                               "(revasm.compiler.frontend.janus.interpreter) prints text")
        values: list[ir.Expr] = []
        for name in s.names:
            d = self.decls.get(name)
            if d is None or (d.type == "int" and not d.dims):
                values.append(ir.Var(pos, name=name))
                continue
            if d.type == "stack":
                raise CompileError(pos, f"{what} of the stack {name} is not compiled (its "
                                        "depth changes at run time)",
                                   f"show its depth and top instead: size({name}) and "
                                   f"top({name}) through a local")
            dims = [int(n or 0) for n in d.dims]
            if not all(dims):
                raise CompileError(pos, f"{what} of the array {name}, whose size is not "
                                        "known here, is not compiled",
                                   "show its elements from main, where its size is declared")
            for flat in range(prod(dims)):
                idx: list[int] = []
                for extent in reversed(dims):
                    idx.append(flat % extent)
                    flat //= extent
                values.append(ir.Index(pos, name=name,
                                       indices=tuple(_int(pos, i) for i in reversed(idx))))
        text = self.program.source_lines[pos.line - 1].strip() \
            if 0 < pos.line <= len(self.program.source_lines) else what
        return [ir.Show(pos, values=tuple(values), text=text)]

    def assertion(self, cond: ir.Expr, pos: SourcePos, what: str) -> list[ir.Stmt]:
        """``cond`` must hold, checked in both directions: an ancilla allocated with its
        truth and freed, checked, as 1."""
        self.asserts += 1
        name = f"{what}__{self.asserts}"
        return [ir.Alloc(pos, name=name, type=ir.INT, value=cond, checked=True),
                ir.Free(pos, name=name, type=ir.INT, value=_int(pos, 1), checked=True)]

    def kind(self, name: str) -> str:
        d = self.decls.get(name)
        return d.type if d is not None else "int"

    # --- expressions ---

    def expr(self, e: t.Expr) -> ir.Expr:
        # the leaves' nodes with positional arguments: the frozen dataclasses' keyword
        # arguments were a fifth of their construction, run for every leaf
        pos = e.pos
        if isinstance(e, t.Number):
            return _int(pos, e.value)
        if isinstance(e, t.Boolean):
            return _int(pos, 1 if e.value else 0)
        if isinstance(e, t.Name):
            return ir.Var(pos, e.name)
        if isinstance(e, t.Element):
            return ir.Index(pos, e.name, tuple([self.expr(i) for i in e.indices]))
        if isinstance(e, t.Not):
            return ir.Unary(pos, op="not", operand=self.expr(e.operand))
        if isinstance(e, t.StackQuery):
            depth = ir.Var(pos, name=e.name + DEPTH)
            if e.query == "size":
                d = self.decls.get(e.name)
                if d is not None and d.dims:
                    return _int(pos, int(d.dims[0] or 0))
                return depth
            if e.query == "empty":
                return ir.Compare(pos, op="==", left=depth, right=_int(pos, 0))
            below = ir.BinOp(pos, op="-", left=depth, right=_int(pos, 1))
            return ir.Index(pos, name=e.name, indices=(below,))
        assert isinstance(e, t.Binary)
        left, right = self.expr(e.left), self.expr(e.right)
        if e.op in ("&&", "||"):
            return ir.BoolOp(pos, op="and" if e.op == "&&" else "or", values=(left, right))
        if e.op in _COMPARE:
            return ir.Compare(pos, _COMPARE[e.op], left, right)
        return ir.BinOp(pos, _BINARY[e.op], left, right)


#: The Fraction of each int made so far (Fractions are immutable: one serves every
#: constant of that value; making one was half of a constant's lowering).
_FRACTIONS: dict[int, Fraction] = {}


def _int(pos: SourcePos, value: int) -> ir.Const:
    frac = _FRACTIONS.get(value)
    if frac is None:
        if len(_FRACTIONS) >= 4096:  # a bound: a program of many distinct numbers
            _FRACTIONS.clear()
        frac = _FRACTIONS[value] = Fraction(value)
    return ir.Const(pos, frac, True)


def _not(e: ir.Expr) -> ir.Expr:
    if isinstance(e, ir.Unary) and e.op == "not":
        return e.operand
    return ir.Unary(e.pos, op="not", operand=e)
