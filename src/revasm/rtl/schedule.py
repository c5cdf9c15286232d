"""The core's cycle schedule: at which clock edge each retired instruction commits.

The co-simulation's host protocol (``rtl/cosim.py``) loads the core one write per clock
edge -- with the gradient bank first GM (every cell) and G (32 registers) to zero, then
every memory cell and registers 1..31, then OV -- and pulses ``run`` at the next edge, where
the control unit loads PC, BR and DIR and ``busy`` rises.  Then each instruction takes
FETCH, DECODE, REGS, EXEC, WAIT, WRITEB (only when it writes a second register) and NEXT,
one cycle each, and commits at the edge that ends WAIT: the first at the run edge + 5, each
next one 6 edges (7 after a WRITEB) after the one before.  An instruction that calls the
multiply/divide or the function unit starts it in EXEC and waits in WAIT until it is done,
then one more cycle to latch its result: it commits later by the cycles of the call, which
depend on its operands and on the unit that serves it -- the function unit, or the
multiply/divide unit of a core built without it (``rtl/unit_timing.py``; the operands are
the table template's arguments over the registers the step reads, :func:`unit_calls`).
In gradient mode a step with a micro-program runs it on the gradient unit between REGS
and GSAVE (which reads the third register's gradient: G has two read ports) and a second
REGS (:func:`gradient_program_cycles`, its unit calls timed from the registers and the
gradient registers); a micro-program after the value step (a forward step in gradient
mode, which the host protocol never runs) is not modelled.

``revasm run --vcd`` times the reference's waveforms by this schedule, and the lockstep
checks it against the core at every retired instruction (on both backends), so the two
stay one.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from revasm.isa.codec import IllegalInstruction, decode
from revasm.isa.fixed_point import WordFormat
from revasm.isa.vocabulary import vocabulary

from .params import CoreParams
from .unit_timing import call_cycles

#: Edges from the start of an instruction (its FETCH; the run pulse for the first) to its
#: commit: FETCH, DECODE, REGS, EXEC, WAIT.
FIRST_COMMIT = 5


class NotScheduled(Exception):
    """An instruction the schedule cannot time (an illegal word)."""


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


#: A unit call as a template makes it: the vocabulary name and its argument words.
UnitCall = tuple[str, tuple[int, ...]]


def to_commit(word: int, backward: bool, registers: Sequence[int], width: int,
              gradients: Sequence[int] | None = None, *, function_unit: bool = True) -> int:
    """Edges from the start of this instruction's FETCH to its commit (FETCH .. WAIT):
    five, plus the cycles of its unit call (``rtl/unit_timing.py``) over ``registers``,
    the register words it reads; in gradient mode (``gradients``: the gradient registers
    G before the step) plus its micro-program (:func:`gradient_program_cycles`).
    ``function_unit``: the core was built with the function unit (``fmul``/``fdiv`` run on
    it), not with the multiply/divide unit (``Core(function_unit=False)``)."""
    commit = FIRST_COMMIT
    if step_shape(word, backward).calls:
        commit += sum(call_cycles(name, args, width, function_unit=function_unit)
                      for name, args in unit_calls(word, backward, registers, width))
    if gradients is not None:
        commit += gradient_program_cycles(word, backward, registers, gradients, width,
                                          function_unit=function_unit)
    return commit


def unit_calls(word: int, backward: bool, registers: Sequence[int],
               width: int) -> list[UnitCall]:
    """The unit calls of this instruction's table template, in order, with the words the
    core gives the unit: the template run over ``registers`` with a vocabulary whose unit
    functions record their arguments (a call that faults is recorded before it raises)."""
    found = _trace_calls(_template(word, backward, False), width, R=list(registers))
    if len(found) != step_shape(word, backward).calls:  # pragma: no cover - a table bug
        raise NotScheduled(f"word {word:#010x}: the template's unit calls could not be traced")
    return found


def gradient_program_cycles(word: int, backward: bool, registers: Sequence[int],
                            gradients: Sequence[int], width: int, *,
                            function_unit: bool = True) -> int:
    """The cycles a gradient-mode step adds before its commit: its micro-program on the
    gradient unit (``rtl/gradient_unit.py``: READ and EXEC per micro-operation, CHECK
    after an address, WAIT for the cycles of a unit call), after GSAVE and before REGS
    again, then the value step.  The calls' words come from the gradient-mode template
    (``isa/adjoint.mode_template``) run over ``registers`` and ``gradients``; a step whose
    micro-program follows its value step is not modelled (:class:`NotScheduled`)."""
    from revasm.isa.table import INSTRUCTIONS

    from .microcode import TemplateError, step

    entry, _ = decode(word & 0xFFFFFFFF)
    try:
        program = step(INSTRUCTIONS.index(entry), backward)
    except TemplateError as exc:
        raise NotScheduled(str(exc)) from None
    if not program.ops:
        return 0
    if program.value_first:
        raise NotScheduled(f"{entry.mnemonic}: a micro-program after the value step")
    cycles = sum(2 + int(op.op == "ADDR") for op in program.ops) + 2  # GSAVE, REGS
    units = [op for op in program.ops if op.op == "CALL"]
    if units:
        calls = _trace_calls(_template(word, backward, True), width, R=list(registers),
                             G=list(gradients))
        calls = calls[:len(units)]  # the gradient statements run before the value template
        if [name for name, _ in calls] != [op.unit for op in units]:  # pragma: no cover
            raise NotScheduled(f"{entry.mnemonic}: the micro-program's calls could not be traced")
        cycles += sum(call_cycles(name, args, width, function_unit=function_unit)
                      for name, args in calls)
    return cycles


def _trace_calls(code, width: int, **banks: list[int]) -> list[UnitCall]:
    calls, names = _recording_vocabulary(width)
    calls.clear()
    try:
        exec(code, dict(names, OV=[0], **banks))
    except ArithmeticError:  # the unit faults (divide-by-zero, domain-error): timed too
        pass
    except NameError as exc:  # pragma: no cover - a bank the schedule is not given
        raise NotScheduled(f"the template reads {exc.name}, which the schedule has not") from None
    return list(calls)


@cache
def _template(word: int, backward: bool, gradient: bool):
    """The compiled value template, or with ``gradient`` the gradient-mode one."""
    from revasm.isa.adjoint import mode_template

    entry, operands = decode(word & 0xFFFFFFFF)
    if gradient:
        source = mode_template(entry, -1 if backward else 1, gradient=True)
    else:
        source = entry.backward if backward else entry.forward
    return compile(source.format(**operands), f"<{entry.mnemonic}>", "exec")


@cache
def _recording_vocabulary(width: int) -> tuple[list[UnitCall], dict[str, object]]:
    """The vocabulary of ``width`` whose unit functions (``UNIT_OF``) append their calls to
    the returned list; ``overflow`` is the identity (the core counts OV elsewhere)."""
    from .semantics import UNIT_OF

    calls: list[UnitCall] = []
    names = vocabulary(WordFormat(width))

    def recording(name: str, function: Callable) -> Callable:
        def call(*args: int):
            calls.append((name, args))
            return function(*args)
        return call

    for name in UNIT_OF:
        names[name] = recording(name, names[name])  # type: ignore[arg-type]
    names["overflow"] = lambda flag: flag
    return calls, names


def after_commit(word: int, backward: bool) -> int:
    """Edges from this instruction's commit to the start of the next one's FETCH: WRITEB
    (when it writes a second register), then NEXT."""
    return 1 + int(step_shape(word, backward).wb_en)
