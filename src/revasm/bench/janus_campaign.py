"""The Janus differential campaign: the interpreter against the machine on 500+ random programs.

    python bench/janus_campaign.py [--programs 500] [--workers 2] [--seed 0] [--quick]

Each program comes from ``tests/support/janus_programs.py``'s seeded generator (seed, seed+1,
...); ``differential`` runs it on the tree-walking interpreter and, compiled, on the
reference machine: forward from main's declared values, the machine's run back again,
and backward from a random state.  A program passes when the final stores agree word
for word (or both runs fault).  A program the compiler rejects with a clear error (an
expression that needs more scratch registers than the machine has) is counted apart,
with its message; any other exception is a failure.  Chunks of programs run in
``--workers`` processes; ``janus_campaign.json`` gets the totals, the failures and the
command.  ``--quick`` (40 programs) writes ``janus_campaign.quick.json``.  Needs the
repository's tests folder (the generator).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The source checkout the campaign runs from (HERE is its src/revasm/bench), its test
#: suite (the program generators) and its results folder.
REPOSITORY = HERE.parents[2]
#: The test suite's shared helpers (the program generators), imported by their bare names.
TEST_SUPPORT = REPOSITORY / "tests" / "support"
RESULTS = REPOSITORY / "bench" / "results"
NAME = "janus_campaign"
CHUNK = 25


def run_chunk(first: int, count: int) -> dict:
    """Programs ``first`` .. ``first + count - 1``: passed, failed (seed and what differs)
    and rejected (seed and the compiler's message)."""
    sys.path.insert(0, str(TEST_SUPPORT))
    from janus_programs import differential, random_program

    from revasm.compiler import CompileError

    started = time.perf_counter()
    passed, failed, rejected = 0, [], []
    for seed in range(first, first + count):
        source = random_program(seed)
        try:
            problems = differential(source, seed)
        except CompileError as exc:
            rejected.append({"seed": seed, "error": exc.message})
            continue
        except Exception as exc:  # a crash is a failure, reported with the program
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems:
            failed.append({"seed": seed, "problems": problems, "source": source})
        else:
            passed += 1
    return {"first": first, "count": count, "passed": passed, "failed": failed,
            "rejected": rejected, "seconds": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument("--quick", action="store_true",
                        help="40 programs; writes janus_campaign.quick.json")
    args = parser.parse_args()
    programs = 40 if args.quick else args.programs
    from revasm.assembler.files import write_atomic
    from revasm.bench import result_path

    started = time.perf_counter()
    chunks = [(first, min(CHUNK, args.seed + programs - first))
              for first in range(args.seed, args.seed + programs, CHUNK)]
    records: list[dict] = []
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [pool.submit(run_chunk, *chunk) for chunk in chunks]
        for future in as_completed(futures):
            records.append(future.result())
            done = sum(r["count"] for r in records)
            print(f"{done}/{programs} programs, "
                  f"{sum(len(r['failed']) for r in records)} failed", flush=True)
    failed = [f for r in records for f in r["failed"]]
    rejected = [x for r in records for x in r["rejected"]]
    result = {
        "benchmark": NAME,
        "command": "python bench/janus_campaign.py " + " ".join(sys.argv[1:]),
        "programs": programs, "first_seed": args.seed,
        "passed": sum(r["passed"] for r in records),
        "failed": len(failed), "rejected": len(rejected),
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(sum(r["seconds"] for r in records), 1),
        "workers": args.workers, "python": platform.python_version(),
        "failures": sorted(failed, key=lambda f: f["seed"]),
        "rejections": sorted(rejected, key=lambda x: x["seed"]),
    }
    out = result_path(RESULTS, NAME, args.quick)
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(result, indent=2) + "\n")
    print(f"{result['passed']} of {programs} programs agree ({result['failed']} failed, "
          f"{result['rejected']} rejected by the compiler) in {result['seconds']} s -> {out}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
