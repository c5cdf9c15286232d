"""Gradient workloads of the NiLang paper at W = 64: the Givens network (N = 100) and
ADBench GMM (d = 2, K = 5, n = 1000), compiled from ``examples/nilang``.

For each: the reference machine's gradient protocol (one input, timed), the vector
machine's batched gradient (lanes holding the same input; the whole protocol, about
three minutes for GMM's 1.65e7 instructions per lane), numpy float64 (Givens: forward and
hand-written reverse pass over a batch; GMM: the forward objective) and JAX
``vmap(grad)`` when installed.
"""
from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from revasm.isa.fixed_point import word_format

from .common import best_seconds, example_module, jax_gmm_loss, lanes_like, reference_lane

if TYPE_CHECKING:
    from revasm.compiler.api import CompiledProgram

GIVENS_LANES = 1_000
GMM_LANES = 1_000


def _workloads(examples: Path) -> Any:
    return example_module(examples / "workloads.py", "nilang_workloads")


def _vector(program: CompiledProgram, inputs: dict, lanes: int, max_steps: int | None) -> Any:
    """A vector machine loaded with ``inputs`` in every lane (through a reference load)."""
    from revasm.programs import load_inputs

    loaded = reference_lane(program.image)
    load_inputs(program, loaded, inputs)
    return lanes_like(loaded, lanes, max_steps)


def _jax(name: str, w: Any, inputs: dict, lanes: int) -> dict:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {"status": "absent", "reason": "jax is not installed"}
    jax.config.update("jax_enable_x64", True)
    if name == "givens_network_n100":
        pairs = jnp.asarray(w._givens_pairs(w.GIVENS_N))

        def loss(x, theta, weights):
            def body(k, v):
                i = pairs[k]
                c, s = jnp.cos(theta[k]), jnp.sin(theta[k])
                a, b = v[i], v[i + 1]
                return v.at[i].set(a * c - b * s).at[i + 1].set(a * s + b * c)
            return jnp.dot(weights, jax.lax.fori_loop(0, len(pairs), body, x))

        args = [jnp.asarray(np.tile(np.asarray(inputs[k], dtype=float), (lanes, 1)))
                for k in ("x", "theta", "w")]
        function = jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1))))
    else:
        loss = jax_gmm_loss(inputs["x"], w.gmm_constant())
        args = [jnp.asarray(np.asarray(inputs[k], dtype=float)) for k in ("alphas", "means", "icf")]
        lanes = 1
        function = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    jax.block_until_ready(function(*args))
    seconds = best_seconds(lambda: jax.block_until_ready(function(*args)), 3)
    return {"status": "measured", "seconds": seconds, "batch": lanes,
            "per_gradient_s": seconds / lanes}


def measure(name: str, examples: Path) -> dict:
    from revasm.compiler import compile_file
    from revasm.programs import load_inputs
    from revasm.sim.host import batch_gradient, gradient

    w = _workloads(examples)
    if name == "givens_network_n100":
        path, entry, inputs, lanes = "givens100.py", "givens_loss", w.givens_inputs(), GIVENS_LANES
    else:
        path, entry, inputs, lanes = "gmm.py", "gmm", w.gmm_inputs(), GMM_LANES
    inputs = dict(inputs, out=0.0)
    program = compile_file(examples / path, entry, width=64)
    started = time.perf_counter()
    exact = gradient(program.image, prepare=lambda m: load_inputs(program, m, inputs))
    reference_s = time.perf_counter() - started
    steps = exact.forward.steps + exact.backward.steps
    out: dict = {"status": "measured", "width": 64, "program": f"examples/nilang/{path}:{entry}",
                 "instructions_per_gradient": steps,
                 "reference_gradient_s": reference_s,
                 "reference_instructions_per_s": steps / reference_s,
                 "loss": float(exact.loss)}
    machine = _vector(program, inputs, lanes, None)
    started = time.perf_counter()
    result = batch_gradient(machine)
    seconds = time.perf_counter() - started
    fmt = word_format(program.image.width)
    names = list(exact.gradient)
    checked = names[:3] + names[-3:]
    same = all(Fraction(fmt.signed(int(result.gradient[k][lane])), 1 << fmt.frac_bits)
               == exact.gradient[k] for k in checked for lane in (0, lanes - 1))
    out["vector"] = {"batch": lanes, "seconds": seconds, "per_gradient_s": seconds / lanes,
                     "lane_instructions_per_s": steps * lanes / seconds,
                     "lanes_faulted": int(np.sum(~result.ok)),
                     "lanes_equal_reference": same,
                     "checked_gradients": checked}
    if name == "givens_network_n100":
        batch = {k: np.tile(np.asarray(inputs[k], dtype=float)[:, None], (1, lanes))
                 for k in ("x", "theta", "w")}
        numpy_s = best_seconds(lambda: w.givens_loss(batch["x"], batch["theta"], batch["w"]), 2)
        out["numpy_float64"] = {"what": "forward and hand-written reverse pass, batched",
                                "batch": lanes, "seconds": numpy_s,
                                "per_gradient_s": numpy_s / lanes}
    else:
        numpy_s = best_seconds(lambda: w.gmm_objective(inputs["alphas"], inputs["means"],
                                                inputs["icf"], inputs["x"]), 5)
        out["numpy_float64"] = {"what": "forward objective only", "seconds": numpy_s}
    out["jax"] = _jax(name, w, inputs, lanes)
    return out
