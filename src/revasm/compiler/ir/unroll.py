"""Unrolling small constant-trip ``for`` loops whose variable only indexes arrays (-O2).

A ``for`` loop costs three paired branches, a counter update and the test's operands
every iteration (docs/abi.md); over ``range(4)`` that is more than the body it runs.
A loop with constant bounds, at most ``MAX_TRIP`` iterations and a small body, whose
variable is read only inside array indices, is replaced by its body once per value of
the variable, the variable substituted by the constant in every index (folded to a
constant where the index becomes one: ``x[i + 1]`` with i = 2 is ``x[3]``).  The
variable is no longer needed, so it takes no register.

The unrolled program runs the same statements in the same order on the same elements,
so every value and gradient is bit for bit the loop's; only loop control goes.  A loop
is left alone when its variable is read anywhere else (an expression, a call's
argument, another loop's bounds) or when a folded index falls outside its array (the
loop faults there at run time; unrolled, the constant index would escape the guard).
Each statement keeps its source position, so the source map and faults are unchanged.
"""
from __future__ import annotations

from dataclasses import fields, replace
from fractions import Fraction
from typing import Any

from . import nodes as ir

#: Loops of at most this many iterations are unrolled ...
MAX_TRIP = 8
#: ... when the copies hold at most this many statements (nested ones counted).
MAX_STATEMENTS = 96


def unroll_loops(module: ir.Module) -> ir.Module:
    """A copy of ``module`` with its small constant-trip loops unrolled."""
    functions = {}
    for name, f in module.functions.items():
        shapes = _shapes(f, module)
        functions[name] = replace(f, body=_block(f.body, shapes))
    return replace(module, functions=functions)


def _shapes(f: ir.Function, module: ir.Module) -> dict[str, tuple[int, ...]]:
    """Array -> its shape: parameters, ancilla arrays and tables."""
    shapes = {p.name: p.type.shape for p in f.params if isinstance(p.type, ir.ArrayType)}
    shapes.update({name: t.type.shape for name, t in module.tables.items()})
    for s in ir.statements_in_order(f.body):
        if isinstance(s, ir.Alloc) and isinstance(s.type, ir.ArrayType):
            shapes.setdefault(s.name, s.type.shape)
    return shapes


def _bodies(s: ir.Stmt) -> list[list[ir.Stmt]]:
    return [getattr(s, a) for a in ("head", "body", "then", "orelse")
            if isinstance(getattr(s, a, None), list)]


def _block(body: list[ir.Stmt], shapes: dict[str, tuple[int, ...]]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        changes: dict[str, Any] = {a: _block(getattr(s, a), shapes)
                                   for a in ("head", "body", "then", "orelse")
                                   if isinstance(getattr(s, a, None), list)}
        s = replace(s, **changes) if changes else s
        unrolled = _unrolled(s, shapes) if isinstance(s, ir.For) else None
        out += unrolled if unrolled is not None else [s]
    return out


def trip_count(s: ir.For) -> int | None:
    """The iterations of a loop with constant bounds (None: not constant)."""
    if not (isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const)):
        return None
    start, stop = s.start.value, s.stop.value
    if start.denominator != 1 or stop.denominator != 1:
        return None
    trips = (stop - start) / s.step
    return int(trips) if trips.denominator == 1 and trips >= 0 else None


def _unrolled(s: ir.For, shapes: dict[str, tuple[int, ...]]) -> list[ir.Stmt] | None:
    trips = trip_count(s)
    if not trips or trips > MAX_TRIP or _count(s.body) * trips > MAX_STATEMENTS:
        return None
    if not _only_indexes(s.body, s.var):
        return None
    assert isinstance(s.start, ir.Const)
    start = int(s.start.value)
    copies: list[ir.Stmt] = []
    for k in range(trips):
        value = start + k * s.step
        for stmt in s.body:
            copy = _substitute_stmt(stmt, s.var, value)
            if not _indices_inside(copy, shapes):
                return None
            copies.append(copy)
    return copies


def _count(body: list[ir.Stmt]) -> int:
    return sum(1 + sum(_count(inner) for inner in _bodies(s)) for s in body)


# --- where the variable is read --------------------------------------------------------

def _exprs(s: ir.Stmt) -> list[Any]:
    """The expressions a statement holds directly (not those of its nested statements)."""
    out: list[Any] = []
    for f in fields(s):
        value = getattr(s, f.name)
        if isinstance(value, ir.Expr):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, ir.Expr)]
    return out


