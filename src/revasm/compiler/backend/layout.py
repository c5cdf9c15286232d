"""Where each variable lives: registers, frame slots, array memory (docs/abi.md).

Registers: ``$0`` zero, ``$1`` the stack pointer SP, ``$2..$11`` scratch
(expression temporaries, addresses, conditions), ``$12..$30`` variables,
``$31`` the return offset (the SWAPBR portal's register).  A function's
scalars get registers in order of appearance (parameters first); the rest
are spilled to frame slots at SP + offset and moved in and out with EXCH.
Arrays live in memory: a parameter array's base address is in a register,
a local array occupies frame words at SP + offset.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import CompileError
from ..ir import nodes as ir

SP = 1
LINK = 31
SCRATCH = tuple(range(2, 12))
VARIABLE_REGISTERS = tuple(range(12, 31))


@dataclass(unsafe_hash=True)
class Slot:
    """A variable's home: a register, or a frame word at SP + offset."""

    register: int | None = None
    frame_offset: int | None = None


@dataclass(unsafe_hash=True)
class ArrayHome:
    """An array: base address in ``register`` (parameter) or at SP + ``frame_offset``."""

    type: ir.ArrayType
    register: int | None = None
    frame_offset: int | None = None


@dataclass
class FunctionLayout:
    function: ir.Function
    scalars: dict[str, Slot] = field(default_factory=dict)
    scalar_types: dict[str, ir.ScalarType] = field(default_factory=dict)
    arrays: dict[str, ArrayHome] = field(default_factory=dict)
    frame_size: int = 0

    @property
    def registers(self) -> list[int]:
        """Every register this function's variables occupy (pushed around calls)."""
        regs = [s.register for s in self.scalars.values() if s.register is not None]
        regs += [a.register for a in self.arrays.values() if a.register is not None]
        return sorted(set(regs))

    def param_register(self, index: int) -> int:
        """The register parameter ``index`` is passed in (its value, or an array's base)."""
        p = self.function.params[index]
        home = self.arrays[p.name] if isinstance(p.type, ir.ArrayType) else self.scalars[p.name]
        if home.register is None:  # layout_function gives every parameter a register
            raise ValueError(f"parameter {p.name} of {self.function.name} has no register")
        return home.register

    def types(self) -> dict[str, ir.ScalarType | ir.ArrayType]:
        """Variable -> its type (scalars and arrays)."""
        t: dict[str, ir.ScalarType | ir.ArrayType] = dict(self.scalar_types)
        t.update({name: home.type for name, home in self.arrays.items()})
        return t


def layout_function(f: ir.Function, max_registers: int | None = None,
                    reference: ir.Function | None = None) -> FunctionLayout:
    """Registers for parameters first, then locals by first appearance; spill the rest.

    With ``reference`` (the function as -O0 lowers it, before -O2's inlining and
    unrolling), its locals come first, in its order, each in the register or frame slot it
    has there even when the optimised function no longer has it (an unrolled loop's
    variable), and the optimised function's own locals after them: every variable keeps
    its -O0 home, and with it the history of its register's gradient word
    (docs/decisions.md, "Inlining and the gradient bank")."""
    pool = list(VARIABLE_REGISTERS[:max_registers] if max_registers else VARIABLE_REGISTERS)
    lay = FunctionLayout(f)
    for p in f.params:
        if not pool:
            raise CompileError(p.pos, f"{f.name} has more parameters than the "
                                      f"{len(VARIABLE_REGISTERS)} variable registers",
                               "pass an array instead of many scalars")
        reg = pool.pop(0)
        if isinstance(p.type, ir.ArrayType):
            lay.arrays[p.name] = ArrayHome(p.type, register=reg)
        else:
            lay.scalars[p.name] = Slot(register=reg)
            lay.scalar_types[p.name] = p.type
    present = set(dict(_locals(f.body)))
    seen = {p.name for p in f.params}
    order = list(_locals(reference.body)) if reference is not None else []
    for name, type_ in order + list(_locals(f.body)):
        if name in seen:
            continue
        seen.add(name)
        if name not in present:  # a home kept empty: the ones after it stay where they are
            if isinstance(type_, ir.ArrayType):
                lay.frame_size += type_.size
            elif pool:
                pool.pop(0)
            else:
                lay.frame_size += 1
            continue
        if isinstance(type_, ir.ArrayType):
            lay.arrays[name] = ArrayHome(type_, frame_offset=lay.frame_size)
            lay.frame_size += type_.size
        elif pool:
            lay.scalars[name] = Slot(register=pool.pop(0))
            lay.scalar_types[name] = type_
        else:
            lay.scalars[name] = Slot(frame_offset=lay.frame_size)
            lay.scalar_types[name] = type_
            lay.frame_size += 1
    return lay


def _locals(body: list[ir.Stmt]) -> Iterator[tuple[str, ir.ScalarType | ir.ArrayType]]:
    """(name, type) of every ancilla and loop variable, in order of appearance."""
    for s in body:
        if isinstance(s, ir.Alloc):
            yield s.name, s.type
        elif isinstance(s, ir.For):
            yield s.var, ir.INT
            yield from _locals(s.body)
        elif isinstance(s, ir.If):
            yield from _locals(s.then)
            yield from _locals(s.orelse)
        elif isinstance(s, ir.While):
            yield from _locals(s.head + s.body)
        elif isinstance(s, (ir.Routine, ir.Block)):
            yield from _locals(s.body)
