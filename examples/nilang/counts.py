"""Instruction counts of the NiLang examples: reversible against irreversible.

    python examples/nilang/counts.py [--json] [-O0|-O1|-O2]

For each example: static instructions, executed instructions (the reversible
run), the irreversible estimate (forward compute and control only; see
src/revasm/program_counts.py) and NiLang's uncomputing level log2(reversible /
irreversible); then compiled ibesselj against the hand-written
examples/bessel_j2.pal (W = 64, the default compile options).  ``-O`` chooses the
optimisation level (default -O2, as ``revasm compile``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES

from revasm.compiler import compile_file
from revasm.program_counts import count_program as count

LEVEL = next((int(a[2:]) for a in sys.argv if a in ("-O0", "-O1", "-O2")), 2)


def main() -> None:
    rows = {}
    for case in CASES:
        program = compile_file(case.path, case.entry, level=LEVEL)
        rows[case.name] = count(program, case.inputs).as_dict()
    if "--json" in sys.argv:
        static, steps = bessel_comparison()
        rows["ibesselj_vs_bessel_j2_pal"] = {
            "width": 64, "static_compiled": static[0], "static_hand_written": static[1],
            "executed": [{"x": x, "compiled": c, "hand_written": h, "ratio": round(c / h, 3)}
                         for x, c, h in steps]}
        print(json.dumps(rows, indent=1))
        return
    print(f"{'example':<12} {'static':>7} {'executed':>9} {'irreversible':>13} {'level':>6}")
    for name, r in rows.items():
        print(f"{name:<12} {r['static_instructions']:>7} {r['executed']:>9} "
              f"{r['irreversible_estimate']:>13} {r['uncomputing_level']:>6.2f}")
    print()
    static, steps = bessel_comparison()
    print("ibesselj against the hand-written examples/bessel_j2.pal (W = 64)")
    print(f"{'x':>7} {'compiled':>9} {'hand':>6} {'ratio':>6}")
    print(f"{'static':>7} {static[0]:>9} {static[1]:>6} {static[0] / static[1]:>6.2f}")
    for x, compiled, hand in steps:
        print(f"{x:>7} {compiled:>9} {hand:>6} {compiled / hand:>6.2f}")


def bessel_comparison(points=(0.5, 1.0, 3.0)):
    """Static instructions (compiled, hand-written) and, per x, (x, executed steps of
    compiled ibesselj, of examples/bessel_j2.pal), at W = 64."""
    from revasm.assembler import assemble_file
    from revasm.isa.fixed_point import WordFormat
    from revasm.programs import run_program as run
    from revasm.sim.reference import Machine

    here = Path(__file__).resolve().parent
    program = compile_file(here / "ibesselj.py", "ibesselj", width=64, level=LEVEL)
    image = assemble_file(here.parent / "bessel_j2.pal", width=64)
    fmt = WordFormat(64)
    out = []
    for x in points:
        machine = Machine(image)
        machine.registers[1] = fmt.from_real(x) & fmt.mask
        machine.run(1)
        out.append((x, run(program, {"z": x}, width=64).steps, machine.steps))
    return (sum(program.image.is_code), sum(image.is_code)), out


if __name__ == "__main__":
    main()
