"""Gradients of an expression string: ``revasm grad-expr "sq(x / y) * sin(x)" --at x=0.3,y=0.5``.

The expression is parsed with :mod:`ast`, then written as an eDSL program in
compute - copy - uncompute form (NiLang's pattern): a routine computes every
sub-expression into its own ancilla (``t3 += t1 * t2``), the loss receives a
copy of the root, ``~routine`` uncomputes the ancillas.  The Python API
(``revasm.expressions``) compiles that program and differentiates it on the machine.
"""
from __future__ import annotations

import ast
import math

from .errors import CompileError, SourcePos
from .frontend.syntax import ELEMENTARY

#: The functions an expression may call: exactly the language's elementary functions.
FUNCTIONS = ELEMENTARY
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
FILENAME = "<expression>"
LOSS = "value"


def _signed_number(node: ast.AST) -> float | None:
    """A number literal, signed or not (``3``, ``-2``), as a float; None for anything
    else.  An exponent stays a literal, so the compiler sees a whole power as one."""
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return sign * float(node.value)
    return None


def expression_program(expression: str,
                       variables: list[str] | None = None) -> tuple[str, list[str]]:
    """The eDSL source (compute-copy-uncompute) for ``expression``, and its variables."""
    try:
        tree = ast.parse(expression.strip(), FILENAME, mode="eval")
    except SyntaxError as exc:
        raise CompileError(SourcePos(FILENAME, 1, exc.offset or 1),
                           f"not an expression: {exc.msg}", source_line=expression) from None
    found: list[str] = []
    lines: list[str] = []
    columns: list[int] = []  # the expression column of each ancilla, in order
    counter = [0]

    def error(node: ast.AST, message: str, hint: str = "") -> CompileError:
        return CompileError(SourcePos(FILENAME, 1, getattr(node, "col_offset", 0) + 1), message,
                            hint, expression)

    def visit(node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return repr(float(node.value))
        if isinstance(node, ast.Name):
            if node.id in FUNCTIONS or node.id == LOSS or node.id.startswith("t_"):
                raise error(node, f"{node.id!r} cannot be a variable name")
            if node.id in ("pi", "e"):
                return repr(getattr(math, node.id))
            if node.id not in found:
                found.append(node.id)
            return node.id
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = visit(node.operand)
            return new(f"-{inner}" if isinstance(node.op, ast.USub) else inner, node)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            op = _OPS[type(node.op)]
            exponent = _signed_number(node.right) if op == "**" else None
            left = visit(node.left)
            right = repr(exponent) if exponent is not None else visit(node.right)
            if op == "**":  # the language's power: a whole exponent is a chain of
                # products, defined for a base of any sign (pow(x, y) needs x > 0)
                return new(f"{left} ** {right}" if right != "2.0" else f"sq({left})", node)
            if op == "*" and left == right:
                return new(f"sq({left})", node)
            return new(f"{left} {op} {right}", node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name not in FUNCTIONS:
                import difflib
                close = difflib.get_close_matches(name, list(FUNCTIONS), n=1)
                raise error(node, f"unknown function {name!r}",
                            f"did you mean {close[0]}?" if close else
                            "functions: " + ", ".join(FUNCTIONS))
            if len(node.args) != FUNCTIONS[name] or node.keywords:
                raise error(node, f"{name} takes {FUNCTIONS[name]} argument(s)")
            args = [visit(a) for a in node.args]
            return new(f"{name}({', '.join(args)})", node)
        raise error(node, f"{ast.unparse(node)!r} is not supported in an expression",
                    "numbers, variables, + - * / ** and " + ", ".join(FUNCTIONS))

    def new(text: str, node: ast.AST | None = None) -> str:
        counter[0] += 1
        name = f"t_{counter[0]}"
        columns.append(getattr(node, "col_offset", 0) + 1)
        lines.append(f"        {name} = ancilla(0.0)")
        lines.append(f"        {name} += {text}")
        return name

    root = visit(tree.body)
    if variables:
        found = list(variables) + [v for v in found if v not in variables]
    if not lines:  # a bare variable or constant
        root = new(root)
    params = ", ".join([f"{LOSS}: Loss"] + [f"{v}: Fixed" for v in found])
    source = "\n".join([
        "from revasm.compiler import *",
        "",
        "",
        "@reversible",
        f"def expression({params}):",
        "    with routine():",
        *lines,
        f"    {LOSS} += {root}",
        "    ~routine",
        "",
    ])
    ANCILLA_COLUMNS[source] = columns
    return source, found


#: generated source -> expression column of each ancilla (line 7 + 2k holds ancilla k)
ANCILLA_COLUMNS: dict[str, list[int]] = {}
FIRST_NODE_LINE = 7
