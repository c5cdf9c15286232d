"""Lockstep co-simulation of the RTL core against the reference simulator.

The RTL runs in Amaranth's simulator (or a Verilator model, ``rtl/verification/verilator.py``)
and reports every retired instruction on its retire port; the reference machine
runs beside it, one instruction per retired one (``Machine.advance``), and after
every instruction the two must agree: PC, instruction word, every register, the
memory words touched, BR, DIR, OV and the output.  The states agreed before the
step, so only what it changed is compared, and nothing grows with the run: a
long run takes constant memory.  The first disagreement stops the comparison and
is reported with both states.  At the end the halt or fault (kind and PC) must
match, and the registers and the image's memory words, read back through the
host interface, must equal the reference machine's.

Cycles too: the reference counts the RTL core's cycles (``isa/timing``), so at every
retired instruction the RTL's commit edge, counted from the run pulse, plus the cycles
the schedule puts after a commit (WRITEB, NEXT) must equal the reference's count so
far, and a run that halts must drop ``busy`` exactly the reference's count of cycles
after the run pulse.

The host protocol and the comparison are written once, against a :class:`Bus`
(set and read host ports, clock, wait for the next retired instruction);
:class:`AmaranthBus` drives Amaranth's simulator, ``rtl/verification/verilator.py`` a
Verilator model.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from amaranth.sim import Simulator, SimulatorContext

from revasm.assembler.image import Image
from revasm.isa.codec import IllegalInstruction, decode
from revasm.isa.fixed_point import word_format
from revasm.isa.timing import NotTimed, step_timing
from revasm.isa.vocabulary import vocabulary
from revasm.machine import MachineFault, TraceRecord
from revasm.rtl.hardware.core import Core
from revasm.rtl.hardware.memory_map import MemoryMap
from revasm.rtl.hardware.params import FAULT_NAMES, CoreParams
from revasm.sim.reference import Machine
from revasm.sim.reference.engine import ReferenceLanes

if TYPE_CHECKING:  # the host's places: only a job's loss is one
    from revasm.sim.host import Place

TEST_MEMORY_WORDS = 256


@dataclass
class Job:
    """One program and the values the host loads before the first run."""

    image: Image
    registers: dict[int, int] = field(default_factory=dict)
    memory: dict[int, int] = field(default_factory=dict)
    directions: tuple[int, ...] = (1, -1)
    name: str = ""
    #: gradient mode: before the backward run, G[loss] = 1 and the gradient switch on
    #: (a ``revasm.sim.host.Place``); needs a core with the gradient bank
    loss: Place | None = None
    #: gradient mode for the forward run too (the host protocol runs it in value mode)
    gradient_forward: bool = False


@dataclass
class RunResult:
    """The outcome of one run (one direction) of one job."""

    direction: int
    steps: int
    status: str  # "finished", "fault", "divergence", "unimplemented"
    #: the RTL's clock cycles from the run pulse to the halt or fault (the core idle)
    cycles: int = 0
    fault_kind: str | None = None
    fault_pc: int | None = None
    divergence: str | None = None
    #: OV after the run (read signed through the host interface; None when it diverged)
    overflows: int | None = None
    #: a memory-address fault's address (W bits, the RTL's ``fault_addr``, equal to the
    #: reference's) and the reference's message for the fault
    fault_address: int | None = None
    fault_message: str | None = None
    #: the reference's count of the run's cycles (``isa/timing``: its completed
    #: instructions'); equal to ``cycles`` for a finished run, checked at every commit
    reference_cycles: int = 0

    @property
    def ok(self) -> bool:
        return self.status in ("finished", "fault")


@dataclass
class JobResult:
    job: Job
    runs: list[RunResult]

    @property
    def ok(self) -> bool:
        return all(run.ok for run in self.runs)


def _signed(word: int, width: int) -> int:
    return word - ((word & (1 << (width - 1))) << 1)


def _text(word: int, pc: int) -> str:
    try:
        ins, ops = decode(word & 0xFFFFFFFF)
    except IllegalInstruction:
        return f"word {word:#010x}"
    from revasm.sim.reference.predecode import instruction_text
    return instruction_text(ins, ops, pc)


#: One retired instruction: the retire port's members (``valid`` left out) by name.
Retired = dict


class Bus:
    """The core's two outside connections as the host protocol sees them.

    ``set``/``get`` a host port by its member name, ``tick`` one clock cycle,
    ``retired``: clock until an instruction retires (its retire-port record) or
    the core is no longer busy (``None``, also when ``watchdog`` cycles pass
    without a retired instruction).  ``cycles`` counts every clock cycle.
    """

    cycles: int = 0
    watchdog: int = 0
    #: ``cycles`` is exact when ``retired`` returns (so the schedule is checked per step)
    timed: bool = False

    def set(self, port: str, value: int) -> None:
        raise NotImplementedError

    def get(self, port: str) -> int:
        raise NotImplementedError

    async def tick(self) -> None:
        raise NotImplementedError

    async def retired(self) -> Retired | None:
        raise NotImplementedError


class AmaranthBus(Bus):
    """The bus of a core running in Amaranth's simulator (a testbench's ``ctx``)."""

    timed = True

    def __init__(self, ctx: SimulatorContext, core: Core, lockstep: Lockstep) -> None:
        self.ctx, self.core, self.lockstep = ctx, core, lockstep
        self.fields = [name for name in core.retire.signature.members if name != "valid"]

    @property
    def cycles(self) -> int:  # counted by the simulator's clock process
        return self.lockstep.cycles

    @cycles.setter
    def cycles(self, value: int) -> None:
        self.lockstep.cycles = value

    def set(self, port: str, value: int) -> None:
        self.ctx.set(getattr(self.core.host, port), value)

    def get(self, port: str) -> int:
        return self.ctx.get(getattr(self.core.host, port))

    async def tick(self) -> None:
        await self.ctx.tick()

    async def retired(self) -> Retired | None:
        ctx, retire = self.ctx, self.core.retire
        (valid,) = await ctx.tick().sample(retire.valid).until(retire.valid | ~self.core.host.busy)
        if not valid:
            return None
        return {name: ctx.get(getattr(retire, name)) for name in self.fields}


class _Checker:
    """One run's comparison, one retired instruction at a time, in constant memory.

    The reference machine runs beside the RTL: for every instruction the RTL retires it
    executes one step (:meth:`Machine.advance`), and then the two must agree on the whole
    architectural state.  They agreed before the step, so only what the step changed is
    compared: the RTL's register writes applied to its copy of the register file against
    the reference's file (one list comparison), each memory word either side touched,
    BR, DIR, OV and the output words it added.  What either side wrote to memory is kept
    (bounded by the memory, not by the run) to print both states on a divergence.
    """

    def __init__(self, machine: Machine, width: int) -> None:
        self.machine = machine
        self.width = width
        self.mask = (1 << width) - 1
        self.words = [word & 0xFFFFFFFF for word in machine.image.words]
        self.registers = list(machine.registers)  # the RTL's, from its retire port
        self.rtl_memory: dict[int, int] = {}      # words the RTL wrote
        self.ref_memory: dict[int, int] = {}      # words the reference changed
        self.steps = 0
        self.fault: MachineFault | None = None

    @property
    def done(self) -> bool:
        """The reference halted or faulted: it runs no further instruction."""
        return self.machine.halted or self.fault is not None

    def finish(self) -> int:
        """Run the reference to its end (the RTL stopped): the instructions it completed."""
        machine = self.machine
        if not self.done:
            try:
                machine.resume()
            except MachineFault as fault:
                self.fault = fault
        return machine.steps

    def step(self, retired: Retired) -> str | None:
        """Execute the reference's next instruction and compare the RTL's record of its
        own; the divergence, with both states, or ``None``."""
        machine = self.machine
        if machine.halted or self.fault is not None:
            return (f"the RTL retired instruction {self.steps + 1} at pc {retired['pc']}, "
                    f"but the reference stopped after {self.steps}")
        pc, output = machine.pc, machine.output
        output_before, completed = len(output), machine.steps
        touched, fault = machine.advance()
        if fault is not None:
            self.fault = fault
            if machine.steps == completed:  # it faulted before the instruction completed
                return (f"the RTL retired instruction {self.steps + 1} at pc "
                        f"{retired['pc']}, but the reference stopped after {self.steps}")
        self.steps += 1
        registers = self.registers
        if retired["wa_en"]:
            registers[retired["wa_addr"]] = retired["wa_data"]
        if retired["wb_en"]:
            registers[retired["wb_addr"]] = retired["wb_data"]
        if (retired["pc"] == pc and retired["insn"] == self.words[pc]
                and registers == machine.registers and not touched and not retired["mem_en"]
                and retired["br"] == machine.br
                and retired["ov"] == machine.overflow_counter[0]
                and retired["backward"] == (machine.direction < 0)
                and not retired["out_en"] and len(output) == output_before):
            return None  # the common case, in one expression: nothing differs
        return self._differences(retired, pc, touched, output_before)

    def _differences(self, retired: Retired, pc: int, touched: list[tuple[int, int]],
                     output_before: int) -> str | None:
        """The full comparison of one step (a memory access, an output word or a
        difference): what differs, with both states, or ``None``."""
        machine = self.machine
        if retired["pc"] != pc or retired["insn"] != self.words[pc]:
            return (f"{self._head(pc)}: the RTL retired pc {retired['pc']} "
                    f"({_text(retired['insn'], retired['pc'])}) instead")
        registers = self.registers
        problems = []
        if registers != machine.registers:
            problems += [f"${i}: rtl {_signed(a, self.width)} != reference "
                         f"{_signed(b, self.width)}"
                         for i, (a, b) in enumerate(zip(registers, machine.registers)) if a != b]
        if touched or retired["mem_en"]:
            problems += self._memory(retired, touched)
        if retired["br"] != machine.br:
            problems.append(f"BR: rtl {retired['br']} != reference {machine.br}")
        ov, ref_ov = retired["ov"] & self.mask, machine.overflow_counter[0] & self.mask
        if ov != ref_ov:
            problems.append(f"OV: rtl {_signed(ov, self.width)} != reference "
                            f"{_signed(ref_ov, self.width)}")
        direction = -1 if retired["backward"] else 1
        if direction != machine.direction:
            problems.append(f"DIR: rtl {direction:+d} != reference {machine.direction:+d}")
        if retired["out_en"] or len(machine.output) != output_before:
            rtl_output = [retired["out_data"]] if retired["out_en"] else []
            if rtl_output != machine.output[output_before:]:
                problems.append(f"output: rtl {rtl_output} != reference "
                                f"{machine.output[output_before:]}")
        if not problems:
            return None
        rtl = self._describe(registers, retired["br"], direction, ov, self.rtl_memory)
        ref = self._describe(machine.registers, machine.br, machine.direction, ref_ov,
                             self.ref_memory)
        return (f"{self._head(pc)}: " + "; ".join(problems)
                + f"\n  rtl:       {rtl}\n  reference: {ref}")

    def _memory(self, retired: Retired, touched: list[tuple[int, int]]) -> list[str]:
        """The words the step touched on either side: the RTL's write against the
        reference's word, and every other word the reference touched unchanged."""
        machine = self.machine
        written = retired["mem_addr"] if retired["mem_en"] else None
        if written is not None:
            self.rtl_memory[written] = retired["mem_data"]
        problems, seen = [], set()
        for address, before in touched:
            if address in seen:
                continue
            seen.add(address)
            index = machine.memory_index(address)
            now = 0 if index is None else machine.memory[index]  # None: never written, 0
            if now != before:
                self.ref_memory[address] = now
            rtl = retired["mem_data"] if address == written else before
            if rtl != now:
                problems.append(f"[{address}]: rtl {rtl} != reference {now}")
        if written is not None and written not in seen:
            index = machine.memory_index(written)
            now = 0 if index is None else machine.memory[index]
            if retired["mem_data"] != now:
                problems.append(f"[{written}]: rtl {retired['mem_data']} != reference {now}")
        return problems

    def _head(self, pc: int) -> str:
        cell = self.machine.program.cell(pc)
        return f"step {self.steps}, pc {pc}: " + (cell.text if cell else "(no instruction)")

    def _describe(self, registers: list[int], br: int, direction: int, ov: int,
                  memory: dict[int, int]) -> str:
        width = self.width
        regs = " ".join(f"${i}={_signed(v, width)}" for i, v in enumerate(registers) if v)
        mem = " ".join(f"[{a}]={_signed(v, width)}" for a, v in sorted(memory.items()))
        return (f"BR={br} DIR={direction:+d} OV={_signed(ov, width)} "
                f"registers: {regs or 'all zero'}"
                + (f"; memory written: {mem}" if mem else ""))


