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
from functools import cache
from typing import Any

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Cat, Const, Elaboratable, Module, Mux, Signal, Value
from amaranth.lib.memory import Memory

from revasm.isa.elementary import DivideByZero, DomainError
from revasm.isa.primitives import PAIRS, UNIT_PREDICATES, primitive
from revasm.isa.vocabulary import vocabulary
from revasm.rtl.hardware.params import word_format
from revasm.rtl.hardware.semantics import FUNCTION_OPS, MULDIV_OPS


@dataclass(frozen=True)
class UnitPort:
    """How a proof drives one unit: ``build(width)`` makes it; ``start(unit, name)`` the
    assignments that start the operation ``name`` (operands excluded); ``operands(unit)``,
    ``results(unit)`` (r0, r1), ``overflow(unit)``, ``fault(unit)``, ``done(unit)``."""

    name: str
    build: Callable[[int], Elaboratable]
    start: Callable[[Elaboratable, str], list[object]]
    operands: Callable[[Elaboratable], tuple[Value, ...]]
    results: Callable[[Elaboratable], tuple[Value, ...]]
    overflow: Callable[[Elaboratable], Value]
    fault: Callable[[Elaboratable], Value]
    done: Callable[[Elaboratable], Value]
    cycles: Callable[[int, str], int]


def _muldiv_build(width: int) -> Elaboratable:
    from revasm.rtl.hardware.muldiv import MulDiv
    return MulDiv(width)


def _muldiv_cycles(width: int, name: str) -> int:
    from revasm.isa.timing.units import product_steps, quotient_steps
    return (product_steps(width) if name == "fmul" else quotient_steps(width)) + 2


def _function_unit_build(width: int) -> Elaboratable:
    from revasm.rtl.hardware.function_unit import FunctionUnit
    return FunctionUnit(width)


def _function_unit_start(unit: Elaboratable, name: str) -> list[object]:
    arith = name in MULDIV_OPS
    code = MULDIV_OPS.index(name) if arith else FUNCTION_OPS.index(name)
    return [unit.start.eq(1), unit.arith.eq(arith), unit.op.eq(code)]


@cache
def _function_unit_cycles(width: int, name: str) -> int:
    """The most cycles one operation takes at width W: the unit's cycle model
    (``isa/timing/units.py``) maximised over every operand (rot/irot: every angle, on which
    alone their cycles depend).  The proof checks the bound: ``done`` must rise within it."""
    from revasm.isa.timing.units import function_unit_cycles
    words = range(1 << width)
    if name in ("rot", "irot"):
        return max(function_unit_cycles(name, 0, 0, z, width) for z in words)
    if arity(name) == 2:
        return max(function_unit_cycles(name, x, y, 0, width) for x in words for y in words)
    return max(function_unit_cycles(name, x, 0, 0, width) for x in words)


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
    """The operands of a unit operation (its row of ``isa/primitives.py``)."""
    return primitive(name).arity


def oracle_table(name: str, width: int) -> list[tuple[int, int, int, int]]:
    """The table's ``name`` on every input at width W: per input (operands packed low
    first), (r0, r1, overflow bit, fault) -- the vocabulary's own Python."""
    words = vocabulary(word_format(width))
    function = words[name]
    predicate = {call: p for p, call in UNIT_PREDICATES.items()}.get(name)
    test = words[predicate] if predicate else None
    if not callable(function) or not (test is None or callable(test)):
        raise ValueError(f"{name} or its overflow predicate is not a function of the vocabulary")
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


def one_operation(m: Module, port: UnitPort, unit: Elaboratable, name: str, depth: int,
                  operands: tuple[Value, ...] | list[Value], correct: Value, claim: str) -> None:
    """The obligation of one operation: ``unit`` started with ``name`` on ``operands`` (the
    other operand ports 0) in the first cycle; when ``done`` first rises, ``correct`` (a
    1-bit value of the unit's outputs) is latched; by cycle ``depth`` ``done`` must have
    risen and ``correct`` held."""
    ports = port.operands(unit)
    m.d.comb += [p.eq(o) for p, o in zip(ports, operands)]
    m.d.comb += [p.eq(0) for p in ports[len(operands):]]
    first = Signal(init=1)
    m.d.sync += first.eq(0)
    with m.If(first):
        m.d.comb += port.start(unit, name)
    seen = Signal()  # done has risen (once: the proof starts one operation)
    ok = Signal(init=1)
    with m.If(port.done(unit) & ~first & ~seen):
        m.d.sync += [seen.eq(1), ok.eq(correct)]
    cycle = Signal(range(depth + 2))
    m.d.sync += cycle.eq(cycle + 1)
    last = cycle >= depth - 1
    m.d.comb += [Assert(~last | seen, f"{name}: done within {depth - 2} cycles"),
                 Assert(~last | ok, f"{name}: {claim}")]


