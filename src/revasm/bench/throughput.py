"""Simulator throughput: reference instructions/s, vector lane-instructions/s, and the
machine's memory-bandwidth limit measured in the same run.

The limit is numpy's in-place add over arrays of the batch's size and dtype
(``a += b``, uint64): one element per lane per pass, the least a two-operand
instruction on a lane axis can cost.  ``bandwidth_ratio`` is the vector
simulator's lane-instructions/s over those elements/s.
"""
from __future__ import annotations

import time

import numpy as np

from revasm.assembler.image import Image
from revasm.sim.reference import Machine
from revasm.sim.vector import VectorMachine
from revasm.sim.vector.machine import TILE_LANES

from .programs import branchy, straight_line

#: Recorded, not asserted (the issue's targets).
TARGET_BANDWIDTH_RATIO = 0.30
TARGET_SPEEDUP = 50.0
TARGET_MIN_BATCH = 10_000


def _inputs(lanes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 1 << 16, lanes, dtype=np.uint64),
            rng.integers(0, 1 << 32, lanes, dtype=np.uint64))


def reference_rate(image: Image, repeats: int) -> tuple[float, int]:
    """Best instructions/s of the reference machine over ``repeats`` warm runs."""
    a, b = _inputs(1, 0)
    best = 0.0
    steps = 0
    machine = Machine(image)
    machine.run(1)  # compile the blocks once
    for _ in range(repeats):
        machine = Machine(image)
        machine.set_register(1, int(a[0]))
        machine.set_register(2, int(b[0]))
        started = time.perf_counter()
        machine.run(1)
        elapsed = time.perf_counter() - started
        steps = machine.steps
        best = max(best, steps / elapsed)
    return best, steps


def vector_rate(image: Image, lanes: int, repeats: int, tile: int | None = None
                ) -> tuple[float, float]:
    """Best lane-instructions/s of the vector machine; also the seconds of that run.
    ``tile``: lanes per fused-block tile (None: the machine's default, 0: whole rows)."""
    VectorMachine(image, 1).run(1)  # warm the template cache
    best, seconds = 0.0, 0.0
    for trial in range(repeats):
        machine = VectorMachine(image, lanes)
        if tile is not None:
            machine.tile = tile
        a, b = _inputs(lanes, trial)
        machine.set_register(1, a)
        machine.set_register(2, b)
        started = time.perf_counter()
        machine.run(1)
        elapsed = time.perf_counter() - started
        if bool(np.any(machine.faulted)):
            raise RuntimeError("a benchmark lane faulted")
        rate = float(np.sum(machine.steps)) / elapsed
        if rate > best:
            best, seconds = rate, elapsed
    return best, seconds


def bandwidth_rate(lanes: int, seconds: float = 0.2) -> float:
    """Elements/s of numpy's in-place uint64 add over arrays of ``lanes`` elements."""
    a = np.zeros(lanes, dtype=np.uint64)
    b = np.ones(lanes, dtype=np.uint64)
    a += b  # touch the pages
    passes = 0
    started = time.perf_counter()
    while True:
        a += b
        passes += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds and passes >= 3:
            return passes * lanes / elapsed


#: Tile sizes tried at 10**6 lanes (0: whole rows, no tiles).
TILE_SIZES = (0, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17)


def tile_sweep(image: Image, lanes: int = 1_000_000) -> dict:
    """Straight-line lane-instructions/s at ``lanes`` for each fused-block tile size
    (how ``machine.TILE_LANES`` was chosen); best of 3 runs each."""
    rates = {str(tile): vector_rate(image, lanes, 3, tile)[0] for tile in TILE_SIZES}
    return {"batch": lanes, "default_tile_lanes": TILE_LANES,
            "lane_instructions_per_s_by_tile": rates}


def run(quick: bool) -> dict:
    batches = [1, 100, 10_000] if quick else [1, 100, 10_000, 1_000_000]
    programs = {"straight_line": straight_line(32, repeats=20),
                "branchy": branchy(32)}
    out: dict = {"batches": batches, "width": 32, "programs": {}}
    for name, image in programs.items():
        reference, steps = reference_rate(image, 3 if quick else 10)
        rows = []
        for lanes in batches:
            repeats = 2 if quick else 3
            rate, seconds = vector_rate(image, lanes, repeats)
            row = {"batch": lanes, "lane_instructions_per_s": rate, "seconds": seconds,
                   "speedup_over_reference": rate / reference}
            if lanes >= 100:
                limit = bandwidth_rate(lanes, 0.05 if quick else 0.3)
                row["bandwidth_elements_per_s"] = limit
                row["bandwidth_ratio"] = rate / limit
            rows.append(row)
        out["programs"][name] = {"instructions_per_lane": steps,
                                 "reference_instructions_per_s": reference, "vector": rows}
    if not quick:
        out["tiles"] = tile_sweep(programs["straight_line"])
    big = [row for row in out["programs"]["straight_line"]["vector"]
           if row["batch"] >= TARGET_MIN_BATCH]
    out["targets"] = {
        "bandwidth_ratio_at_least": TARGET_BANDWIDTH_RATIO,
        "speedup_at_least": TARGET_SPEEDUP,
        "straight_line_batch_at_least": TARGET_MIN_BATCH,
        "met_bandwidth": all(r["bandwidth_ratio"] >= TARGET_BANDWIDTH_RATIO for r in big),
        "met_speedup": all(r["speedup_over_reference"] >= TARGET_SPEEDUP for r in big),
    }
    return out
