"""The core's cycle schedule: at which clock edge each retired instruction commits.

The co-simulation's host protocol (``rtl/cosim.py``) loads the core one write per clock
edge -- with the gradient bank first GM (every cell) and G (32 registers) to zero, then
every memory cell and registers 1..31, then OV -- and pulses ``run`` at the next edge, where
the control unit loads PC, BR and DIR and ``busy`` rises.  Then each instruction takes
FETCH, DECODE, REGS, EXEC, WAIT, WRITEB (only when it writes a second register) and NEXT,
one cycle each, and commits at the edge that ends WAIT: the first at the run edge + 5, each
next one 6 edges (7 after a WRITEB) after the one before.  An instruction that calls the
multiply/divide or the function unit waits in WAIT for as long as the unit takes, which
depends on its operands: its commit is not modelled here (:class:`NotScheduled`), nor
anything after it.

``revasm run --vcd`` times the reference's waveforms by this schedule, and the lockstep
checks it against the core at every retired instruction (on both backends), so the two
stay one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from revasm.isa.codec import IllegalInstruction, decode

from .params import CoreParams

#: Edges from the start of an instruction (its FETCH; the run pulse for the first) to its
#: commit: FETCH, DECODE, REGS, EXEC, WAIT.
FIRST_COMMIT = 5


class NotScheduled(Exception):
    """An instruction whose cycles depend on a unit's operands (or an illegal word)."""


def load_edges(params: CoreParams) -> int:
    """How many clock edges the host's load takes before the run pulse."""
    edges = params.memory_words + 31 + 1  # every memory cell, registers 1..31, OV
    if params.gradient:  # GM and G cleared first
        edges += params.memory_words + 32
    return edges


@dataclass(frozen=True)
class StepShape:
    """What the retire port's enables say of one instruction word in one direction."""

    wa_en: bool
    wb_en: bool
    mem_en: bool
    push: bool
    pop: bool
    show: bool
    calls: int

    @property
    def out_en(self) -> bool:
        return self.show or self.push or self.pop


@cache
def step_shape(word: int, backward: bool) -> StepShape:
    """The enables of one instruction word run in one direction, from the same evaluation
    of its table template as the ALU's (``rtl/alu.py``)."""
    from amaranth.hdl import Const

    from .semantics import Inputs, evaluate
    try:
        entry, _ = decode(word & 0xFFFFFFFF)
    except IllegalInstruction as exc:
        raise NotScheduled(str(exc)) from None
    dummy = Const(0, 64)
    inputs = Inputs(64, {"A": dummy, "B": dummy, "C": dummy},
                    {"IMM": dummy, "AMT": Const(0, 7), "K": Const(0, 2), "OFF": Const(0, 26)},
                    Const(0, 66), Const(1, 2), dummy, dummy, ((dummy, dummy),) * 4)
    effects = evaluate(entry.backward if backward else entry.forward, inputs)
    return StepShape("A" in effects.writes, "B" in effects.writes,
                     effects.mem_write is not None, effects.emit is not None,
                     bool(effects.unemit), effects.show is not None, len(effects.calls))


def to_commit(word: int, backward: bool) -> int:
    """Edges from the start of this instruction's FETCH to its commit (FETCH .. WAIT);
    raises :class:`NotScheduled` for one that calls a unit (it waits in WAIT)."""
    if step_shape(word, backward).calls:
        entry, _ = decode(word & 0xFFFFFFFF)
        raise NotScheduled(f"{entry.mnemonic} waits for a unit a number of cycles that "
                           "depends on its operands")
    return FIRST_COMMIT


def after_commit(word: int, backward: bool) -> int:
    """Edges from this instruction's commit to the start of the next one's FETCH: WRITEB
    (when it writes a second register), then NEXT."""
    return 1 + int(step_shape(word, backward).wb_en)
