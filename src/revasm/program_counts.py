"""Instruction counts of a compiled program's run: reversible total against irreversible estimate.

Every emitted instruction carries a role (``backend/code.py``).  The
*irreversible count* is what a conventional machine would still execute: the
forward ``compute`` and ``control`` instructions (the arithmetic, the branch
tests, loop counters and call jumps), never the uncomputation, the paired
catching branches and guards, or the register saving around calls; every
instruction executed while the machine runs backward (an uncall) counts as
uncomputation.  NiLang's *uncomputing level* is log2(reversible / irreversible):
each level of compute-copy-uncompute nesting roughly doubles the work.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from revasm.compiler.api import CompiledProgram
from revasm.machine import TraceRecord
from revasm.sim.engines import choose
from revasm.sim.host import load_inputs as load_defaults

from .programs import load_inputs, program_fault

IRREVERSIBLE_ROLES = ("compute", "control")


@dataclass
class Counts:
    steps: int
    by_role: dict[str, int]
    backward_steps: int
    irreversible: int
    static: int

    @property
    def level(self) -> float:
        return math.log2(self.steps / self.irreversible) if self.irreversible else 0.0

    def as_dict(self) -> dict:
        return {"static_instructions": self.static, "executed": self.steps,
                "irreversible_estimate": self.irreversible,
                "uncomputing_level": round(self.level, 3), "by_role": self.by_role,
                "executed_backward": self.backward_steps}


def count_program(program: CompiledProgram, inputs: dict[str, Any],
          max_steps: int | None = None) -> Counts:
    """Run forward once, counting executed instructions by role and direction."""
    machine = choose("auto", trace=True).load(program.image, 1, max_steps=max_steps)
    load_defaults(machine, program.image)  # the parameters' declared defaults, then inputs
    load_inputs(program, machine, inputs)
    per_pc: Counter = Counter()

    def trace(record: TraceRecord) -> None:
        per_pc[(record.pc, record.direction)] += 1

    machine.run(1, trace=trace)  # type: ignore[call-arg]
    fault = machine.fault(0)
    if fault is not None:
        raise program_fault(program, fault) from None
    by_role: Counter = Counter()
    backward = irreversible = 0
    for (pc, direction), n in per_pc.items():
        role = program.role_of_pc(pc)
        if direction < 0:
            backward += n
            by_role["uncompute"] += n
            continue
        by_role[role] += n
        if role in IRREVERSIBLE_ROLES:
            irreversible += n
    return Counts(int(machine.steps[0]), dict(sorted(by_role.items())), backward, irreversible,
                  sum(program.image.is_code))
