"""The surface syntax the front end recognises: operators, elementary functions, markers.

The tables map Python's :mod:`ast` operator classes to the IR's operator
symbols; the helpers read a call's name and tell a type annotation from a
value, and suggest the closest known name in error hints.
"""
from __future__ import annotations

import ast

#: Elementary functions and their arity: the table's function families plus sq.
ELEMENTARY = {"sin": 1, "cos": 1, "tan": 1, "tanh": 1, "exp": 1, "log": 1, "sqrt": 1,
              "abs": 1, "atan": 1, "sinh": 1, "cosh": 1, "sq": 1, "atan2": 2, "pow": 2}
BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
           ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>",
           ast.FloorDiv: "//", ast.Mod: "%", ast.BitXor: "^"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
           ast.GtE: ">="}
AUGOPS = {ast.Add: "+", ast.Sub: "-", ast.BitXor: "^"}
MARKER_MODULES = ("revasm", "rv", "edsl", "math", "np", "numpy")


def call_name(call: ast.expr) -> str:
    f = call.func if isinstance(call, ast.Call) else call
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ast.unparse(f)


def type_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("Fixed", "Int")
    if isinstance(node, ast.Attribute):
        return node.attr in ("Fixed", "Int")
    if isinstance(node, ast.Subscript):
        return type_like(node.value) or getattr(node.value, "id", "") == "Array"
    return False


def closest_name(name: str, candidates: list[str]) -> str | None:
    import difflib
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.7)
    return match[0] if match else None
