"""The NiLang paper's benchmark workloads that have programs here (examples/nilang/
givens100.py, gmm.py): loss and gradient from the machine (W = 64, compiled, the
gradient protocol) against float64 references (examples/nilang/workloads.py), and the
vector simulator's batched gradient against the reference machine's, bit for bit."""
from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from revasm.programs import grad_program as grad

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "nilang"


def _workloads():
    spec = importlib.util.spec_from_file_location("nilang_workloads", EXAMPLES / "workloads.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("nilang_workloads", module)
    spec.loader.exec_module(module)
    return module


W = _workloads()


def _close(got, expected, tolerance: float) -> float:
    error = float(np.max(np.abs(np.asarray(got, dtype=float) - np.asarray(expected, dtype=float))))
    assert error <= tolerance, (error, tolerance)
    return error


def test_givens_network_value_and_gradient_match_float64():
    """4950 rotations of Q32.32 words: each shear rounds once (~1e-10), so the value and
    gradients stay within 1e-6 of float64 (the reference's reverse mode by hand)."""
    inputs = W.givens_inputs()
    result = grad(f"{EXAMPLES / 'givens100.py'}:givens_loss", dict(inputs, out=0.0),
                  wrt=["x", "theta"], width=64)
    value, gradient = W.givens_loss(inputs["x"], inputs["theta"], inputs["w"])
    _close(result.loss, value, 1e-6)
    _close(result.gradient["x"], gradient["x"], 1e-6)
    _close(result.gradient["theta"], gradient["theta"], 1e-6)


def test_gmm_objective_and_gradient_match_float64():
    """ADBench GMM (d = 2, K = 5, n = 1000): ~10^5 rounded Q32.32 operations and 10^4
    exp/log; the float64 gradient is central differences (rounding noise ~1e-6 at
    |f| ~ 3e3, h = 1e-6), so gradients agree to 5e-6 where they are up to ~140."""
    inputs = W.gmm_inputs()
    result = grad(f"{EXAMPLES / 'gmm.py'}:gmm", dict(inputs, out=0.0),
                  wrt=["alphas", "means", "icf"], width=64)
    _close(result.loss, W.gmm_objective(**inputs), 1e-6)
    reference = W.gmm_gradient(**inputs)
    for name in ("alphas", "means", "icf"):
        _close(result.gradient[name], reference[name], 5e-6)


def test_gmm_constant_is_the_programs_constant():
    text = (EXAMPLES / "gmm.py").read_text()
    assert f"CONSTANT = {W.gmm_constant()!r}" in text


@pytest.mark.slow
def test_vector_gradient_of_the_givens_network_equals_the_reference_bit_for_bit():
    from revasm.compiler import compile_file
    from revasm.programs import load_inputs
    from revasm.sim.engines import load
    from revasm.sim.host import batch_gradient, gradient

    program = compile_file(EXAMPLES / "givens100.py", "givens_loss", width=64)
    lanes = [W.givens_inputs(seed) for seed in (1, 2)]
    loaded = []
    for inputs in lanes:
        machine = load(program.image, 1, engine_name="reference")
        load_inputs(program, machine, dict(inputs, out=0.0))
        loaded.append(machine.snapshot(0))
    vector = load(program.image, len(lanes), engine_name="vector")
    for register in range(1, 32):
        vector.set_bank_word("R", register, [m.registers[register] for m in loaded])
    touched = [a for a in range(len(loaded[0].memory))
               if any(m.memory[a] for m in loaded)
               and (a >= len(program.image) or not program.image.is_code[a])]
    for address in touched:
        vector.set_bank_word("MEM", address, [m.memory[address] for m in loaded])
    result = batch_gradient(vector)
    fmt = vector.fmt

    def exact(word) -> Fraction:
        return Fraction(fmt.signed(int(word)), 1 << fmt.frac_bits)

    names = list(result.gradient)
    assert len(names) == 5150 and bool(np.all(result.ok))  # x, theta, w
    for lane, inputs in enumerate(lanes):
        expected = gradient(program.image, wrt=names, prepare=lambda m, i=inputs: load_inputs(
            program, m, dict(i, out=0.0)))
        assert exact(result.loss[lane]) == expected.loss
        for name in names:
            assert exact(result.gradient[name][lane]) == expected.gradient[name], name


@pytest.mark.parametrize("seed", [5, 6])
def test_bundle_adjustment_jacobian_matches_float64(seed):
    """ADBench BA, one observation: the two rows of the 2 x 15 Jacobian are the gradients of
    ba_x and ba_y (Q32.32: a few hundred rounded operations, sqrt, sin, cos and three
    quotients), within 1e-6 of float64 central differences; the residual itself too."""
    observation = W.ba_inputs(1, seed)[0]
    reference = W.ba_jacobian(observation)
    residual = W.ba_reproj(**observation)
    for row, entry in enumerate(("ba_x", "ba_y")):
        result = grad(f"{EXAMPLES / 'ba.py'}:{entry}", dict(observation, out=0.0),
                      wrt=list(W.BA_PARAMS), width=64)
        _close(result.loss, residual[row], 1e-7)
        got = np.concatenate([np.atleast_1d(result.gradient[p]) for p in W.BA_PARAMS])
        assert got.shape == (15,)
        _close(got, reference[row], 1e-6)
