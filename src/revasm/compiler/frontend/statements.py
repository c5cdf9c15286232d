"""Parsing statements: updates, calls, SWAP/ROT, if, while, for, routines, blocks.

Each Python statement of a ``@reversible`` body becomes one IR statement or a
:class:`CompileError` with a hint.  A mixin of the function parser
(``compiler/frontend/parse.py``): it uses ``self.m`` (the module parser),
``self.scope``, ``self.routines`` and the declaration and expression parsers'
methods.
"""
from __future__ import annotations

import ast
from fractions import Fraction

from ..errors import CompileError
from ..ir import nodes as ir
from .parser_state import FunctionParserState
from .syntax import AUGOPS, ELEMENTARY, call_name, closest_name


class StatementParser(FunctionParserState):
    """Statements and blocks (nested scopes, routines) of a function body."""

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
                             "allocate an ancilla: x = ancilla(0.0)")
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
        op = AUGOPS.get(type(s.op))
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
                and isinstance(s.value, ast.Call) and call_name(s.value) == "ancilla":
            return self.alloc(s.targets[0], s.value, s)
        target = ast.unparse(s.targets[0]) if s.targets else "x"
        raise self.error(s, "assignment '=' overwrites a value, which is not reversible",
                         f"accumulate instead ({target} += ...), or allocate an ancilla: "
                         f"{target} = ancilla(0.0)")

    def expression_statement(self, s: ast.Expr) -> ir.Stmt | None:
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
                                    f"{call_name(inner)}()",
                                 "write the inverse statement itself (IROT for ROT)")
        if isinstance(value, ast.Call):
            return self.call_statement(value, s)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return None  # a string used as a comment
        raise self.error(s, "an expression on its own does nothing",
                         "accumulate it into a variable: y += ...")

    def call_statement(self, call: ast.Call, s: ast.stmt) -> ir.Stmt:
        name = call_name(call)
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
            args: list[ir.Expr] = []
            for arg in call.args:
                if isinstance(arg, ast.Name) and arg.id in self.scope and \
                        isinstance(self.scope[arg.id][0], ir.ArrayType):
                    args.append(ir.Var(self.pos(arg), name=arg.id))
                elif isinstance(arg, ast.Name) and arg.id in self.m.tables:
                    args.append(ir.Var(self.pos(arg), name=arg.id))
                elif isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) \
                        and arg.value.id in self.m.tables:
                    args.append(self.subscript(arg))  # read-only: checks.py checks the callee
                elif (value := self.static_int(arg)) is not None:
                    args.append(ir.Const(self.pos(arg), Fraction(value), True))
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
        hint = closest_name(name, list(self.m.signatures) + ["SWAP", "ROT", "IROT", "free"])
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
        if not (isinstance(it, ast.Call) and call_name(it) == "range" and 1 <= len(it.args) <= 3
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
            given = self.static_int(args[2])
            if not given:
                raise self.error(args[2], "the step of range must be a non-zero integer "
                                          "constant")
            step = given
        start, stop = self.int_expr(args[0]), self.int_expr(args[1])
        if isinstance(start, ir.Const) and isinstance(stop, ir.Const):
            span = int(stop.value) - int(start.value)  # len(range(...)) without its C limit
            count = max(0, (span + step - (1 if step > 0 else -1)) // step)
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
        kind = call_name(ctx) if isinstance(ctx, ast.Call) else getattr(ctx, "id", "")
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
        for name, (_type, kind, pos) in self.scope.items():
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
