"""The differential campaign: the compiled engine against the reference on 10^4 random programs.

    python bench/compiled_campaign.py [--programs 10000] [--workers 2] [--seed 0] [--quick]
                                      [--kernel program|interpreter|tile]

The checks of ``tests/support/differential.py`` on many more programs than ``make
test``'s sample: straight-line programs over every data instruction, structured programs
(loops, diamonds, portal calls and uncalls) and programs that fault in every way, both
widths; per batch of programs laid side by side in one image (one kernel build), every
lane bit for bit forward, backward, backward from FINISH, and on some batches the gradient
or Hessian (tangent-over-gradient) pass.  Chunks of programs run in ``--workers``
processes.  Each finished chunk is appended to ``compiled_campaign.chunks.jsonl`` and
``compiled_campaign.json`` (the totals) is rewritten (``complete`` false until the last), so a
campaign stopped part-way loses at most its running chunks: run it again and it resumes
(``--fresh`` starts over).
``--quick`` (a few dozen programs) writes ``compiled_campaign.quick.json`` instead and
never touches the full result.  ``--kernel interpreter`` checks the engine's interpreter
kernel (sim/compiled/interpreter.py) instead of the programs' own kernels, into
``compiled_campaign_interpreter.json`` (and its chunk log); ``--kernel tile`` the tile
engine (sim/tile: its interpreter, tiles of lanes in lockstep) into
``compiled_campaign_tile.json``.  Needs the repository's tests folder (the generators) and
hypothesis; kernels go to a temporary cache directory (``$REVASM_CACHE_DIR`` if set).
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

from revasm.isa.fixed_point import WIDTHS

HERE = Path(__file__).resolve().parent
#: The source checkout the campaign runs from (HERE is its src/revasm/bench), its test
#: suite (the program generators) and its results folder.
REPOSITORY = HERE.parents[2]
#: The test suite's shared helpers (the program generators), imported by their bare names.
TEST_SUPPORT = REPOSITORY / "tests" / "support"
RESULTS = REPOSITORY / "bench" / "results"
NAME = "compiled_campaign"

#: kind -> (share of the programs, every how many batches a derivative pass runs); the
#: kinds are tests/support/differential.py's STRATEGIES
KINDS = {"straight-line": (0.45, 2), "structured": (0.30, 4), "faulting": (0.25, 3)}
CHUNK = 100


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """The campaign's processes: a fresh worker per chunk (loaded kernels are never freed
    within a process) where Python can say so (3.11: ``max_tasks_per_child``); on 3.10 the
    workers live for the whole campaign."""
    if sys.version_info >= (3, 11):
        return ProcessPoolExecutor(max_workers=max(1, workers), max_tasks_per_child=1)
    return ProcessPoolExecutor(max_workers=max(1, workers))


def run_chunk(kind: str, width: int, count: int, seed: int) -> dict:
    """``count`` programs of one kind and width, checked in batches; a summary."""
    sys.path.insert(0, str(TEST_SUPPORT))
    import differential
    from program_generators import examples

    if os.environ.get("REVASM_KERNEL") == "tile":  # the tile engine against the reference
        from revasm.sim.engines import engine

        differential.ENGINE = engine("tile")
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


def summary(records: list[dict], programs: int, args: argparse.Namespace, complete: bool,
            seconds: float) -> dict:
    """The campaign's JSON from its finished chunks' records."""
    from revasm.isa import INSTRUCTIONS

    table = sorted(ins.mnemonic for ins in INSTRUCTIONS)
    totals: dict = {"kinds": Counter(), "widths": Counter(), "passes": Counter(),
                    "faults": Counter(), "batches": 0, "lanes": 0, "cells": 0}
    hashes: set[str] = set()
    covered: set[str] = set()
    failures: list[str] = []
    for chunk in records:
        hashes.update(chunk["hashes"])
        covered.update(chunk["instructions"])
        failures.extend(chunk["failures"])
        totals["kinds"][chunk["kind"]] += chunk["programs"]
        totals["widths"][chunk["width"]] += chunk["programs"]
        totals["passes"].update(chunk["passes"])
        totals["faults"].update(chunk["faults"])
        for name in ("batches", "lanes", "cells"):
            totals[name] += chunk[name]
    return {
        "benchmark": campaign_name(args.kernel), "kernel": args.kernel, "quick": args.quick,
        "complete": complete,
        "commits": sorted({chunk.get("commit") or "unknown" for chunk in records}),
        "seed": args.seed, "target_programs": programs,
        "programs": sum(chunk["programs"] for chunk in records),
        "distinct_programs": len(hashes),
        "kinds": dict(totals["kinds"]), "widths": {str(w): n for w, n in
                                                    sorted(totals["widths"].items())},
        "passes": dict(totals["passes"]), "batches": totals["batches"],
        "lanes": totals["lanes"], "cells": totals["cells"], "lanes_per_program": 3,
        "instructions_covered": len(covered & set(table)),
        "instructions_in_table": len(table),
        "instructions_missing": sorted(set(table) - covered),
        "faults": dict(totals["faults"].most_common()),
        "failures": len(failures), "first_failures": failures[:20],
        "chunk_seconds": round(sum(chunk["seconds"] for chunk in records), 1),
        "seconds": round(seconds, 1), "workers": args.workers,
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "system": platform.system(), "cpus": os.cpu_count()},
    }


def campaign_name(kernel: str) -> str:
    """The results' name: the programs' own kernels, or the interpreter kernel."""
    return NAME if kernel == "program" else f"{NAME}_{kernel}"


def finished_chunks(log: Path, chunks: list[tuple]) -> list[dict]:
    """The records of ``log`` (one JSON line per finished chunk) that are chunks of this
    plan; a torn last line (a run stopped while writing) is ignored."""
    if not log.exists():
        return []
    wanted = set(chunks)
    records = []
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
            key = (record["kind"], record["width"], record["programs"], record["seed"])
        except (ValueError, KeyError, TypeError):
            continue
        if key in wanted:
            wanted.discard(key)
            records.append(record)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="60 programs; writes compiled_campaign.quick.json")
    parser.add_argument("--fresh", action="store_true",
                        help="start over instead of resuming the chunks already logged")
    parser.add_argument("--kernel", choices=("program", "interpreter", "tile"),
                        default="program",
                        help="the compiled engine's kernels to check (default: each "
                             "program's own), or the tile engine")
    args = parser.parse_args()
    os.environ["REVASM_KERNEL"] = args.kernel  # the workers' compiled engine
    programs = 60 if args.quick else args.programs
    sys.path.insert(0, str(REPOSITORY / "src"))
    from revasm.assembler.files import write_atomic
    from revasm.bench import result_path

    name = campaign_name(args.kernel)
    out = result_path(RESULTS, name, args.quick)
    log = result_path(RESULTS, name, args.quick, suffix=".chunks.jsonl")
    chunks = plan(programs, args.seed)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.fresh and log.exists():
        log.unlink()
    records = finished_chunks(log, chunks)
    if records:
        print(f"resuming: {len(records)} of {len(chunks)} chunks already done ({log.name})")
    done_keys = {(r["kind"], r["width"], r["programs"], r["seed"]) for r in records}
    todo = [chunk for chunk in chunks if chunk not in done_keys]
    started = time.perf_counter()
    commit = _commit()

    def save(complete: bool) -> dict:
        result = summary(records, programs, args, complete, time.perf_counter() - started)
        write_atomic(out, json.dumps(result, indent=2) + "\n")
        return result

    cache = tempfile.TemporaryDirectory(prefix="revasm-campaign-")
    os.environ.setdefault("REVASM_CACHE_DIR", cache.name)  # the workers' kernels
    pool = worker_pool(args.workers)
    with cache, pool:
        futures = [pool.submit(run_chunk, *chunk) for chunk in todo]
        for future in as_completed(futures):
            chunk = future.result()
            chunk["commit"] = commit
            with log.open("a") as stream:  # one whole line per chunk, on disk at once
                stream.write(json.dumps(chunk) + "\n")
                stream.flush()
                os.fsync(stream.fileno())
            records.append(chunk)
            result = save(complete=False)
            print(f"{result['programs']}/{programs} programs ({chunk['kind']}, W = "
                  f"{chunk['width']}: {chunk['programs']} in {chunk['seconds']:.0f} s), "
                  f"{result['failures']} failures, {time.perf_counter() - started:.0f} s",
                  flush=True)
    result = save(complete=True)
    print(f"{result['programs']} programs ({result['distinct_programs']} distinct), "
          f"{result['failures']} failures; {out.name}")
    if result["failures"]:
        print("\n".join(result["first_failures"]))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
