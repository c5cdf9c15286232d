"""The vector simulator's benchmark suite as a script: `python bench/suite.py [NAME...] [--quick]`.

The benchmarks themselves live in the package (``revasm.sim.vector.bench``) so
that `revasm bench` runs them from any install; this script is the same entry
point for a source checkout and writes bench/results/NAME.json (+ NAME.png).
"""
from __future__ import annotations

import sys
from pathlib import Path

from revasm.sim.vector.bench import BENCHMARKS, run_benchmark

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("--")] or list(BENCHMARKS)
    for name in names:
        if name not in BENCHMARKS:
            print(f"unknown benchmark {name!r} (choose from {', '.join(BENCHMARKS)})",
                  file=sys.stderr)
            return 2
        result = run_benchmark(name, quick, RESULTS)
        print(f"{name}: {result['seconds']} s -> {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
