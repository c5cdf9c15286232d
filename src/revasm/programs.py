"""Running and differentiating compiled reversible programs: values by parameter name.

    import revasm
    program = revasm.compile_file("examples/nilang/rfib.py", "rfib")
    revasm.run_program(program, {"n": 10}).values["out"]        # 55
    revasm.grad_program("examples/nilang/petersen.py:embedding_loss", {"x": x})

Inputs are the entry function's parameters (scalars by name, arrays as nested
sequences); results come back the same way.  A machine fault inside compiled code is
raised as :class:`ProgramFault`, which names the Python file and line the faulting
instruction came from (the compiler's source map).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from revasm.compiler.api import CompiledProgram, ReversibleFunction, compile_file, compile_function
from revasm.compiler.errors import CompileError, SourcePos
from revasm.compiler.ir import nodes as ir
from revasm.isa.fixed_point import DEFAULT_WIDTH, WordFormat, word_format
from revasm.machine import MachineFault
from revasm.machine.fault_place import fault_place
from revasm.machine.values import FIXED, INT, word_of
from revasm.sim.engine import Lanes, read_place, write_place
from revasm.sim.engines import load
from revasm.sim.host import GradientResult, gradient
from revasm.sim.host import load_inputs as load_defaults


class ProgramFault(Exception):
    """A machine fault in compiled code, reported at the Python line it came from.

    ``check`` is the kind of run-time check that failed (``bounds``, ``alias``, ...; empty
    for the machine's own faults and the older guards), ``pal_line`` the line of the
    compiled PAL the fault is at; the message carries the values the check saw."""

    def __init__(self, fault: MachineFault, pos: SourcePos | None, note: str,
                 check: str = "", pal_line: int | None = None) -> None:
        self.fault = fault
        self.pos = pos
        self.note = note
        self.check = check
        self.pal_line = pal_line
        where = f"{pos}: " if pos else ""
        kind = f" ({check} check, PAL line {pal_line})" if check else ""
        super().__init__(f"{where}runtime error{kind}: {note or fault.message}")


@dataclass
class ProgramResult:
    """Every parameter's value after a forward run, and the run's counts."""

    values: dict[str, Any]
    steps: int
    cycles: int
    machine: Lanes = field(repr=False)
    program: CompiledProgram = field(repr=False)


def _program(target: Any, **options: Any) -> CompiledProgram:
    if isinstance(target, CompiledProgram):
        return target
    if isinstance(target, ReversibleFunction):
        return compile_function(target, **options)
    raise TypeError("run_program() takes a CompiledProgram or a @reversible function")


def load_inputs(program: CompiledProgram, machine: Lanes, inputs: dict[str, Any]) -> None:
    """Set parameters: scalars by name, arrays from (nested) sequences of numbers."""
    f = program.function
    fmt = word_format(program.image.width)
    for name, value in inputs.items():
        p = f.param(name)
        if p is None:
            raise KeyError(f"{name!r} is not a parameter of {f.name} "
                           f"({', '.join(q.name for q in f.params)})")
        if isinstance(p.type, ir.ArrayType):
            flat = list(_flatten(value))
            if len(flat) != p.type.size:
                raise ValueError(f"{name} has {p.type.size} elements; {len(flat)} given")
            for label, v in zip(program.lowered.array_labels[name], flat):
                write_place(machine, None, program.image.symbols[label],
                            _word(fmt, v, p.type.element, name))
        else:
            reg = program.lowered.layouts[f.name].scalars[name].register
            write_place(machine, reg, None, _word(fmt, value, p.type, name))


def read_values(program: CompiledProgram, machine: Lanes, exact: bool = False,
                lane: int = 0) -> dict:
    """Every parameter's value on one lane: scalars, arrays as nested lists."""
    f = program.function
    fmt = word_format(program.image.width)
    out: dict[str, Any] = {}
    for p in f.params:
        if isinstance(p.type, ir.ArrayType):
            words = [int(read_place(machine, None, program.image.symbols[label])[lane])
                     for label in program.lowered.array_labels[p.name]]
            flat = [_value(fmt, w, p.type.element, exact) for w in words]
            out[p.name] = _reshape(flat, p.type.shape)
        else:
            reg = program.lowered.layouts[f.name].scalars[p.name].register
            out[p.name] = _value(fmt, int(read_place(machine, reg, None)[lane]), p.type, exact)
    return out


def run_program(target: Any, inputs: dict[str, Any] | None = None, *, width: int = DEFAULT_WIDTH,
        max_steps: int | None = None, reverse_check: bool = False,
        engine: str = "auto", strict: bool = True) -> ProgramResult:
    """Compile (if needed) and run forward; values of every parameter afterwards.

    ``reverse_check`` also runs backward and raises if the initial state is not
    restored exactly.  ``engine`` names the simulator engine (``revasm.sim.engines``).
    ``strict`` (the default for compiled Python, as ``math.exp(1000)`` raises): an
    arithmetic result that does not fit the word raises :class:`ProgramFault` at its line;
    ``strict=False`` lets it wrap and counts it (``result.machine``'s OV).
    """
    program = _program(target, width=width)
    machine = load(program.image, 1, engine_name=engine, max_steps=max_steps)
    machine.strict = strict
    load_defaults(machine, program.image)  # the parameters' declared defaults, then inputs
    load_inputs(program, machine, inputs or {})
    before = machine.snapshot(0)
    machine.run(1)
    _raise_fault(program, machine)
    values = read_values(program, machine)
    steps, cycles = int(machine.steps[0]), int(machine.cycles[0])
    if reverse_check:
        machine.run(-1)
        _raise_fault(program, machine)
        # the whole snapshot: registers, BR, the tape, OV and every memory word, the
        # high words (a downward stack from 0) as well as the dense ones
        after = machine.snapshot(0).turned()
        if after != before:
            raise AssertionError("running backward did not restore the initial state: "
                                 + "; ".join(before.differences(after)[:6]))
        machine.run(1)
        _raise_fault(program, machine)
    return ProgramResult(values, steps, cycles, machine, program)


def _raise_fault(program: CompiledProgram, machine: Lanes) -> None:
    fault = machine.fault(0)
    if fault is not None:
        raise program_fault(program, fault)


def program_fault(program: CompiledProgram, fault: MachineFault) -> ProgramFault:
    """Map a machine fault to the Python line: the check's note with its values, else the
    machine's message, at the source line ``revasm.machine.fault_place`` reads."""
    place = fault_place(fault)
    if place.line is None or place.pal_line is None:  # not a compiled instruction
        entry = program.source_of_pc(fault.pc)
        return ProgramFault(fault, entry.pos if entry else None, fault.message)
    pos = SourcePos(place.file or program.module.file, place.line, place.column or 1)
    return ProgramFault(fault, pos, place.message, place.check, place.pal_line)


def _word(fmt: WordFormat, value: Any, type_: ir.ScalarType, name: str) -> int:
    """A parameter's word by the one rule (machine/values.py); raises ValueRuleError."""
    return word_of(value, fmt, INT if type_ == ir.INT else FIXED, name)


def _value(fmt: WordFormat, word: int, type_: ir.ScalarType,
           exact: bool) -> int | Fraction | float:
    if type_ == ir.INT:
        return fmt.signed(word)
    return fmt.to_fraction(word) if exact else fmt.to_real(word)


def _flatten(value):
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        items = value
        for v in items:
            yield from _flatten(v)
    else:
        yield value


def _reshape(flat: list[Any], shape: tuple[int, ...]) -> list[Any]:
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_reshape(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]




@dataclass
class Gradient:
    """Loss value and d loss / d parameter (floats; nested lists for arrays)."""

    loss: float
    gradient: dict[str, Any]
    exact: GradientResult = field(repr=False)
    program: CompiledProgram = field(repr=False)


def compile_for_gradient(target: Any, width: int = DEFAULT_WIDTH) -> CompiledProgram:
    """``target`` compiled with the checks for differentiation (a CompiledProgram as is)."""
    if isinstance(target, CompiledProgram):
        return target
    if isinstance(target, ReversibleFunction):
        return compile_function(target, width=width, for_gradient=True)
    path, _, func = str(target).rpartition(":") if ":" in str(target) else (str(target), "", "")
    return compile_file(path or str(target), func or None, width=width, for_gradient=True)


def grad_program(target: Any, inputs: dict[str, Any] | None = None, *, loss: str | None = None,
         wrt: list[str] | None = None, width: int = DEFAULT_WIDTH,
         max_steps: int | None = None, engine: str = "auto",
         strict: bool = True) -> Gradient:
    """The loss parameter's value and its gradient in the Fixed inputs (or ``wrt``).

    The loss is ``loss``, else the parameter marked ``Loss``, else the only ``Out``.
    ``strict`` as in :func:`run_program`; ``width`` as there (the one default of every
    program, ``DEFAULT_WIDTH``: ``width=64`` for Q32.32 gradients).
    """
    program = compile_for_gradient(target, width)
    f = program.function
    loss_param = loss_parameter(program, loss)
    params = [p for p in f.params if p is not loss_param and _fixed(p.type)]
    if wrt is not None:
        unknown = [n for n in wrt if f.param(n) is None]
        if unknown:
            raise KeyError(f"{unknown[0]!r} is not a parameter of {f.name}")
        params = [p for p in map(f.param, wrt) if p is not None]  # all are: checked above
    names = [name for p in params for name in word_names(program, p)]
    try:
        result = gradient(program.image, loss=loss_param.name, wrt=names,
                          prepare=lambda machine: load_inputs(program, machine, inputs or {}),
                          max_steps=max_steps, engine=engine, strict=strict)
    except MachineFault as fault:
        raise program_fault(program, fault) from None
    out: dict[str, Any] = {}
    for p in params:
        if isinstance(p.type, ir.ArrayType):
            flat = [float(result.gradient[label[2:]])
                    for label in program.lowered.array_labels[p.name]]
            out[p.name] = _reshape(flat, p.type.shape)
        else:
            out[p.name] = float(result.gradient[p.name])
    return Gradient(float(result.loss), out, result, program)


def loss_parameter(program: CompiledProgram, loss: str | None = None) -> ir.Param:
    """The parameter a compiled function's gradient is of: ``loss`` (a Fixed scalar), else
    the one marked ``Loss``, else the only Fixed ``Out``; raises ``KeyError`` for an unknown
    ``loss`` and :class:`CompileError` when the function has no single loss."""
    f = program.function
    losses = [p for p in f.params if p.role == "loss"] or \
        [p for p in f.params if p.role == "output" and p.type == ir.FIXED]
    if loss is not None:
        losses = [p for p in f.params if p.name == loss and p.type == ir.FIXED]
        if not losses:
            raise KeyError(f"{loss!r} is not a Fixed scalar parameter of {f.name}")
    if len(losses) != 1:
        raise CompileError(f.pos or SourcePos(program.module.file, 1, 1),
                           f"{f.name} needs exactly one parameter marked Loss to be "
                           "differentiated", "def f(out: Loss, x: Fixed): ...")
    return losses[0]


def word_names(program: CompiledProgram, param: ir.Param) -> list[str]:
    """The declared names of a parameter's words in the image: its own name for a scalar,
    one per element (row-major) for an array."""
    if isinstance(param.type, ir.ArrayType):
        return [label[2:] for label in program.lowered.array_labels[param.name]]
    return [param.name]


def _fixed(type_: ir.ScalarType | ir.ArrayType) -> bool:
    element = type_.element if isinstance(type_, ir.ArrayType) else type_
    return element == ir.FIXED
