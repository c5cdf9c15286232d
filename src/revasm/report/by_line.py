"""The report per source line: instructions, cycles, energy and bits erased of each line.

A program's instructions come from source lines: the PAL line that holds each one, or,
for a program compiled from Python or Janus, the line of the eDSL or Janus source the
compiler emitted it for (its PC -> source map, the one faults and the debugger use).
A :class:`LineMap` says which line each PC belongs to; :func:`by_line` sums a run's
counts over the PCs of each line, forward and backward apart.

Every figure is the whole-program figure split by line, never a second estimate: the
steps and cycles of a line are those the run's :class:`RunCounter` counted at its PCs
(the cycles exactly as it counted them), and the per-operation energy of a line is the
model evaluated on the line's counts (``energy_models.operation_energy``), so the lines
sum to the report's totals.  What belongs to no line is kept apart: instructions whose
PC maps to no source line (``"line": null``), and the bits the protocol erases for the
words it copies out (results, gradients), which ``erasure.py`` counts for the run as a
whole.  docs/energy.md, "By source line", describes every field.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from revasm.assembler.image import Image

from .counting import RunCounter
from .energy_models import EnergyModel, adiabatic_factor, landauer_joules_per_bit, operation_energy

#: A source line: (file, line number), 1-based.
SourceLine = tuple[str, int]


@dataclass
class LineMap:
    """Which source line each PC of a program belongs to, and the text of each file."""

    #: PC -> (file, line); a PC missing here belongs to no line
    lines: dict[int, SourceLine] = field(default_factory=dict)
    #: file -> its lines (for the text column and the HTML listing)
    sources: dict[str, list[str]] = field(default_factory=dict)
    #: what the line numbers are lines of: "pal", "python" or "janus"
    language: str = "pal"

    def line_of(self, pc: int) -> SourceLine | None:
        return self.lines.get(pc)

    def text(self, where: SourceLine) -> str:
        lines = self.sources.get(where[0], [])
        return lines[where[1] - 1].rstrip() if 0 < where[1] <= len(lines) else ""


def pal_line_map(image: Image) -> LineMap:
    """The PAL line of every instruction (the image's line map) and the PAL file's text."""
    lines = {pc: (image.source_file, location.line)
             for pc, location in image.locations.items()
             if pc < len(image) and image.is_code[pc]}
    return LineMap(lines, {image.source_file: _read_lines(image.source_file)}, "pal")


def mapped_line_map(image: Image, pal_to_source: dict[int, SourceLine],
                    language: str = "python") -> LineMap:
    """The source line of every instruction through a PAL line -> source line map (a
    compiled program's, or the ``OUT.map.json`` that ``revasm compile -o OUT`` writes)."""
    lines: dict[int, SourceLine] = {}
    for pc, location in image.locations.items():
        if pc < len(image) and image.is_code[pc] and location.line in pal_to_source:
            lines[pc] = pal_to_source[location.line]
    sources = {file: _read_lines(file) for file in {f for f, _ in lines.values()}}
    return LineMap(lines, sources, language)


def _read_lines(file: str) -> list[str]:
    try:
        return Path(file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


# --- counting per line ----------------------------------------------------------------------

@dataclass
class _LineCounts:
    """One line's counts in one run, shaped as a run of the report (``RunCounts.to_dict``)
    as far as the energy models read it."""

    direction: str
    mode: str
    steps: int = 0
    cycles: int = 0
    by_instruction: Counter = field(default_factory=Counter)
    by_energy_class: Counter = field(default_factory=Counter)
    cycles_by_energy_class: Counter = field(default_factory=Counter)
    traffic: Counter = field(default_factory=Counter)
    adjoint_operations: Counter = field(default_factory=Counter)
    overwrites: int = 0
    tape_words: int = 0
    adjoint_updates: int = 0
    conditional_branches: int = 0
    emitted: int = 0

    def run(self) -> dict:
        traffic = {key: self.traffic.get(key, 0) for key in (
            "register_reads", "register_writes", "memory_reads", "memory_writes",
            "gradient_reads", "gradient_writes", "memory_gradient_reads",
            "memory_gradient_writes")}
        traffic["instruction_fetches"] = self.steps
        return {"direction": self.direction, "mode": self.mode,
                "by_energy_class": dict(self.by_energy_class),
                "cycles_by_energy_class": dict(self.cycles_by_energy_class),
                "adjoint_operations": dict(self.adjoint_operations), "traffic": traffic}


def _count_lines(counter: RunCounter, line_map: LineMap) -> dict[SourceLine | None, _LineCounts]:
    """The run of ``counter`` (counted ``by_pc``) summed per source line."""
    if counter.pc_steps is None:
        raise ValueError("the run was not counted by PC (RunCounter(..., by_pc=True))")
    run = counter.counts
    out: dict[SourceLine | None, _LineCounts] = {}
    for pc, steps in counter.pc_steps.items():
        where = line_map.line_of(pc)
        line = out.get(where)
        if line is None:
            line = out[where] = _LineCounts(run.direction, run.mode)
        profile = counter.profile(pc)
        cycles = counter.pc_cycles[pc]
        line.steps += steps
        line.cycles += cycles
        line.by_instruction[profile.mnemonic] += steps
        line.by_energy_class[profile.energy_class] += steps
        line.cycles_by_energy_class[profile.energy_class] += cycles
        line.traffic["register_reads"] += steps * profile.register_reads
        line.traffic["register_writes"] += steps * profile.register_writes
        line.traffic["memory_reads"] += steps * profile.memory_reads
        line.traffic["memory_writes"] += steps * profile.memory_writes
        gradient_reads, gradient_writes, memory_reads, memory_writes = profile.gradient
        line.traffic["gradient_reads"] += steps * gradient_reads
        line.traffic["gradient_writes"] += steps * gradient_writes
        line.traffic["memory_gradient_reads"] += steps * memory_reads
        line.traffic["memory_gradient_writes"] += steps * memory_writes
        for energy_class, n in profile.adjoint_operations:
            line.adjoint_operations[energy_class] += steps * n
        line.overwrites += steps * profile.overwrites
        line.tape_words += steps * profile.tape_words
        line.adjoint_updates += steps * profile.adjoint_updates
        line.conditional_branches += steps * int(profile.conditional)
        if profile.mnemonic == "EMIT" and run.direction == "forward":
            line.emitted += steps
    return out


def _bits_erased(forward: _LineCounts | None, width: int) -> dict[str, int]:
    """What a line's forward run erases in the scenarios of ``erasure.py`` (the words the
    protocol copies out belong to no line)."""
    if forward is None:
        return {"reversible": 0, "irreversible": 0, "tape": 0}
    return {"reversible": width * forward.emitted,
            "irreversible": width * forward.overwrites,
            "tape": width * (forward.tape_words + forward.adjoint_updates)
            + forward.conditional_branches}


def _energy(model: EnergyModel, runs: list[dict], bits: dict[str, int], width: int,
            models: dict[str, EnergyModel]) -> float | None:
    """Joules of one line under ``model`` (None: a model this report cannot split)."""
    if model.kind == "per_operation":
        return float(operation_energy(model, runs, width)["total_J"]) if runs else 0.0
    if model.kind == "landauer":
        return bits["reversible"] * landauer_joules_per_bit(model.data["temperature_K"])
    base = models.get(model.data["base_model"])
    if base is None or base.kind != "per_operation":
        return None
    switching = operation_energy(base, runs, width)["total_J"] if runs else 0.0
    factor = adiabatic_factor(model.data, model.data["switching_time_s"])
    return float(switching * factor + bits["reversible"]
                 * landauer_joules_per_bit(model.data["temperature_K"]))


def by_line(counters: Iterable[RunCounter], line_map: LineMap, width: int,
            models: list[EnergyModel], all_models: dict[str, EnergyModel]) -> dict:
    """The report's ``by_line`` section: every line that ran, in source order, with its
    steps and cycles forward and backward, its instructions, its energy per model and
    the bits its forward run erases."""
    per_run = [(counter.counts.direction, _count_lines(counter, line_map))
               for counter in counters]
    keys: set[SourceLine | None] = {key for _, lines in per_run for key in lines}
    rows: list[dict] = []
    for key in sorted(keys, key=lambda k: (1, "", 0) if k is None else (0, k[0], k[1])):
        parts = {direction: lines[key] for direction, lines in per_run if key in lines}
        forward, backward = parts.get("forward"), parts.get("backward")
        runs = [part.run() for part in parts.values()]
        bits = _bits_erased(forward, width)
        by_instruction: Counter = Counter()
        for part in parts.values():
            by_instruction.update(part.by_instruction)
        energy = {model.name: _energy(model, runs, bits, width, all_models) for model in models}
        rows.append({
            "file": key[0] if key else None, "line": key[1] if key else None,
            "text": line_map.text(key) if key else "",
            "steps": sum(p.steps for p in parts.values()),
            "cycles": sum(p.cycles for p in parts.values()),
            "forward": {"steps": forward.steps if forward else 0,
                        "cycles": forward.cycles if forward else 0},
            "backward": {"steps": backward.steps if backward else 0,
                         "cycles": backward.cycles if backward else 0},
            "by_instruction": dict(sorted(by_instruction.items())),
            "energy_J": {name: j for name, j in energy.items() if j is not None},
            "bits_erased": bits,
        })
    files = sorted({key[0] for key in keys if key is not None})
    return {"language": line_map.language, "files": files,
            "sources": {file: line_map.sources.get(file, []) for file in files},
            "lines": rows}


def line_totals(section: dict) -> dict:
    """The sums over the lines of a ``by_line`` section (what tests compare with the whole
    program's counts)."""
    rows = section["lines"]
    energy: Counter = Counter()
    bits: Counter = Counter()
    for row in rows:
        energy.update(row["energy_J"])
        bits.update(row["bits_erased"])
    return {"steps": sum(r["steps"] for r in rows), "cycles": sum(r["cycles"] for r in rows),
            "forward_steps": sum(r["forward"]["steps"] for r in rows),
            "backward_steps": sum(r["backward"]["steps"] for r in rows),
            "energy_J": dict(energy), "bits_erased": dict(bits)}
