"""isa/timing: the core's cycles, defined once, from the table's declarations and templates.

The schedule's view of a step (the registers it writes, its memory and tape effects, its
unit calls) is read from the table without Amaranth; here it is compared, entry by entry
and in both directions, with the RTL's own evaluation of the templates
(``rtl/hardware/semantics.evaluate``, what the ALU is built from).  The per-step cycles are
compared with an independent count: the template run with a recording vocabulary, every
unit call it makes timed from its argument words.
"""
from __future__ import annotations

import random

import pytest

from revasm.isa.adjoint import mode_template
from revasm.isa.codec import encode
from revasm.isa.elementary import TABLES, sincos_abs
from revasm.isa.fixed_point import WordFormat
from revasm.isa.table import INSTRUCTIONS
from revasm.isa.timing import (
    BASE_CYCLES,
    FIRST_COMMIT,
    UNIT_CALLS,
    step_cycles,
    step_shape,
    step_timing,
    traced_cycles,
)
from revasm.isa.timing.microcode import PLACEHOLDERS, step
from revasm.isa.timing.units import TAN_POLE_WINDOW, tan_divides


@pytest.mark.parametrize("backward", [False, True])
def test_the_step_shape_is_the_rtls_evaluation_of_every_entry(backward: bool) -> None:
    """Both directions of every entry: the registers written, the memory write, the
    tape's push and pop, SHOW and the unit calls (names, in order) as the table says them
    equal what the RTL's template evaluation makes of the same template."""
    pytest.importorskip("amaranth", reason="the RTL evaluation needs amaranth")
    from amaranth.hdl import Const

    from revasm.rtl.hardware.semantics import Inputs, evaluate
    dummy = Const(0, 64)
    for entry in INSTRUCTIONS:
        inputs = Inputs(64, {"A": dummy, "B": dummy, "C": dummy},
                        {"IMM": dummy, "AMT": Const(0, 7), "K": Const(0, 2),
                         "OFF": Const(0, 26)},
                        Const(0, 66), Const(1, 2), dummy, dummy, ((dummy, dummy),) * 4)
        effects = evaluate(entry.backward if backward else entry.forward, inputs)
        shape = step_shape(entry, backward)
        rtl = (("A" in effects.writes, "B" in effects.writes, effects.mem_write is not None,
                effects.emit is not None, bool(effects.unemit), effects.show is not None,
                tuple(name for name, _ in effects.calls)))
        mine = (shape.wa_en, shape.wb_en, shape.mem_en, shape.push, shape.pop, shape.show,
                shape.calls)
        assert mine == rtl, entry.mnemonic


@pytest.mark.parametrize("width", [32, 64])
def test_every_step_is_timed_in_every_mode(width: int) -> None:
    """The simulators can count every instruction the table has: both directions, value
    and gradient mode; a step without a unit call has only fixed cycles."""
    for entry in INSTRUCTIONS:
        for backward in (False, True):
            for gradient in (False, True):
                timing = step_timing(entry, backward, gradient, width)
                assert timing.fixed >= BASE_CYCLES
                assert timing.after_commit in (1, 2)
                if not gradient and not step_shape(entry, backward).calls:
                    assert timing.timed == ()
                    assert timing.fixed == BASE_CYCLES + step_shape(entry, backward).wb_en


@pytest.mark.parametrize("width", [32, 64])
def test_every_unit_primitive_has_its_cycles(width: int) -> None:
    """Every row of the primitives table that a unit computes has its cycles on the RTL
    (a new function-unit primitive without a timing fails here, as the function unit
    refuses it at elaboration); an ALU primitive or an overflow predicate has none."""
    from revasm.isa.primitives import PRIMITIVES
    from revasm.isa.timing.units import primitive_cycles
    timed = 0
    for row in PRIMITIVES:
        cycles = primitive_cycles(row, width)
        if row.unit == "alu" or row.predicate:
            assert cycles is None, row.name
            continue
        assert cycles is not None and 0 < cycles[0] <= cycles[1], row.name
        timed += 1
    assert timed == len(UNIT_CALLS)


def _registers(fmt: WordFormat, rng: random.Random) -> list[int]:
    words = [0]
    for _ in range(31):
        words.append(rng.choice((rng.randrange(1 << fmt.width),
                                 fmt.wrap(rng.randint(-6 * fmt.one, 6 * fmt.one)),
                                 fmt.wrap(rng.randint(-3, 3)))))
    return words


def _program_cycles(index: int, backward: bool) -> int:
    """The micro-program's own cycles (READ, EXEC, CHECK; GSAVE and REGS backward),
    from the gradient unit's description, without its unit calls."""
    program = step(index, backward)
    if not program.ops:
        return 0
    cycles = sum(2 + (op.op == "ADDR") for op in program.ops)
    return cycles if program.value_first else cycles + 2