def _only_indexes(body: list[ir.Stmt], var: str) -> bool:
    """Whether ``var`` is read only inside array indices in ``body``, never written,
    allocated or used as a loop variable."""
    for s in body:
        if isinstance(s, (ir.Alloc, ir.Free)) and s.name == var:
            return False
        if isinstance(s, ir.For) and s.var == var:
            return False
        if isinstance(s, ir.Update) and isinstance(s.target, ir.Var) and s.target.name == var:
            return False
        if isinstance(s, ir.Call) and any(isinstance(a, ir.Var) and a.name == var
                                          for a in s.args):
            return False
        if any(_reads_outside_index(e, var) for e in _exprs(s)):
            return False
        if not all(_only_indexes(inner, var) for inner in _bodies(s)):
            return False
    return True


def _reads_outside_index(e: ir.Expr, var: str) -> bool:
    if isinstance(e, ir.Var):
        return e.name == var
    if isinstance(e, ir.Index):
        return e.name == var  # its indices may read var: that is what unrolling folds
    return any(_reads_outside_index(child, var) for child in ir.children(e))


# --- substitution -----------------------------------------------------------------------

def _substitute_stmt(s: ir.Stmt, var: str, value: int) -> ir.Stmt:
    changes: dict[str, Any] = {}
    for f in fields(s):
        item = getattr(s, f.name)
        if isinstance(item, ir.Expr):
            changes[f.name] = _in_expr(item, var, value)
        elif isinstance(item, tuple) and item and all(isinstance(v, ir.Expr) for v in item):
            changes[f.name] = tuple(_in_expr(v, var, value) for v in item)
        elif isinstance(item, list) and f.name in ("head", "body", "then", "orelse"):
            changes[f.name] = [_substitute_stmt(x, var, value) for x in item]
    return replace(s, **changes)


def _in_expr(e: ir.Expr, var: str, value: int) -> ir.Expr:
    """``e`` with ``var`` replaced by ``value`` inside every array index."""
    if isinstance(e, ir.Index):
        indices = tuple(_fold(_replace_var(i, var, value)) for i in e.indices)
        return replace(e, indices=indices)
    changes: dict[str, Any] = {}
    for f in fields(e):
        item = getattr(e, f.name)
        if isinstance(item, ir.Expr):
            changes[f.name] = _in_expr(item, var, value)
        elif isinstance(item, tuple) and item and all(isinstance(v, ir.Expr) for v in item):
            changes[f.name] = tuple(_in_expr(v, var, value) for v in item)
    return replace(e, **changes) if changes else e


def _replace_var(e: ir.Expr, var: str, value: int) -> ir.Expr:
    if isinstance(e, ir.Var) and e.name == var:
        return ir.Const(e.pos, value=Fraction(value), is_int=True)
    if isinstance(e, ir.Index):
        return _in_expr(e, var, value)
    changes: dict[str, Any] = {}
    for f in fields(e):
        item = getattr(e, f.name)
        if isinstance(item, ir.Expr):
            changes[f.name] = _replace_var(item, var, value)
        elif isinstance(item, tuple) and item and all(isinstance(v, ir.Expr) for v in item):
            changes[f.name] = tuple(_replace_var(v, var, value) for v in item)
    return replace(e, **changes) if changes else e


def _fold(e: ir.Expr) -> ir.Expr:
    """An index made of integer constants, +, - and * as one constant (exact integers)."""
    value = _constant(e)
    return ir.Const(e.pos, value=Fraction(value), is_int=True) if value is not None else e


def _constant(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const):
        return int(e.value) if e.is_int and e.value.denominator == 1 else None
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _constant(e.operand)
        return -inner if inner is not None else None
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*"):
        a, b = _constant(e.left), _constant(e.right)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _indices_inside(s: ir.Stmt, shapes: dict[str, tuple[int, ...]]) -> bool:
    """Whether every constant index in ``s`` (nested statements too) is inside its array."""
    exprs = list(_exprs(s))
    while exprs:
        e = exprs.pop()
        if isinstance(e, ir.Index) and e.name in shapes:
            for index, extent in zip(e.indices, shapes[e.name]):
                if isinstance(index, ir.Const) and not 0 <= index.value < extent:
                    return False
        exprs += ir.children(e)
    return all(_indices_inside(x, shapes) for inner in _bodies(s) for x in inner)
