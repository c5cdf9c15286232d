"""The compiled engine's first run and cached run, each in a fresh process.

    revasm bench compile_time [--quick]

For each program, two processes run the same job on the compiled engine with one new,
empty kernel cache (``REVASM_CACHE_DIR``): the first compiles the kernels and stores
them, the second (a process of its own, so nothing is held in memory) loads them from
the cache.  Each records the wall time of the whole process (interpreter start, imports,
assembling or compiling the source, kernels, the run) and, inside the process, the time
from the engine's load to the end of the run.  A full run adds the largest example
program (examples/bessel_j2.pal, the gradient protocol) and the largest NiLang program
(examples/nilang/givens100.py), whose first compile has a time and memory budget
(``common.run_child``): a compile that does not finish within it is recorded as such.
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from .common import EXAMPLES, child_outcome, child_python, run_child

#: name -> (source, entry function or "", job): "run" (forward to FINISH) or "gradient"
#: (the host protocol: forward, G[loss] = 1, backward).
PROGRAMS = {
    "fib.pal": ("fib.pal", "", "run"),
    "bessel_j2.pal": ("bessel_j2.pal", "", "gradient"),
    "nilang/givens100.py": ("nilang/givens100.py", "givens_loss", "gradient"),
}
QUICK = ("fib.pal",)
#: Seconds a first run may take (kernels compiling) before it is stopped.
BUDGET_S = 300
#: --quick compiles small programs only: its budget is a safety net, generous for a loaded
#: machine (a 52-instruction program took over 120 s at load average 20).
QUICK_BUDGET_S = 900


def child(arguments: list[str]) -> None:
    """In the child: the job on the compiled engine; one JSON line of timings."""
    entered_at = time.time()
    from revasm.sim.engines import engine
    from revasm.sim.host import batch_gradient

    path, entry, job = arguments
    imported = time.perf_counter()
    if entry:
        from revasm.compiler import compile_file
        from revasm.programs import load_inputs

        program = compile_file(path, entry, width=64, for_gradient=True)
        image = program.image
        inputs = _nilang_inputs(path)
    else:
        from revasm.assembler import assemble_file

        image = assemble_file(path, width=32)  # as recorded; bessel_j2.pal says .width 64
    assembled = time.perf_counter()
    if entry:
        from .common import lanes_like, reference_lane

        loaded = reference_lane(image)
        load_inputs(program, loaded, inputs)
        machine = lanes_like(loaded, 1, engine="compiled")
    else:
        machine = engine("compiled").load(image, 1)
    if job == "gradient":
        batch_gradient(machine)
    else:
        machine.run(1)
    ran = time.perf_counter()
    print(json.dumps({"entered_at": entered_at, "assemble_s": assembled - imported,
                      "kernels_and_run_s": ran - assembled, "steps": int(machine.steps[0]),
                      "halted": bool(machine.halted[0])}), flush=True)


def _nilang_inputs(path: str) -> dict:
    from .common import example_module

    workloads = example_module(Path(path).parent / "workloads.py", "nilang_workloads")
    return dict(workloads.givens_inputs(), out=0.0)


def _process(arguments: list[str], cache: str, budget: float) -> dict:
    done = run_child(arguments, budget, env={"REVASM_CACHE_DIR": cache})
    row = child_outcome(done, budget, "the kernels were compiling")
    if row["status"] == "measured":
        row["startup_s"] = row.pop("entered_at") - done["started_at"]
    return row


def measure(name: str, budget: float) -> dict:
    source, entry, job = PROGRAMS[name]
    arguments = child_python("compile_time", str(EXAMPLES / source), entry, job)
    with tempfile.TemporaryDirectory(prefix="revasm-compile-time-") as cache:
        first = _process(arguments, cache, budget)
        if first["status"] != "measured":
            return {"status": first["status"], "job": job, "first": first,
                    "reason": first["reason"]}
        cached = _process(arguments, cache, budget)
    out = {"status": cached["status"], "job": job, "first": first, "cached": cached,
           "first_wall_s": first["wall_s"], "cached_wall_s": cached["wall_s"]}
    if cached["status"] == "measured":
        out["ratio_first_to_cached"] = first["wall_s"] / cached["wall_s"]
    return out


def run(quick: bool) -> dict:
    from revasm.sim.engines import available

    if "compiled" not in available():
        return {"status": "not available", "reason": "the compiled engine cannot run here"}
    names = QUICK if quick else tuple(PROGRAMS)
    budget = QUICK_BUDGET_S if quick else BUDGET_S
    programs = {name: measure(name, budget) for name in names}
    done = all(p["status"] == "measured" for p in programs.values())
    return {"status": "measured" if done else "partial", "engine": "compiled",
            "budget_s": budget, "programs": programs}
