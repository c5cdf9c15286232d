"""Value and gradient of an expression string (``revasm grad-expr``), checked against float64.

The compiler writes the expression as a compute-copy-uncompute program
(``revasm.compiler.expression``); this module compiles it, differentiates it on the machine
and compares with a float64 evaluation and central differences.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from revasm.compiler.api import compile_source
from revasm.compiler.errors import CompileError, SourcePos
from revasm.compiler.expression import (
    ANCILLA_COLUMNS,
    FILENAME,
    FIRST_NODE_LINE,
    expression_program,
)
from revasm.isa.fixed_point import word_format
from revasm.machine.values import FIXED, word_of

from .programs import Gradient, ProgramFault, grad_program

#: The width of an expression's program unless the caller says.  An expression is not a
#: file with a width of its own (the one width rule, ``revasm.load``, is about files), and
#: ``grad-expr`` exists to show the machine's gradient beside 40-digit arithmetic, which
#: Q16.16's 2**-16 would hide after five digits (docs/decisions.md, "One width default").
EXPRESSION_WIDTH = 64


@dataclass
class ExpressionGradient:
    expression: str
    variables: list[str]
    value: float
    gradient: dict[str, float]
    reference_value: float | None
    reference_gradient: dict[str, float | None]
    source: str
    result: Gradient



def grad_expression(expression: str, at: Mapping[str, object], *,
                    width: int = EXPRESSION_WIDTH) -> ExpressionGradient:
    """Value and gradient of ``expression`` at the point ``at`` (every variable needed)."""
    source, variables = expression_program(expression, list(at))
    missing = [v for v in variables if v not in at]
    if missing:
        raise CompileError(SourcePos(FILENAME, 1, expression.find(missing[0]) + 1),
                           f"no value for {missing[0]!r}", f"add {missing[0]}=VALUE to --at",
                           expression)
    if not variables:
        raise CompileError(SourcePos(FILENAME, 1, 1), "nothing to differentiate by: the "
                           "expression reads no variable and --at names none",
                           "name one in --at (x=1: its derivative is then 0)", expression)
    program = compile_source(source, "expression", "<grad-expr program>", width=width,
                             for_gradient=True)
    try:
        result = grad_program(program, dict(at), wrt=variables, width=width)
    except ProgramFault as fault:
        columns = ANCILLA_COLUMNS.get(source, [])
        node = ((fault.pos.line - FIRST_NODE_LINE) // 2) if fault.pos else -1
        column = columns[node] if 0 <= node < len(columns) else 1
        detail = fault.fault.message.split(": ", 1)[-1]
        fault.pos = SourcePos(FILENAME, 1, column)
        fault.args = (f"{FILENAME}:1:{column}: runtime error: {detail}\n  {expression}\n  "
                      f"{' ' * (column - 1)}^",)
        raise
    finally:
        ANCILLA_COLUMNS.pop(source, None)
    fmt = word_format(width)  # the reference sees the point the machine received
    received = {v: fmt.to_fraction(word_of(at[v], fmt, FIXED, v)) for v in variables}
    ref_value, ref_grad = _reference(expression, received, variables)
    return ExpressionGradient(expression, variables, result.loss, result.gradient, ref_value,
                              ref_grad, source, result)


#: Working precision of the reference, in decimal digits: far beyond Q32.32's 2.3e-10.
REFERENCE_DIGITS = 40


def _reference(expression: str, at: dict[str, Fraction],
               variables: list[str]) -> tuple[float | None, dict[str, float | None]]:
    """The value and gradient in 40-digit arithmetic (mpmath), for comparison, at the point
    ``at`` taken exactly (the fixed-point words the machine received, so that the difference
    is the machine's arithmetic alone); each partial derivative is mpmath's adaptive
    high-precision finite difference, accurate far beyond the machine's resolution.
    None where the expression is undefined at the point."""
    import mpmath

    context = mpmath.mp.clone()
    context.dps = REFERENCE_DIGITS
    env: dict[str, Any] = {name: getattr(context, name) for name in
                           ("sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                            "atan", "atan2", "pi", "e")}
    env.update(sq=lambda v: v * v, pow=context.power, abs=context.fabs)
    code = compile(expression.strip(), FILENAME, "eval")

    def f(*values: Any) -> Any:
        point = dict(zip(variables, values))
        result = eval(code, {"__builtins__": {}}, {**env, **point})
        if isinstance(result, (int, float)):  # a constant expression
            result = context.mpf(result)
        if not isinstance(result, context.mpf):  # a complex result: undefined on the reals
            raise ValueError("not real")
        return result

    point = [context.mpf(at[v].numerator) / at[v].denominator for v in variables]
    try:
        value = float(f(*point))
    except (ArithmeticError, ValueError):
        return None, {v: None for v in variables}
    gradient: dict[str, float | None] = {}
    for index, v in enumerate(variables):
        order = tuple(1 if j == index else 0 for j in range(len(variables)))
        try:
            gradient[v] = float(context.diff(f, point, order))
        except (ArithmeticError, ValueError):
            gradient[v] = None
    return value, gradient
