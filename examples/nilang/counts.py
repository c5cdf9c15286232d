"""Instruction counts of the NiLang examples: reversible against irreversible.

    python examples/nilang/counts.py [--json]

For each example: static instructions, executed instructions (the reversible
run), the irreversible estimate (forward compute and control only; see
compiler/counts.py) and NiLang's uncomputing level log2(reversible /
irreversible).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES  # noqa: E402

from revasm.compiler import compile_file  # noqa: E402
from revasm.compiler.counts import count  # noqa: E402


def main() -> None:
    rows = {}
    for case in CASES:
        program = compile_file(case.path, case.entry)
        rows[case.name] = count(program, case.inputs).as_dict()
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'example':<12} {'static':>7} {'executed':>9} {'irreversible':>13} {'level':>6}")
    for name, r in rows.items():
        print(f"{name:<12} {r['static_instructions']:>7} {r['executed']:>9} "
              f"{r['irreversible_estimate']:>13} {r['uncomputing_level']:>6.2f}")


if __name__ == "__main__":
    main()
