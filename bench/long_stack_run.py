"""A long run of compiled-style PAL on the compiled engine, its stack at the top of memory.

``programs.STACK_SUM_SOURCE``: SP starts at 0 and a recursive procedure saves its return
offsets on a downward stack (2^32 - 1 down), K times, SHOW after each call.  Full run: K =
62 500, depth 100 -- 101 250 006 instructions forward (``programs.stack_sum_steps``);
quick: K = 200 (324 006).  In a process of its own with an empty kernel cache, a time
budget and 6 GiB of address space (``common.run_child``): the kernel build (a run with
K = 1), the run to FINISH (its seconds, its steps against the formula, its output: one
word per call, checked word by word against the sums), then ``check``: a fresh machine run
forward and backward, which must restore its initial state exactly (``round_trips``, what
``revasm check`` runs).  The child prints the program's output as ``revasm run`` does, then
its numbers, with its peak resident memory (``ru_maxrss``).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time

from .common import child_outcome, child_python, run_child
from .programs import STACK_SUM_SOURCE, stack_sum_steps

FULL = {"k": 62_500, "depth": 100}
QUICK = {"k": 200, "depth": 100}


def run(quick: bool) -> dict:
    sizes = QUICK if quick else FULL
    budget = 900 if quick else 3600
    with tempfile.TemporaryDirectory(prefix="revasm-long-run-") as cache:
        done = run_child(child_python("long_stack_run", str(sizes["k"]), str(sizes["depth"])),
                         budget, env={"REVASM_CACHE_DIR": cache})
    row = child_outcome(done, budget, "building the kernel and running")
    if row["status"] == "measured":
        printed = [line for line in done["stdout"].splitlines() if not line.startswith("{")]
        row["lines_printed"] = len(printed)
    return {"program": "bench/programs.py STACK_SUM_SOURCE", "engine": "compiled", **sizes,
            "expected_steps": stack_sum_steps(sizes["k"], sizes["depth"]), "run": row,
            "targets": {"steps_at_least": 10**8, "checked": "forward then backward restores "
                                                           "the initial state exactly"}}


def child(arguments: list[str]) -> None:
    """In the child process: build, run, print the output, check; one JSON line last."""
    import resource

    from revasm.assembler import assemble
    from revasm.running import round_trips
    from revasm.sim.engines import load

    k, depth = (int(argument) for argument in arguments)
    image = assemble(STACK_SUM_SOURCE, "stack_sum.pal")

    def machine(calls: int):
        lanes = load(image, 1, engine_name="compiled", max_steps=None)
        lanes.set_bank_word("R", 20, calls)
        lanes.set_bank_word("R", 21, depth)
        return lanes

    started = time.perf_counter()
    machine(1).run(1)  # builds (and caches) the kernel
    build_s = time.perf_counter() - started
    running = machine(k)
    started = time.perf_counter()
    running.run(1)
    run_s = time.perf_counter() - started
    fault = running.fault(0)
    output = running.output(0)
    for word in output:  # as `revasm run` prints it
        sys.stdout.write(f"{word}\n")
    level = depth * (depth + 1) // 2
    started = time.perf_counter()
    (trip,) = round_trips(machine(k))
    check_s = time.perf_counter() - started
    steps = int(running.steps[0])
    print(json.dumps({
        "build_s": round(build_s, 3), "run_s": round(run_s, 6), "check_s": round(check_s, 6),
        "steps": steps, "steps_as_expected": steps == stack_sum_steps(k, depth),
        "instructions_per_s": round(steps / run_s), "fault": fault.kind if fault else None,
        "output_words": len(output),
        "output_as_expected": output == [level * (i + 1) for i in range(k)],
        "check": trip.status, "check_detail": trip.detail,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))