def reference_lane(job: Job, memory_map: MemoryMap,
                   max_steps: int | None = None) -> ReferenceLanes:
    """One lane of the reference engine, loaded with ``job``'s words; an address outside
    the core's memory map faults there as on the core."""
    for address in job.memory:
        problem = memory_map.outside(address)
        if problem:
            raise ValueError(f"{problem}: it cannot hold an initial word")
    machine = ReferenceLanes(job.image, 1, memory_words=memory_map.low_words,
                             max_steps=max_steps)
    for lane in machine.machines:
        lane.memory_map = memory_map.outside
    for register, value in job.registers.items():
        if register:
            machine.set_bank_word("R", register, value)
    for address, value in job.memory.items():
        machine.set_bank_word("MEM", address, value)
    return machine


class Lockstep:
    """A core in Amaranth's simulator and the testbench that drives it job after job.

    The protocol (``drive``, ``_job``, ``_run``) only talks to a :class:`Bus`, so
    another backend reuses it by giving its own bus (``rtl/verification/verilator.py``).
    """

    def __init__(self, params: CoreParams, *, max_steps: int = 1_000_000) -> None:
        self.params = params
        self.max_steps = max_steps
        self.core = Core(params)

    def run(self, jobs: list[Job], *, vcd: str | None = None,
            stop_on_divergence: bool = True) -> list[JobResult]:
        results: list[JobResult] = []
        core = self.core

        async def testbench(ctx: SimulatorContext) -> None:
            await self.drive(AmaranthBus(ctx, core, self), jobs, results, stop_on_divergence)

        async def count_cycles(ctx: SimulatorContext) -> None:
            async for _ in ctx.tick():
                self.cycles += 1

        self.cycles = 0
        sim = Simulator(core)
        sim.add_clock(1e-6)
        sim.add_process(count_cycles)
        sim.add_testbench(testbench)
        with (sim.write_vcd(vcd) if vcd else nullcontext()):
            sim.run()
        return results

    async def drive(self, bus: Bus, jobs: list[Job], results: list[JobResult],
                    stop_on_divergence: bool = True) -> None:
        """Run every job through the host protocol on ``bus``, appending to ``results``."""
        for job in jobs:
            result = JobResult(job, [])
            results.append(result)
            await self._job(bus, job, result)
            if stop_on_divergence and not result.ok:
                return

    # --- host interface -------------------------------------------------------------
    async def _write_memory(self, bus: Bus, address: int, word: int, code: bool) -> None:
        bus.set("mem_addr", address)
        bus.set("mem_wdata", word)
        bus.set("mem_code", int(code))
        bus.set("mem_we", 1)
        await bus.tick()
        bus.set("mem_we", 0)

    async def _write_register(self, bus: Bus, register: int, word: int) -> None:
        bus.set("reg_addr", register)
        bus.set("reg_wdata", word)
        bus.set("reg_we", 1)
        await bus.tick()
        bus.set("reg_we", 0)

    async def _read_register(self, bus: Bus, register: int) -> int:
        bus.set("reg_addr", register)
        await bus.tick()
        return bus.get("reg_rdata")

    async def _read_memory(self, bus: Bus, address: int) -> int:
        bus.set("mem_addr", address)
        await bus.tick()
        return bus.get("mem_rdata") & ((1 << self.params.width) - 1)

    async def _load(self, bus: Bus, job: Job, machine: ReferenceLanes) -> None:
        mask = (1 << self.params.width) - 1
        image = job.image
        state = machine.snapshot(0)
        if self.params.gradient:  # the gradient bank starts at zero
            bus.set("mem_wdata", 0)
            bus.set("reg_wdata", 0)
            bus.set("gmem_we", 1)
            for address in range(self.params.memory_words):
                bus.set("mem_addr", address)
                await bus.tick()
            bus.set("gmem_we", 0)
            bus.set("greg_we", 1)
            for register in range(32):
                bus.set("reg_addr", register)
                await bus.tick()
            bus.set("greg_we", 0)
        for cell, address in self.params.memory_map.cells():
            code = address < len(image) and image.is_code[address]
            await self._write_memory(bus, cell, state.word(address), code)
        for register in range(1, 32):
            await self._write_register(bus, register, state.registers[register] & mask)
        bus.set("reg_wdata", state.overflows & mask)  # OV
        bus.set("ov_we", 1)
        await bus.tick()
        bus.set("ov_we", 0)

    async def _write_gradient(self, bus: Bus, place: Place, word: int) -> None:
        """G[register] or GM[address] = word (the host seeds the loss's gradient)."""
        if place.register is not None:
            bus.set("reg_addr", place.register)
            bus.set("reg_wdata", word)
            bus.set("greg_we", 1)
            await bus.tick()
            bus.set("greg_we", 0)
        elif place.address is not None:
            bus.set("mem_addr", place.address)
            bus.set("mem_wdata", word)
            bus.set("gmem_we", 1)
            await bus.tick()
            bus.set("gmem_we", 0)
        else:
            raise ValueError(f"the loss {place.name} is neither a register nor a memory word")

    # --- one job ---------------------------------------------------------------------
    async def _job(self, bus: Bus, job: Job, result: JobResult) -> None:
        p = self.params
        image = job.image
        machine = reference_lane(job, p.memory_map, self.max_steps)
        one = 1 << (32 if image.width == 64 else 16)  # 1.0 in Q32.32 / Q16.16
        await self._load(bus, job, machine)
        for direction in job.directions:
            if direction < 0 and image.finish is None:
                continue
            loss = job.loss
            grad = loss is not None and (direction < 0 or job.gradient_forward)
            if loss is not None and grad:
                if not p.gradient:
                    raise ValueError("gradient mode needs a core built with the gradient bank")
                machine.gradient = True
                loss.write(machine, one, "G")
                await self._write_gradient(bus, loss, one)
            run = await self._run(bus, machine, direction, grad)
            result.runs.append(run)
            if not run.ok or run.status == "fault":
                return

    async def _run(self, bus: Bus, machine: ReferenceLanes, direction: int,
                   grad: bool = False) -> RunResult:
        p = self.params
        w = p.width
        image = machine.image
        initial = machine.snapshot(0)
        start = image.entry if direction > 0 else image.finish
        if start is None:
            raise ValueError("a backward run needs the program's FINISH")
        # the reference runs beside the RTL, one instruction per retired one; it starts
        # where the last run halted, facing back, with BR kept (a jump onto FINISH)
        (reference,) = machine.machines
        reference.begin(direction)
        checker = _Checker(reference, w)
        bus.set("start_pc", start)
        bus.set("backward", int(direction < 0))
        if p.gradient:
            bus.set("grad", int(grad))
        bus.set("run", 1)
        await bus.tick()
        bus.set("run", 0)
        steps = 0

        first_cycle = bus.cycles
        # the cycle the core went idle (halt or fault): the run's cycles end there
        ended: list[int] = []

        def stop(status: str, message: str | None = None, kind: str | None = None,
                 pc: int | None = None) -> RunResult:
            ov = None if status == "divergence" else _signed(bus.get("ov"), w)
            # the bus sees the core one cycle late (a retire record, busy low)
            cycles = (ended[0] if ended else bus.cycles) - first_cycle - 1
            run = RunResult(direction, steps, status, cycles, kind, pc, message, ov,
                            reference_cycles=reference.cycles)
            ref_fault = checker.fault
            if status == "fault" and ref_fault is not None:
                run.fault_message = ref_fault.message
                if kind == "memory-address":
                    run.fault_address = bus.get("fault_addr")
            return run

        # The reference's cycle count (isa/timing) after each step must put the step's
        # commit where the RTL made it: the commit edge (counted from the run pulse; the
        # bus sees it one cycle later, on the retire port) plus the cycles the schedule
        # puts after a commit (WRITEB, NEXT).  Those are checked by the next commit, and
        # the last instruction's by the halt.
        timed = bus.timed
        after: dict[tuple[int, bool], int] = {}  # per instruction word and direction
        while True:
            retired = await bus.retired()
            if retired is None:
                ended.append(bus.cycles)
                break
            problem = checker.step(retired)
            steps = checker.steps
            if problem:
                return stop("divergence", problem)
            if timed:
                key = (retired["insn"], bool(retired["backward_in"]))
                tail = after.get(key)
                if tail is None:
                    try:
                        entry, _ = decode(key[0] & 0xFFFFFFFF)
                        tail = after[key] = step_timing(entry, key[1], grad, w).after_commit
                    except (IllegalInstruction, NotTimed) as exc:  # pragma: no cover
                        return stop("divergence", f"step {steps}, pc {retired['pc']}: the "
                                    f"RTL retired an instruction with no timing: {exc}")
                commit = bus.cycles - first_cycle - 1
                if commit + tail != reference.cycles:
                    return stop("divergence", f"step {steps}, pc {retired['pc']}: the RTL "
                                f"committed it {commit} cycles after the run pulse, the "
                                "reference's cycle count (isa/timing) puts the commit at "
                                f"{reference.cycles - tail}")
        if bus.get("busy"):
            return stop("divergence", f"the RTL is stuck at pc {bus.get('pc')}: no instruction "
                        f"retired for {bus.watchdog} cycles after step {steps}")
        fault = bus.get("fault")
        kind = FAULT_NAMES[bus.get("fault_kind")] if fault else None
        fault_pc = bus.get("fault_pc") if fault else None
        if kind == "unimplemented" and fault_pc is not None:  # a fault has its pc
            return stop("unimplemented", f"pc {fault_pc}: {_text(image.words[fault_pc], fault_pc)}"
                        " needs a unit or gradient-mode step this core was built without",
                        kind, fault_pc)
        # the reference goes on to its end: a fault before its next instruction completes
        # (as the RTL's did), or more instructions than the RTL ran
        if checker.finish() != steps:
            return stop("divergence", f"the RTL stopped after {steps} instructions "
                        f"({kind or 'halted'} at pc {bus.get('pc')}), the reference "
                        f"after {checker.machine.steps}")
        ref_fault = checker.fault
        final = machine.snapshot(0)
        if ref_fault is not None:
            if not fault or kind != ref_fault.kind or fault_pc != ref_fault.pc:
                return stop("divergence", f"the reference faulted ({ref_fault.kind} at pc "
                            f"{ref_fault.pc}), the RTL "
                            + (f"faulted ({kind} at pc {fault_pc})" if fault else "halted"))
            if kind == "memory-address" and bus.get("fault_addr") != ref_fault.address:
                return stop("divergence", f"memory-address fault at pc {fault_pc}: the RTL "
                            f"names address {bus.get('fault_addr')}, the reference "
                            f"{ref_fault.address}")
        elif fault or not bus.get("halted"):
            return stop("divergence", f"the reference halted, the RTL faulted ({kind} at pc "
                        f"{fault_pc})")
        elif timed and ended[0] - first_cycle - 1 != reference.cycles:
            return stop("divergence", f"the RTL halted {ended[0] - first_cycle - 1} cycles "
                        f"after the run pulse, the reference counts {reference.cycles}")
        # the whole state, read back through the host interface
        if bus.get("ov") != final.overflows & ((1 << w) - 1):
            return stop("divergence", f"after the run OV reads {_signed(bus.get('ov'), w)} on "
                        f"the RTL, {final.overflows} on the reference")
        for register in range(32):
            word = await self._read_register(bus, register)
            if word != final.registers[register]:
                return stop("divergence", f"after the run ${register} reads "
                            f"{_signed(word, w)} on the RTL, "
                            f"{_signed(final.registers[register], w)} on the reference")
        # the image's words, and every word of the stack window either side wrote or held
        memory_map = p.memory_map
        stack = {address for address, _word in initial.high_memory} | {
            address for address in (*checker.rtl_memory, *checker.ref_memory)
            if address >= len(image)}
        for address in [*range(len(image)), *sorted(stack)]:
            cell = memory_map.cell(address)
            word = await self._read_memory(bus, cell) if cell is not None else 0
            if word != final.word(address):
                return stop("divergence", f"after the run memory [{address}] reads {word} on "
                            f"the RTL, {final.word(address)} on the reference")
        if grad:  # the gradient bank, read back
            for register in range(32):
                bus.set("reg_addr", register)
                await bus.tick()
                word = bus.get("greg_rdata")
                expected = int(machine.bank_word("G", register)[0])
                if word != expected:
                    return stop("divergence", f"after the gradient run G[${register}] reads "
                                f"{_signed(word, w)} on the RTL, "
                                f"{_signed(expected, w)} on the reference")
            for cell, address in p.memory_map.cells():
                bus.set("mem_addr", cell)
                await bus.tick()
                word = bus.get("gmem_rdata")
                expected = int(machine.bank_word("GM", address)[0])
                if word != expected:
                    return stop("divergence", f"after the gradient run GM[{address}] reads "
                                f"{_signed(word, w)} on the RTL, "
                                f"{_signed(expected, w)} on the reference")
        if ref_fault is not None:
            return stop("fault", None, kind, fault_pc)
        return stop("finished")


def overflow_count(record: TraceRecord, image: Image, registers: list[int],
                    width: int) -> int:
    """What the reference's step ``record`` adds to OV (+1, -1 or 0): the table template's
    ``OV[0] = ...`` statement, run with the reference's vocabulary over the registers the
    step read (the trace records no OV)."""
    entry, operands = decode(image.words[record.pc] & 0xFFFFFFFF)
    template = entry.forward if record.direction > 0 else entry.backward
    if "OV[" not in template:
        return 0
    fmt = word_format(width)
    counter = [0]
    namespace = dict(vocabulary(fmt), R=list(registers), OV=counter, overflow=lambda flag: flag)
    exec(template.format(**operands), namespace)
    return fmt.signed(counter[0])


def lockstep(jobs: list[Job], params: CoreParams, *, vcd: str | None = None,
             max_steps: int = 1_000_000) -> list[JobResult]:
    """Run every job's program forward then backward on the RTL and the reference."""
    return Lockstep(params, max_steps=max_steps).run(jobs, vcd=vcd)
