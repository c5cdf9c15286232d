"""The host protocol (sim/reference/gradient.py) on the hand-written examples.

Expected values come from the mathematics (closed forms, scipy-free series
values quoted in the issue), never from a previous run.  Tolerances:
W = 64 (Q32.32, u = 2**-32 ~ 2.3e-10): every example must be within 1e-6,
which leaves several thousand units of rounding for the few hundred rounded
operations of the longest example.  W = 32 (Q16.16, u = 2**-16 ~ 1.5e-5):
each rounded operation may be off by u/2 (products, quotients) or by the
function's ERROR_BOUND_ULP; the tolerances below are 2**-16 times a count of
rounded operations on the path from input to loss, times the largest factor
the later operations multiply an error by (docs/gradient.md, "Tolerances").
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from revasm.assembler import assemble, assemble_file
from revasm.isa import WordFormat
from revasm.machine import MachineFault
from revasm.sim.host import GradientError, gradient, resolve
from revasm.sim.reference import Machine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
U32 = 2.0 ** -16


def example(name: str, width: int = 64):
    return assemble_file(EXAMPLES / name, width=width)


# --- the examples at W = 64 ----------------------------------------------------------

@pytest.mark.parametrize("x,loss,grad", [(1.0, 0.1149034849, 0.2102436159),
                                         (3.0, 0.4860912606, 0.0149981181)])
def test_bessel_j2_loss_and_derivative(x, loss, grad):
    result = gradient(example("bessel_j2.pal"), inputs={"x": x})
    assert abs(float(result.loss) - loss) < 1e-6
    assert abs(float(result.gradient["x"]) - grad) < 1e-6
    assert result.forward.steps == result.backward.steps > 200


def test_apex_gradient_matches_the_closed_form():
    x, y = 0.3, 0.5
    result = gradient(example("apex.pal"), inputs={"x": x, "y": y})
    assert abs(float(result.loss) - (x / y) ** 2 * math.sin(x)) < 1e-6
    assert abs(float(result.gradient["x"]) - 1.053170) < 1e-6
    assert abs(float(result.gradient["y"]) - (-0.425549)) < 1e-6


def test_x1_plus_x1x2_is_exact():
    result = gradient(example("x1_plus_x1x2.pal"), inputs={"x1": 5.0, "x2": 3.0})
    assert result.loss == 20
    assert result.gradient == {"x1": 4, "x2": 5}


def umm_reference(x: np.ndarray, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss and analytic gradient of examples/umm.pal in float64 (reverse mode by hand)."""
    pairs = [(0, 1), (2, 3), (1, 2), (0, 3), (0, 2), (1, 3)]
    v = x.astype(float).copy()
    for (i, j), t in zip(pairs, theta):
        c, s = math.cos(t), math.sin(t)
        v[i], v[j] = c * v[i] - s * v[j], s * v[i] + c * v[j]
    loss = float(v.sum())
    g = np.ones(4)
    g_theta = np.zeros(len(theta))
    for k in reversed(range(len(pairs))):
        (i, j), t = pairs[k], theta[k]
        c, s = math.cos(t), math.sin(t)
        g_theta[k] = g[j] * v[i] - g[i] * v[j]  # d(out)/dt = (-y', x')
        g[i], g[j] = c * g[i] + s * g[j], -s * g[i] + c * g[j]
        v[i], v[j] = c * v[i] + s * v[j], -s * v[i] + c * v[j]
    return loss, g, g_theta


@pytest.mark.parametrize("seed", range(4))
def test_umm_gradient_equals_the_float64_analytic_gradient(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, 4)
    theta = rng.uniform(-3, 3, 6)
    inputs = {f"x{i + 1}": x[i] for i in range(4)} | {f"t{i + 1}": theta[i] for i in range(6)}
    image = example("umm.pal")
    fmt = WordFormat(64)  # the reference starts from the inputs as the machine holds them
    loss, g_x, g_t = umm_reference(
        np.array([float(fmt.to_fraction(fmt.from_real(v))) for v in x]),
        np.array([float(fmt.to_fraction(fmt.from_real(v))) for v in theta]))
    result = gradient(image, inputs=inputs)
    assert abs(float(result.loss) - loss) < 1e-6
    for i in range(4):
        assert abs(float(result.gradient[f"x{i + 1}"]) - g_x[i]) < 1e-6
    for i in range(6):
        assert abs(float(result.gradient[f"t{i + 1}"]) - g_t[i]) < 1e-6


# --- the same examples at W = 32 ------------------------------------------------------

def test_examples_at_w32_within_the_q16_16_resolution():
    # bessel: ~17 terms, each a product, a quotient and an accumulate: < 60 roundings of
    # at most u/2 on the loss, and as many again on the derivative (factors < 1.2).
    for x, loss, grad in [(1.0, 0.1149034849, 0.2102436159), (3.0, 0.4860912606, 0.0149981181)]:
        result = gradient(example("bessel_j2.pal", 32), inputs={"x": x})
        assert abs(float(result.loss) - loss) < 60 * U32 / 2
        assert abs(float(result.gradient["x"]) - grad) < 120 * U32 / 2
    # apex: q = x/y, q^2, sin x, product: 4 roundings forward, ~8 backward; the adjoint
    # multiplies an input error by at most |d/dx| ~ 4 (1/y, 2q, ...): 4 * 8 * u.
    result = gradient(example("apex.pal", 32), inputs={"x": 0.3, "y": 0.5})
    assert abs(float(result.gradient["x"]) - 1.053170) < 32 * U32 + 1e-6
    assert abs(float(result.gradient["y"]) - (-0.425549)) < 32 * U32 + 1e-6
    # x1 + x1*x2 at integers: exact at any width.
    result = gradient(example("x1_plus_x1x2.pal", 32), inputs={"x1": 5.0, "x2": 3.0})
    assert (result.loss, result.gradient) == (20, {"x1": 4, "x2": 5})


