"""Helpers the benchmarks share: best-of timing, example modules, batches of one input."""
from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The repository's examples (benchmarks run from a source checkout, where this file is
#: src/revasm/bench/common.py).
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def best_seconds(function: Callable[[], Any], repeats: int) -> float:
    """The fastest of ``repeats`` wall-clock runs of ``function``."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def example_module(path: Path, name: str) -> Any:
    """A Python file of ``examples/`` (inputs, float64 references) imported as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file to import")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def lanes_like(loaded: Any, lanes: int, max_steps: int | None = None,
               engine: str = "vector") -> Any:
    """``lanes`` lanes of ``engine`` whose every lane holds the state of lane 0 of
    ``loaded`` (registers, and the memory words that differ from the image)."""
    from revasm.sim.engines import load

    image = loaded.image
    state = loaded.snapshot(0)
    machine = load(image, lanes, engine_name=engine, max_steps=max_steps)
    for register, word in enumerate(state.registers):
        if register and word:
            machine.set_bank_word("R", register, word)
    for address, word in enumerate(state.memory):
        if word and (address >= len(image) or not image.is_code[address]) and (
                address >= len(image) or word != image.words[address]):
            machine.set_bank_word("MEM", address, word)
    return machine


def reference_lane(image: Any) -> Any:
    """One lane of the reference engine on ``image`` (to load inputs through)."""
    from revasm.sim.engines import load

    return load(image, 1, engine_name="reference")


#: A child process of a benchmark (a kernel compile) may use at most this much memory:
#: compiling a large program's kernels has been seen to take 15 GB (numba's front end).
CHILD_MEMORY_BYTES = 6 << 30


def run_child(arguments: list[str], timeout: float, env: dict | None = None) -> dict:
    """Run ``arguments`` as a process of its own with a time and a memory budget.

    Returns the wall time from start to exit (``wall_s``), when it started (``time.time()``,
    ``started_at``: a child can report its own stamps against it), the exit code, the output
    and whether the budget ran out (``timed_out``: then ``wall_s`` is the budget).
    Budgets are for compiles that may take far longer than a benchmark should wait."""
    import os
    import subprocess

    # The cap is set by a shell that then becomes the command (no preexec_fn: forking a
    # process that runs threads -- numba's, JAX's -- and running Python in the child
    # before exec can deadlock).
    limited = ["/bin/sh", "-c", f'ulimit -v {CHILD_MEMORY_BYTES >> 10} && exec "$@"', "sh",
               *arguments]
    started, started_at = time.perf_counter(), time.time()
    child = subprocess.Popen(limited, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ, **(env or {})))
    try:
        out, err = child.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        timed_out = True
    return {"wall_s": time.perf_counter() - started, "started_at": started_at,
            "exit_code": child.returncode,
            "stdout": out, "stderr": err, "timed_out": timed_out}


def child_python(module: str, *arguments: str) -> list[str]:
    """The command that runs ``revasm.bench.MODULE.child(arguments)`` in a new interpreter."""
    return [sys.executable, "-c", f"import sys; from revasm.bench.{module} import child; "
            "child(sys.argv[1:])", *arguments]


def child_outcome(done: dict, budget: float, doing: str) -> dict:
    """A :func:`run_child` result as a row: ``status`` measured (with the last JSON line
    the child printed), budget exceeded (time or memory, while ``doing``) or failed."""
    import json

    row = {"wall_s": done["wall_s"]}
    if done["timed_out"]:
        return {**row, "status": "budget exceeded",
                "reason": f"not finished within {budget:.0f} s ({doing})"}
    if done["exit_code"] != 0:
        if "MemoryError" in done["stderr"] or "std::bad_alloc" in done["stderr"]:
            return {**row, "status": "budget exceeded",
                    "reason": f"needed more than {CHILD_MEMORY_BYTES >> 30} GiB of memory "
                              f"after {done['wall_s']:.0f} s ({doing})"}
        tail = (done["stderr"].strip().splitlines() or ["no output"])[-1]
        return {**row, "status": "failed", "reason": f"exit code {done['exit_code']}: {tail}"}
    lines = [line for line in done["stdout"].splitlines() if line.startswith("{")]
    return {**row, "status": "measured", **json.loads(lines[-1])}


def jax_gmm_loss(x: Any, constant: float) -> Callable[[Any, Any, Any], Any]:
    """The ADBench GMM objective (d = 2) in JAX, the baseline both ``nilang_workloads`` and
    ``nilang_compare`` time: of the points ``x`` (n x 2), a function of ``(alphas, means,
    icf)`` (``constant``: the workloads' ``gmm_constant()``)."""
    import jax
    import jax.numpy as jnp

    points = len(x)
    x = jnp.asarray(x)

    def loss(alphas: Any, means: Any, icf: Any) -> Any:
        qd = jnp.exp(icf[:, :2])
        centred = x[:, None, :] - means[None, :, :]
        y0 = qd[:, 0] * centred[:, :, 0]
        y1 = qd[:, 1] * centred[:, :, 1] + icf[:, 2] * centred[:, :, 0]
        main = alphas + icf[:, 0] + icf[:, 1] - 0.5 * (y0 ** 2 + y1 ** 2)
        prior = jnp.sum(0.5 * (jnp.sum(qd ** 2, axis=1) + icf[:, 2] ** 2))
        return (constant + jnp.sum(jax.scipy.special.logsumexp(main, axis=1))
                - points * jax.scipy.special.logsumexp(alphas) + prior)
    return loss