class UnitSpec(Elaboratable):
    """One unit operation against its tabulated oracle at width W (module docstring)."""

    def __init__(self, port: UnitPort, name: str, width: int) -> None:
        self.port = port
        self.name = name
        self.width = width
        self.depth = port.cycles(width, name) + 2
        self.table = oracle_table(name, width)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w = self.width
        m.submodules.unit = unit = self.port.build(w)
        operands = [AnyConst(w) for _ in range(arity(self.name))]
        results = self.port.results(unit)
        # the tabulated oracle as a ROM (the solver reads it as an array)
        m.submodules.oracle = oracle = Memory(
            shape=2 * w + 2, depth=len(self.table),
            init=[r0 | (r1 << w) | (ovf << 2 * w) | (fault << (2 * w + 1))
                  for r0, r1, ovf, fault in self.table])
        read = oracle.read_port(domain="comb")
        expected = read.data
        m.d.comb += read.addr.eq(Cat(*operands))
        r1 = results[1] if len(results) > 1 and self.name in PAIRS else Const(0, w)
        faulted = expected[2 * w + 1]
        correct = (self.port.fault(unit) == faulted) & (faulted | (
            (results[0] == expected[:w]) & (r1 == expected[w:2 * w])
            & (self.port.overflow(unit) == expected[2 * w])))
        one_operation(m, self.port, unit, self.name, self.depth, operands, correct,
                      "result, overflow and fault are the table's")
        return m


# --- rot and irot: three operands, so their oracle is tabulated on the angle alone -------------

@dataclass(frozen=True)
class Branching:
    """How :func:`rotation_oracle` decides, on Python integers (``INTEGERS``) or on Amaranth
    values (``VALUES``): ``pick(c, a, b)`` is ``a if c else b``, ``within(v, lo, hi)`` is
    ``lo <= v <= hi``, ``both``/``either``/``opposite`` are ``and``/``or``/``not``."""

    pick: Callable[[Any, Any, Any], Any]
    within: Callable[[Any, Any, Any], Any]
    both: Callable[[Any, Any], Any]
    either: Callable[[Any, Any], Any]
    opposite: Callable[[Any], Any]


INTEGERS = Branching(pick=lambda c, a, b: a if c else b, within=lambda v, lo, hi: lo <= v <= hi,
                     both=lambda a, b: bool(a and b), either=lambda a, b: bool(a or b),
                     opposite=lambda a: not a)
VALUES = Branching(pick=Mux, within=lambda v, lo, hi: (v >= lo) & (v <= hi),
                   both=lambda a, b: a & b, either=lambda a, b: a | b, opposite=lambda a: ~a)


def rotation_plans(width: int) -> list[tuple[int, int, int]]:
    """``isa/rotation.rotation_plan`` on every angle word at width W: (negate, tan(theta'/2),
    sin(theta')), the coefficients as words (they fit: both lie in [-1, 1])."""
    from revasm.isa.rotation import rotation_plan
    fmt = word_format(width)
    plans = []
    for theta in range(1 << width):
        negate, tan_half, sine = rotation_plan(fmt.signed(theta), fmt)
        for coefficient in (tan_half, sine):
            if not fmt.min_signed <= coefficient <= fmt.max_signed:
                raise ValueError(f"a rotation coefficient does not fit W = {width}")
        plans.append((int(negate), fmt.wrap(tan_half), fmt.wrap(sine)))
    return plans


