"""The scalar type of an IR expression: Int or Fixed.

The front end types what it parses with it and the backend picks integer or fixed-point
instructions with it, so it lives with the IR, which both sides share.
"""
from __future__ import annotations

from . import nodes as ir


def expr_type(e: ir.Expr, types: dict, tables: dict) -> ir.ScalarType:
    """Int if every leaf is an integer (and no real-valued operation), else Fixed."""
    if isinstance(e, ir.Const):
        return ir.INT if e.is_int else ir.FIXED
    if isinstance(e, ir.Var):
        t = types.get(e.name, ir.FIXED)
        return t if isinstance(t, ir.ScalarType) else t.element
    if isinstance(e, ir.Index):
        t = tables[e.name].type if e.name in tables else types.get(e.name)
        return t.element if isinstance(t, ir.ArrayType) else ir.FIXED
    if isinstance(e, (ir.Compare, ir.BoolOp)) or (isinstance(e, ir.Unary) and e.op == "not"):
        return ir.INT
    if isinstance(e, ir.Unary):
        return expr_type(e.operand, types, tables)
    if isinstance(e, ir.BinOp):
        if e.op in ("/", "**"):
            return ir.FIXED
        if e.op in ("//", "%"):  # integer floor division and remainder (Janus)
            return ir.INT
        a, b = expr_type(e.left, types, tables), expr_type(e.right, types, tables)
        return ir.INT if a == b == ir.INT else ir.FIXED
    return ir.FIXED
