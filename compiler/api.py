"""Compile, run (and check) a reversible function in one call.

    from revasm.compiler import compile_file, run
    program = compile_file("examples/nilang/rfib.py", "rfib")
    result = run(program, {"n": 10})          # result.values["out"] == 55

A machine fault inside compiled code is re-raised as :class:`ProgramFault`,
which names the Python file and line the faulting instruction came from.
``@reversible`` (re-exported by ``compiler/edsl.py``) returns a
:class:`ReversibleFunction`, a handle whose ``compile()`` and ``run()`` are
these calls.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from revasm.assembler import assemble
from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.engine import Lanes, read_place, write_place
from revasm.sim.engines import load
from revasm.sim.reference import MachineFault

from .backend.lowering import Lowered, SourceEntry, lower_module
from .errors import CompileError, SourcePos
from .frontend.checks import check_module
from .ir.inline import inline_calls
from .frontend.parse import parse_file, parse_source
from .ir import nodes as ir
from .ir.printer import function_text, module_text


class ReversibleFunction:
    """What ``@reversible`` returns: the function's file and name, for the compiler."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self.source_file = inspect.getsourcefile(function) or "<unknown>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.__name__} is a reversible program, not a Python function: "
                        f"run it with revasm.compiler.run({self.__name__}, ...)")

    def __invert__(self) -> Any:  # ``~f(...)`` only means something to the compiler
        return self

    def compile(self, **options: Any):
        return compile_function(self, **options)

    def run(self, inputs: dict | None = None, **options: Any):
        return run(self, inputs or {}, **options)


def reversible(function: Any) -> ReversibleFunction:
    """Mark a function as a reversible program for ``revasm compile``."""
    return ReversibleFunction(function)


@dataclass
class CompiledProgram:
    """A compiled entry function: IR, PAL text, assembled image, source map."""

    module: ir.Module
    entry: str
    lowered: Lowered
    image: Image

    @property
    def pal(self) -> str:
        return self.lowered.pal

    @property
    def function(self) -> ir.Function:
        return self.module.functions[self.entry]

    def ir_text(self, inverse: bool = False) -> str:
        return module_text(self.module, inverse=inverse)

    def source_of_pc(self, pc: int | None) -> SourceEntry | None:
        """The Python position (and role) of the instruction at ``pc``."""
        if pc is None:
            return None
        location = self.image.location(pc)
        return self.lowered.lines.get(location.line) if location else None

    def role_of_pc(self, pc: int) -> str:
        entry = self.source_of_pc(pc)
        return entry.role if entry else "control"


class ProgramFault(Exception):
    """A machine fault in compiled code, reported at the Python line it came from."""

    def __init__(self, fault: MachineFault, pos: SourcePos | None, note: str) -> None:
        self.fault = fault
        self.pos = pos
        self.note = note
        where = f"{pos}: " if pos else ""
        super().__init__(f"{where}runtime error: {note or fault.message}")


@dataclass
class RunResult:
    values: dict[str, Any]
    steps: int
    cycles: int
    machine: Lanes = field(repr=False)
    program: CompiledProgram = field(repr=False)


def compile_source(text: str, entry: str | None = None, filename: str = "<source>", *,
                   width: int = 32, for_gradient: bool = False,
                   max_registers: int | None = None, checks: bool = True,
                   inline: bool = True, optimize: bool = True) -> CompiledProgram:
    return _finish(parse_source(text, filename), entry, width, for_gradient, max_registers,
                   checks, inline, optimize)


def compile_file(path: str | Path, entry: str | None = None, *, width: int = 32,
                 for_gradient: bool = False, max_registers: int | None = None,
                 checks: bool = True, inline: bool = True,
                 optimize: bool = True) -> CompiledProgram:
    """Compile ``entry`` (default: the file's last @reversible function).

    ``checks=False`` (NiLang's ``@invcheckoff``) drops the runtime guards
    (docs/language.md, *Runtime checks*); ``inline=False`` keeps every call a portal
    call instead of inlining small straight-line functions; ``optimize=False`` turns
    off the peephole, the constant pool and the single-pass conditions (docs/abi.md).
    """
    return _finish(parse_file(path), entry, width, for_gradient, max_registers, checks,
                   inline, optimize)


def compile_function(function: ReversibleFunction, **options: Any) -> CompiledProgram:
    return compile_file(function.source_file, function.__name__, **options)


