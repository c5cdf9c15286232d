"""The cost of the compiler's run-time checks on the NiLang examples.

Each example of ``examples/nilang/cases.py`` is compiled with every check on (the
default), with the array-access checks off (``--no-checks bounds,alias``) and with no
checks (``--no-checks``), and run from the case's inputs on the reference
simulator: executed instructions and seconds of each (the fastest of several runs), and
the overheads of the checks in instructions and in time.  ``quick`` runs the small cases
only (no rfib recursion, no QR).
"""
from __future__ import annotations

import time

from .common import EXAMPLES, example_module

#: Mode -> the compiler's ``checks``: every kind, those kinds only, none.
MODES: dict[str, bool | set[str]] = {"checked": True,
                                     "no_access_checks": {"ancilla", "branch", "range"},
                                     "unchecked": False}
QUICK = ("dot", "umm", "ibesselj", "sparse_dot")
#: Runs per mode; the fastest counts (the machine is shared: the minimum is the least noisy).
REPEATS, REPEATS_QUICK = 7, 2


def run(quick: bool) -> dict:
    from revasm.compiler import compile_file
    from revasm.programs import run_program

    cases = example_module(EXAMPLES / "nilang" / "cases.py", "nilang_cases").CASES
    rows = {}
    for case in cases:
        if quick and case.name not in QUICK:
            continue
        row: dict = {}
        for mode, checks in MODES.items():
            program = compile_file(case.path, case.entry, checks=checks)
            times = []
            for _ in range(REPEATS_QUICK if quick else REPEATS):
                start = time.perf_counter()
                result = run_program(program, case.inputs, engine="reference")
                times.append(time.perf_counter() - start)
            row[mode] = {"instructions": result.steps, "seconds": round(min(times), 5),
                         "guards": program.pal.count("_trap:")}
        row["overhead"] = round(row["checked"]["instructions"]
                                / max(1, row["unchecked"]["instructions"]) - 1, 4)
        row["time_overhead"] = round(row["checked"]["seconds"]
                                     / max(1e-9, row["unchecked"]["seconds"]) - 1, 4)
        rows[case.name] = row
    return {"examples": rows, "modes": {k: str(v) for k, v in MODES.items()}}