def rotation_oracle(name: str, x: Any, y: Any, plan: tuple[Any, Any, Any], width: int,
                    ops: Branching = INTEGERS) -> tuple[Any, Any, Any]:
    """``rot``/``irot`` of the words (x, y) given the angle's plan (negate, tan(theta'/2),
    sin(theta') as words): ``(x', y', wrapped)`` -- ``isa/rotation.py``'s ``rotate`` and
    ``rotation_overflows`` (``unrotate``, ``unrotation_overflows``) restated without Python's
    ``if``, so that it also runs on numpy arrays and Amaranth values (``ops``; hence ``Any``
    for the words).  The shears are the same
    integer expressions (``fx_mul``'s rounded product, the wrap to W bits); the overflow is
    the disjunction of the events those functions return at;
    ``tests/rtl/verification/test_formal.py`` checks this restatement against them on every
    input at W = 6 (``make formal``: W = 8)."""
    fmt = word_format(width)
    negate = plan[0]
    tan_half, sine = fmt.signed(plan[1]), fmt.signed(plan[2])
    frac, sign = fmt.frac_bits, fmt.sign_bit

    def product(coefficient, word):  # elementary.fx_mul(coefficient, S(word)), not wrapped
        return (coefficient * fmt.signed(word) + (1 << (frac - 1))) >> frac

    def negation_wraps(x, y):  # the rotation by pi negates -2**(W-1), which wraps
        return ops.both(negate, ops.either(x == sign, y == sign))

    wrapped = []

    def shear(word, delta):
        wrapped.append(ops.opposite(ops.within(fmt.signed(word) + delta, fmt.min_signed,
                                               fmt.max_signed)))
        return fmt.wrap(fmt.signed(word) + delta)

    if name == "rot":
        wrapped.append(negation_wraps(x, y))
        x, y = fmt.wrap(ops.pick(negate, -x, x)), fmt.wrap(ops.pick(negate, -y, y))
        x = shear(x, -product(tan_half, y))
        y = shear(y, product(sine, x))
        x = shear(x, -product(tan_half, y))
    elif name == "irot":
        x = shear(x, product(tan_half, y))
        y = shear(y, -product(sine, x))
        x = shear(x, product(tan_half, y))
        wrapped.append(negation_wraps(x, y))
        x, y = fmt.wrap(ops.pick(negate, -x, x)), fmt.wrap(ops.pick(negate, -y, y))
    else:
        raise ValueError(f"not a rotation: {name!r}")
    overflow = wrapped[0]
    for event in wrapped[1:]:
        overflow = ops.either(overflow, event)
    return x, y, overflow


class RotationSpec(Elaboratable):
    """``rot`` or ``irot`` at width W against the table: every word and angle free; the
    angle's plan read from its table (``rotation_plans``, the table's Python on every
    angle), the shears and the overflow from :func:`rotation_oracle` (docstring there)."""

    def __init__(self, port: UnitPort, name: str, width: int) -> None:
        self.port = port
        self.name = name
        self.width = width
        self.depth = port.cycles(width, name) + 2
        self.plans = rotation_plans(width)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w = self.width
        m.submodules.unit = unit = self.port.build(w)
        x, y, theta = (AnyConst(w) for _ in range(3))
        m.submodules.plans = plans = Memory(
            shape=2 * w + 1, depth=len(self.plans),
            init=[negate | (t << 1) | (sn << (w + 1)) for negate, t, sn in self.plans])
        read = plans.read_port(domain="comb")
        m.d.comb += read.addr.eq(theta)
        plan = (read.data[0], read.data[1:w + 1], read.data[w + 1:])
        want_x, want_y, want_overflow = rotation_oracle(self.name, x, y, plan, w, VALUES)
        r0, r1 = self.port.results(unit)
        correct = (~self.port.fault(unit) & (r0 == want_x) & (r1 == want_y)
                   & (self.port.overflow(unit) == want_overflow))
        one_operation(m, self.port, unit, self.name, self.depth, (x, y, theta), correct,
                      "the words and the overflow are the table's")
        return m


class RotationLawSpec(Elaboratable):
    """The function unit's law ``irot(rot(x, y, c), c) == (x, y)`` at width W: one unit
    rotates free words, a second unrotates its results by the same angle."""

    def __init__(self, port: UnitPort, width: int) -> None:
        self.port = port
        self.width = width
        self.depth = 2 * (port.cycles(width, "rot") + 2)

    def elaborate(self, platform: object) -> Module:
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

