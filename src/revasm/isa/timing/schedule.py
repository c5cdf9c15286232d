"""The core's cycle schedule: how many clock cycles each instruction takes.

The core (``rtl/hardware/core.py``) runs one instruction at a time: FETCH, DECODE, REGS, EXEC,
WAIT, WRITEB (only when the step writes a second register: SWAP, ROT, IROT) and NEXT,
one cycle each.  It commits at the edge that ends WAIT -- the retire port reports the
instruction then -- so the first instruction of a run commits 5 edges after the run
pulse (:data:`FIRST_COMMIT`) and the next one starts its FETCH one cycle after the commit
(two after a WRITEB).  A step that calls a multi-cycle unit starts it in EXEC and waits in
WAIT until it is done, then one more cycle latches its result: the step takes the call's
cycles more (``isa/timing/units.py``; they depend on the call's operands for some
functions and for rotations).

In gradient mode a step with gradient statements also runs its micro-program
(``isa/timing/microcode.py``) on the gradient unit: READ and EXEC per micro-operation,
CHECK after an address, WAIT for the cycles of a unit call.  Backward the program runs
between REGS and the value step, after GSAVE, and REGS runs again after it (two cycles
more); forward it runs after the value step (and its WRITEB), and the step commits when it
ends, then NEXT.

So an instruction's cycles, from its FETCH to the next one's, are

    6 (FETCH .. WAIT, NEXT) + 1 if it writes a second register
    + the cycles of its unit calls
    + in gradient mode: 2 per micro-operation, 1 more per address, + 2 backward

and a pass's cycles, the sum over the instructions it retires, are the clock cycles from
the run pulse to the end of the last instruction's NEXT: to the halt, when the core drops
``busy``.  An instruction that faults retires nothing and adds nothing.  The tangent banks
(forward-mode derivatives) have no hardware: their rules add no cycles.

:func:`step_timing` splits one entry's cycles, per direction and mode, into the part
every operand gives (``fixed``) and the unit calls whose cycles depend on their operands
(``timed``, each with the source of the arguments its time depends on: registers the step
does not write, so the simulators read them after the step).  Every simulator counts
cycles from it; the RTL's lockstep checks the count at every retired instruction.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import CodeType

from revasm.isa.adjoint import mode_statements
from revasm.isa.codec import IllegalInstruction, decode
from revasm.isa.fixed_point import word_format
from revasm.isa.instruction import Instruction
from revasm.isa.table import INSTRUCTIONS
from revasm.isa.vocabulary import vocabulary

from .microcode import MicrocodeError, step
from .units import TIMING_ARGUMENTS, UNIT_CALLS, call_cycles, call_timer, fixed_call_cycles

#: The core's states of one instruction, in order (WRITEB only for a second register).
STATES = ("FETCH", "DECODE", "REGS", "EXEC", "WAIT", "WRITEB", "NEXT")
#: Edges from the start of an instruction (its FETCH; the run pulse for the first) to its
#: commit: FETCH, DECODE, REGS, EXEC, WAIT.
FIRST_COMMIT = 5
#: Cycles of an instruction that writes one register or none and calls no unit:
#: FETCH, DECODE, REGS, EXEC, WAIT and NEXT.
BASE_CYCLES = FIRST_COMMIT + 1
#: Cycles of one micro-operation of the gradient unit (READ, EXEC), and the CHECK after
#: an address (``ADDR``); a unit call waits for the unit's cycles too.
MICRO_OP_CYCLES = 2
ADDRESS_CHECK_CYCLES = 1
#: Backward gradient mode: GSAVE before the micro-program, REGS again after it.
GRADIENT_ENTRY_CYCLES = 2
#: The prefix of the names that :func:`timer_names` binds: ``cycles_fn_tan`` ...
TIMER_PREFIX = "cycles_"


class NotTimed(Exception):
    """An instruction the core cannot run: an illegal word, or a gradient-mode step its
    gradient unit has no micro-program for (it faults as ``unimplemented``)."""


@dataclass(frozen=True)
class StepShape:
    """What one entry's template does in one direction, as the core's retire port shows
    it: the registers it writes (``a``, ``b``), a memory write, a push or pop of the
    output tape, a SHOW, and its unit calls (vocabulary names, in evaluation order)."""

    wa_en: bool
    wb_en: bool
    mem_en: bool
    push: bool
    pop: bool
    show: bool
    calls: tuple[str, ...]

    @property
    def out_en(self) -> bool:
        return self.show or self.push or self.pop


class _Calls(ast.NodeVisitor):
    """Unit calls and device calls of a template, in evaluation order (arguments first)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, ast.Call]] = []

    def visit_Call(self, node: ast.Call) -> None:  # ast.NodeVisitor's name
        self.generic_visit(node)
        if isinstance(node.func, ast.Name):
            self.found.append((node.func.id, node))


