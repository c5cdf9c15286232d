"""Bounded proofs of the multi-cycle units against the table's oracle, at a reduced width.

A unit (the multiply/divide unit, the function unit) is iterative: its proof unrolls
every cycle of one operation, and the oracle (``isa/vocabulary.py``'s ``fmul``, ``fdiv``,
``fn_*``, ``rot``, ``irot`` and their overflow predicates, defined by
``isa/elementary.py`` and ``isa/rotation.py``) is an integer algorithm no solver reads.
So the proof runs at a reduced word width W (a parameter; the proof states it), where
the oracle is *tabulated*: evaluated by the table's own Python on every input, and the
table read by the solver as a constant ROM.  The obligation, for every operand (free):
started with the operation, the unit raises ``done`` within ``depth`` cycles (the
iteration count derived from W plus the unit's overhead) with the oracle's result,
overflow bit and fault.  Units are reached through :class:`UnitPort`, so the same proof
runs against whatever unit is built; a unit that cannot be built at the reduced width
is reported as such (never as proven).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

from revasm.isa.elementary import DivideByZero, DomainError
from revasm.isa.vocabulary import vocabulary

from .semantics import FUNCTION_OPS, MULDIV_OPS
from .table_rendering import UNIT_PREDICATES, word_format


@dataclass(frozen=True)
class UnitPort:
    """How a proof drives one unit: ``build(width)`` makes it; ``start(unit, name)`` the
    assignments that start the operation ``name`` (operands excluded); ``operands(unit)``,
    ``results(unit)`` (r0, r1), ``overflow(unit)``, ``fault(unit)``, ``done(unit)``."""

    name: str
    build: Callable[[int], Elaboratable]
    start: Callable[[object, str], list]
    operands: Callable[[object], tuple]
    results: Callable[[object], tuple]
    overflow: Callable[[object], object]
    fault: Callable[[object], object]
    done: Callable[[object], object]
    cycles: Callable[[int, str], int]


def _muldiv_build(width: int) -> Elaboratable:
    from .muldiv import MulDiv
    return MulDiv(width)


def _muldiv_cycles(width: int, name: str) -> int:
    from .muldiv import product_steps, quotient_steps
    return (product_steps(width) if name == "fmul" else quotient_steps(width)) + 2


def _function_unit_build(width: int) -> Elaboratable:
    from .function_unit import FunctionUnit
    return FunctionUnit(width)


def _function_unit_start(unit, name: str) -> list:
    arith = name in MULDIV_OPS
    code = MULDIV_OPS.index(name) if arith else FUNCTION_OPS.index(name)
    return [unit.start.eq(1), unit.arith.eq(arith), unit.op.eq(code)]


def _function_unit_cycles(width: int, name: str) -> int:
    """An upper bound on one operation's cycles, derived from W (docs/rtl.md's counts
    scale with the iteration counts: P + 1 CORDIC iterations of two cycles, a W + F + 4
    step quotient and a (W + 2) / 2 step product, a few of each per function)."""
    prec = width - 2
    return 8 * (2 * (prec + 1) + width + width // 2 + 4 + (width + 2) // 2) + 16


MULDIV = UnitPort(
    "muldiv", _muldiv_build,
    start=lambda unit, name: [unit.start.eq(1), unit.op.eq(MULDIV_OPS.index(name))],
    operands=lambda unit: (unit.x, unit.y), results=lambda unit: (unit.result,),
    overflow=lambda unit: unit.overflow, fault=lambda unit: unit.fault,
    done=lambda unit: unit.done, cycles=_muldiv_cycles)

FUNCTION_UNIT = UnitPort(
    "function unit", _function_unit_build, start=_function_unit_start,
    operands=lambda unit: (unit.x, unit.y, unit.z), results=lambda unit: (unit.r0, unit.r1),
    overflow=lambda unit: unit.overflow, fault=lambda unit: unit.fault,
    done=lambda unit: unit.done, cycles=_function_unit_cycles)


def arity(name: str) -> int:
    """The operands of a unit operation."""
    if name in ("rot", "irot"):
        return 3
    return 2 if name in ("fmul", "fdiv", "fn_atan2", "fn_pow") else 1


def oracle_table(name: str, width: int) -> list[tuple[int, int, int, int]]:
    """The table's ``name`` on every input at width W: per input (operands packed low
    first), (r0, r1, overflow bit, fault) -- the vocabulary's own Python."""
    words = vocabulary(word_format(width))
    function = words[name]
    predicate = {call: p for p, call in UNIT_PREDICATES.items()}.get(name)
    test = words[predicate] if predicate else None
    n = arity(name)
    mask = (1 << width) - 1
    rows = []
    for packed in range(1 << (n * width)):
        args = [(packed >> (k * width)) & mask for k in range(n)]
        try:
            out = function(*args)
        except (DivideByZero, DomainError):
            rows.append((0, 0, 0, 1))
            continue
        r0, r1 = out if isinstance(out, tuple) else (out, 0)
        rows.append((r0, r1, int(test(*args)) if test else 0, 0))
    return rows


