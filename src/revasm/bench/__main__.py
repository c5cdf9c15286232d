"""``python -m revasm.bench [NAME...] [--quick]``: the suite without the command line."""
from __future__ import annotations

import sys
from pathlib import Path

from . import BENCHMARKS, result_path, run_benchmark

RESULTS = Path("bench/results")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("--")] or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark {', '.join(unknown)} (choose from {', '.join(BENCHMARKS)})",
              file=sys.stderr)
        return 2
    for name in names:
        result = run_benchmark(name, quick, RESULTS)
        print(f"{name}: {result['seconds']} s -> {result_path(RESULTS, name, quick)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
