"""The reference machine behind the engine interface: one :class:`Machine` per lane.

The oracle is scalar; on many lanes it simply runs them one after the other.  It is the
only engine that traces (``trace=`` on :meth:`ReferenceLanes.run` gets a
:class:`~revasm.machine.TraceRecord` after every instruction of every lane).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy

from revasm.assembler.image import Image
from revasm.machine import MachineFault, Snapshot, TraceRecord
from revasm.sim.engine import Engine, OutputListener, step_limit

from .machine import DEFAULT_MEMORY_WORDS, MEMORY_BANK_NAMES, Machine

RUNNING, HALTED, FAULTED = 0, 1, 2

Progress = Callable[[int], object]
Trace = Callable[[TraceRecord], object]


class ReferenceLanes:
    """``lanes`` reference machines on one image, behind :class:`revasm.sim.engine.Lanes`."""

    def __init__(self, image: Image, lanes: int = 1, *, max_steps: int | None = None,
                 memory_words: int = DEFAULT_MEMORY_WORDS) -> None:
        if lanes < 1:
            raise ValueError(f"an engine needs at least one lane, not {lanes}")
        self.image = image
        self.lanes = lanes
        self.width = image.width
        self.max_steps = max_steps
        self.machines = [Machine(image, max_steps=max_steps, memory_words=memory_words)
                         for _ in range(lanes)]
        self._faults: list[MachineFault | None] = [None] * lanes
        self._status = [RUNNING] * lanes

    # --- switches --------------------------------------------------------------------

    @property
    def gradient(self) -> bool:
        return self.machines[0].gradient

    @gradient.setter
    def gradient(self, on: bool) -> None:
        for machine in self.machines:
            machine.gradient = on

    @property
    def tangent(self) -> bool:
        return self.machines[0].tangent

    @tangent.setter
    def tangent(self, on: bool) -> None:
        for machine in self.machines:
            machine.tangent = on

    @property
    def strict(self) -> bool:
        return self.machines[0].strict

    @strict.setter
    def strict(self, on: bool) -> None:
        for machine in self.machines:
            machine.strict = on

    # --- words -----------------------------------------------------------------------

    def _bank(self, machine: Machine, name: str) -> list[int]:
        if name == "R":
            return machine.registers
        if name == "MEM":
            return machine.memory
        return machine.bank(name)

    def set_bank_word(self, name: str, index: int, values: Any) -> None:
        mask = self.machines[0].fmt.mask
        if numpy.ndim(values) == 0:
            words = [int(values) & mask] * self.lanes
        else:
            words = [int(v) & mask for v in numpy.asarray(values).tolist()]
            if len(words) != self.lanes:
                raise ValueError(f"expected {self.lanes} lane values, got {len(words)}")
        if name == "R" and index == 0 and any(words):
            raise ValueError("$0 always reads zero and cannot be set")
        for machine, word in zip(self.machines, words):
            at = index
            if name == "MEM" or name in MEMORY_BANK_NAMES:
                at = machine.memory_index(index, make=True)  # any W-bit address
            self._bank(machine, name)[at] = word

    def bank_word(self, name: str, index: int) -> Any:
        if name == "MEM" or name in MEMORY_BANK_NAMES:
            indices = [m.memory_index(index) for m in self.machines]
            return numpy.array([0 if i is None else self._bank(m, name)[i]
                                for m, i in zip(self.machines, indices)], dtype=numpy.uint64)
        return numpy.array([self._bank(m, name)[index] for m in self.machines],
                           dtype=numpy.uint64)

    # --- running ---------------------------------------------------------------------

    def run(self, direction: int = 1, *, progress: Progress | None = None,
            trace: Trace | None = None, start: Any = None,
            on_output: OutputListener | None = None) -> None:
        """Run every lane in turn; ``progress(lanes done)`` after each, ``trace`` per step,
        ``on_output(lane, [word])`` per word shown; ``start``: each lane's first PC (one for
        all or one per lane), else START/FINISH."""
        starts = None if start is None else self._lane_pcs(start)
        for lane, machine in enumerate(self.machines):
            if starts is None:
                self._go(lane, partial(machine.run, direction, trace=trace), on_output)
            else:
                self._go(lane, partial(_run_from, machine, starts[lane], direction, trace),
                         on_output)
            if progress is not None:
                progress(lane + 1)

    def _lane_pcs(self, start: Any) -> list[int]:
        if numpy.ndim(start) == 0:
            return [int(start)] * self.lanes
        pcs = [int(pc) for pc in numpy.asarray(start).tolist()]
        if len(pcs) != self.lanes:
            raise ValueError(f"expected {self.lanes} lane start PCs, got {len(pcs)}")
        return pcs

    def run_back(self, *, progress: Progress | None = None, trace: Trace | None = None,
                 on_output: OutputListener | None = None) -> None:
        for lane, machine in enumerate(self.machines):
            if self._status[lane] == HALTED:
                machine.direction = -machine.direction  # BR as it halted (a jump onto FINISH)
                machine.steps = machine.cycles = 0
                machine.halted = False
                self._go(lane, partial(machine.resume, trace=trace), on_output)
            if progress is not None:
                progress(lane + 1)

    def _go(self, lane: int, start: Callable[[], None],
            on_output: OutputListener | None = None) -> None:
        self._faults[lane] = None
        self._status[lane] = RUNNING
        machine = self.machines[lane]
        if on_output is not None:  # each word as the machine shows it
            machine.on_output = lambda word: on_output(lane, [word])
        try:
            start()
        except MachineFault as fault:
            self._faults[lane] = fault
            self._status[lane] = FAULTED
        else:
            self._status[lane] = HALTED
        finally:
            machine.on_output = None

    # --- results ---------------------------------------------------------------------

    @property
    def steps(self) -> Any:
        return numpy.array([m.steps for m in self.machines], dtype=numpy.int64)

    @property
    def cycles(self) -> Any:
        return numpy.array([m.cycles for m in self.machines], dtype=numpy.int64)

    @property
    def halted(self) -> Any:
        return numpy.array([s == HALTED for s in self._status])

    @property
    def faulted(self) -> Any:
        return numpy.array([s == FAULTED for s in self._status])

    def fault(self, lane: int) -> MachineFault | None:
        return self._faults[lane]

    def output(self, lane: int) -> list[int]:
        return list(self.machines[lane].output)

    def snapshot(self, lane: int) -> Snapshot:
        return self.machines[lane].snapshot()


def _run_from(machine: Machine, pc: int, direction: int, trace: Trace | None) -> None:
    """``Machine.run`` from ``pc`` instead of START/FINISH (a lane that halted at ``pc``
    going the other way keeps BR, as ``Machine.run`` keeps it)."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, not {direction}")
    resumed = machine.halted and machine.pc == pc and machine.direction == -direction
    machine.pc, machine.direction = pc, direction
    machine.br = machine.br if resumed else 0
    machine.steps = machine.cycles = 0
    machine.halted = False
    machine.resume(trace=trace)


def _load(image: Image, lanes: int = 1, *, max_steps: int | None = None,
          memory_words: int = DEFAULT_MEMORY_WORDS) -> ReferenceLanes:
    return ReferenceLanes(image, lanes, max_steps=step_limit(max_steps),
                          memory_words=memory_words)


ENGINE = Engine("reference", "the scalar oracle: readable, exact, traces every step", _load,
                traces=True)
