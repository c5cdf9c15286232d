"""Parsing declarations: a function's signature, types, compile-time integers, ancillas.

``ancilla(...)`` allocates and ``free(...)`` releases a scoped variable; the
signature's annotations (``Fixed``, ``Int``, ``Array[...]``, ``Loss``, ``Out``)
give parameter types and roles.  A mixin of the function parser
(``compiler/frontend/parse.py``): it uses ``self.m`` (the module parser),
``self.node``, ``self.scope`` and the statement and expression parsers' methods.
"""
from __future__ import annotations

import ast
from fractions import Fraction

from ..errors import CompileError
from ..ir import nodes as ir
from .syntax import _type_like


class DeclarationParser:
    """Signature, types, static integers, ancilla allocation and release."""

    def parse(self) -> ir.Function:
        node = self.node
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise self.error(node, f"{node.name}: only plain parameters with type annotations "
                                   "are allowed", "def f(y: Fixed, x: Array[Fixed, 4]): ...")
        params = []
        for arg in args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter {arg.arg!r} has no type",
                                 f"annotate it: {arg.arg}: Fixed, {arg.arg}: Int or "
                                 f"{arg.arg}: Array[Fixed, N]")
            type_, role = self.parse_type(arg.annotation, allow_role=True)
            if arg.arg in self.scope:
                raise self.error(arg, f"parameter {arg.arg!r} appears twice")
            self.scope[arg.arg] = (type_, "param", self.pos(arg))
            params.append(ir.Param(arg.arg, type_, role, self.pos(arg)))
        body = self.block(node.body, top=True)
        for name, (_type, kind, pos) in self.scope.items():
            if kind == "ancilla":
                raise CompileError(pos, f"ancilla {name!r} is never freed",
                                   f"free it before the function ends: free({name}, 0)",
                                   self.m.lines[pos.line - 1])
        return ir.Function(node.name, params, body, self.pos(node))

    def parse_type(self, ann: ast.expr, allow_role: bool = False):
        if isinstance(ann, ast.Name) or isinstance(ann, ast.Attribute):
            name = ann.id if isinstance(ann, ast.Name) else ann.attr
            if name == "Fixed":
                return ir.FIXED, "input"
            if name == "Int":
                return ir.INT, "input"
            if name in ("Loss", "Out") and allow_role:
                return ir.FIXED, "loss" if name == "Loss" else "output"
        if isinstance(ann, ast.Subscript):
            base = ann.value.id if isinstance(ann.value, ast.Name) else getattr(ann.value,
                                                                                  "attr", "")
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if base == "Array" and len(items) >= 2:
                element, _ = self.parse_type(items[0])
                if not isinstance(element, ir.ScalarType):
                    raise self.error(items[0], "array elements must be Fixed or Int")
                shape = []
                for item in items[1:]:
                    value = self.static_int(item)
                    if value is None or value <= 0:
                        raise self.error(item, "an array dimension must be a positive integer "
                                               "constant")
                    shape.append(value)
                return ir.ArrayType(element, tuple(shape)), "input"
            if base == "Out" and allow_role and len(items) == 1:
                type_, _ = self.parse_type(items[0])
                return type_, "output"
        raise self.error(ann, f"unknown type {ast.unparse(ann)!r}",
                         "types are Fixed, Int, Array[Fixed, N], Array[Int, N, M]; "
                         "Loss or Out mark the entry function's loss or outputs")

    def static_int(self, node: ast.expr) -> int | None:
        """An integer known at compile time (literal or module constant), else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.m.constants:
            c = self.m.constants[node.id]
            return int(c.value) if c.is_int else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.static_int(node.operand)
            return -v if v is not None else None
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult,
                                                             ast.FloorDiv):
            a, b = self.static_int(node.left), self.static_int(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a // b if b else None
        return None

    def alloc(self, target: ast.Name, call: ast.Call, s: ast.stmt) -> ir.Stmt:
        name = target.id
        if name in self.scope:
            _, kind, where = self.scope[name]
            raise self.error(target, f"{name!r} is already a {kind} (line {where.line})",
                             "choose a new name for the ancilla")
        if name in self.m.constants or name in self.m.tables:
            raise self.error(target, f"{name!r} is a module constant")
        if len(call.args) != 1 or call.keywords:
            raise self.error(call, "ancilla takes one argument: its initial value or its type",
                             "x = ancilla(0.0), k = ancilla(0), a = ancilla(Array[Fixed, 4])")
        arg = call.args[0]
        if isinstance(arg, (ast.Name, ast.Subscript, ast.Attribute)) and \
                _type_like(arg):
            type_, _ = self.parse_type(arg)
            value = ir.Const(self.pos(arg), Fraction(0), type_ == ir.INT
                             if isinstance(type_, ir.ScalarType) else True)
        else:
            value = self.expr(arg)
            type_ = ir.INT if (isinstance(value, ir.Const) and value.is_int) else ir.FIXED
            if not isinstance(value, ir.Const):
                type_ = self.type_of(value)
        self.scope[name] = (type_, "ancilla", self.pos(target))
        return ir.Alloc(self.pos(s), name=name, type=type_, value=value)

    def free(self, call: ast.Call, s: ast.stmt) -> ir.Stmt:
        checked = False
        for kw in call.keywords:
            if kw.arg == "checked" and isinstance(kw.value, ast.Constant):
                checked = bool(kw.value.value)
            else:
                raise self.error(kw, f"free() has no argument {kw.arg!r}",
                                 "free(x, value) or free(x, value, checked=True)")
        if not call.args or not isinstance(call.args[0], ast.Name) or len(call.args) > 2:
            raise self.error(call, "free takes an ancilla's name and the value it holds",
                             "free(x, 0.0)")
        name = call.args[0].id
        entry = self.scope.get(name)
        if entry is None:
            raise self.error(call.args[0], f"{name!r} is not a variable here")
        type_, kind, _ = entry
        if kind != "ancilla":
            raise self.error(call.args[0], f"{name!r} is a {kind}, not an ancilla; only "
                                           "ancillas are freed")
        if isinstance(type_, ir.ArrayType):
            if len(call.args) == 2:
                raise self.error(call.args[1], "an ancilla array is freed to zero: free(a)")
            value = ir.Const(self.pos(call), Fraction(0), True)
        else:
            if len(call.args) != 2:
                raise self.error(call, f"free needs the value {name!r} holds",
                                 f"free({name}, 0.0)")
            value = self.expr(call.args[1])
        del self.scope[name]
        return ir.Free(self.pos(s), name=name, type=type_, value=value, checked=checked)