def _calls(template: str) -> list[tuple[str, ast.Call]]:
    visitor = _Calls()
    for stmt in ast.parse(template).body:
        if isinstance(stmt, ast.Assign):  # the value is evaluated before the targets
            visitor.visit(stmt.value)
            for target in stmt.targets:
                visitor.visit(target)
        else:
            visitor.visit(stmt)
    return visitor.found


def _writes_memory(template: str) -> bool:
    for node in ast.walk(ast.parse(template)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                targets += target.elts if isinstance(target, ast.Tuple) else [target]
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
               and t.value.id == "MEM" for t in targets):
            return True
    return False


@cache
def step_shape(entry: Instruction, backward: bool) -> StepShape:
    """The shape of ``entry`` run in one direction: the registers it writes from the
    table's ``writes``, the rest from its template."""
    template = entry.backward if backward else entry.forward
    names = [name for name, _ in _calls(template)]
    return StepShape("a" in entry.writes, "b" in entry.writes, _writes_memory(template),
                     "emit" in names, "unemit" in names, "show" in names,
                     tuple(name for name in names if name in UNIT_CALLS))


@dataclass(frozen=True)
class TimedCall:
    """A unit call whose cycles depend on its operands: the operation and the source of
    the arguments its time depends on (``TIMING_ARGUMENTS``), with the entry's operand
    placeholders (``R[{b}]``)."""

    op: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class StepTiming:
    """The cycles of one entry's step in one direction and mode at one width: ``fixed``
    plus the cycles of each call of ``timed``; ``after_commit`` of them come after the
    commit (WRITEB, NEXT), the rest before it."""

    fixed: int
    timed: tuple[TimedCall, ...]
    after_commit: int

    def expression(self, operands: Mapping[str, object]) -> str:
        """The timed calls' cycles as one Python expression over the registers ``R``,
        with the entry's ``operands`` filled in, calling the :func:`timer_names`
        (``"0"`` when no call is timed)."""
        if not self.timed:
            return "0"
        return " + ".join(f"{TIMER_PREFIX}{call.op}("
                          + ", ".join(a.format(**operands) for a in call.arguments) + ")"
                          for call in self.timed)


def timer_names(width: int) -> dict[str, Callable[..., int]]:
    """The names :meth:`StepTiming.expression` calls, bound to the unit timers of
    ``width`` (``units.call_timer``)."""
    return {f"{TIMER_PREFIX}{op}": call_timer(op, width)
            for op in UNIT_CALLS if fixed_call_cycles(op, width) is None}