@pytest.mark.parametrize("width", [32, 64])
def test_step_cycles_are_the_traced_unit_calls(width: int) -> None:
    """For every entry that calls a unit, random register words, both directions and
    both modes: the schedule's count equals FETCH .. NEXT (+ WRITEB) plus the
    micro-program plus every unit call the gradient-mode or value template makes, each
    timed from the words it was called with (the template run in Python)."""
    fmt = WordFormat(width)
    rng = random.Random(width)
    operands = {"a": 1, "b": 2, "c": 3}
    compared = 0
    for index, entry in enumerate(INSTRUCTIONS):
        calls = {name for template in (entry.forward, entry.backward, entry.adjoint)
                 for name in UNIT_CALLS if f"{name}(" in template}
        if not calls or entry.kind != "data" or not set(entry.operand_names) <= {"a", "b", "c"}:
            continue
        word = encode(entry, operands)
        for backward in (False, True):
            for gradient in (False, True):
                wb = step_shape(entry, backward).wb_en
                for _ in range(12):
                    registers = _registers(fmt, rng)
                    gradients = _registers(fmt, rng)
                    direction = -1 if backward else 1
                    template = mode_template(entry, direction, gradient=gradient)
                    units = traced_cycles(template.format(**operands), width,
                                          R=list(registers), G=list(gradients),
                                          MEM=[0] * 8, GM=[0] * 8)
                    try:
                        exec(template.format(**operands),  # the table's text
                             dict(_vocabulary(width), R=list(registers), G=list(gradients),
                                  OV=[0], overflow=lambda flag: flag))
                    except ArithmeticError:
                        continue  # a faulting step retires nothing
                    expected = BASE_CYCLES + wb + units
                    if gradient:
                        expected += _program_cycles(index, backward)
                    assert step_cycles(word, backward, registers, width,
                                       gradient=gradient) == expected, (
                        entry.mnemonic, backward, gradient)
                    compared += 1
    assert compared > 1000


def _vocabulary(width: int) -> dict:
    from revasm.isa.vocabulary import vocabulary
    return dict(vocabulary(WordFormat(width)))


@pytest.mark.parametrize("width", [32, 64])
def test_tan_divides_beside_every_pole_as_the_cordic_says(width: int) -> None:
    """tan skips its division where its denominator is exactly 0; the timing decides that
    from the quadrant reduction alone unless the angle is within TAN_POLE_WINDOW of a
    pole.  Beside many poles (k pi/2, odd k; 14555 pi/2 is TAN_POLE_32 of
    tests/isa/timing/test_units.py), every word within 40 of the pole, and a random sample of
    all words, gets the CORDIC's own answer."""
    t = TABLES[width]
    fmt = WordFormat(width)
    shift = t.guard + t.reduce_extra  # half_pi_wide: pi/2 at P + E fraction bits
    rng = random.Random(width)
    angles = []
    ks = [1, 3, 5, 7, 99, 1001, 14555] + [2 * rng.randrange(1, 20_000) + 1 for _ in range(20)]
    for k in ks:
        centre = (k * t.half_pi_wide + (1 << (shift - 1))) >> shift  # the nearest word
        # the window is narrower than a word (TAN_POLE_WINDOW < 2**(P - F)): words
        # around the pole, and a few more
        assert TAN_POLE_WINDOW >> t.guard == 0
        angles += range(centre - 40, centre + 41)
    angles += [rng.randrange(fmt.max_signed) for _ in range(300)]
    zeros = 0
    for ax in angles:
        _c, s, q = sincos_abs(ax, t)
        exact = (-s if q & 1 else _c) != 0
        assert tan_divides(ax, t) == exact, ax
        zeros += not exact
    if width == 32:
        assert zeros >= 1  # TAN_POLE_32 of tests/isa/timing/test_units.py is among them


def test_the_first_commit_and_a_plain_step() -> None:
    """FETCH, DECODE, REGS, EXEC, WAIT to the commit; NEXT after it; WRITEB for a second
    register: ADD takes 6 cycles, SWAP 7, in both directions."""
    assert FIRST_COMMIT == 5 and BASE_CYCLES == 6
    by_name = {entry.mnemonic: entry for entry in INSTRUCTIONS}
    for backward in (False, True):
        assert step_timing(by_name["ADD"], backward).fixed == 6
        assert step_timing(by_name["SWAP"], backward).fixed == 7
        assert step_timing(by_name["SWAP"], backward).after_commit == 2


def test_the_microcode_placeholders_are_the_rtls() -> None:
    """The micro-program compiler and the RTL's template evaluator name the operands
    alike (they read the same parsed templates)."""
    pytest.importorskip("amaranth", reason="the RTL's names need amaranth")
    from revasm.rtl.hardware.semantics import PLACEHOLDERS as RTL_PLACEHOLDERS
    from revasm.rtl.hardware.semantics import UNIT_OF
    assert PLACEHOLDERS == RTL_PLACEHOLDERS
    assert set(UNIT_OF) == UNIT_CALLS
