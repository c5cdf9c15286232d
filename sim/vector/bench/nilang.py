"""NiLang paper workloads on the vector simulator.

The sparse Frobenius dot product (NiLang's branch keeper) and the Petersen graph
embedding come from the compiler (``examples/nilang/``, inputs from
``examples/nilang/cases.py``); each is compiled at W = 32, run once on the reference
simulator and on a batch of lanes holding the same inputs, and timed.  The Givens
network (N = 100) and ADBench GMM have no program yet: recorded as "not yet".
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

from revasm.sim.reference import Machine
from revasm.sim.vector import VectorMachine

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "nilang"
MEASURED = {"sparse_frobenius_dot": "sparse_dot", "petersen_embedding": "petersen"}
NOT_YET = {"givens_network_n100": "no Givens-network program in examples/nilang yet",
           "adbench_gmm": "no GMM program in examples/nilang yet"}
WIDTH = 32


def _cases() -> dict:
    spec = importlib.util.spec_from_file_location("nilang_cases", EXAMPLES / "cases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("nilang_cases", module)
    spec.loader.exec_module(module)
    return {case.name: case for case in module.CASES}


def _measure(case, lanes: int) -> dict:
    from revasm.compiler import compile_file
    from revasm.compiler.api import load_inputs

    program = compile_file(case.path, case.entry, width=WIDTH)
    image = program.image
    loaded = Machine(image)
    load_inputs(program, loaded, case.inputs)
    warm = Machine(image)  # compile the reference's blocks outside the timing
    load_inputs(program, warm, case.inputs)
    warm.run(1)
    reference = Machine(image)
    load_inputs(program, reference, case.inputs)
    started = time.perf_counter()
    reference.run(1)
    reference_seconds = time.perf_counter() - started
    machine = VectorMachine(image, lanes)
    for register, word in enumerate(loaded.registers):
        if register and word:
            machine.set_register(register, word)
    for address, word in enumerate(loaded.memory):
        if word and (address >= len(image) or not image.is_code[address]) and (
                address >= len(image) or word != image.words[address]):
            machine.set_memory(address, word)
    started = time.perf_counter()
    machine.run(1)
    seconds = time.perf_counter() - started
    same = all(machine.snapshot(lane) == reference.snapshot() for lane in (0, lanes - 1))
    return {
        "status": "measured", "width": WIDTH, "batch": lanes,
        "instructions_per_run": reference.steps,
        "reference_instructions_per_s": reference.steps / reference_seconds,
        "vector_lane_instructions_per_s": float(np.sum(machine.steps)) / seconds,
        "vector_seconds": seconds,
        "lanes_faulted": int(np.sum(machine.faulted)),
        "lanes_equal_reference": same,
    }


def run(quick: bool) -> dict:
    lanes = 100 if quick else 10_000
    workloads: dict = {name: {"status": "not yet", "reason": why} for name, why in NOT_YET.items()}
    try:
        cases = _cases()
    except Exception as exc:  # noqa: BLE001 - the examples are optional outside a checkout
        for name in MEASURED:
            workloads[name] = {"status": "not available", "reason": f"examples/nilang: {exc}"}
        return {"status": "partial", "workloads": workloads}
    for name, case_name in MEASURED.items():
        try:
            workloads[name] = _measure(cases[case_name], lanes)
        except Exception as exc:  # noqa: BLE001 - one workload failing must not hide the others
            workloads[name] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    return {"status": "partial", "batch": lanes, "workloads": workloads,
            "reason": "Givens network N = 100 and ADBench GMM: not yet (no programs)"}
