"""Scalar speed of every engine: instructions per second on long PAL loops.

    revasm bench sim_speed [--quick]          (python -m revasm.bench sim_speed)

Runs counted loops (ADD/ADDI/XOR bodies closed by a paired-branch back edge) forward to
FINISH and backward to START on one lane of each engine available here (the reference's
generated blocks, the vector engine, the compiled engine; not the tile engine, built for
many lanes: ``tile_speed``), and a shorter run on the
reference's traced single-step path, at W = 32 and 64.  Every engine runs the same image
and must end with the same registers and counts.  The reference's goal (docs/bench.md,
"sim_speed"): at least 2 million instructions per second on one core for the main loop.

``process``: the whole command a user types, ``revasm run LOOP.pal --engine compiled``, on
the compiled engine's long loop (10^8 instructions in a full run), timed from outside the
process: once with a new, empty kernel cache (the kernels compile) and once more with the
same cache (they load), so the wall times include the interpreter's start and the imports.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from revasm.assembler import assemble
from revasm.assembler.image import Image
from revasm.isa.fixed_point import WIDTHS
from revasm.sim.engines import available, load

from .common import run_child

GOAL = 2_000_000

#: Loop lengths per engine, as a multiple of the reference's: the vector engine dispatches
#: every instruction from Python (it is built for many lanes, not one: ``vector_throughput``
#: measures that), and the compiled engine's full run is 10**8 instructions per pass.
TRIPS_SCALE = {"vector": 1 / 50, "compiled": 25}

#: Engines left out, and why: built for many lanes, one lane says nothing of them (and the
#: tile interpreter's first build costs a minute a mode).  ``tile_speed`` measures them.
LANE_ENGINES = {"tile": "a many-lane engine: tile_speed measures it"}


def scalar_engines() -> list[str]:
    """The engines available here that this benchmark measures on one lane."""
    return [name for name in available() if name not in LANE_ENGINES]

#: The main benchmark: 8 instructions per iteration, 6 of them data.
PAL_LOOP = """;; pendulum pal file
        START
        ADDIS $5 {high} 1     ; $5 = trip count
        ADDI  $5 {low}
top:    BNE   $3 $0 bottom    ; entry: $3 == 0; from the back edge: $3 != 0
        ADD   $1 $3
        ADDI  $2 7
        XOR   $4 $1
        ADD   $6 $2
        XOR   $7 $6
        ADDI  $3 1
bottom: BNE   $3 $5 top
        FINISH
"""

#: The worst case for block dispatch: 4 instructions per iteration, 2 of them branches.
TIGHT_LOOP = """;; pendulum pal file
        START
        ADDIS $5 {high} 1
        ADDI  $5 {low}
top:    BNE   $3 $0 bottom
        ADDI  $3 1
        XOR   $4 $3
bottom: BNE   $3 $5 top
        FINISH
"""


def loop_image(template: str, trips: int, width: int) -> Image:
    # trips = high * 2^16 + low, with both digits signed 16-bit (ADDIS and ADDI).
    high, low = trips >> 16, trips & 0xFFFF
    if low >= 1 << 15:
        high, low = high + 1, low - (1 << 16)
    return assemble(template.format(high=high, low=low), "<bench>", width)


def measure(name: str, template: str, trips: int, width: int, engine: str = "reference",
            traced: bool = False) -> list[dict]:
    """Forward then backward on one lane of ``engine``, twice; a row per direction.

    The first pass pays the engine's start-up (the reference's block compilation, the
    compiled engine's kernel compile or cache load): ``first_seconds``.  The second pass
    is the steady state that ``instructions_per_second`` reports."""
    image = loop_image(template, trips, width)
    machine = load(image, 1, engine_name=engine)
    rows: list[dict] = []
    first: list[float] = []
    for direction in (+1, -1, +1, -1):
        start = time.perf_counter()
        if traced:
            machine.run(direction, trace=lambda record: None)  # type: ignore[call-arg]
        else:
            machine.run(direction)
        seconds = time.perf_counter() - start
        fault = machine.fault(0)
        if fault is not None:
            raise RuntimeError(f"{name} on the {engine} engine: {fault.message}")
        if len(first) < 2:
            first.append(seconds)
            continue
        steps = int(machine.steps[0])
        rows.append({
            "name": name, "engine": engine,
            "path": "single-step (traced)" if traced else "untraced",
            "direction": "forward" if direction > 0 else "backward", "width": width,
            "steps": steps, "cycles": int(machine.cycles[0]), "seconds": round(seconds, 4),
            "first_seconds": round(first[len(rows)], 4),
            "instructions_per_second": round(steps / seconds),
        })
    if any(machine.snapshot(0).registers):
        raise RuntimeError(f"{name} on the {engine} engine: the backward run did not restore "
                           "the registers")
    return rows


def process_runs(trips: int) -> dict:
    """``revasm run`` of the PAL loop on the compiled engine in a fresh process, first
    with an empty kernel cache, then with the one the first run filled."""
    high, low = trips >> 16, trips & 0xFFFF
    if low >= 1 << 15:
        high, low = high + 1, low - (1 << 16)
    with tempfile.TemporaryDirectory(prefix="revasm-sim-speed-") as folder:
        source = Path(folder) / "loop.pal"
        source.write_text(PAL_LOOP.format(high=high, low=low))
        command = [sys.executable, "-m", "revasm", "run", str(source), "--engine", "compiled",
                   "--width", "64", "--max-steps", str(8 * trips + 100), "--json"]
        rows = {}
        for name in ("first", "cached"):
            done = run_child(command, 600, env={"REVASM_CACHE_DIR": str(Path(folder) / "k")})
            if done["exit_code"] != 0 or done["timed_out"]:
                return {"status": "failed", "reason": (done["stderr"] or "timed out")[-300:]}
            steps = int(json.loads(done["stdout"])["steps"])
            rows[name] = {"wall_s": done["wall_s"], "steps": steps,
                          "instructions_per_second_wall": steps / done["wall_s"]}
    return {"status": "measured", "command": "revasm run LOOP.pal --engine compiled --width 64",
            "program": "pal_loop", **rows}


def run(quick: bool) -> dict:
    trips = 20_000 if quick else 500_000
    engines = scalar_engines()
    rows = []
    for width in WIDTHS:
        for engine in engines:
            loop_trips = max(1, int(trips * TRIPS_SCALE.get(engine, 1)))
            rows += measure("pal_loop", PAL_LOOP, loop_trips, width, engine)
            rows += measure("tight_loop", TIGHT_LOOP, loop_trips, width, engine)
        rows += measure("pal_loop", PAL_LOOP, max(1, trips // 50), width, traced=True)
    reference = [r for r in rows if r["name"] == "pal_loop" and r["engine"] == "reference"
                 and r["path"] == "untraced"]
    slowest = min(r["instructions_per_second"] for r in reference)
    return {"status": "measured", "engines": engines,
            "left_out": {name: why for name, why in LANE_ENGINES.items() if name in available()},
            "goal_instructions_per_second": GOAL,
            "slowest_pal_loop_instructions_per_second": slowest, "meets_goal": slowest >= GOAL,
            "results": rows,
            "process": process_runs(max(1, int(trips * TRIPS_SCALE["compiled"])))
            if "compiled" in engines else {"status": "not available"}}
