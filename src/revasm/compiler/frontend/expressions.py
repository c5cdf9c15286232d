"""Parsing expressions: variables, array elements, arithmetic, comparisons, function calls.

An IR expression's scalar type is ``compiler/ir/expr_types.py``'s (the lowering uses it too).
A mixin of the function parser (``compiler/frontend/parse.py``): it uses
``self.m`` (the module parser) and ``self.scope``.
"""
from __future__ import annotations

import ast
import math
from fractions import Fraction

from ..ir import nodes as ir
from ..ir.expr_types import expr_type
from .parser_state import FunctionParserState
from .syntax import BINOPS, CMPOPS, ELEMENTARY, MARKER_MODULES, call_name, closest_name


class ExpressionParser(FunctionParserState):
    """Targets (variables, array elements) and expressions."""

    def lvalue(self, node: ast.expr, what: str = "the target") -> ir.Expr:
        if isinstance(node, ast.Name):
            if node.id in self.m.constants:
                raise self.error(node, f"{node.id!r} is a constant; it cannot be written",
                                 "copy it into a variable first: x += " + node.id)
            self.require_var(node, node.id, scalar=True)
            return ir.Var(self.pos(node), name=node.id)
        if isinstance(node, ast.Subscript):
            e = self.subscript(node)
            if e.name in self.m.tables:
                raise self.error(node, f"{e.name!r} is a constant table; it cannot be written")
            return e
        raise self.error(node, f"{what} must be a variable or an array element, not "
                               f"{ast.unparse(node)!r}",
                         "compute it into an ancilla first")

    def require_var(self, node: ast.AST, name: str, scalar: bool) -> tuple:
        entry = self.scope.get(name)
        if entry is None:
            if name in self.m.tables:
                raise self.error(node, f"{name!r} is a constant table; index it: {name}[i]")
            hint = closest_name(name, list(self.scope) + list(self.m.constants))
            raise self.error(node, f"undefined variable {name!r}",
                             f"did you mean {hint!r}?" if hint else
                             "parameters and ancillas (x = ancilla(0.0)) are the variables")
        if scalar and isinstance(entry[0], ir.ArrayType):
            raise self.error(node, f"{name!r} is an array ({entry[0]}); index it: {name}[i]")
        return entry

    def subscript(self, node: ast.Subscript) -> ir.Index:
        if not isinstance(node.value, ast.Name):
            raise self.error(node, "only named arrays can be indexed")
        name = node.value.id
        if name in self.m.tables:
            type_ = self.m.tables[name].type
        else:
            entry = self.require_var(node.value, name, scalar=False)
            type_ = entry[0]
            if not isinstance(type_, ir.ArrayType):
                raise self.error(node, f"{name!r} is a scalar, not an array")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != len(type_.shape):
            raise self.error(node, f"{name!r} has {len(type_.shape)} dimension(s) "
                                   f"{type_.shape}; {len(items)} index(es) given")
        indices: list[ir.Expr] = []
        for item, extent in zip(items, type_.shape):
            if isinstance(item, ast.Slice):
                raise self.error(item, "slices are not supported",
                                 "loop over the elements: for i in range(n): ... a[i] ...")
            value = self.static_int(item)
            if value is not None:
                if not 0 <= value < extent:
                    raise self.error(item, f"index {value} is out of range 0..{extent - 1} "
                                           f"of {name!r}")
                indices.append(ir.Const(self.pos(item), Fraction(value), True))
                continue
            e = self.expr(item)
            if self.type_of(e) != ir.INT:
                raise self.error(item, "array indices must be integers (loop variables, Int "
                                       "variables, constants)")
            indices.append(e)
        return ir.Index(self.pos(node), name=name, indices=tuple(indices))

    def expr(self, node: ast.expr) -> ir.Expr:
        pos = self.pos(node)
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return ir.Const(pos, Fraction(int(v)), True)
            if isinstance(v, float) and not math.isfinite(v):
                raise self.error(node, f"{v} is not a finite number")
            if isinstance(v, (int, float)):
                return ir.Const(pos, Fraction(v), isinstance(v, int))
            raise self.error(node, f"{v!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id in self.m.constants:
                c = self.m.constants[node.id]
                return ir.Const(pos, c.value, c.is_int)
            if node.id in ("pi", "e") and node.id not in self.scope:
                return ir.Const(pos, Fraction(getattr(math, node.id)), False)
            self.require_var(node, node.id, scalar=True)
            return ir.Var(pos, name=node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in MARKER_MODULES and node.attr in ("pi", "e"):
            return ir.Const(pos, Fraction(getattr(math, node.attr)), False)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp):
            op = BINOPS.get(type(node.op))
            if op is None:
                raise self.error(node, f"operator {ast.unparse(node)!r} is not supported",
                                 "+ - * / // % ** & | ^ << >> and the functions of "
                                 "docs/language.md")
            left, right = self.expr(node.left), self.expr(node.right)
            if op in ("<<", ">>") and not isinstance(right, ir.Const):
                raise self.error(node.right, "shift amounts must be integer constants")
            return ir.BinOp(pos, op=op, left=left, right=right)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(node.op, ast.USub):
                if isinstance(operand, ir.Const):
                    return ir.Const(pos, -operand.value, operand.is_int)
                return ir.Unary(pos, op="-", operand=operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Not):
                return ir.Unary(pos, op="not", operand=operand)
            raise self.error(node, "~ in an expression is not supported",
                             "~f(args) uncalls a function as a statement")
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.error(node, "chained comparisons are not supported",
                                 "write (a < b) and (b < c)")
            if type(node.ops[0]) not in CMPOPS:
                raise self.error(node, "only == != < <= > >= compare values here",
                                 "for i in range(N) loops over indices")
            return ir.Compare(pos, op=CMPOPS[type(node.ops[0])], left=self.expr(node.left),
                              right=self.expr(node.comparators[0]))
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            return ir.BoolOp(pos, op=op, values=tuple(self.expr(v) for v in node.values))
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name not in ELEMENTARY:
                if name in self.m.signatures:
                    raise self.error(node, f"{name} is a reversible function; call it as a "
                                           "statement", f"{name}(y, x) updates its arguments "
                                                        "in place")
                hint = closest_name(name, list(ELEMENTARY))
                raise self.error(node, f"unknown function {name!r} in an expression",
                                 f"did you mean {hint}?" if hint else
                                 "elementary functions: " + ", ".join(ELEMENTARY))
            if len(node.args) != ELEMENTARY[name] or node.keywords:
                raise self.error(node, f"{name} takes {ELEMENTARY[name]} argument(s)")
            return ir.FuncCall(pos, name=name, args=tuple(self.expr(a) for a in node.args))
        if isinstance(node, ast.Tuple):
            raise self.error(node, "a tuple is only allowed as (pre, post) of an if or while")
        raise self.error(node, f"{type(node).__name__} expressions are not part of the "
                               "reversible language", "see docs/language.md")

    def type_of(self, e: ir.Expr) -> ir.ScalarType:
        return expr_type(e, self.scope_types(), self.m.tables)

    def scope_types(self) -> dict:
        return {name: entry[0] for name, entry in self.scope.items()}
