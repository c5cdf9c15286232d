"""Reference simulator speed: instructions per second on long PAL loops.

    python bench/sim_speed.py [--quick]

Runs counted loops (ADD/ADDI/XOR bodies closed by a paired-branch back edge)
forward to FINISH and backward to START on the fast path (generated blocks),
and a shorter run on the traced single-step path, at W = 32 and 64.  Prints a
table and writes ``bench/results/sim_speed.json``.  The goal (DESIGN §4, the
simulator brief): at least 2 million instructions per second on one core for
the main loop.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from revasm.assembler import assemble
from revasm.sim.reference import Machine

GOAL = 2_000_000
RESULTS = Path(__file__).resolve().parent / "results" / "sim_speed.json"

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


def loop_image(template: str, trips: int, width: int):
    # trips = high * 2^16 + low, with both digits signed 16-bit (ADDIS and ADDI).
    high, low = trips >> 16, trips & 0xFFFF
    if low >= 1 << 15:
        high, low = high + 1, low - (1 << 16)
    return assemble(template.format(high=high, low=low), "<bench>", width)


def measure(name: str, template: str, trips: int, width: int, traced: bool = False) -> list[dict]:
    image = loop_image(template, trips, width)
    machine = Machine(image)
    rows = []
    trace = (lambda record: None) if traced else None
    for direction in (+1, -1):
        start = time.perf_counter()
        machine.run(direction, trace=trace)
        seconds = time.perf_counter() - start
        rows.append({
            "name": name, "path": "single-step (traced)" if traced else "blocks",
            "direction": "forward" if direction > 0 else "backward", "width": width,
            "steps": machine.steps, "cycles": machine.cycles, "seconds": round(seconds, 4),
            "instructions_per_second": round(machine.steps / seconds),
        })
    assert machine.registers == [0] * 32, "the backward run did not restore the registers"
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    args = parser.parse_args(argv)
    trips = 20_000 if args.quick else 500_000
    rows = []
    for width in (32, 64):
        rows += measure("pal_loop", PAL_LOOP, trips, width)
        rows += measure("tight_loop", TIGHT_LOOP, trips, width)
        rows += measure("pal_loop", PAL_LOOP, max(1, trips // 50), width, traced=True)
    print(f"{'benchmark':<12} {'path':<22} {'dir':<9} {'W':>3} {'steps':>10} "
          f"{'seconds':>8} {'instr/s':>12}")
    for row in rows:
        print(f"{row['name']:<12} {row['path']:<22} {row['direction']:<9} {row['width']:>3} "
              f"{row['steps']:>10} {row['seconds']:>8.3f} {row['instructions_per_second']:>12,}")
    main_rows = [r for r in rows if r["name"] == "pal_loop" and r["path"] == "blocks"]
    slowest = min(r["instructions_per_second"] for r in main_rows)
    verdict = "meets" if slowest >= GOAL else "MISSES"
    print(f"pal_loop on the fast path: slowest {slowest:,} instructions/s, {verdict} the goal "
          f"of {GOAL:,}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "sim_speed", "quick": args.quick, "goal_instructions_per_second": GOAL,
        "slowest_pal_loop_instructions_per_second": slowest, "meets_goal": slowest >= GOAL,
        "python": sys.version.split()[0], "machine": platform.machine(), "results": rows,
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
