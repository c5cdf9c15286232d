"""The timeline: one reference machine moved one instruction at a time, either way.

Going back one instruction is running the machine the other way: after a step the last
instruction executed sits at ``pc - (BR or 1)·DIR`` (the PC moves by BR·DIR after a jump,
by DIR otherwise: ``revasm.machine.previous_pc``), so undoing it is executing that
instruction with DIR negated and putting PC back there.  Nothing is recorded: the timeline
only counts ``time`` (the instructions executed since START) and keeps the stack of portal
calls, which every step and every undo update.

In gradient mode the timeline is the host protocol (docs/gradient.md): the forward pass
from START to FINISH, then *the switch* (grad[loss] = 1, gradient mode on), then the
gradient pass from FINISH back to START, during which the gradient bank fills.  Going
back over the switch takes the seed out and turns gradient mode off.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from revasm.isa.fixed_point import word_format
from revasm.machine import MachineFault, next_pc, previous_pc
from revasm.sim.reference import Machine

from .breakpoints import DebugError
from .source_map import SourceMap

FORWARD_PASS = "forward"
GRADIENT_PASS = "gradient"


@dataclass(frozen=True)
class Frame:
    """A portal call in progress: the function (its portal's label), the portal's PC and
    the PC of the jump that called it."""

    function: str
    portal_pc: int
    call_pc: int


class Timeline:
    """A machine, its time, its pass and its portal calls; ``forward()`` and ``backward()``
    move it one instruction (or over the gradient switch) and say whether it moved."""

    def __init__(self, machine: Machine, source: SourceMap, *,
                 loss: tuple[int | None, int | None] | None = None) -> None:
        self.machine = machine
        self.source = source
        self.fmt = word_format(machine.width)
        #: where the loss lives (register, address) in gradient mode; None: no gradient pass
        self.loss = loss
        self.time = 0
        self.phase = FORWARD_PASS
        #: the time at which the gradient pass began (None before the switch)
        self.switch_time: int | None = None
        #: the fault that stopped the last step forward (None: the machine can go on)
        self.fault: MachineFault | None = None
        self.stack: list[Frame] = []

    @property
    def at_end(self) -> bool:
        """Nothing later: the last pass halted (FINISH forward, or START in the gradient pass)."""
        return self.machine.halted and (self.loss is None or self.phase == GRADIENT_PASS)

    def last_pc(self) -> int | None:
        """The PC of the instruction executed last (None when halted: it is the PC)."""
        machine = self.machine
        if machine.halted:
            return None
        return previous_pc(machine.pc, machine.br, machine.direction)

    def at_pass_start(self) -> bool:
        """Nothing earlier in this pass: START (time 0), or in the gradient pass the
        switch (going back from here takes the seed out)."""
        return self.time == 0 or (self.phase == GRADIENT_PASS and self.time == self.switch_time)

    @contextmanager
    def looking_back(self) -> Iterator[None]:
        """A look at the past that leaves nothing changed: inside the block the timeline may
        go ``backward`` freely; after it the same instructions run forward again, so the
        machine is as before, bit for bit, with its step and cycle counts and its output log
        (the look shows nothing: ``on_output`` is off meanwhile)."""
        machine = self.machine
        time, phase = self.time, self.phase
        steps, cycles, shown, on_output = (machine.steps, machine.cycles, len(machine.output),
                                           machine.on_output)
        machine.on_output = None
        try:
            yield
        finally:
            while (self.time, self.phase) != (time, phase):
                self.forward()
            machine.steps, machine.cycles = steps, cycles
            del machine.output[shown:]
            machine.on_output = on_output

    def forward(self) -> bool:
        """One instruction on (or the switch); False at the end.  A fault is raised and
        kept in ``fault``."""
        machine = self.machine
        if machine.halted:
            if self.loss is not None and self.phase == FORWARD_PASS:
                self._switch_on()
                return True
            return False
        pc, br_in = machine.pc, machine.br
        self.fault = None
        try:
            machine.step()
        except MachineFault as fault:  # no effect (MachineFault), in gradient mode too
            self.fault = fault
            if fault.kind == "uncaught-jump":  # its landing instruction ran
                self.time += 1
            raise
        self.time += 1
        self._track_call(pc, br_in, machine.br, forward=True)
        return True

    def backward(self) -> bool:
        """One instruction back (or back over the switch); False at the beginning."""
        machine = self.machine
        if self.fault is not None:
            return self._undo_fault()
        if self.phase == GRADIENT_PASS and self.time == self.switch_time:
            self._switch_off()
            return True
        if self.time == 0:
            return False
        last = self.last_pc()
        if last is None:  # halted: on FINISH (or START), which ran last
            last = machine.pc
        br_after = machine.br
        self._execute_reversed(last)
        self.time -= 1
        self._track_call(last, machine.br, br_after, forward=False)
        return True

    def _execute_reversed(self, pc: int) -> None:
        """Run the instruction at ``pc`` with DIR negated and leave PC on it, facing as before."""
        machine = self.machine
        machine.halted = False
        machine.pc = pc
        machine.direction = -machine.direction
        try:
            machine.step()
        except MachineFault:  # (a value changed by `set`): as before, facing as before
            machine.direction = -machine.direction
            raise
        finally:
            machine.halted = False
            machine.pc = pc
        machine.direction = -machine.direction

    def _undo_fault(self) -> bool:
        """Step back from a fault: only an uncaught jump ran its landing instruction."""
        fault = self.fault
        assert fault is not None
        self.fault = None
        if fault.kind != "uncaught-jump":
            return self.backward()  # the faulting instruction had no effect
        machine = self.machine
        cell = machine.program.cell(machine.pc)
        if cell is None or cell.kind == "swapbr":
            self.fault = fault
            raise DebugError("the landing instruction of this uncaught jump cannot be undone "
                             "from the fault's state")
        # BR is linear in a branch's backward statement: undo from BR = 0, then add BR back.
        landing, br_after = machine.pc, machine.br
        machine.br = 0
        self._execute_reversed(landing)
        machine.br += br_after
        self.time -= 1
        return True

    def _switch_on(self) -> None:
        """The host protocol between the passes: grad[loss] = 1, gradient mode on."""
        machine = self.machine
        self._seed(+1)
        machine.gradient = True
        machine.direction = -machine.direction  # BR as it halted (a jump onto FINISH)
        machine.halted = False
        self.phase = GRADIENT_PASS
        self.switch_time = self.time

    def _switch_off(self) -> None:
        machine = self.machine
        machine.gradient = False
        self._seed(-1)
        machine.direction = -machine.direction
        machine.halted = True
        self.phase = FORWARD_PASS
        self.switch_time = None

    def _seed(self, sign: int) -> None:
        assert self.loss is not None
        register, address = self.loss
        one = self.fmt.one * sign
        if register is not None:
            bank = self.machine.bank("G")
            bank[register] = (bank[register] + one) & self.fmt.mask
        else:
            assert address is not None
            index = self.machine.memory_index(address, make=True)
            assert index is not None
            bank = self.machine.bank("GM")
            bank[index] = (bank[index] + one) & self.fmt.mask

    def _track_call(self, pc: int, br_before: int, br_after: int, *, forward: bool) -> None:
        """Portal calls (docs/abi.md): a SWAPBR reached by a jump that it cancels enters a
        call; a SWAPBR that starts a jump returns.  ``br_before``/``br_after`` are BR
        before and after the instruction in forward time; undoing does the opposite."""
        cell = self.machine.program.cell(pc)
        if cell is None or cell.kind != "swapbr":
            return
        entered = br_before != 0 and br_after == 0
        returned = br_before == 0 and br_after != 0
        direction = self.machine.direction
        if forward:
            if entered:  # the jump came BR·DIR from its call site
                self.stack.append(self._frame(pc, previous_pc(pc, br_before, direction)))
            elif returned and self.stack:
                self.stack.pop()
        elif entered and self.stack:
            self.stack.pop()
        elif returned:  # the return jump goes BR·DIR to the call site
            self.stack.append(self._frame(pc, next_pc(pc, br_after, direction)))

    def _frame(self, portal_pc: int, call_pc: int) -> Frame:
        name = self.source.label_at(portal_pc) or f"pc {portal_pc}"
        if self.source.program is not None and name.startswith("f_"):
            name = name[2:]
        return Frame(name, portal_pc, call_pc)
