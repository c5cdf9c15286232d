"""How well ``auto`` chooses an engine (``revasm bench engine_choice [--quick]``).

A grid of jobs -- a loop program of about 30 to 10^6 steps per lane, run on 1 to 10^6
lanes (value mode, W = 64) -- each run from a fresh process's start to its result on every
engine and on ``auto``; per grid point, auto's time over the best engine's (the issue's
target: within 1.3x everywhere).  Wall times include each process's start-up (imports,
numba's and the kernels' loading): that is what a user waits for, and what ``auto`` must
weigh against a job's work.

Bounds: a job's lane-steps at most :data:`MAX_WORK` (--quick: :data:`QUICK_WORK`), and
each child at most ``budget`` seconds -- an engine over it counts as the budget (it is not
the best there).  A job under :data:`REPEAT_BELOW` seconds runs up to :data:`REPEATS`
times, its best time counting (start-up noise).  Engines: the reference, vector and tile
engines; not the compiled engine, whose per-program kernel a program never seen before
would first compile for minutes (``auto`` picks it only when that kernel is cached, which
this grid's fresh programs never are).  Before auto runs a program, one run of it on the
tile engine records its steps per lane, as a user's earlier run would (``auto``'s cost
model reads them).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import run_child

#: The grid: steps per lane (about) and lanes.
STEPS = (30, 1_000, 10_000, 100_000, 1_000_000)
LANES = (1, 100, 10_000, 1_000_000)
QUICK_STEPS = (30, 1_000, 10_000)
QUICK_LANES = (1, 100, 10_000)
#: Lane-steps of the largest job run (full and --quick).
MAX_WORK = 10**10
QUICK_WORK = 10**8
ENGINES = ("reference", "vector", "tile")


def program(steps: int) -> str:
    """A W = 64 loop of about ``steps`` steps per lane: ten data instructions a trip."""
    trips = max(1, (steps - 6) // 12)
    return "\n".join([
        ";; pendulum pal file",
        ".width 64",
        ".input  x $1 fixed = 0.5",
        ".output y $2",
        "        start",
        f"        li     $16 {trips}",
        "top:    bne    $15 $0 bottom",
        "        add    $3 $1",
        "        addmul $4 $3 $1",
        "        add    $2 $4",
        "        addmul $5 $4 $3",
        "        sub    $2 $5",
        "        subi   $3 1",
        "        add    $6 $3",
        "        sub    $6 $3",
        "        addi   $7 1",
        "        subi   $7 1",
        "        addi   $15 1",
        "bottom: bne    $15 $16 top",
        "        finish", ""])


def child(arguments: list[str]) -> None:
    """In a fresh process: load the program, run ``lanes`` lanes on the engine, report."""
    import numpy as np

    from revasm.assembler import assemble
    from revasm.sim.engines import choose

    path, name, lanes = arguments[0], arguments[1], int(arguments[2])
    image = assemble(Path(path).read_text(), Path(path).name)
    machine = choose(name, lanes=lanes).load(image, lanes)
    machine.set_bank_word("R", 1, (np.linspace(-1, 1, lanes) * (1 << 32)).astype(np.int64))
    machine.run(1)
    print(json.dumps({"engine": type(machine).__name__, "halted": bool(machine.halted.all()),
                      "steps": float(np.mean(machine.steps))}), flush=True)


#: A job that finished in under this many seconds runs again, up to :data:`REPEATS` times in
#: all, and its best time counts: at ~0.5 s a process, a busy core's noise moved one
#: engine's time by 1.5x between two runs (auto on the engine that was the best counted
#: 1.46x and 1.58x in a run of 2026-12-06).
REPEAT_BELOW = 5.0
REPEATS = 3


def _timed(path: Path, name: str, lanes: int, budget: float) -> dict:
    """The best of up to :data:`REPEATS` runs of a job (one if it takes
    :data:`REPEAT_BELOW` seconds or more; an engine over the budget counts as the budget)."""
    best = timed_job(path, name, lanes, budget)
    for _ in range(REPEATS - 1):
        if best.get("over_budget") or best["seconds"] >= REPEAT_BELOW:
            break
        again = timed_job(path, name, lanes, budget)
        if not again.get("over_budget") and again["seconds"] < best["seconds"]:
            best = again
    return best


def timed_job(path: Path, name: str, lanes: int, budget: float) -> dict:
    done = run_child([sys.executable, "-c",
                      "import sys; from revasm.bench.engine_choice import child; "
                      "child(sys.argv[1:])", str(path), name, str(lanes)], budget)
    lines = [line for line in done.get("stdout", "").splitlines() if line.startswith("{")]
    if done["timed_out"]:
        return {"seconds": budget, "over_budget": True, "why": "time"}
    if not lines and "MemoryError" in done["stderr"]:  # the children's memory cap
        return {"seconds": budget, "over_budget": True, "why": "memory"}
    if not lines:  # anything else is the benchmark's own failure: never a number
        raise RuntimeError(f"engine_choice: {name} on {lanes} lanes of {path.name} failed "
                           f"(exit {done['exit_code']}): {done['stderr'][-600:]}")
    return {"seconds": done["wall_s"], **json.loads(lines[-1])}


def run(quick: bool) -> dict:
    """The grid (``--quick``: up to 10^4 steps and lanes, 10^8 lane-steps)."""
    steps_grid = QUICK_STEPS if quick else STEPS
    lanes_grid = QUICK_LANES if quick else LANES
    work = QUICK_WORK if quick else MAX_WORK
    budget = 60.0 if quick else 120.0
    points = []
    with tempfile.TemporaryDirectory(prefix="revasm-choice-") as scratch:
        for steps in steps_grid:
            path = Path(scratch) / f"loop{steps}.pal"
            path.write_text(program(steps))
            _timed(path, "tile", 64, budget)  # its steps recorded, as an earlier run would
            for lanes in lanes_grid:
                if steps * lanes > work:
                    continue
                row: dict[str, Any] = {"steps": steps, "lanes": lanes}
                for name in (*ENGINES, "auto"):
                    row[name] = _timed(path, name, lanes, budget)
                best = min(ENGINES, key=lambda name: row[name]["seconds"])
                row["best"] = best
                row["auto_over_best"] = row["auto"]["seconds"] / row[best]["seconds"]
                points.append(row)
                print(f"engine_choice: {steps} steps x {lanes} lanes: best {best} "
                      f"{row[best]['seconds']:.2f} s, auto ({row['auto'].get('engine')}) "
                      f"{row['auto_over_best']:.2f}x", file=sys.stderr, flush=True)
    ratios = [row["auto_over_best"] for row in points]
    return {"load_average": os.getloadavg()[0], "budget_s": budget, "max_work": work,
            "points": points, "worst_auto_over_best": max(ratios) if ratios else None,
            "points_within_1_3": sum(1 for ratio in ratios if ratio <= 1.3),
            "stamp": time.strftime("%Y-%m-%d %H:%M")}
