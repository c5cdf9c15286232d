"""Value and gradient of an expression string (``revasm grad-expr``), checked against float64.

The compiler writes the expression as a compute-copy-uncompute program
(``revasm.compiler.expression``); this module compiles it, differentiates it on the machine
and compares with a float64 evaluation and central differences.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from revasm.compiler.api import compile_source
from revasm.compiler.errors import CompileError, SourcePos
from revasm.compiler.expression import (
    ANCILLA_COLUMNS,
    FILENAME,
    FIRST_NODE_LINE,
    expression_program,
)

from .programs import Gradient, ProgramFault, grad_program


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



def grad_expression(expression: str, at: dict[str, float], *,
                    width: int = 64) -> ExpressionGradient:
    """Value and gradient of ``expression`` at the point ``at`` (every variable needed)."""
    source, variables = expression_program(expression, list(at))
    missing = [v for v in variables if v not in at]
    if missing:
        raise CompileError(SourcePos(FILENAME, 1, expression.find(missing[0]) + 1),
                           f"no value for {missing[0]!r}", f"add {missing[0]}=VALUE to --at",
                           expression)
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
    ref_value, ref_grad = _reference(expression, at, variables)
    return ExpressionGradient(expression, variables, result.loss, result.gradient, ref_value,
                              ref_grad, source, result)


def _reference(expression: str, at: dict[str, float],
               variables: list[str]) -> tuple[float | None, dict[str, float | None]]:
    """float64 value and central-difference gradient, for comparison (None if undefined)."""
    env: dict[str, Any] = {name: getattr(math, name) for name in
                           ("sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                            "atan", "atan2", "pi", "e")}
    env.update(sq=lambda v: v * v, pow=math.pow, abs=abs)
    code = compile(expression.strip(), FILENAME, "eval")

    def f(point: dict[str, float]) -> float:
        return float(eval(code, {"__builtins__": {}}, {**env, **point}))  # noqa: S307

    try:
        value = f(dict(at))
    except (ArithmeticError, ValueError):
        return None, {v: None for v in variables}
    gradient: dict[str, float | None] = {}
    for v in variables:
        h = 1e-6 * max(1.0, abs(at[v]))
        try:
            gradient[v] = (f({**at, v: at[v] + h}) - f({**at, v: at[v] - h})) / (2 * h)
        except (ArithmeticError, ValueError):
            gradient[v] = None
    return value, gradient