def _finish(module: ir.Module, entry: str | None, width: int, for_gradient: bool,
            max_registers: int | None, checks: bool = True,
            inline: bool = True, optimize: bool = True) -> CompiledProgram:
    if entry is None:
        entry = list(module.functions)[-1]
    if entry not in module.functions:
        known = ", ".join(module.functions)
        raise CompileError(SourcePos(module.file, 1, 1),
                           f"no @reversible function {entry!r} in this file (it has: {known})")
    proofs = check_module(module, for_gradient=for_gradient)
    lowered_module = inline_calls(module) if inline else module
    try:
        lowered = lower_module(lowered_module, entry, width, max_registers, for_gradient,
                               proofs, checks, optimize)
    except CompileError as exc:
        if not exc.source_line and 0 < exc.pos.line <= len(module.source_lines):
            exc.source_line = module.source_lines[exc.pos.line - 1]
        raise
    image = assemble(lowered.pal, filename=f"{Path(module.file).stem}.{entry}.pal", width=width)
    return CompiledProgram(module, entry, lowered, image)


def _program(target: Any, **options: Any) -> CompiledProgram:
    if isinstance(target, CompiledProgram):
        return target
    if isinstance(target, ReversibleFunction):
        return compile_function(target, **options)
    raise TypeError("run() takes a CompiledProgram or a @reversible function")


def load_inputs(program: CompiledProgram, machine: Lanes, inputs: dict[str, Any]) -> None:
    """Set parameters: scalars by name, arrays from (nested) sequences of numbers."""
    f = program.function
    fmt = WordFormat(program.image.width)
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
                            _word(fmt, v, p.type.element) & fmt.mask)
        else:
            reg = program.lowered.layouts[f.name].scalars[name].register
            write_place(machine, reg, None, _word(fmt, value, p.type) & fmt.mask)


def read_values(program: CompiledProgram, machine: Lanes, exact: bool = False,
                lane: int = 0) -> dict:
    """Every parameter's value on one lane: scalars, arrays as nested lists."""
    f = program.function
    fmt = WordFormat(program.image.width)
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


def run(target: Any, inputs: dict[str, Any] | None = None, *, width: int = 32,
        max_steps: int | None = 50_000_000, reverse_check: bool = False,
        engine: str = "auto") -> RunResult:
    """Compile (if needed) and run forward; values of every parameter afterwards.

    ``reverse_check`` also runs backward and raises if the initial state is not
    restored exactly.  ``engine`` names the simulator engine (``revasm.sim.engines``).
    """
    program = _program(target, width=width)
    machine = load(program.image, 1, engine_name=engine, max_steps=max_steps)
    load_inputs(program, machine, inputs or {})
    before = machine.snapshot(0)
    machine.run(1)
    _raise_fault(program, machine)
    values = read_values(program, machine)
    steps, cycles = int(machine.steps[0]), int(machine.cycles[0])
    if reverse_check:
        machine.run(-1)
        _raise_fault(program, machine)
        after = machine.snapshot(0)
        if (after.registers, after.memory) != (before.registers, before.memory):
            raise AssertionError("running backward did not restore the initial state")
        machine.run(1)
        _raise_fault(program, machine)
    return RunResult(values, steps, cycles, machine, program)


def _raise_fault(program: CompiledProgram, machine: Lanes) -> None:
    fault = machine.fault(0)
    if fault is not None:
        raise program_fault(program, fault)


def program_fault(program: CompiledProgram, fault: MachineFault) -> ProgramFault:
    """Map a machine fault to the Python line: the trap's note, else the faulting PC."""
    for pc in (fault.landing_pc, fault.pc, fault.jump_source_pc):
        entry = program.source_of_pc(pc)
        if entry is not None and entry.note and (entry.role == "check" or pc == fault.pc):
            return ProgramFault(fault, entry.pos, entry.note)
    entry = program.source_of_pc(fault.pc)
    return ProgramFault(fault, entry.pos if entry else None, fault.message)


def _word(fmt: WordFormat, value: Any, type_: ir.ScalarType) -> int:
    if type_ == ir.INT:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{value} is not an integer")
        return int(value)
    return fmt.from_real(Fraction(value) if not isinstance(value, str) else value)


def _value(fmt: WordFormat, word: int, type_: ir.ScalarType, exact: bool):
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


def _reshape(flat: list, shape: tuple[int, ...]):
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_reshape(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


__all__ = ["CompileError", "CompiledProgram", "ProgramFault", "ReversibleFunction",
           "RunResult", "compile_file", "compile_function", "compile_source", "function_text",
           "reversible", "run"]
