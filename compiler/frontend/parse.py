"""The front end: ``@reversible`` Python functions, read with :mod:`ast`, to the IR.

The source is parsed, never executed.  Anything outside the grammar of
docs/language.md is a :class:`CompileError` at its file, line and column,
with a hint saying what to write instead.
"""
from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir

#: Elementary functions and their arity: the table's function families plus sq.
ELEMENTARY = {"sin": 1, "cos": 1, "tan": 1, "tanh": 1, "exp": 1, "log": 1, "sqrt": 1,
              "abs": 1, "atan": 1, "sinh": 1, "cosh": 1, "sq": 1, "atan2": 2, "pow": 2}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
           ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
           ast.GtE: ">="}
_AUGOPS = {ast.Add: "+", ast.Sub: "-", ast.BitXor: "^"}
_MARKER_MODULES = ("revasm", "rv", "edsl", "math", "np", "numpy")


def parse_file(path: str | Path) -> ir.Module:
    """Parse every ``@reversible`` function of a Python file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise CompileError(SourcePos(str(path), 1, 1), f"cannot read: {exc.strerror or exc}")
    return parse_source(text, str(path))


def parse_source(text: str, filename: str = "<source>") -> ir.Module:
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        pos = SourcePos(filename, exc.lineno or 1, exc.offset or 1)
        raise CompileError(pos, f"Python syntax error: {exc.msg}",
                           source_line=(exc.text or "").rstrip("\n")) from None
    return _ModuleParser(text, filename).parse(tree)


class _Scope:
    """The variables visible at a point of a function: name -> (type, kind, pos)."""

    def __init__(self) -> None:
        self.vars: dict[str, tuple] = {}


class _ModuleParser:
    def __init__(self, text: str, filename: str) -> None:
        self.lines = text.splitlines()
        self.file = filename
        self.constants: dict[str, ir.Const] = {}
        self.tables: dict[str, ir.ConstTable] = {}
        self.signatures: dict[str, ast.FunctionDef] = {}
        self.routine_counter = 0

    # --- errors -------------------------------------------------------------------

    def pos(self, node: ast.AST) -> SourcePos:
        return SourcePos(self.file, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1)

    def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError:
        pos = self.pos(node)
        line = self.lines[pos.line - 1] if 0 < pos.line <= len(self.lines) else ""
        return CompileError(pos, message, hint, line)

    # --- the module ---------------------------------------------------------------

    def parse(self, tree: ast.Module) -> ir.Module:
        functions: list[ast.FunctionDef] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    self._is_reversible(d) for d in node.decorator_list):
                if node.name in self.signatures:
                    raise self.error(node, f"a second reversible function named {node.name!r}")
                self.signatures[node.name] = node
                functions.append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                self._module_constant(node.targets[0].id, node.value, node)
        if not functions:
            raise CompileError(SourcePos(self.file, 1, 1),
                               "no function marked @reversible in this file",
                               "decorate the function: from revasm.compiler import reversible; "
                               "@reversible def f(x: Fixed): ...")
        module = ir.Module(self.file, {}, self.constants, self.tables, self.lines)
        for node in functions:
            module.functions[node.name] = _FunctionParser(self, node).parse()
        return module

    def _is_reversible(self, decorator: ast.expr) -> bool:
        if isinstance(decorator, ast.Name):
            return decorator.id == "reversible"
        return isinstance(decorator, ast.Attribute) and decorator.attr == "reversible"

    def _module_constant(self, name: str, value: ast.expr, node: ast.AST) -> None:
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return  # not a constant the compiler uses; ignore
        if isinstance(literal, bool):
            self.constants[name] = ir.Const(self.pos(node), Fraction(int(literal)), True)
        elif isinstance(literal, (int, float)):
            self.constants[name] = ir.Const(self.pos(node), Fraction(literal),
                                            isinstance(literal, int))
        elif isinstance(literal, (tuple, list)) and literal:
            shape, flat = _table_shape(literal)
            if shape is None:
                raise self.error(node, f"table {name!r} must be a rectangular tuple of numbers")
            is_int = all(isinstance(v, int) for v in flat)
            element = ir.INT if is_int else ir.FIXED
            self.tables[name] = ir.ConstTable(name, ir.ArrayType(element, shape),
                                              tuple(Fraction(v) for v in flat), self.pos(node))


def _table_shape(literal) -> tuple:
    if isinstance(literal, (int, float)) and not isinstance(literal, bool):
        return (), [literal]
    if not isinstance(literal, (tuple, list)) or not literal:
        return None, []
    shapes, flat = set(), []
    for item in literal:
        shape, values = _table_shape(item)
        if shape is None:
            return None, []
        shapes.add(shape)
        flat += values
    if len(shapes) != 1:
        return None, []
    return (len(literal), *shapes.pop()), flat


class _FunctionParser:
    def __init__(self, module: _ModuleParser, node: ast.FunctionDef) -> None:
        self.m = module
        self.node = node
        self.scope: dict[str, tuple] = {}  # name -> (type, kind, pos)
        self.routines: list[ir.Routine] = []
        self.loop_vars: list[str] = []
        self._routine_ancillas: dict[int, list[str]] = {}

    def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError:
        return self.m.error(node, message, hint)

    def pos(self, node: ast.AST) -> SourcePos:
        return self.m.pos(node)

    # --- signature ----------------------------------------------------------------

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
        for name, (type_, kind, pos) in self.scope.items():
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

    # --- statements ---------------------------------------------------------------------

    def block(self, body: list[ast.stmt], top: bool = False) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for i, stmt in enumerate(body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                continue  # docstring
            result = self.statement(stmt)
            if result is not None:
                out.append(result)
        return out

    def statement(self, s: ast.stmt) -> ir.Stmt | None:
        pos = self.pos(s)
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.AugAssign):
            return self.update(s)
        if isinstance(s, ast.Assign):
            return self.assign(s)
        if isinstance(s, ast.Expr):
            return self.expression_statement(s)
        if isinstance(s, ast.If):
            return self.if_statement(s)
        if isinstance(s, ast.While):
            return self.while_statement(s)
        if isinstance(s, ast.For):
            return self.for_statement(s)
        if isinstance(s, ast.With):
            return self.with_statement(s)
        if isinstance(s, ast.Return):
            raise self.error(s, "a reversible function cannot return a value",
                             "results are written into parameters: out += ...")
        if isinstance(s, ast.AnnAssign):
            raise self.error(s, "annotated assignment is not reversible",
                             f"allocate an ancilla: x = ancilla(0.0)")
        if isinstance(s, ast.Delete):
            raise self.error(s, "del discards a value, which is not reversible",
                             "release an ancilla with free(x, value)")
        names = {ast.Break: "break", ast.Continue: "continue", ast.Raise: "raise",
                 ast.Try: "try", ast.Import: "import", ast.ImportFrom: "import",
                 ast.FunctionDef: "a nested function", ast.Global: "global",
                 ast.Nonlocal: "nonlocal", ast.Assert: "assert", ast.ClassDef: "a class"}
        what = names.get(type(s), type(s).__name__)
        raise self.error(s, f"{what} is not part of the reversible language",
                         "see docs/language.md for the statements a @reversible function "
                         "may use")

    def update(self, s: ast.AugAssign) -> ir.Stmt:
        op = _AUGOPS.get(type(s.op))
        if op is None:
            sym = {ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=", ast.Mod: "%=",
                   ast.Pow: "**=", ast.BitAnd: "&=", ast.BitOr: "|=", ast.LShift: "<<=",
                   ast.RShift: ">>="}.get(type(s.op), "this operator")
            raise self.error(s, f"{sym} is not reversible in fixed point",
                             "use +=, -= or ^= (an accumulation), e.g. y += x * a "
                             "into a zero y")
        target = self.lvalue(s.target)
        expr = self.expr(s.value)
        return ir.Update(self.pos(s), target=target, op=op, expr=expr)

    def assign(self, s: ast.Assign) -> ir.Stmt:
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Call) and _call_name(s.value) == "ancilla":
            return self.alloc(s.targets[0], s.value, s)
        target = ast.unparse(s.targets[0]) if s.targets else "x"
        raise self.error(s, "assignment '=' overwrites a value, which is not reversible",
                         f"accumulate instead ({target} += ...), or allocate an ancilla: "
                         f"{target} = ancilla(0.0)")

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

    def expression_statement(self, s: ast.Expr) -> ir.Stmt:
        value = s.value
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Invert):
            inner = value.operand
            if isinstance(inner, ast.Name) and inner.id == "routine":
                if not self.routines:
                    raise self.error(s, "~routine without a routine to undo",
                                     "compute first: with routine(): ..., then ~routine")
                r = self.routines.pop()
                for name in self._routine_ancillas.pop(id(r), []):
                    self.scope.pop(name, None)
                return ir.Unroutine(self.pos(s), body=r.body, label=r.label)
            if isinstance(inner, ast.Call):
                stmt = self.call_statement(inner, s)
                if isinstance(stmt, ir.Call):
                    stmt.uncall = True
                    return stmt
                raise self.error(s, f"~ applies to calls of reversible functions, not to "
                                    f"{_call_name(inner)}()",
                                 "write the inverse statement itself (IROT for ROT)")
        if isinstance(value, ast.Call):
            return self.call_statement(value, s)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a string used as a comment
        raise self.error(s, "an expression on its own does nothing",
                         "accumulate it into a variable: y += ...")

    def call_statement(self, call: ast.Call, s: ast.stmt) -> ir.Stmt:
        name = _call_name(call)
        if name == "free":
            return self.free(call, s)
        if name in ("SWAP", "ROT", "IROT"):
            arity = 2 if name == "SWAP" else 3
            if len(call.args) != arity or call.keywords:
                raise self.error(call, f"{name} takes {arity} arguments")
            a = self.lvalue(call.args[0])
            b = self.lvalue(call.args[1])
            if name == "SWAP":
                return ir.Swap(self.pos(s), a=a, b=b)
            theta = self.expr(call.args[2])
            return ir.Rot(self.pos(s), a=a, b=b, theta=theta, inverse=name == "IROT")
        if name == "ancilla":
            raise self.error(call, "an ancilla must be given a name",
                             "x = ancilla(0.0)")
        if name in self.m.signatures:
            target = self.m.signatures[name]
            if call.keywords:
                raise self.error(call.keywords[0], "calls take positional arguments only")
            expected = len(target.args.args)
            if len(call.args) != expected:
                raise self.error(call, f"{name} takes {expected} argument(s), got "
                                       f"{len(call.args)}",
                                 f"def {name}({', '.join(a.arg for a in target.args.args)}) "
                                 f"is on line {target.lineno}")
            args = []
            for arg in call.args:
                if isinstance(arg, ast.Name) and arg.id in self.scope and \
                        isinstance(self.scope[arg.id][0], ir.ArrayType):
                    args.append(ir.Var(self.pos(arg), name=arg.id))
                elif isinstance(arg, ast.Name) and arg.id in self.m.tables:
                    args.append(ir.Var(self.pos(arg), name=arg.id))
                elif isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) \
                        and arg.value.id in self.m.tables:
                    args.append(self.subscript(arg))  # read-only: checks.py checks the callee
                elif self.static_int(arg) is not None:
                    args.append(ir.Const(self.pos(arg), Fraction(self.static_int(arg)), True))
                elif (
                        isinstance(arg, ast.Constant) and isinstance(arg.value, float)) or (
                        isinstance(arg, ast.Name) and arg.id in self.m.constants):
                    args.append(self.expr(arg))
                else:
                    args.append(self.lvalue(arg, what="an argument"))
            return ir.Call(self.pos(s), func=name, args=tuple(args))
        if name in ELEMENTARY:
            raise self.error(call, f"{name}(...) on its own computes nothing",
                             f"accumulate it: y += {name}(...)")
        hint = _closest(name, list(self.m.signatures) + ["SWAP", "ROT", "IROT", "free"])
        raise self.error(call, f"unknown reversible function {name!r}",
                         f"did you mean {hint}?" if hint else
                         "define it in this file with @reversible")

    def if_statement(self, s: ast.If) -> ir.Stmt:
        test = s.test
        if isinstance(test, ast.Tuple):
            if len(test.elts) != 2:
                raise self.error(test, "an if condition is (precondition, postcondition)")
            pre, post, given = self.expr(test.elts[0]), self.expr(test.elts[1]), True
        else:
            pre = self.expr(test)
            post, given = pre, False
        then = self.scoped_block(s.body)
        orelse = self.scoped_block(s.orelse)
        return ir.If(self.pos(s), pre=pre, post=post, then=then, orelse=orelse,
                     post_given=given)

    def while_statement(self, s: ast.While) -> ir.Stmt:
        if s.orelse:
            raise self.error(s, "while ... else is not part of the reversible language")
        test = s.test
        if not isinstance(test, ast.Tuple) or len(test.elts) != 2:
            raise self.error(test, "a while loop needs a postcondition: while (pre, post):",
                             "pre keeps the loop going; post must be false on entry and true "
                             "after every iteration (e.g. while (k < n, k != 0):)")
        pre, post = self.expr(test.elts[0]), self.expr(test.elts[1])
        body = self.scoped_block(s.body)
        return ir.While(self.pos(s), pre=pre, post=post, body=body)

    def for_statement(self, s: ast.For) -> ir.Stmt:
        if s.orelse:
            raise self.error(s, "for ... else is not part of the reversible language")
        if not isinstance(s.target, ast.Name):
            raise self.error(s.target, "a for loop binds one variable: for i in range(n):")
        it = s.iter
        if not (isinstance(it, ast.Call) and _call_name(it) == "range" and 1 <= len(it.args) <= 3
                and not it.keywords):
            raise self.error(it, "a for loop runs over range(...)",
                             "for i in range(n), range(a, b) or range(a, b, step)")
        name = s.target.id
        if name in self.scope:
            _, kind, where = self.scope[name]
            raise self.error(s.target, f"loop variable {name!r} is already a {kind} "
                                       f"(line {where.line})", "use a fresh name")
        args = list(it.args)
        if len(args) == 1:
            args.insert(0, ast.copy_location(ast.Constant(0), it))
        step = 1
        if len(args) == 3:
            step = self.static_int(args[2])
            if not step:
                raise self.error(args[2], "the step of range must be a non-zero integer "
                                          "constant")
        start, stop = self.int_expr(args[0]), self.int_expr(args[1])
        if isinstance(start, ir.Const) and isinstance(stop, ir.Const):
            count = len(range(int(start.value), int(stop.value), step))
            stop = ir.Const(stop.pos, start.value + count * step, True)
        elif abs(step) != 1:
            raise self.error(it, "a range with variable bounds must have step 1 or -1",
                             "use constant bounds, or step through range(a, b) and scale")
        self.scope[name] = (ir.INT, "loop variable", self.pos(s.target))
        body = self.scoped_block(s.body)
        del self.scope[name]
        return ir.For(self.pos(s), var=name, start=start, stop=stop, step=step, body=body)

    def int_expr(self, node: ast.expr) -> ir.Expr:
        value = self.static_int(node)
        if value is not None:
            return ir.Const(self.pos(node), Fraction(value), True)
        e = self.expr(node)
        if self.type_of(e) != ir.INT:
            raise self.error(node, "range bounds must be integers (Int variables or "
                                   "constants)")
        return e

    def with_statement(self, s: ast.With) -> ir.Stmt:
        if len(s.items) != 1 or s.items[0].optional_vars is not None:
            raise self.error(s, "with takes one block kind: routine() or inverse()")
        ctx = s.items[0].context_expr
        kind = _call_name(ctx) if isinstance(ctx, ast.Call) else getattr(ctx, "id", "")
        if kind == "routine":
            self.m.routine_counter += 1
            r = ir.Routine(self.pos(s), body=[], label=f"routine {self.m.routine_counter} "
                                                       f"(line {s.lineno})")
            # Ancillas allocated in a routine live until ~routine, whose inverse frees them.
            before = set(self.scope)
            routines = len(self.routines)
            r.body = self.block(s.body)
            del self.routines[routines:]
            self._routine_ancillas[id(r)] = [n for n in self.scope if n not in before]
            self.routines.append(r)
            return r
        if kind == "inverse":
            return ir.Block(self.pos(s), body=self.scoped_block(s.body), inverted=True)
        raise self.error(ctx, f"unknown block kind {ast.unparse(ctx)!r}",
                         "with routine(): (undone later by ~routine) or with inverse():")

    def scoped_block(self, body: list[ast.stmt]) -> list[ir.Stmt]:
        """A nested block: ancillas allocated inside must be freed inside."""
        before = dict(self.scope)
        routines = len(self.routines)
        out = self.block(body)
        for name, (type_, kind, pos) in self.scope.items():
            if name not in before and kind == "ancilla":
                raise CompileError(pos, f"ancilla {name!r} is not freed in the block that "
                                        "allocates it", f"free({name}, ...) before the block "
                                                        "ends", self.m.lines[pos.line - 1])
        for name in before:
            if name not in self.scope:
                raise self.error(body[-1] if body else self.node,
                                 f"ancilla {name!r} is freed inside a nested block but "
                                 "allocated outside it", "free it in the block that allocated "
                                                         "it")
        del self.routines[routines:]
        return out

    # --- expressions -----------------------------------------------------------------

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
            hint = _closest(name, list(self.scope) + list(self.m.constants))
            raise self.error(node, f"undefined variable {name!r}",
                             f"did you mean {hint!r}?" if hint else
                             f"parameters and ancillas (x = ancilla(0.0)) are the variables")
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
        indices = []
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
            if isinstance(v, (int, float)):
                return ir.Const(pos, Fraction(v), isinstance(v, int))
            raise self.error(node, f"{v!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id in self.m.constants:
                c = self.m.constants[node.id]
                return ir.Const(pos, c.value, c.is_int)
            if node.id in ("pi", "e") and node.id not in self.scope:
                import math
                return ir.Const(pos, Fraction(getattr(math, node.id)), False)
            self.require_var(node, node.id, scalar=True)
            return ir.Var(pos, name=node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in _MARKER_MODULES and node.attr in ("pi", "e"):
            import math
            return ir.Const(pos, Fraction(getattr(math, node.attr)), False)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.error(node, f"operator {ast.unparse(node)!r} is not supported",
                                 "+ - * / ** & | << >> and the functions of docs/language.md")
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
            return ir.Compare(pos, op=_CMPOPS[type(node.ops[0])], left=self.expr(node.left),
                              right=self.expr(node.comparators[0]))
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            return ir.BoolOp(pos, op=op, values=tuple(self.expr(v) for v in node.values))
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name not in ELEMENTARY:
                if name in self.m.signatures:
                    raise self.error(node, f"{name} is a reversible function; call it as a "
                                           "statement", f"{name}(y, x) updates its arguments "
                                                        "in place")
                hint = _closest(name, list(ELEMENTARY))
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
        a, b = expr_type(e.left, types, tables), expr_type(e.right, types, tables)
        return ir.INT if a == b == ir.INT else ir.FIXED
    return ir.FIXED


def _call_name(call: ast.expr) -> str:
    f = call.func if isinstance(call, ast.Call) else call
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ast.unparse(f)


def _type_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("Fixed", "Int")
    if isinstance(node, ast.Attribute):
        return node.attr in ("Fixed", "Int")
    if isinstance(node, ast.Subscript):
        return _type_like(node.value) or getattr(node.value, "id", "") == "Array"
    return False


def _closest(name: str, candidates: list[str]) -> str | None:
    import difflib
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.7)
    return match[0] if match else None
