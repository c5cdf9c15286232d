"""A long run of compiled-style PAL on the compiled engine, its stack at the top of memory.

``programs.STACK_SUM_SOURCE``: SP starts at 0 and a recursive procedure saves its return
offsets on a downward stack (2^32 - 1 down), K times, SHOW after each call.  Full run: K =
62 500, depth 100 -- 101 250 006 instructions forward (``programs.stack_sum_steps``);
quick: K = 200 (324 006).  In a process of its own with an empty kernel cache, a time
budget and 6 GiB of address space (``common.run_child``): the kernel build (a run with
K = 1), the run to FINISH without a listener (its seconds, its steps against the formula,
its output: one word per call, checked word by word against the sums; then printed, as
``revasm run`` printed them after the run) and the same run with its output as it runs
(``on_output``: each word printed on a line and flushed, as ``revasm run`` prints it -- to
stdout the first time, then to os.devnull; the time to the first word and the longest wait
for one), each repeated (3 times, quick 5), interleaved, the best time of each kept (the
machine is shared and noisy), then ``check``: a fresh machine run forward and backward,
which must restore its initial state exactly
(``round_trips``, what ``revasm check`` runs); its numbers as one JSON line, with its peak
resident memory (``ru_maxrss``).  Then ``revasm run`` itself on the program (the kernel
cached), read through a pipe line by line: when the first output line came after the
process started and the longest gap between two output lines.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from typing import TextIO

from .common import child_outcome, child_python, run_child
from .programs import STACK_SUM_SOURCE, stack_sum_steps

FULL = {"k": 62_500, "depth": 100, "repeats": 3}
QUICK = {"k": 200, "depth": 100, "repeats": 5}


#: The longest a printed output line may wait (``sim/engine.py`` LIVE_OUTPUT_SECONDS, with
#: room for printing and the scheduler of a shared machine): a target, recorded.
LIVE_GAP_TARGET_S = 0.2


def run(quick: bool) -> dict:
    sizes = QUICK if quick else FULL
    budget = 900 if quick else 3600
    with tempfile.TemporaryDirectory(prefix="revasm-long-run-") as cache:
        done = run_child(child_python("long_stack_run", str(sizes["k"]), str(sizes["depth"]),
                                      str(sizes["repeats"])),
                         budget, env={"REVASM_CACHE_DIR": cache})
        row = child_outcome(done, budget, "building the kernel and running")
        command_line = (command_line_run(sizes, cache, budget) if row["status"] == "measured"
                        else {"status": "skipped", "reason": "the run in the child failed"})
    if row["status"] == "measured":
        printed = [line for line in done["stdout"].splitlines() if not line.startswith("{")]
        row["lines_printed"] = len(printed)
    return {"program": "bench/programs.py STACK_SUM_SOURCE", "engine": "compiled", **sizes,
            "expected_steps": stack_sum_steps(sizes["k"], sizes["depth"]), "run": row,
            "revasm_run": command_line,
            "targets": {"steps_at_least": 10**8, "checked": "forward then backward restores "
                                                           "the initial state exactly",
                        "longest_wait_for_an_output_line_s": LIVE_GAP_TARGET_S}}


def command_line_run(sizes: dict, cache: str, budget: float) -> dict:
    """``revasm run`` on the program, its kernel in ``cache``: each output line's arrival
    through a pipe, timed from the start of the process."""
    import os
    import subprocess
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="revasm-long-run-") as folder:
        source = Path(folder) / "stack_sum.pal"
        source.write_text(STACK_SUM_SOURCE)
        command = [sys.executable, "-m", "revasm", "run", str(source), "--engine", "compiled",
                   "--set", f"k={sizes['k']}", "--set", f"depth={sizes['depth']}",
                   "--max-steps", str(2 * stack_sum_steps(sizes["k"], sizes["depth"]))]
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=dict(os.environ, REVASM_CACHE_DIR=cache))
        arrivals = []
        summary = None
        for line in process.stdout:  # type: ignore[union-attr]
            if time.perf_counter() - started > budget:
                process.kill()
                break
            if summary is None and line.strip().lstrip("-").isdigit():
                arrivals.append(time.perf_counter() - started)
            elif summary is None:
                summary = line.strip()
        process.wait()
        wall_s = time.perf_counter() - started
    if process.returncode != 0 or not arrivals:
        return {"status": "failed", "reason": f"exit code {process.returncode}, "
                                              f"{len(arrivals)} output lines"}
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:])]
    return {"status": "measured", "command": "revasm run stack_sum.pal --engine compiled "
                                             "--set k=K --set depth=DEPTH --max-steps N",
            "wall_s": round(wall_s, 3), "output_lines": len(arrivals),
            "first_line_s": round(arrivals[0], 4),
            "largest_gap_between_lines_s": round(max(gaps, default=0.0), 4),
            "last_line_to_exit_s": round(wall_s - arrivals[-1], 4), "summary": summary}


def child(arguments: list[str]) -> None:
    """In the child process: build, run, print the output, check; one JSON line last."""
    import os
    import resource

    from revasm.assembler import assemble
    from revasm.running import round_trips
    from revasm.sim.engine import Lanes
    from revasm.sim.engines import load

    k, depth, repeats = (int(argument) for argument in arguments)
    image = assemble(STACK_SUM_SOURCE, "stack_sum.pal")

    def machine(calls: int) -> Lanes:
        lanes = load(image, 1, engine_name="compiled", max_steps=None)
        lanes.set_bank_word("R", 20, calls)
        lanes.set_bank_word("R", 21, depth)
        return lanes

    started = time.perf_counter()
    machine(1).run(1)  # builds (and caches) the kernel
    build_s = time.perf_counter() - started
    plain_s, printed_s, live_s, firsts, waits, calls = [], [], [], [], [], []
    with open(os.devnull, "w") as devnull:

        def print_words(sink: TextIO, words: list[int]) -> None:  # as `revasm run` prints them
            sink.write("".join(f"{word}\n" for word in words))
            sink.flush()

        for repeat in range(repeats):  # interleaved, best of each: a shared machine is noisy
            running = machine(k)
            started = time.perf_counter()
            running.run(1)
            plain_s.append(time.perf_counter() - started)
            print_words(devnull, running.output(0))  # output at the end, as before
            printed_s.append(time.perf_counter() - started)
            arrivals: list[float] = []
            sink = sys.stdout if repeat == 0 else devnull  # the words printed once

            def print_live(_lane: int, words: list[int], sink: TextIO = sink,
                           arrivals: list[float] = arrivals) -> None:
                print_words(sink, words)
                arrivals.append(time.perf_counter())

            live = machine(k)
            started = time.perf_counter()
            live.run(1, on_output=print_live)
            ended = time.perf_counter()
            live_s.append(ended - started)
            calls.append(len(arrivals))
            firsts.append(arrivals[0] - started if arrivals else None)
            waits.append(max(later - earlier for earlier, later
                             in zip([started, *arrivals], [*arrivals, ended])))
    fault = running.fault(0)
    output = running.output(0)
    steps = int(running.steps[0])
    run_s = min(plain_s)
    level = depth * (depth + 1) // 2
    started = time.perf_counter()
    (trip,) = round_trips(machine(k))
    check_s = time.perf_counter() - started
    print(json.dumps({
        "build_s": round(build_s, 3), "run_s": round(run_s, 6), "check_s": round(check_s, 6),
        "steps": steps, "steps_as_expected": steps == stack_sum_steps(k, depth),
        "instructions_per_s": round(steps / run_s), "fault": fault.kind if fault else None,
        "repeats": repeats, "run_s_each": [round(t, 6) for t in plain_s],
        "live_run_s": round(min(live_s), 6), "live_run_s_each": [round(t, 6) for t in live_s],
        "live_instructions_per_s": round(steps / min(live_s)),
        "run_and_print_s": round(min(printed_s), 6),
        "live_over_plain": round(min(live_s) / min(printed_s), 3), "live_listener_calls": calls,
        "live_first_output_s": [round(t, 6) if t is not None else None for t in firsts],
        "live_longest_wait_s": [round(t, 6) for t in waits],
        "live_output_equal": live.output(0) == output and int(live.steps[0]) == steps,
        "output_words": len(output),
        "output_as_expected": output == [level * (i + 1) for i in range(k)],
        "check": trip.status, "check_detail": trip.detail,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))
