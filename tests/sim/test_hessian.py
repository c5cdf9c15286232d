"""Second order: forward-over-reverse Hessians from the tangent bank.

Expected values are closed forms (apex, x1 + x1 x2, umm) or the series values
quoted in the issue (J2''(x) = (J0(x) - 2 J2(x) + J4(x)) / 4).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from revasm.assembler import assemble, assemble_file
from revasm.sim.host import gradient, hessian
from revasm.sim.reference import Machine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
U32 = 2.0 ** -16


def example(name: str, width: int = 64):
    return assemble_file(EXAMPLES / name, width=width)


@pytest.mark.parametrize("x,second", [(1.0, 0.1344668389), (3.0, -0.2750500730)])
def test_bessel_j2_second_derivative(x, second):
    result = hessian(example("bessel_j2.pal"), inputs={"x": x})
    assert abs(float(result.hessian["x"]["x"]) - second) < 1e-5
    assert result.passes == 2


def test_bessel_j2_second_derivative_at_w32():
    # ~17 terms, each with three rounded tangent/gradient-tangent products: < 200 u.
    result = hessian(example("bessel_j2.pal", 32), inputs={"x": 1.0})
    assert abs(float(result.hessian["x"]["x"]) - 0.1344668389) < 200 * U32


def apex_hessian(x: float, y: float) -> np.ndarray:
    """d2/dxdy of (x/y)^2 sin x, by hand."""
    s, c = math.sin(x), math.cos(x)
    fxx = (2 * s + 4 * x * c - x * x * s) / y ** 2
    fxy = -2 * (2 * x * s + x * x * c) / y ** 3
    fyy = 6 * x * x * s / y ** 4
    return np.array([[fxx, fxy], [fxy, fyy]])


@pytest.mark.parametrize("width,tolerance", [(64, 1e-6), (32, 400 * U32)])
def test_apex_hessian_matches_the_closed_form(width, tolerance):
    # W = 32: second partials of x/y carry 1/y^3 = 8 times the rounding of three quotients.
    result = hessian(example("apex.pal", width), inputs={"x": 0.3, "y": 0.5})
    expected = apex_hessian(0.3, 0.5)
    for i, row in enumerate(("x", "y")):
        for j, col in enumerate(("x", "y")):
            assert abs(float(result.hessian[row][col]) - expected[i, j]) < tolerance


def test_x1_plus_x1x2_hessian_is_exact():
    result = hessian(example("x1_plus_x1x2.pal"), inputs={"x1": 5.0, "x2": 3.0})
    assert result.hessian == {"x1": {"x1": 0, "x2": 1}, "x2": {"x1": 1, "x2": 0}}
    assert result.gradient == {"x1": 4, "x2": 5}


def test_umm_hessian_is_symmetric_and_matches_finite_differences_of_the_gradient():
    image = example("umm.pal")
    inputs = {"x1": 0.5, "x2": -1.0, "x3": 1.5, "x4": 0.25,
              "t1": 0.4, "t2": -0.9, "t3": 1.3, "t4": 2.2, "t5": -0.6, "t6": 0.8}
    wrt = ["x1", "t1", "t3", "t6"]
    result = hessian(image, wrt=wrt, inputs=inputs)
    # Fourth-order central differences of the machine's own gradient, step h = 0.01:
    # truncation h^4/30 * |5th derivative| (<= ~30 here) ~ 1e-8; rounding: each gradient
    # is within ~10 u = 2.3e-9 of exact, and the stencil's weights sum to 18/(12 h) = 150.
    h = 0.01
    for col in wrt:
        grads = {k: gradient(image, wrt=wrt, inputs=inputs | {col: inputs[col] + k * h})
                 for k in (-2, -1, 1, 2)}
        for row in wrt:
            g = {k: float(r.gradient[row]) for k, r in grads.items()}
            difference = (-g[2] + 8 * g[1] - 8 * g[-1] + g[-2]) / (12 * h)
            assert abs(float(result.hessian[row][col]) - difference) < 1e-6
            assert abs(float(result.hessian[row][col] - result.hessian[col][row])) < 1e-8


def test_hessian_gradient_agrees_with_the_gradient_pass():
    image = example("apex.pal")
    assert hessian(image).gradient == gradient(image).gradient


def test_tangent_bank_alone_gives_the_directional_derivative():
    machine = Machine(example("apex.pal"), tangent=True)
    machine.set("x", 0.3)
    machine.set("y", 0.5)
    machine.tangents[1] = machine.fmt.one  # d/dx
    machine.run(1)
    assert float(machine.fmt.to_fraction(machine.tangents[6])) == pytest.approx(1.053170,
                                                                               abs=1e-6)
    machine.run(-1)  # the tangent bank is uncomputed with the values
    assert machine.tangents[6] == 0 and machine.tangents[1] == machine.fmt.one


ROTATION = """;; pendulum pal file
.input  x $1 fixed = 0.8
.input  y $2 fixed = -0.3
.input  t $3 fixed = 0.9
.loss   s $4
        start
        rot    $1 $2 $3
        addmul $4 $1 $2      ; s = x' y'
        finish
"""


def test_rotation_second_order_rules_against_the_closed_form():
    # s = x'y' with (x', y') = R(t)(x, y): closed-form Hessian in (x, y, t) via numpy.
    def s_of(v):
        x, y, t = v
        c, sn = math.cos(t), math.sin(t)
        return (c * x - sn * y) * (sn * x + c * y)
    v0 = np.array([0.8, -0.3, 0.9])
    result = hessian(assemble(ROTATION, width=64))
    names = ["x", "y", "t"]
    eps = 1e-4
    for i in range(3):
        for j in range(3):
            ei, ej = np.eye(3)[i] * eps, np.eye(3)[j] * eps
            fd = (s_of(v0 + ei + ej) - s_of(v0 + ei - ej) - s_of(v0 - ei + ej)
                  + s_of(v0 - ei - ej)) / (4 * eps * eps)
            assert abs(float(result.hessian[names[i]][names[j]]) - fd) < 1e-6