def _timing_source(entry: Instruction, node: ast.expr) -> str:
    """The source of a timing argument, checked to read only registers the step does not
    write (so it reads the same before, during and after the step) and the vocabulary."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript):
            bank = sub.value.id if isinstance(sub.value, ast.Name) else None
            index = ast.unparse(sub.slice)
            register = index[1:-1] if index.startswith("{") and index.endswith("}") else None
            if bank != "R" or register is None or not _kept(entry, register):
                raise NotTimed(f"{entry.mnemonic}: a unit call's time depends on "
                               f"{ast.unparse(sub)}, which the step may write")
        elif isinstance(sub, ast.Name) and sub.id.startswith("_"):
            raise NotTimed(f"{entry.mnemonic}: a unit call's time depends on the local "
                           f"{sub.id}")
    return ast.unparse(node)


def _kept(entry: Instruction, register: str) -> bool:
    """Whether the step leaves the register named by operand ``register`` as it was:
    it writes only ``entry.writes``, each declared distinct from ``register``."""
    return all(w != register and ((w, register) in entry.distinct
                                  or (register, w) in entry.distinct) for w in entry.writes)


@cache
def step_timing(entry: Instruction, backward: bool, gradient: bool = False,
                width: int = 32) -> StepTiming:
    """The cycles of ``entry`` run in one direction, in gradient mode or not, on the
    default core (the function unit serves every unit call) of ``width``."""
    shape = step_shape(entry, backward)
    fixed = BASE_CYCLES + int(shape.wb_en)
    after = 1 + int(shape.wb_en)  # WRITEB, NEXT
    parts = [entry.backward if backward else entry.forward]
    if gradient:
        try:
            program = step(INSTRUCTIONS.index(entry), backward)
        except MicrocodeError as exc:
            raise NotTimed(f"{entry.mnemonic}: no gradient-mode micro-program ({exc})") from None
        if program.ops:
            if entry.kind != "data":
                raise NotTimed(f"{entry.mnemonic}: a gradient-mode step of a control "
                               "instruction")
            fixed += sum(MICRO_OP_CYCLES + ADDRESS_CHECK_CYCLES * (op.op == "ADDR")
                         for op in program.ops)
            if program.value_first:
                after = 1  # the program runs after WRITEB; the step commits at its end
            else:
                fixed += GRADIENT_ENTRY_CYCLES
            parts = mode_statements(entry, -1 if backward else 1, gradient=True,
                                    tangent=False)
    timed: list[TimedCall] = []
    for part in parts:
        for name, node in _calls(part):
            if name not in UNIT_CALLS:
                continue
            cycles = fixed_call_cycles(name, width)
            if cycles is not None:
                fixed += cycles
                continue
            arguments = tuple(_timing_source(entry, node.args[i])
                              for i in TIMING_ARGUMENTS[name])
            timed.append(TimedCall(name, arguments))
    return StepTiming(fixed, tuple(timed), after)


def word_entry(word: int) -> tuple[Instruction, dict[str, int]]:
    """The entry and operands of an instruction word (:class:`NotTimed` if illegal)."""
    try:
        return decode(word & 0xFFFFFFFF)
    except IllegalInstruction as exc:
        raise NotTimed(str(exc)) from None


def step_cycles(word: int, backward: bool, registers: Sequence[int], width: int, *,
                gradient: bool = False) -> int:
    """The cycles of one instruction word, from its FETCH to the next one's FETCH, over
    ``registers`` (the register words before or after the step: the timed arguments are
    registers it does not write)."""
    entry, operands = word_entry(word)
    timing = step_timing(entry, backward, gradient, width)
    if not timing.timed:
        return timing.fixed
    return timing.fixed + eval(_expression(word, backward, gradient, width),
                               _names(width), {"R": registers})


@cache
def _expression(word: int, backward: bool, gradient: bool, width: int) -> CodeType:
    entry, operands = word_entry(word)
    return compile(step_timing(entry, backward, gradient, width).expression(operands),
                   f"<cycles of {entry.mnemonic}>", "eval")


@cache
def _names(width: int) -> dict[str, object]:
    return {**vocabulary(word_format(width)), **timer_names(width)}


#: A unit call as a template makes it: the vocabulary name and its argument words.
UnitCall = tuple[str, tuple[int, ...]]


def traced_calls(template: str, width: int, **banks: list[int]) -> list[UnitCall]:
    """The unit calls ``template`` (operands filled in) makes over ``banks`` (``R``,
    ``G``, ...), in order, with their argument words: the template run with a vocabulary
    whose unit functions record their arguments; a call that faults is recorded before it
    raises, and the run stops there."""
    calls: list[UnitCall] = []
    names: dict[str, object] = dict(vocabulary(word_format(width)))

    def recording(name: str, function: Callable[..., object]) -> Callable[..., object]:
        def call(*args: int) -> object:
            calls.append((name, args))
            return function(*args)
        return call

    for name in UNIT_CALLS:
        names[name] = recording(name, names[name])  # type: ignore[arg-type]
    names["overflow"] = lambda flag: flag
    try:
        exec(compile(template, "<template>", "exec"), dict(names, OV=[0], **banks))
    except ArithmeticError:  # the unit faults (divide-by-zero, domain-error): timed too
        pass
    return calls


def traced_cycles(template: str, width: int, **banks: list[int]) -> int:
    """The cycles of the unit calls :func:`traced_calls` finds, on the default core."""
    return sum(call_cycles(name, args, width) for name, args in
               traced_calls(template, width, **banks))
