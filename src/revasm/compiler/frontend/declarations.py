"""Parsing declarations: a function's signature, types, compile-time integers, ancillas.

``ancilla(...)`` allocates and ``free(...)`` releases a scoped variable; the
signature's annotations (``Fixed``, ``Int``, ``Array[...]``, ``Loss``, ``Out``)
give parameter types and roles.  A mixin of the function parser
(``compiler/frontend/parse.py``): it uses ``self.m`` (the module parser),
``self.node``, ``self.scope`` and the statement and expression parsers' methods.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from fractions import Fraction

from ..errors import CompileError
from ..ir import nodes as ir
from .parser_state import FunctionParserState
from .syntax import call_name, type_like

#: The most elements one array declares: each is a DATA word of the image (and a line of
#: the PAL text), and the reference machine's default memory is 65536 words.
MAX_ARRAY_ELEMENTS = 1 << 16


class DeclarationParser(FunctionParserState):
    """Signature, types, static integers, ancilla allocation and release."""

    def parse(self) -> ir.Function:
        node = self.node
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(node, f"{node.name}: only plain parameters with type annotations "
                                   "are allowed", "def f(y: Fixed, x: Array[Fixed, 4]): ...")
        params = []
        defaults: list[ast.expr | None] = [None] * (len(args.args) - len(args.defaults))
        defaults += list(args.defaults)
        for arg, default in zip(args.args, defaults):
            if arg.annotation is None:
                raise self.error(arg, f"parameter {arg.arg!r} has no type",
                                 f"annotate it: {arg.arg}: Fixed, {arg.arg}: Int or "
                                 f"{arg.arg}: Array[Fixed, N]")
            type_, role = self.parse_type(arg.annotation, allow_role=True)
            if arg.arg in self.scope:
                raise self.error(arg, f"parameter {arg.arg!r} appears twice")
            self.scope[arg.arg] = (type_, "param", self.pos(arg))
            param = ir.Param(arg.arg, type_, role, pos=self.pos(arg))
            self.parse_default_and_domain(param, arg.annotation, default)
            params.append(param)
        body = self.block(node.body, top=True)
        for name, (_type, kind, pos) in self.scope.items():
            if kind == "ancilla":
                raise CompileError(pos, f"ancilla {name!r} is never freed",
                                   f"free it before the function ends: free({name}, 0)",
                                   self.m.lines[pos.line - 1])
        return ir.Function(node.name, params, body, self.pos(node))

    def parse_default_and_domain(self, param: ir.Param, ann: ast.expr,
                                 default: ast.expr | None) -> None:
        """``n: Int[1, 20] = 10``: the domain from the annotation (``Int[LO, HI]``,
        ``Fixed[LO, HI]``, ``Array[Fixed[LO, HI], N]``), the default from the Python
        default (a number, a nested tuple or a module-level table for an array);
        ``= exactly(VALUE)`` makes the default the only value of the domain."""
        domain_node = self._domain_node(ann)
        if domain_node is not None:
            if param.role != "input":
                raise self.error(domain_node, f"{param.name} is an output; only inputs have a "
                                              "domain (the values random checks draw from)")
            size = param.type.size if isinstance(param.type, ir.ArrayType) else 1
            ends = domain_node.slice
            assert isinstance(ends, ast.Tuple)  # _domain_node found Fixed[LO, HI] / Int[LO, HI]
            lows, highs = (self._domain_end(x, size) for x in ends.elts)
            element = param.type.element if isinstance(param.type, ir.ArrayType) \
                else param.type
            for low, high in zip(lows, highs):
                if low > high:
                    raise self.error(domain_node, f"the domain of {param.name} is empty: "
                                                  f"{low} > {high}")
                if element == ir.INT and (low.denominator != 1 or high.denominator != 1):
                    raise self.error(domain_node, "an Int domain has integer ends")
            param.domain = (lows, highs)
        if default is None:
            return
        if isinstance(default, ast.Call) and call_name(default) == "exactly":
            if len(default.args) != 1 or default.keywords:
                raise self.error(default, "exactly takes one value: the default, the only "
                                          "value random checks use", "x = exactly(X0)")
            if param.domain is not None:
                raise self.error(default, f"{param.name} has a domain and exactly(...): "
                                          "choose one")
            param.exact = True
            default = default.args[0]
        size = param.type.size if isinstance(param.type, ir.ArrayType) else 1
        if isinstance(default, ast.Name) and default.id in self.m.tables:
            values = tuple(self.m.tables[default.id].values)
        elif isinstance(default, (ast.Tuple, ast.List)):
            values = tuple(self._static_number(x) for x in _flat_elements(default))
        else:
            values = (self._static_number(default),)
        if len(values) != size:
            raise self.error(default, f"the default of {param.name} has {len(values)} "
                                      f"value(s); {param.name} has {size}")
        element = param.type.element if isinstance(param.type, ir.ArrayType) else param.type
        for v in values:
            if element == ir.INT and v.denominator != 1:
                raise self.error(default, f"the default of {param.name} is not an integer")
        for v, low, high in zip(values, *(param.domain or ((), ()))):
            if not low <= v <= high:
                raise self.error(default, f"the default {v} of {param.name} is outside its "
                                          f"domain {low}..{high}")
        param.default = values

    def _domain_end(self, node: ast.expr, size: int) -> tuple[Fraction, ...]:
        """A domain end: a number (every element), or a module table (one per element)."""
        if isinstance(node, ast.Name) and node.id in self.m.tables:
            values = tuple(self.m.tables[node.id].values)
            if len(values) != size:
                raise self.error(node, f"{node.id} has {len(values)} values; the array has "
                                       f"{size}")
            return values
        return (self._static_number(node),) * size

    def _domain_node(self, ann: ast.expr) -> ast.Subscript | None:
        """The ``Int[LO, HI]`` / ``Fixed[LO, HI]`` inside an annotation, if any."""
        if not isinstance(ann, ast.Subscript):
            return None
        base = call_name(ann.value)
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if base in ("Fixed", "Int"):
            if len(items) != 2:
                raise self.error(ann, f"a domain is {base}[LO, HI] (both ends included)")
            return ann
        if base in ("Array", "Out") and items:
            return self._domain_node(items[0])
        return None

    def _static_number(self, node: ast.expr) -> Fraction:
        """A number known at compile time: a literal, a module constant, + - * / of them."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            if isinstance(node.value, float) and not math.isfinite(node.value):
                raise self.error(node, f"{node.value} is not a finite number")
            return Fraction(node.value)
        if isinstance(node, ast.Name) and node.id in self.m.constants:
            return self.m.constants[node.id].value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self._static_number(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult,
                                                             ast.Div):
            a, b = self._static_number(node.left), self._static_number(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if b:
                return a / b
        raise self.error(node, f"{ast.unparse(node)} is not a number known at compile time",
                         "defaults and domains are numbers or module constants")

    def parse_type(self, ann: ast.expr, allow_role: bool = False
                   ) -> tuple[ir.ScalarType | ir.ArrayType, str]:
        """The type an annotation names and the role it gives (``Loss``, ``Out``)."""
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
            if base in ("Fixed", "Int") and len(items) == 2:  # a domain: Int[LO, HI]
                return (ir.FIXED if base == "Fixed" else ir.INT), "input"
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
                array = ir.ArrayType(element, tuple(shape))
                if array.size > MAX_ARRAY_ELEMENTS:
                    raise self.error(ann, f"an array of {array.size} elements: at most "
                                          f"{MAX_ARRAY_ELEMENTS} (each element is a word of "
                                          "the image and a line of its PAL)",
                                     "split the data over several runs (revasm batch)")
                return array, "input"
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
                type_like(arg):
            type_, _ = self.parse_type(arg)
            value: ir.Expr = ir.Const(self.pos(arg), Fraction(0), type_ == ir.INT
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
            value: ir.Expr = ir.Const(self.pos(call), Fraction(0), True)
        else:
            if len(call.args) != 2:
                raise self.error(call, f"free needs the value {name!r} holds",
                                 f"free({name}, 0.0)")
            value = self.expr(call.args[1])
        del self.scope[name]
        return ir.Free(self.pos(s), name=name, type=type_, value=value, checked=checked)


def _flat_elements(node: ast.expr) -> Iterator[ast.expr]:
    """The leaves of a nested tuple/list literal, row-major."""
    if isinstance(node, (ast.Tuple, ast.List)):
        for item in node.elts:
            yield from _flat_elements(item)
    else:
        yield node
