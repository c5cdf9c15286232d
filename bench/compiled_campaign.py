"""The differential campaign: the compiled engine against the reference on 10^4 random programs.

    python bench/compiled_campaign.py [--programs 10000] [--workers 2] [--seed 0] [--quick]

The checks of ``tests/test_compiled_differential.py`` on many more programs than ``make
test``'s sample: straight-line programs over every data instruction, structured programs
(loops, diamonds, portal calls and uncalls) and programs that fault in every way, both
widths; per batch of programs laid side by side in one image (one kernel build), every
lane bit for bit forward, backward, backward from FINISH, and on some batches the gradient
or Hessian (tangent-over-gradient) pass.  Chunks of programs run in ``--workers``
processes; ``bench/results/compiled_campaign.json`` is rewritten after every chunk
(``complete`` false until the last), so a long campaign's progress is on disk.
``--quick`` (a few dozen programs) writes ``compiled_campaign.quick.json`` instead and
never touches the full result.  Needs the repository's tests folder (the generators)
and hypothesis; kernels go to a temporary cache directory.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
RESULTS = HERE / "results"
NAME = "compiled_campaign"

#: kind -> (share of the programs, every how many batches a derivative pass runs); the
#: kinds are tests/test_compiled_differential.py's STRATEGIES
KINDS = {"straight-line": (0.45, 2), "structured": (0.30, 4), "faulting": (0.25, 3)}
WIDTHS = (32, 64)
CHUNK = 100


def run_chunk(kind: str, width: int, count: int, seed: int) -> dict:
    """``count`` programs of one kind and width, checked in batches; a summary."""
    sys.path.insert(0, str(TESTS))
    import test_compiled_differential as differential
    from program_generators import examples

    started = time.perf_counter()
    cases = examples(differential.STRATEGIES[kind](width), count, seed=seed)
    reports = differential.check_sample(cases, seed=seed, derivative_every=KINDS[kind][1])
    passes: Counter = Counter()
    for report in reports:
        passes.update(dict.fromkeys(report.passes, report.programs))
    return {
        "kind": kind, "width": width, "seed": seed, "programs": len(cases),
        "hashes": [hashlib.sha1(repr((c.image.width, c.image.words)).encode()).hexdigest()[:16]
                   for c in cases],
        "batches": len(reports), "lanes": sum(r.lanes for r in reports),
        "cells": sum(r.cells for r in reports), "passes": dict(passes),
        "faults": dict(sum((r.faults for r in reports), Counter())),
        "instructions": sorted(set().union(*(r.instructions for r in reports))),
        "failures": [f for r in reports for f in r.failures],
        "seconds": time.perf_counter() - started,
    }


def plan(programs: int, seed: int) -> list[tuple[str, int, int, int]]:
    """Chunks (kind, width, count, seed) adding up to ``programs``, kinds and widths
    interleaved so that a campaign stopped early has run every kind at both widths."""
    targets = {(kind, width): round(programs * share / len(WIDTHS))
               for kind, (share, _) in KINDS.items() for width in WIDTHS}
    first = next(iter(targets))
    targets[first] += programs - sum(targets.values())
    chunks = []
    index = 0
    while any(targets.values()):
        for key, left in targets.items():
            if left:
                count = min(CHUNK, left)
                chunks.append((*key, count, seed * 100_003 + index))
                targets[key] -= count
                index += 1
    return chunks


def _commit() -> str | None:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("REVASM_COMMIT")
    return commit or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="60 programs; writes compiled_campaign.quick.json")
    args = parser.parse_args()
    programs = 60 if args.quick else args.programs
    sys.path.insert(0, str(HERE.parent))
    from revasm.assembler.files import write_atomic
    from revasm.bench import result_path
    from revasm.isa import INSTRUCTIONS

    out = result_path(RESULTS, NAME, args.quick)
    table = sorted(ins.mnemonic for ins in INSTRUCTIONS)
    chunks = plan(programs, args.seed)
    started = time.perf_counter()
    totals: dict = {"kinds": Counter(), "widths": Counter(), "passes": Counter(),
                    "faults": Counter(), "batches": 0, "lanes": 0, "cells": 0}
    hashes: set[str] = set()
    covered: set[str] = set()
    failures: list[str] = []
    done = 0

    def save(complete: bool) -> None:
        result = {
            "benchmark": NAME, "quick": args.quick, "complete": complete,
            "commit": _commit(), "seed": args.seed, "target_programs": programs,
            "programs": done, "distinct_programs": len(hashes),
            "kinds": dict(totals["kinds"]), "widths": {str(w): n for w, n in
                                                        sorted(totals["widths"].items())},
            "passes": dict(totals["passes"]), "batches": totals["batches"],
            "lanes": totals["lanes"], "cells": totals["cells"],
            "lanes_per_program": 3,
            "instructions_covered": len(covered & set(table)),
            "instructions_in_table": len(table),
            "instructions_missing": sorted(set(table) - covered),
            "faults": dict(totals["faults"].most_common()),
            "failures": len(failures), "first_failures": failures[:20],
            "seconds": round(time.perf_counter() - started, 1), "workers": args.workers,
            "machine": {"python": platform.python_version(), "processor": platform.machine(),
                        "system": platform.system(), "cpus": os.cpu_count()},
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(result, indent=2) + "\n")

    cache = tempfile.TemporaryDirectory(prefix="revasm-campaign-")
    os.environ.setdefault("REVASM_CACHE_DIR", cache.name)  # the workers' kernels
    # a fresh worker per chunk: loaded kernels are never freed within a process
    pool = ProcessPoolExecutor(max_workers=max(1, args.workers), max_tasks_per_child=1)
    with cache, pool:
        futures = [pool.submit(run_chunk, *chunk) for chunk in chunks]
        for future in as_completed(futures):
            chunk = future.result()
            done += chunk["programs"]
            hashes.update(chunk["hashes"])
            covered.update(chunk["instructions"])
            failures.extend(chunk["failures"])
            totals["kinds"][chunk["kind"]] += chunk["programs"]
            totals["widths"][chunk["width"]] += chunk["programs"]
            totals["passes"].update(chunk["passes"])
            totals["faults"].update(chunk["faults"])
            for name in ("batches", "lanes", "cells"):
                totals[name] += chunk[name]
            save(complete=False)
            print(f"{done}/{programs} programs ({chunk['kind']}, W = {chunk['width']}: "
                  f"{chunk['programs']} in {chunk['seconds']:.0f} s), {len(failures)} failures, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
    save(complete=True)
    print(f"{done} programs ({len(hashes)} distinct), {len(failures)} failures; {out.name}")
    if failures:
        print("\n".join(failures[:20]))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
