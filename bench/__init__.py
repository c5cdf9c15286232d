"""The benchmark suite of the vector simulator (``revasm bench``; docs/bench.md).

Each benchmark is a function ``run(quick) -> dict`` registered in
:data:`BENCHMARKS`; :func:`run_benchmark` times it, writes
``RESULTS_DIR/NAME.json`` and, when matplotlib is installed, ``NAME.png``.
The code lives in the installed package (``revasm.bench``) so that
``revasm bench`` works from any install; ``bench/suite.py`` in the repository
is the same registry as a script.
"""
from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy

from . import bessel, nilang, throughput
from .plots import plot

BENCHMARKS: dict[str, Callable[[bool], dict]] = {
    "vector_throughput": throughput.run,
    "bessel_gradients": bessel.run,
    "nilang_workloads": nilang.run,
}


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
    result["plot"] = plot(name, result, results_dir / f"{name}.png")
    (results_dir / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    return result
