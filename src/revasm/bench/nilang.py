"""NiLang paper workloads on the vector simulator.

The sparse Frobenius dot product (NiLang's branch keeper) and the Petersen graph
embedding come from the compiler (``examples/nilang/``, inputs from
``examples/nilang/cases.py``); each is compiled at W = 32, run once on the reference
simulator and on a batch of lanes holding the same inputs, and timed.

The Givens network (N = 100, ``givens100.py``) and ADBench GMM (``gmm.py``) are
gradient workloads at W = 64 (inputs and float64 references in
``examples/nilang/workloads.py``): the reference machine's gradient protocol, the vector
machine's batched gradient, numpy float64 and JAX ``vmap(grad)`` when installed
(``gradient.py`` next to this file has the details).  They are full-size only (``--quick``
records them as skipped).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from .common import EXAMPLES as REPOSITORY_EXAMPLES
from .common import example_module, lanes_like, reference_lane

EXAMPLES = REPOSITORY_EXAMPLES / "nilang"
MEASURED = {"sparse_frobenius_dot": "sparse_dot", "petersen_embedding": "petersen"}
GRADIENT_WORKLOADS = ("givens_network_n100", "adbench_gmm")
WIDTH = 32


def _cases() -> dict:
    module = example_module(EXAMPLES / "cases.py", "nilang_cases")
    return {case.name: case for case in module.CASES}


def _measure(case: Any, lanes: int) -> dict:
    from revasm.compiler import compile_file
    from revasm.programs import load_inputs

    program = compile_file(case.path, case.entry, width=WIDTH)
    image = program.image
    loaded = reference_lane(image)
    load_inputs(program, loaded, case.inputs)
    warm = reference_lane(image)  # compile the reference's blocks outside the timing
    load_inputs(program, warm, case.inputs)
    warm.run(1)
    reference = reference_lane(image)
    load_inputs(program, reference, case.inputs)
    started = time.perf_counter()
    reference.run(1)
    reference_seconds = time.perf_counter() - started
    machine = lanes_like(loaded, lanes)
    started = time.perf_counter()
    machine.run(1)
    seconds = time.perf_counter() - started
    same = all(machine.snapshot(lane) == reference.snapshot(0) for lane in (0, lanes - 1))
    steps = int(reference.steps[0])
    return {
        "status": "measured", "width": WIDTH, "batch": lanes,
        "instructions_per_run": steps,
        "reference_instructions_per_s": steps / reference_seconds,
        "vector_lane_instructions_per_s": float(np.sum(machine.steps)) / seconds,
        "vector_seconds": seconds,
        "lanes_faulted": int(np.sum(machine.faulted)),
        "lanes_equal_reference": same,
    }


def run(quick: bool) -> dict:
    lanes = 100 if quick else 10_000
    workloads: dict = {}
    try:
        cases = _cases()
    except Exception as exc:  # the examples are optional outside a checkout
        for name in MEASURED:
            workloads[name] = {"status": "not available", "reason": f"examples/nilang: {exc}"}
        return {"status": "partial", "workloads": workloads}
    for name, case_name in MEASURED.items():
        try:
            workloads[name] = _measure(cases[case_name], lanes)
        except Exception as exc:  # one workload failing must not hide the others
            workloads[name] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    from .gradient_workloads import measure
    for name in GRADIENT_WORKLOADS:
        if quick:
            workloads[name] = {"status": "skipped",
                               "reason": "full size only (not measured with --quick)"}
            continue
        try:
            workloads[name] = measure(name, EXAMPLES)
        except Exception as exc:  # one workload failing must not hide the others
            workloads[name] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    done = all(w.get("status") == "measured" for w in workloads.values())
    return {"status": "measured" if done else "partial", "batch": lanes, "workloads": workloads}
