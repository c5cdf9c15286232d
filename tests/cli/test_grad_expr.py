"""`revasm grad-expr` against analytic float64 derivatives, written out by hand.

Each case: the expression, the point, and its gradient by calculus.  At W = 64
(Q32.32, resolution 2.3e-10) the machine's gradient must agree within 1e-6
relative (absolute below 1): a few hundred ulp, room for the rounding of each
intermediate product and the documented error bounds of the function algorithms
(docs/elementary.md) propagated through at most a handful of operations.
"""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli

sin, cos, tan, exp, log, sqrt = math.sin, math.cos, math.tan, math.exp, math.log, math.sqrt
sinh, cosh, tanh = math.sinh, math.cosh, math.tanh

CASES = [
    # expression, point, {name: derivative(point)}
    ("sq(x / y) * sin(x)", dict(x=0.3, y=0.5),
     dict(x=lambda x, y: 2 * x / y**2 * sin(x) + (x / y) ** 2 * cos(x),
          y=lambda x, y: -2 * x**2 / y**3 * sin(x))),
    ("x * y", dict(x=1.5, y=-0.75), dict(x=lambda x, y: y, y=lambda x, y: x)),
    ("x + y - x * y", dict(x=0.7, y=-1.2), dict(x=lambda x, y: 1 - y, y=lambda x, y: 1 - x)),
    ("-x + 3.0 * y", dict(x=0.2, y=0.4), dict(x=lambda x, y: -1.0, y=lambda x, y: 3.0)),
    ("x / y", dict(x=2.0, y=0.8), dict(x=lambda x, y: 1 / y, y=lambda x, y: -x / y**2)),
    ("sq(x)", dict(x=-1.3), dict(x=lambda x: 2 * x)),
    ("sqrt(x)", dict(x=2.25), dict(x=lambda x: 0.5 / sqrt(x))),
    ("exp(x)", dict(x=0.9), dict(x=lambda x: exp(x))),
    ("log(x)", dict(x=3.5), dict(x=lambda x: 1 / x)),
    ("sin(x)", dict(x=1.1), dict(x=lambda x: cos(x))),
    ("cos(x)", dict(x=-0.6), dict(x=lambda x: -sin(x))),
    ("tan(x)", dict(x=0.5), dict(x=lambda x: 1 / cos(x) ** 2)),
    ("sinh(x)", dict(x=0.8), dict(x=lambda x: cosh(x))),
    ("cosh(x)", dict(x=-0.9), dict(x=lambda x: sinh(x))),
    ("tanh(x)", dict(x=0.35), dict(x=lambda x: 1 - tanh(x) ** 2)),
    ("atan2(y, x)", dict(x=0.3, y=0.5),
     dict(x=lambda x, y: -y / (x * x + y * y), y=lambda x, y: x / (x * x + y * y))),
    ("pow(x, y)", dict(x=1.7, y=0.6),
     dict(x=lambda x, y: y * x ** (y - 1), y=lambda x, y: x**y * log(x))),
    ("x ** 3", dict(x=0.9), dict(x=lambda x: 3 * x**2)),
    # a whole power of a negative base: products, not pow's exp(y log x) (issue #41)
    ("x ** 3", dict(x=-1.7), dict(x=lambda x: 3 * x**2)),
    ("x ** 4 - x ** -2", dict(x=-0.8), dict(x=lambda x: 4 * x**3 + 2 * x**-3)),
    ("sin(x) * cos(y)", dict(x=0.4, y=1.2),
     dict(x=lambda x, y: cos(x) * cos(y), y=lambda x, y: -sin(x) * sin(y))),
    ("exp(x * y)", dict(x=0.5, y=-0.8),
     dict(x=lambda x, y: y * exp(x * y), y=lambda x, y: x * exp(x * y))),
    ("log(sq(x) + 1.0)", dict(x=0.75), dict(x=lambda x: 2 * x / (x * x + 1))),
    ("sqrt(sq(x) + sq(y))", dict(x=0.6, y=0.8),
     dict(x=lambda x, y: x / sqrt(x * x + y * y), y=lambda x, y: y / sqrt(x * x + y * y))),
    ("tanh(x) / (1.0 + sq(y))", dict(x=0.3, y=0.5),
     dict(x=lambda x, y: (1 - tanh(x) ** 2) / (1 + y * y),
          y=lambda x, y: -2 * y * tanh(x) / (1 + y * y) ** 2)),
    ("x * sin(1.0 / x)", dict(x=0.7),
     dict(x=lambda x: sin(1 / x) - cos(1 / x) / x)),
    ("cosh(x) * tanh(y) + pow(x, y)", dict(x=1.2, y=0.8),
     dict(x=lambda x, y: sinh(x) * tanh(y) + y * x ** (y - 1),
          y=lambda x, y: cosh(x) * (1 - tanh(y) ** 2) + x**y * log(x))),
]


def _close(got: float, expected: float) -> bool:
    return abs(got - expected) <= 1e-6 * max(1.0, abs(expected))


@pytest.mark.parametrize("expression, point, derivatives", CASES, ids=[c[0] for c in CASES])
def test_grad_expr_gradient_equals_the_calculus(expression, point, derivatives):
    at = ",".join(f"{name}={value}" for name, value in point.items())
    result = CliRunner().invoke(cli, ["grad-expr", "--at", at, "--json", "--", expression])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    args = list(point.values())
    for name, derivative in derivatives.items():
        expected = derivative(*args)
        assert _close(data["gradient"][name], expected), (name, data["gradient"][name], expected)


def test_there_are_at_least_twenty_expressions():
    assert len(CASES) >= 20


def test_the_reference_is_exact_at_the_point_the_machine_received():
    """40-digit arithmetic at the fixed-point input: the machine's error alone shows.

    A float64 central difference at log(0.0005) is off by about 1e-6 relative (more than the
    machine); the reference must be exact to far below Q32.32's resolution."""
    from fractions import Fraction

    from revasm.expressions import grad_expression
    from revasm.isa.fixed_point import WordFormat

    fmt = WordFormat(64)
    result = grad_expression("log(x)", {"x": 0.0005}, width=64)
    received = fmt.to_fraction(fmt.from_real(0.0005))
    exact = 1 / received
    assert abs(Fraction(result.reference_gradient["x"]) - exact) / exact < Fraction(1, 10**14)
    assert abs(result.gradient["x"] - float(exact)) / float(exact) < 1e-9
    assert abs(result.value - result.reference_value) < 1e-9
