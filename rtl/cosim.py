"""Lockstep co-simulation of the RTL core against the reference simulator.

The reference runs the program first and records one :class:`TraceRecord` per
instruction; the RTL runs in Amaranth's simulator and reports every retired
instruction on its retire port.  Both sides keep a shadow of the
architectural state (registers, the memory words written, BR, DIR, the output
words), updated from the reference's records and from the retire port, and
after every instruction the two must agree: PC, instruction word, every
register, every written memory word, BR, DIR and the output.  The first
disagreement stops the comparison and is reported with both states.  At the
end the halt or fault (kind and PC) must match, and the registers and the
image's memory words, read back through the host interface, must equal the
reference machine's.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

from amaranth.sim import Simulator

from revasm.assembler.image import Image
from revasm.isa.codec import IllegalInstruction, decode
from revasm.sim.reference import Machine, MachineFault
from revasm.sim.reference.trace import TraceRecord

from .core import Core
from .params import FAULT_CODE, FAULT_NAMES, CoreParams

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
    #: (a ``revasm.sim.reference.gradient.Place``); needs a core with the gradient bank
    loss: object | None = None


@dataclass
class RunResult:
    """The outcome of one run (one direction) of one job."""

    direction: int
    steps: int
    status: str  # "finished", "fault", "divergence", "unimplemented"
    cycles: int = 0
    fault_kind: str | None = None
    fault_pc: int | None = None
    divergence: str | None = None

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


class _Shadow:
    """Architectural state rebuilt from per-instruction deltas."""

    def __init__(self, registers: list[int], br: int = 0, direction: int = 1) -> None:
        self.registers = list(registers)
        self.memory: dict[int, int] = {}
        self.br = br
        self.direction = direction
        self.output: list[int] = []

    def describe(self, width: int) -> str:
        regs = " ".join(f"${i}={_signed(v, width)}" for i, v in enumerate(self.registers) if v)
        mem = " ".join(f"[{a}]={_signed(v, width)}" for a, v in sorted(self.memory.items()))
        return (f"BR={self.br} DIR={self.direction:+d} registers: {regs or 'all zero'}"
                + (f"; memory written: {mem}" if mem else ""))


def _compare(rtl: _Shadow, ref: _Shadow, width: int, initial: list[int]) -> list[str]:
    out = []
    for i, (a, b) in enumerate(zip(rtl.registers, ref.registers)):
        if a != b:
            out.append(f"${i}: rtl {_signed(a, width)} != reference {_signed(b, width)}")
    for address in sorted(set(rtl.memory) | set(ref.memory)):
        a = rtl.memory.get(address, initial[address])
        b = ref.memory.get(address, initial[address])
        if a != b:
            out.append(f"[{address}]: rtl {a} != reference {b}")
    if rtl.br != ref.br:
        out.append(f"BR: rtl {rtl.br} != reference {ref.br}")
    if rtl.direction != ref.direction:
        out.append(f"DIR: rtl {rtl.direction:+d} != reference {ref.direction:+d}")
    if rtl.output != ref.output:
        out.append(f"output: rtl {rtl.output} != reference {ref.output}")
    return out


def _reference_run(machine: Machine, direction: int) -> tuple[list[TraceRecord], MachineFault | None]:
    records: list[TraceRecord] = []
    try:
        machine.run(direction, trace=records.append)
    except MachineFault as fault:
        return records, fault
    return records, None


class Lockstep:
    """A core in Amaranth's simulator and the testbench that drives it job after job."""

    def __init__(self, params: CoreParams, *, max_steps: int = 1_000_000) -> None:
        self.params = params
        self.max_steps = max_steps
        self.core = Core(params)

    def run(self, jobs: list[Job], *, vcd: str | None = None,
            stop_on_divergence: bool = True) -> list[JobResult]:
        results: list[JobResult] = []
        core = self.core

        async def testbench(ctx) -> None:
            for job in jobs:
                result = JobResult(job, [])
                results.append(result)
                await self._job(ctx, job, result)
                if stop_on_divergence and not result.ok:
                    return

        async def count_cycles(ctx) -> None:
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

    # --- host interface -------------------------------------------------------------
    async def _write_memory(self, ctx, address: int, word: int, code: bool) -> None:
        host = self.core.host
        ctx.set(host.mem_addr, address)
        ctx.set(host.mem_wdata, word)
        ctx.set(host.mem_code, int(code))
        ctx.set(host.mem_we, 1)
        await ctx.tick()
        ctx.set(host.mem_we, 0)

    async def _write_register(self, ctx, register: int, word: int) -> None:
        host = self.core.host
        ctx.set(host.reg_addr, register)
        ctx.set(host.reg_wdata, word)
        ctx.set(host.reg_we, 1)
        await ctx.tick()
        ctx.set(host.reg_we, 0)

    async def _read_register(self, ctx, register: int) -> int:
        host = self.core.host
        ctx.set(host.reg_addr, register)
        await ctx.tick()
        return ctx.get(host.reg_rdata)

    async def _read_memory(self, ctx, address: int) -> int:
        host = self.core.host
        ctx.set(host.mem_addr, address)
        await ctx.tick()
        return ctx.get(host.mem_rdata) & ((1 << self.params.width) - 1)

    async def _load(self, ctx, job: Job, machine: Machine) -> None:
        mask = (1 << self.params.width) - 1
        image = job.image
        host = self.core.host
        if self.params.gradient:  # the gradient bank starts at zero
            ctx.set(host.mem_wdata, 0)
            ctx.set(host.reg_wdata, 0)
            ctx.set(host.gmem_we, 1)
            for address in range(self.params.memory_words):
                ctx.set(host.mem_addr, address)
                await ctx.tick()
            ctx.set(host.gmem_we, 0)
            ctx.set(host.greg_we, 1)
            for register in range(32):
                ctx.set(host.reg_addr, register)
                await ctx.tick()
            ctx.set(host.greg_we, 0)
        for address in range(self.params.memory_words):
            code = address < len(image) and image.is_code[address]
            await self._write_memory(ctx, address, machine.memory[address], code)
        for register in range(1, 32):
            await self._write_register(ctx, register, machine.registers[register] & mask)

    async def _write_gradient(self, ctx, place, word: int) -> None:
        """G[register] or GM[address] = word (the host seeds the loss's gradient)."""
        host = self.core.host
        if place.register is not None:
            ctx.set(host.reg_addr, place.register)
            ctx.set(host.reg_wdata, word)
            ctx.set(host.greg_we, 1)
            await ctx.tick()
            ctx.set(host.greg_we, 0)
        else:
            ctx.set(host.mem_addr, place.address)
            ctx.set(host.mem_wdata, word)
            ctx.set(host.gmem_we, 1)
            await ctx.tick()
            ctx.set(host.gmem_we, 0)

    # --- one job ---------------------------------------------------------------------
    async def _job(self, ctx, job: Job, result: JobResult) -> None:
        p = self.params
        image = job.image
        machine = Machine(image, memory_words=p.memory_words, max_steps=self.max_steps)
        for register, value in job.registers.items():
            machine.registers[register] = value & machine.fmt.mask
        for address, value in job.memory.items():
            machine.memory[address] = value & machine.fmt.mask
        await self._load(ctx, job, machine)
        for direction in job.directions:
            if direction < 0 and image.finish is None:
                continue
            grad = job.loss is not None and direction < 0
            if grad:
                if not p.gradient:
                    raise ValueError("gradient mode needs a core built with the gradient bank")
                machine.gradient = True
                job.loss.write(machine.gradients, machine.memory_gradients, machine.fmt.one)
                await self._write_gradient(ctx, job.loss, machine.fmt.one)
            run = await self._run(ctx, machine, direction, grad)
            result.runs.append(run)
            if not run.ok or run.status == "fault":
                return

    async def _run(self, ctx, machine: Machine, direction: int, grad: bool = False) -> RunResult:
        p = self.params
        w = p.width
        core = self.core
        host, retire = core.host, core.retire
        image = machine.image
        ref = _Shadow(machine.registers, 0, direction)
        rtl = _Shadow(machine.registers, 0, direction)
        initial_memory = list(machine.memory)
        records, ref_fault = _reference_run(machine, direction)
        start = image.entry if direction > 0 else image.finish
        ctx.set(host.start_pc, start)
        ctx.set(host.backward, int(direction < 0))
        if p.gradient:
            ctx.set(host.grad, int(grad))
        ctx.set(host.run, 1)
        await ctx.tick()
        ctx.set(host.run, 0)
        steps = 0
        event = retire.valid | ~host.busy

        first_cycle = self.cycles

        def stop(status: str, message: str | None = None, kind=None, pc=None) -> RunResult:
            return RunResult(direction, steps, status, self.cycles - first_cycle, kind, pc,
                             message)

        while True:
            (valid,) = await ctx.tick().sample(retire.valid).until(event)
            if not valid:
                break
            # one retired instruction
            if steps >= len(records):
                return stop("divergence", f"the RTL retired instruction {steps + 1} at pc "
                            f"{ctx.get(retire.pc)}, but the reference stopped after {steps}")
            record = records[steps]
            steps += 1
            pc = ctx.get(retire.pc)
            insn = ctx.get(retire.insn)
            head = f"step {steps}, pc {record.pc}: {record.text}"
            if pc != record.pc or insn != image.words[record.pc] & 0xFFFFFFFF:
                return stop("divergence", f"{head}: the RTL retired pc {pc} "
                            f"({_text(insn, pc)}) instead")
            for reg_en, reg_addr, reg_data in ((retire.wa_en, retire.wa_addr, retire.wa_data),
                                               (retire.wb_en, retire.wb_addr, retire.wb_data)):
                if ctx.get(reg_en):
                    rtl.registers[ctx.get(reg_addr)] = ctx.get(reg_data)
            if ctx.get(retire.mem_en):
                rtl.memory[ctx.get(retire.mem_addr)] = ctx.get(retire.mem_data)
            rtl.br = ctx.get(retire.br)
            rtl.direction = -1 if ctx.get(retire.backward) else 1
            if ctx.get(retire.out_en):
                rtl.output.append(ctx.get(retire.out_data))
            for register, _old, new in record.registers:
                ref.registers[register] = new
            for address, _old, new in record.memory:
                ref.memory[address] = new
            if record.br is not None:
                ref.br = record.br[1]
            if record.dir_change is not None:
                ref.direction = record.dir_change[1]
            ref.output.extend(record.output)
            problems = _compare(rtl, ref, w, initial_memory)
            if problems:
                return stop("divergence", f"{head}: " + "; ".join(problems)
                            + f"\n  rtl:       {rtl.describe(w)}\n  reference: {ref.describe(w)}")
        fault = ctx.get(host.fault)
        kind = FAULT_NAMES[ctx.get(host.fault_kind)] if fault else None
        fault_pc = ctx.get(host.fault_pc) if fault else None
        if kind == "unimplemented":
            return stop("unimplemented", f"pc {fault_pc}: {_text(image.words[fault_pc], fault_pc)}"
                        " needs a unit or gradient-mode step this core was built without",
                        kind, fault_pc)
        if steps != len(records):
            return stop("divergence", f"the RTL stopped after {steps} instructions "
                        f"({kind or 'halted'} at pc {ctx.get(host.pc)}), the reference "
                        f"after {len(records)}")
        if ref_fault is not None:
            if not fault or kind != ref_fault.kind or fault_pc != ref_fault.pc:
                return stop("divergence", f"the reference faulted ({ref_fault.kind} at pc "
                            f"{ref_fault.pc}), the RTL "
                            + (f"faulted ({kind} at pc {fault_pc})" if fault else "halted"))
        elif fault or not ctx.get(host.halted):
            return stop("divergence", f"the reference halted, the RTL faulted ({kind} at pc "
                        f"{fault_pc})")
        # the whole state, read back through the host interface
        for register in range(32):
            word = await self._read_register(ctx, register)
            if word != machine.registers[register]:
                return stop("divergence", f"after the run ${register} reads "
                            f"{_signed(word, w)} on the RTL, {machine.get_register(register)} "
                            "on the reference")
        for address in range(len(image)):
            word = await self._read_memory(ctx, address)
            if word != machine.memory[address]:
                return stop("divergence", f"after the run memory [{address}] reads {word} on "
                            f"the RTL, {machine.memory[address]} on the reference")
        if grad:  # the gradient bank, read back
            for register in range(32):
                ctx.set(host.reg_addr, register)
                await ctx.tick()
                word = ctx.get(host.greg_rdata)
                if word != machine.gradients[register]:
                    return stop("divergence", f"after the gradient run G[${register}] reads "
                                f"{_signed(word, w)} on the RTL, "
                                f"{_signed(machine.gradients[register], w)} on the reference")
            for address in range(p.memory_words):
                ctx.set(host.mem_addr, address)
                await ctx.tick()
                word = ctx.get(host.gmem_rdata)
                if word != machine.memory_gradients[address]:
                    return stop("divergence", f"after the gradient run GM[{address}] reads "
                                f"{_signed(word, w)} on the RTL, "
                                f"{_signed(machine.memory_gradients[address], w)} on the "
                                "reference")
        if ref_fault is not None:
            return stop("fault", None, kind, fault_pc)
        return stop("finished")


def lockstep(jobs: list[Job], params: CoreParams, *, vcd: str | None = None,
             max_steps: int = 1_000_000) -> list[JobResult]:
    """Run every job's program forward then backward on the RTL and the reference."""
    return Lockstep(params, max_steps=max_steps).run(jobs, vcd=vcd)
