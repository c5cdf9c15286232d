"""The RTL lockstep campaign: random programs on the Amaranth and the Verilator paths, in
value mode and in gradient mode, every retired instruction against the reference.

    python bench/rtl_lockstep.py [--programs 200] [--widths 32 64]
                                 [--paths amaranth verilator] [--seed 0] [--quick]
                                 [--results DIR]

Each program (``tests/support/program_generators.py``'s structured generator: loops, diamonds,
procedure calls and uncalls, every data instruction) runs as three jobs
(``tests/support/rtl_programs.py``): value mode forward and backward; the host's gradient protocol
(forward in value mode, G[loss] = 1, backward with the gradient switch on); and gradient
mode both ways.  After every retired instruction the lockstep compares PC, BR, the
written register and memory word, the gradient words, cycles; after each run every
register, G register and memory word.  The same programs run on both paths.  The result
(``bench/results/rtl_lockstep.json``; ``--quick``: 8 programs per width, into
``rtl_lockstep.quick.json``) counts runs by job kind, direction and outcome, lists every
divergence, and gives each path's time; the exit status is 1 if any run diverged.
Needs the repository's tests folder (the generators), hypothesis, amaranth and (for the
Verilator path) the ``verilator`` package.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from revasm.isa.fixed_point import WIDTHS

HERE = Path(__file__).resolve().parent
#: The source checkout the campaign runs from (HERE is its src/revasm/bench), its test
#: suite (the program generators) and its results folder.
REPOSITORY = HERE.parents[2]
#: The test suite's shared helpers (the program generators), imported by their bare names.
TEST_SUPPORT = REPOSITORY / "tests" / "support"
RESULTS = REPOSITORY / "bench" / "results"
NAME = "rtl_lockstep"
#: Programs per lockstep call (a progress line each; one simulator for all of them)
CHUNK = 25
MAX_STEPS = 20_000


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                              text=True, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def run_path(path: str, width: int, cases: list, log: Callable[[str], None]) -> dict:
    """Every job of ``cases`` on one path at one width: the outcome counts."""
    import rtl_programs

    from revasm.rtl.verification.cosim import Lockstep

    if path == "amaranth":  # the host clears GM one word per cycle: a small memory
        engine = Lockstep(rtl_programs.params(width, 512), max_steps=MAX_STEPS)
    else:
        from revasm.rtl.verification.verilator import VerilatorLockstep
        engine = VerilatorLockstep(rtl_programs.params(width), max_steps=MAX_STEPS)
        started = time.perf_counter()
        engine.prepare()
        log(f"{path} W={width}: harness ready in {time.perf_counter() - started:.1f} s")
    outcomes: Counter = Counter()
    problems: list[str] = []
    steps = cycles = 0
    started = time.perf_counter()
    for first in range(0, len(cases), CHUNK):
        jobs = [job for i, case in enumerate(cases[first:first + CHUNK], start=first)
                for job in rtl_programs.jobs(case, f"#{i}")]
        results = engine.run(jobs, stop_on_divergence=False)
        if len(results) != len(jobs):
            problems.append(f"{len(jobs) - len(results)} jobs of programs {first}.. not run")
        problems += rtl_programs.problems(results)
        for result in results:
            kind = result.job.name.split()[-1]
            for run in result.runs:
                outcomes[f"{kind} {'forward' if run.direction > 0 else 'backward'} "
                         f"{run.status}"] += 1
                steps += run.steps
                cycles += run.cycles
        log(f"{path} W={width}: {min(first + CHUNK, len(cases))}/{len(cases)} programs, "
            f"{len(problems)} problems, {time.perf_counter() - started:.0f} s")
    seconds = time.perf_counter() - started
    return {"path": path, "width": width, "programs": len(cases),
            "jobs": 3 * len(cases), "runs": sum(outcomes.values()),
            "outcomes": dict(sorted(outcomes.items())), "problems": len(problems),
            "first_problems": problems[:20], "steps": steps, "cycles": cycles,
            "seconds": round(seconds, 1),
            "cycles_per_second": round(cycles / seconds) if seconds else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200, help="programs per width")
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), choices=WIDTHS)
    parser.add_argument("--paths", nargs="+", default=["amaranth", "verilator"],
                        choices=("amaranth", "verilator"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="8 programs per width; writes rtl_lockstep.quick.json")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="where rtl_lockstep.json goes (default: bench/results)")
    args = parser.parse_args(argv)
    programs = 8 if args.quick else args.programs
    sys.path.insert(0, str(TEST_SUPPORT))
    sys.path.insert(0, str(REPOSITORY / "src"))
    from program_generators import examples, structured_programs

    from revasm.assembler.files import write_atomic
    from revasm.bench import result_path

    out = result_path(args.results, NAME, args.quick)
    commit = _commit()  # the code the campaign runs (a commit made meanwhile is not)
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:7.0f} s] {line}", flush=True)

    rows = []
    for width in args.widths:
        cases = examples(structured_programs(width), programs, seed=args.seed * 1009 + width)
        log(f"W={width}: {len(cases)} distinct programs drawn")
        for path in args.paths:
            rows.append(run_path(path, width, cases, log))
    result = {
        "benchmark": NAME, "quick": args.quick, "commit": commit, "seed": args.seed,
        "programs_per_width": programs, "widths": args.widths, "paths": args.paths,
        "job_kinds": ["value", "gradient", "gradient-both"], "max_steps": MAX_STEPS,
        "problems": sum(row["problems"] for row in rows), "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "system": platform.system(), "cpus": os.cpu_count()},
    }
    args.results.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['path']:9} W={row['width']}: {row['programs']} programs, {row['runs']} "
              f"runs, {row['problems']} problems, {row['seconds']} s "
              f"({row['cycles_per_second']} cycles/s)")
    print(f"-> {out}")
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