class UnitSpec(Elaboratable):
    """One unit operation against its tabulated oracle at width W (module docstring)."""

    def __init__(self, port: UnitPort, name: str, width: int) -> None:
        self.port = port
        self.name = name
        self.width = width
        self.depth = port.cycles(width, name) + 2
        self.table = oracle_table(name, width)

    def elaborate(self, platform) -> Module:
        m = Module()
        w = self.width
        m.submodules.unit = unit = self.port.build(w)
        n = arity(self.name)
        operands = [AnyConst(w) for _ in range(n)]
        ports = self.port.operands(unit)
        m.d.comb += [p.eq(o) for p, o in zip(ports, operands)]
        # unused operand ports: zero
        m.d.comb += [p.eq(0) for p in ports[n:]]
        first = Signal(init=1)
        m.d.sync += first.eq(0)
        with m.If(first):
            m.d.comb += self.port.start(unit, self.name)
        results = self.port.results(unit)
        # the tabulated oracle as a ROM (the solver reads it as an array)
        m.submodules.oracle = oracle = Memory(
            shape=2 * w + 2, depth=len(self.table),
            init=[r0 | (r1 << w) | (ovf << 2 * w) | (fault << (2 * w + 1))
                  for r0, r1, ovf, fault in self.table])
        read = oracle.read_port(domain="comb")
        expected = read.data
        m.d.comb += read.addr.eq(Cat(*operands))
        r1 = results[1] if len(results) > 1 and self.name in ("rot", "irot") else Const(0, w)
        seen = Signal()  # done has risen (once: the proof starts one operation)
        ok = Signal(init=1)
        done = self.port.done(unit)
        fault = self.port.fault(unit)
        with m.If(done & ~first & ~seen):
            m.d.sync += seen.eq(1)
            faulted = expected[2 * w + 1]
            m.d.sync += ok.eq((fault == faulted) & (faulted | (
                (results[0] == expected[:w]) & (r1 == expected[w:2 * w])
                & (self.port.overflow(unit) == expected[2 * w]))))
        cycle = Signal(range(self.depth + 2))
        m.d.sync += cycle.eq(cycle + 1)
        last = cycle >= self.depth - 1
        m.d.comb += [Assert(~last | seen, f"{self.name}: done within {self.depth - 2} cycles"),
                     Assert(~last | ok, f"{self.name}: result, overflow and fault are the "
                                        "table's")]
        return m


class RotationLawSpec(Elaboratable):
    """The function unit's law ``irot(rot(x, y, c), c) == (x, y)`` at width W: one unit
    rotates free words, a second unrotates its results by the same angle."""

    def __init__(self, port: UnitPort, width: int) -> None:
        self.port = port
        self.width = width
        self.depth = 2 * (port.cycles(width, "rot") + 2)

    def elaborate(self, platform) -> Module:
        m = Module()
        w = self.width
        m.submodules.rot = rot = self.port.build(w)
        m.submodules.irot = irot = self.port.build(w)
        x, y, c = (AnyConst(w) for _ in range(3))
        rx, ry, rz = self.port.operands(rot)
        m.d.comb += [rx.eq(x), ry.eq(y), rz.eq(c)]
        first = Signal(init=1)
        m.d.sync += first.eq(0)
        with m.If(first):
            m.d.comb += self.port.start(rot, "rot")
        r0, r1 = self.port.results(rot)
        held0, held1 = Signal(w), Signal(w)
        second = Signal()
        with m.If(self.port.done(rot) & ~first & ~second):
            m.d.sync += [held0.eq(r0), held1.eq(r1), second.eq(1)]
            m.d.comb += self.port.start(irot, "irot")
        ix, iy, iz = self.port.operands(irot)
        m.d.comb += [ix.eq(Mux(second, held0, r0)), iy.eq(Mux(second, held1, r1)), iz.eq(c)]
        back0, back1 = self.port.results(irot)
        seen, ok = Signal(), Signal(init=1)
        with m.If(second & self.port.done(irot) & ~seen):
            m.d.sync += [seen.eq(1), ok.eq((back0 == x) & (back1 == y))]
        cycle = Signal(range(self.depth + 2))
        m.d.sync += cycle.eq(cycle + 1)
        last = cycle >= self.depth - 1
        m.d.comb += [Assert(~last | seen, "rot then irot within the bound"),
                     Assert(~last | ok, "irot(rot(x, y, c), c) == (x, y)")]
        return m