def test_umm_at_w32_within_the_q16_16_resolution():
    # Each ROT is three shears (3 roundings of u/2) plus the rounding of its sine and
    # half-angle tangent (<= 4 ulp, amplified by |x| <= 4): 6 rotations deep, ~ 6 * 20 u.
    rng = np.random.default_rng(7)
    x, theta = rng.uniform(-2, 2, 4), rng.uniform(-3, 3, 6)
    inputs = {f"x{i + 1}": x[i] for i in range(4)} | {f"t{i + 1}": theta[i] for i in range(6)}
    loss, g_x, g_t = umm_reference(x, theta)
    result = gradient(example("umm.pal", 32), inputs=inputs)
    assert abs(float(result.loss) - loss) < 120 * U32
    for i in range(4):
        assert abs(float(result.gradient[f"x{i + 1}"]) - g_x[i]) < 120 * U32
    for i in range(6):
        assert abs(float(result.gradient[f"t{i + 1}"]) - g_t[i]) < 120 * U32


# --- the protocol ------------------------------------------------------------------------

def test_backward_pass_restores_the_inputs_and_leaves_gradients_in_the_bank():
    result = gradient(example("apex.pal"), inputs={"x": 0.3, "y": 0.5}, engine="reference")
    (machine,) = result.machine.machines
    assert machine.get("x") == pytest.approx(0.3, abs=1e-9)
    assert machine.get("y") == 0.5
    assert machine.get("f") == 0  # uncomputed
    assert machine.fmt.to_fraction(machine.gradients[1]) == result.gradient["x"]


def test_gradient_pass_run_forward_again_restores_values_and_gradients_bit_exactly():
    image = example("bessel_j2.pal")
    machine = Machine(image)
    machine.set("x", 1.25)
    machine.run(1)
    at_finish = machine.snapshot()
    machine.gradient = True
    machine.gradients[2] = machine.fmt.one
    banks_at_finish = machine.bank_snapshot()
    machine.run(-1)
    assert machine.gradients[1] != 0
    machine.run(1)
    assert machine.snapshot() == at_finish
    assert machine.bank_snapshot() == banks_at_finish


def test_memory_inputs_get_their_gradient_from_the_memory_bank():
    source = """;; pendulum pal file
.input  x cell fixed = 1.5
.loss   y $3
        start
        addi   $1 cell
        exch   $2 $1          ; $2 = x, cell = 0
        addmul $3 $2 $2       ; y = x^2
        finish
cell:   data 0
"""
    result = gradient(assemble(source, width=64))
    assert result.loss == pytest.approx(2.25)
    assert result.gradient == {"x": 3}


def test_names_are_resolved_like_the_command_line():
    image = example("apex.pal")
    assert resolve(image, "$6").register == 6
    with pytest.raises(GradientError, match="not a register"):
        resolve(image, "$0")
    with pytest.raises(GradientError, match="declared: f, x, y"):
        resolve(image, "nope")
    with pytest.raises(GradientError, match="no .loss"):
        gradient(example("fib.pal"))


def test_loss_and_wrt_may_be_any_register():
    result = gradient(example("apex.pal"), loss="$3", wrt=["$1", "$2"],
                      inputs={"x": 0.3, "y": 0.5})  # d(x/y)/dx = 1/y = 2, d/dy = -x/y^2
    assert float(result.gradient["$1"]) == pytest.approx(2.0, abs=1e-8)
    assert float(result.gradient["$2"]) == pytest.approx(-1.2, abs=1e-8)


BACKWARD_ONLY_FAULT = """;; pendulum pal file
;; sqrt(x) is fine going forward at x = 0, but its derivative 1/(2 sqrt x) is not.
.input  x $1 fixed = 0.0
.loss   y $2
        start
        addsqrt $2 $1
        finish
"""


def test_a_fault_in_the_backward_pass_names_the_pass():
    with pytest.raises(MachineFault) as caught:
        gradient(assemble(BACKWARD_ONLY_FAULT, width=64))
    fault = caught.value
    assert fault.kind == "divide-by-zero"
    assert fault.run_pass == "backward (gradient)"
    assert fault.direction == -1 and fault.line == 6
    assert "in the backward (gradient) pass" in str(fault)
    assert "in gradient mode" in fault.message


def test_a_fault_in_the_forward_pass_names_the_pass():
    with pytest.raises(MachineFault) as caught:
        gradient(example("apex.pal"), inputs={"x": 0.3, "y": 0.0})
    assert caught.value.run_pass == "forward"
    assert caught.value.kind == "divide-by-zero"


TWO_FINISHES = """;; pendulum pal file
;; The forward run jumps over the first FINISH and halts at the second.
.input  x $1 fixed = 1.5
.loss   y $2
        start
from:   bra    over
        finish
over:   bra    from
        addmul $2 $1 $1       ; y = x^2
        finish
"""


def test_the_backward_pass_starts_at_the_finish_the_forward_pass_reached():
    image = assemble(TWO_FINISHES, width=64)
    assert image.finish == 2  # the image's FINISH is the first one
    result = gradient(image)
    assert result.loss == pytest.approx(2.25)
    assert result.gradient == {"x": 3}
    assert result.forward.steps == result.backward.steps == 5
