"""The inverse of every IR statement (NiLang, Liu & Zhao 2020, Table I).

| statement                         | inverse                                   |
|-----------------------------------|-------------------------------------------|
| ``y += f(x)``                     | ``y -= f(x)``                             |
| ``y ^= f(x)``                     | itself                                    |
| ``SWAP(a, b)``                    | itself                                    |
| ``show(a, b)`` (SHOW each value)  | ``show(b, a)``                            |
| ``ROT(a, b, t)``                  | ``IROT(a, b, t)``                         |
| ``f(args)``                       | ``~f(args)``                              |
| ``if (pre, post): A else: B``     | ``if (post, pre): ~A else: ~B``           |
| ``while (pre, post): B``          | ``while (post, pre): ~B``                 |
| the same with a head H            | ``while (post, pre)`` with head ``~H``    |
| ``for i in range(a, b, s): B``    | ``for i in range(b-s, a-s, -s): ~B``      |
| ``x = ancilla(v)``                | ``free(x, v)``                            |
| ``with routine(): B`` / ``~routine`` | ``~routine`` / ``with routine(): B``   |
| ``s1; s2; ...; sn``               | ``~sn; ...; ~s2; ~s1``                    |
"""
from __future__ import annotations

from dataclasses import replace

from . import nodes as ir


def invert_block(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """The inverse of a sequence: the inverses, in reverse order."""
    return [invert(s) for s in reversed(body)]


def invert(stmt: ir.Stmt) -> ir.Stmt:
    """The statement that undoes ``stmt`` exactly."""
    if isinstance(stmt, ir.Update):
        op = {"+": "-", "-": "+", "^": "^"}[stmt.op]
        return replace(stmt, op=op)
    if isinstance(stmt, ir.Swap):
        return replace(stmt)
    if isinstance(stmt, ir.Show):  # run backward, SHOW prints the last value first
        return replace(stmt, values=stmt.values[::-1])
    if isinstance(stmt, ir.Rot):
        return replace(stmt, inverse=not stmt.inverse)
    if isinstance(stmt, ir.Call):
        return replace(stmt, uncall=not stmt.uncall)
    if isinstance(stmt, ir.If):
        return ir.If(stmt.pos, pre=stmt.post, post=stmt.pre, then=invert_block(stmt.then),
                     orelse=invert_block(stmt.orelse), post_given=stmt.post_given)
    if isinstance(stmt, ir.While):
        return ir.While(stmt.pos, pre=stmt.post, post=stmt.pre, body=invert_block(stmt.body),
                        head=invert_block(stmt.head))
    if isinstance(stmt, ir.For):
        step = ir.Const(stmt.pos, value=ir.Fraction(stmt.step), is_int=True)
        return ir.For(stmt.pos, var=stmt.var, start=_minus(stmt.stop, step),
                      stop=_minus(stmt.start, step), step=-stmt.step,
                      body=invert_block(stmt.body))
    if isinstance(stmt, ir.Alloc):
        return ir.Free(stmt.pos, name=stmt.name, type=stmt.type, value=stmt.value,
                       checked=stmt.checked)
    if isinstance(stmt, ir.Free):
        return ir.Alloc(stmt.pos, name=stmt.name, type=stmt.type, value=stmt.value,
                        checked=stmt.checked)
    if isinstance(stmt, ir.Routine):
        return ir.Unroutine(stmt.pos, body=stmt.body, label=stmt.label)
    if isinstance(stmt, ir.Unroutine):
        return ir.Routine(stmt.pos, body=stmt.body, label=stmt.label)
    if isinstance(stmt, ir.Block):
        return ir.Block(stmt.pos, body=stmt.body, inverted=not stmt.inverted)
    raise TypeError(f"no inverse for {type(stmt).__name__}")


def _minus(expr: ir.Expr, step: ir.Const) -> ir.Expr:
    """``expr - step``, folded when both are constants."""
    if isinstance(expr, ir.Const):
        return ir.Const(expr.pos, value=expr.value - step.value, is_int=expr.is_int)
    if isinstance(expr, ir.BinOp) and expr.op in "+-" and isinstance(expr.right, ir.Const):
        sign = 1 if expr.op == "+" else -1
        total = sign * expr.right.value - step.value
        if total == 0:
            return expr.left
        return ir.BinOp(expr.pos, op="+" if total > 0 else "-", left=expr.left,
                        right=ir.Const(expr.pos, value=abs(total), is_int=True))
    if step.value < 0:
        return ir.BinOp(expr.pos, op="+", left=expr,
                        right=ir.Const(expr.pos, value=-step.value, is_int=True))
    return ir.BinOp(expr.pos, op="-", left=expr, right=step)
