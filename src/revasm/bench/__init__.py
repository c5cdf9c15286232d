"""Every benchmark of revasm (``revasm bench``, ``python -m revasm.bench``; docs/bench.md).

Each benchmark is a function ``run(quick) -> dict`` registered in :data:`BENCHMARKS`;
:func:`run_benchmark` times it and writes ``RESULTS_DIR/NAME.json`` (and, when matplotlib is
installed, ``NAME.png``).  A ``--quick`` run writes ``NAME.quick.json`` instead, so it never
overwrites the committed results of a full run.  The code lives in the installed package
(``revasm.bench``) so that ``revasm bench`` works from any install.
"""
from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy

from revasm.assembler.files import atomic_path, write_atomic

from . import (
    bessel,
    checks_cost,
    compile_scale,
    compile_time,
    dask_batches,
    engine_choice,
    fuzz,
    long_stack_run,
    nilang,
    nilang_compare,
    rtl_speed,
    sim_speed,
    sparse_memory,
    throughput,
    tile_speed,
)
from .plots import plot

BENCHMARKS: dict[str, Callable[[bool], dict]] = {
    "sim_speed": sim_speed.run,
    "vector_throughput": throughput.run,
    "bessel_gradients": bessel.run,
    "nilang_workloads": nilang.run,
    "rtl_speed": rtl_speed.run,
    "fuzz": fuzz.run,
    "checks_cost": checks_cost.run,
    "compile_time": compile_time.run,
    "compile_scale": compile_scale.run,
    "nilang_compare": nilang_compare.run,
    "long_stack_run": long_stack_run.run,
    "sparse_memory": sparse_memory.run,
    "dask_batches": dask_batches.run,
    "tile_speed": tile_speed.run,
    "engine_choice": engine_choice.run,
}


def result_path(results_dir: Path, name: str, quick: bool, suffix: str = ".json") -> Path:
    """Where a benchmark's result goes: ``NAME.json``, or ``NAME.quick.json`` for --quick."""
    return results_dir / f"{name}{'.quick' if quick else ''}{suffix}"


def run_benchmark(name: str, quick: bool, results_dir: Path) -> dict:
    """Run one benchmark, save its JSON (and PNG plot), return the result."""
    started = time.perf_counter()
    result = BENCHMARKS[name](quick)
    result = {
        "benchmark": name,
        "quick": quick,
        "seconds": round(time.perf_counter() - started, 3),
        "machine": {"python": platform.python_version(), "numpy": numpy.__version__,
                    "processor": platform.machine(), "system": platform.system()},
        **result,
    }
    results_dir.mkdir(parents=True, exist_ok=True)
    result["plot"] = _plot(name, result, result_path(results_dir, name, quick, ".png"))
    # atomically: a reader never sees half a file, a failure leaves the old results
    write_atomic(result_path(results_dir, name, quick), json.dumps(result, indent=2) + "\n")
    return result


class _NoPlot(Exception):
    """plot() drew nothing; the reason it gave, and the old PNG stays."""


def _plot(name: str, result: dict, path: Path) -> str:
    """plot() into a temporary file that replaces ``path`` whole; its path or the reason."""
    try:
        with atomic_path(path) as temporary:
            drawn = plot(name, result, temporary)
            if drawn != str(temporary):
                raise _NoPlot(drawn)
    except _NoPlot as skipped:
        return str(skipped)
    return str(path)
