"""Counting one run: a trace callback for the reference machine.

``RunCounter(machine)`` is passed as ``machine.run(direction, trace=counter)``;
after every executed instruction the machine hands it a ``TraceRecord`` and it
adds the instruction's counts: steps, its cycles on the RTL core (``isa/timing``: the
fixed part, and a unit call whose cycles depend on its operands timed from the registers,
which the counter follows through the trace), the instruction, its class,
register-file and memory reads and writes (from the table's templates, see
``access.py``), what an irreversible machine and a taping AD tool would do for
it, and the zero / non-zero changes that give peak occupancy.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from revasm.isa.timing import step_cycles
from revasm.machine import TraceRecord
from revasm.sim.engine import Lanes
from revasm.sim.reference import Program

from .access import access_of, adjoint_access, adjoint_updates
from .classes import report_class
from .occupancy import Occupancy


@dataclass
class _Profile:
    """Per (pc, direction): what one execution of that cell adds."""

    mnemonic: str
    energy_class: str
    report_class: str
    cycles: int  # the fixed cycles (all of them unless ``timed``)
    register_reads: int
    register_writes: int
    memory_reads: int
    memory_writes: int
    overwrites: int
    tape_words: int
    conditional: bool
    adjoint_updates: int
    gradient: tuple[int, int, int, int] = (0, 0, 0, 0)
    adjoint_operations: tuple[tuple[str, int], ...] = ()
    timed: bool = False  # a unit call's cycles depend on its operands


@dataclass
class RunCounts:
    """Everything counted over one run (one direction, one mode)."""

    direction: str
    mode: str
    steps: int = 0
    cycles: int = 0
    by_instruction: Counter = field(default_factory=Counter)
    by_class: Counter = field(default_factory=Counter)
    by_energy_class: Counter = field(default_factory=Counter)
    cycles_by_energy_class: Counter = field(default_factory=Counter)
    register_reads: int = 0
    register_writes: int = 0
    memory_reads: int = 0
    memory_writes: int = 0
    branches_taken: int = 0
    conditional_branches: int = 0
    overwrites: int = 0
    tape_words: int = 0
    adjoint_updates: int = 0
    gradient_reads: int = 0
    gradient_writes: int = 0
    memory_gradient_reads: int = 0
    memory_gradient_writes: int = 0
    adjoint_operations: Counter = field(default_factory=Counter)
    occupancy: dict = field(default_factory=dict)

    @property
    def instruction_fetches(self) -> int:
        return self.steps

    def traffic(self) -> dict[str, int]:
        return {"register_reads": self.register_reads, "register_writes": self.register_writes,
                "memory_reads": self.memory_reads, "memory_writes": self.memory_writes,
                "instruction_fetches": self.instruction_fetches,
                "gradient_reads": self.gradient_reads, "gradient_writes": self.gradient_writes,
                "memory_gradient_reads": self.memory_gradient_reads,
                "memory_gradient_writes": self.memory_gradient_writes}

    def to_dict(self) -> dict:
        return {
            "direction": self.direction, "mode": self.mode, "steps": self.steps,
            "cycles": self.cycles,
            "by_instruction": dict(sorted(self.by_instruction.items())),
            "by_class": dict(sorted(self.by_class.items())),
            "by_energy_class": dict(sorted(self.by_energy_class.items())),
            "cycles_by_energy_class": dict(sorted(self.cycles_by_energy_class.items())),
            "traffic": self.traffic(),
            "branches": {"conditional": self.conditional_branches, "taken": self.branches_taken},
            "irreversible_overwrites": self.overwrites,
            "tape_words": self.tape_words,
            "adjoint_updates": self.adjoint_updates,
            "adjoint_operations": dict(sorted(self.adjoint_operations.items())),
            "occupancy": self.occupancy,
        }


class RunCounter:
    """Trace callback that counts a run of ``machine``; call ``finish()`` after it."""

    def __init__(self, machine: Lanes, *, direction: int, mode: str = "value",
                 by_pc: bool = False) -> None:
        self.machine = machine
        #: with ``by_pc``: steps and cycles per PC (``by_line.py`` sums them per source line)
        self.pc_steps: Counter | None = Counter() if by_pc else None
        self.pc_cycles: Counter = Counter()
        self.counts = RunCounts("forward" if direction > 0 else "backward", mode)
        self._cells = Program.of(machine.image).cells
        # In gradient mode a backward step also runs the instruction's adjoint rule.
        self._adjoint = mode == "gradient" and direction < 0
        self._profiles: dict[tuple[int, int], _Profile] = {}
        self.occupancy = Occupancy(machine)
        #: the cycles are the RTL's in the machine's mode (the gradient switch's)
        self._gradient = bool(getattr(machine, "gradient", False))
        #: the registers, followed through the trace (a timed unit call reads them)
        self._registers = list(machine.snapshot(0).registers)

    def _profile(self, pc: int, direction: int) -> _Profile:
        cell = self._cells[pc]
        ins = cell.instruction
        if ins is None:  # the machine faults at an illegal cell before it traces a step
            raise ValueError(f"a traced step at PC {pc}, which holds no instruction")
        access = access_of(ins, direction)
        operands = cell.operands
        reads = {operands[name] for name in access.register_reads} - {0}
        writes = {operands[name] for name in access.register_writes} - {0}
        stored = len(writes) + access.memory_writes
        profile = _Profile(
            mnemonic=ins.mnemonic, energy_class=ins.energy_class,
            report_class=report_class(ins.energy_class),
            cycles=cell.fixed_cycles(direction, self._gradient),
            timed=cell.cycles_expression(direction, self._gradient) is not None,
            register_reads=len(reads), register_writes=len(writes),
            memory_reads=access.memory_reads, memory_writes=access.memory_writes,
            # An irreversible machine exchanges words through one temporary.
            overwrites=1 if access.permutation else stored,
            tape_words=0 if access.permutation else stored,
            conditional=ins.kind == "branch" and ins.condition.strip() != "True",
            adjoint_updates=adjoint_updates(ins))
        if self._adjoint and direction < 0:
            rule = adjoint_access(ins)
            # Distinct gradient registers once the operands are known (b may equal c).
            gradient_reads = {operands[name] for name in rule.gradient_reads} - {0}
            gradient_writes = {operands[name] for name in rule.gradient_writes} - {0}
            profile.gradient = (len(gradient_reads), len(gradient_writes),
                                rule.memory_gradient_reads, rule.memory_gradient_writes)
            profile.adjoint_operations = rule.operations
        self._profiles[(pc, direction)] = profile
        return profile

    def __call__(self, record: TraceRecord) -> None:
        key = (record.pc, record.direction)
        profile = self._profiles.get(key) or self._profile(*key)
        counts = self.counts
        registers = self._registers
        for register, _old, new in record.registers:
            registers[register] = new
        cycles = profile.cycles
        if profile.timed:  # from registers the step does not write: as they are after it
            cycles = step_cycles(self.machine.image.words[record.pc], record.direction < 0,
                                 registers, record.width, gradient=self._gradient)
        counts.steps += 1
        counts.cycles += cycles
        counts.by_instruction[profile.mnemonic] += 1
        counts.by_class[profile.report_class] += 1
        counts.by_energy_class[profile.energy_class] += 1
        counts.cycles_by_energy_class[profile.energy_class] += cycles
        counts.register_reads += profile.register_reads
        counts.register_writes += profile.register_writes
        counts.memory_reads += profile.memory_reads
        counts.memory_writes += profile.memory_writes
        counts.overwrites += profile.overwrites
        counts.tape_words += profile.tape_words
        counts.adjoint_updates += profile.adjoint_updates
        if profile.conditional:
            counts.conditional_branches += 1
        if profile.adjoint_operations or any(profile.gradient):
            reads, writes, memory_reads, memory_writes = profile.gradient
            counts.gradient_reads += reads
            counts.gradient_writes += writes
            counts.memory_gradient_reads += memory_reads
            counts.memory_gradient_writes += memory_writes
            counts.adjoint_operations.update(dict(profile.adjoint_operations))
        if record.br is not None and record.br[0] == 0 and record.br[1] != 0:
            counts.branches_taken += 1
        self.occupancy.observe(record)
        if self.pc_steps is not None:  # the step's cycles as counted above, whatever they are
            self.pc_steps[record.pc] += 1
            self.pc_cycles[record.pc] += cycles

    def profile(self, pc: int) -> _Profile:
        """What one execution of the instruction at ``pc`` adds, in this run's direction."""
        direction = 1 if self.counts.direction == "forward" else -1
        return self._profiles.get((pc, direction)) or self._profile(pc, direction)

    def finish(self) -> RunCounts:
        """Close the run: compute peak occupancy from the final state."""
        self.counts.occupancy = self.occupancy.summary()
        return self.counts
