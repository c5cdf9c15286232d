"""Bessel J2 gradients over a batch of x values: the vector simulator's gradient
protocol (examples/bessel_j2.pal, W = 64) next to numpy float64 evaluating the same
series forward, and JAX / PyTorch gradients when they are installed."""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from revasm.assembler import assemble_file
from revasm.sim.vector import VectorMachine
from revasm.sim.vector.batch_io import to_reals, to_words
from revasm.sim.vector.gradient import batch_gradient

TERMS = 16  # the program's k = 1..16 after the k = 0 term
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "bessel_j2.pal"


def series(x: np.ndarray) -> np.ndarray:
    """J2(x) = sum_k (-1)^k (x/2)^(2k+2) / (k! (k+2)!), k = 0..TERMS, in float64."""
    h2 = (x / 2) ** 2
    term = h2 / 2
    total = term.copy()
    for k in range(1, TERMS + 1):
        term = term * h2 / (-k * (k + 2))
        total += term
    return total


def series_derivative(x: np.ndarray) -> np.ndarray:
    """J2'(x) = (J1(x) - J3(x)) / 2 from the same series (checks the gradients)."""
    def j(nu: int) -> np.ndarray:
        return sum((-1) ** k * (x / 2) ** (2 * k + nu) / (math.factorial(k) *
                                                         math.factorial(k + nu))
                   for k in range(TERMS + 2))
    return (j(1) - j(3)) / 2


def _best(function, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def _framework(name: str, xs: np.ndarray) -> dict:
    try:
        if name == "jax":
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)
            grad = jax.jit(jax.vmap(jax.grad(lambda x: _series_generic(x, jnp))))
            values = jnp.asarray(xs)
            grad(values).block_until_ready()
            seconds = _best(lambda: grad(values).block_until_ready(), 3)
        else:
            import torch

            values = torch.tensor(xs, dtype=torch.float64, requires_grad=True)

            def step():
                values.grad = None
                _series_generic(values, torch).sum().backward()
            seconds = _best(step, 3)
    except ImportError:
        return {"status": "absent", "reason": f"{name} is not installed"}
    return {"status": "measured", "seconds": seconds, "per_gradient_s": seconds / len(xs)}


def _series_generic(x, lib):
    h2 = (x / 2) ** 2
    term = h2 / 2
    total = term
    for k in range(1, TERMS + 1):
        term = term * h2 / (-k * (k + 2))
        total = total + term
    return total


def run(quick: bool) -> dict:
    if not EXAMPLE.exists():
        return {"status": "not available", "reason": f"{EXAMPLE.name} not found next to the "
                                                      "package (run from a source checkout)"}
    batch = 1_000 if quick else 100_000
    image = assemble_file(EXAMPLE, width=64)
    xs = np.linspace(0.05, 3.0, batch)
    machine = VectorMachine(image, batch)
    machine.set_register(image.names["x"].register, to_words(xs, machine.fmt))
    started = time.perf_counter()
    result = batch_gradient(machine)
    seconds = time.perf_counter() - started
    forward = _best(lambda: series(xs), 5)
    grads = to_reals(result.gradient["x"], machine.fmt)
    loss = to_reals(result.loss, machine.fmt)
    per_gradient = seconds / batch
    per_forward = forward / batch
    return {
        "status": "measured",
        "batch": batch,
        "width": 64,
        "lanes_faulted": int(np.sum(~result.ok)),
        "vector_gradient_s": seconds,
        "numpy_float64_forward_s": forward,
        "timings": {"vector gradient (per x)": per_gradient,
                    "numpy forward (per x)": per_forward},
        "ratio_gradient_to_forward": per_gradient / per_forward,
        "max_abs_error_loss": float(np.max(np.abs(loss - series(xs)))),
        "max_abs_error_gradient": float(np.max(np.abs(grads - series_derivative(xs)))),
        "jax": _framework("jax", xs),
        "pytorch": _framework("torch", xs),
        "steps_per_pass": int(result.forward_steps[0]),
    }
