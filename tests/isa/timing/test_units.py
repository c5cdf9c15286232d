"""isa/timing/units.py: the cycles of every unit call equal the unit's own in simulation.

Each unit runs alone in Amaranth's simulator; a call is ``start`` for one cycle, then the
cycles until ``done``.  The operands cover every branch of the sequencers (faults,
saturation in IDLE, tan's pole where the division is skipped, the reduction of a rotation
angle by pi, tanh rounding to one, log of a power of two, pow through exp's saturation,
fmul/fdiv on either unit) and random words, at both widths.
"""
from __future__ import annotations

import random

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")
pytestmark = pytest.mark.filterwarnings("error")

from amaranth.sim import Simulator  # noqa: E402

from revasm.isa.fixed_point import WordFormat  # noqa: E402
from revasm.isa.timing.units import (  # noqa: E402
    FUNCTION_OPS,
    MULDIV_OPS,
    TIMING_ARGUMENTS,
    call_cycle_range,
    call_cycles,
    call_timer,
    fixed_call_cycles,
    function_unit_cycles,
    muldiv_cycles,
)
from revasm.isa.vocabulary import vocabulary  # noqa: E402
from revasm.rtl.hardware.function_unit import FunctionUnit  # noqa: E402
from revasm.rtl.hardware.muldiv import MulDiv  # noqa: E402

#: tan's denominator (the CORDIC's sin r at an odd quadrant) is exactly 0 here at W = 32:
#: the unit skips the division (found by a search over the multiples of pi/2)
TAN_POLE_32 = 1498345671


def _measure(dut, ports: tuple[str, ...], calls: list[tuple[int, ...]]) -> list[int]:
    """The cycles of each call: the start cycle up to the one whose edge raises done."""
    counts: list[int] = []

    async def testbench(ctx) -> None:
        for call in calls:
            for port, value in zip(ports, call):
                ctx.set(getattr(dut, port), value)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            cycles = 1
            while not ctx.get(dut.done):
                await ctx.tick()
                cycles += 1
            counts.append(cycles)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    return counts


def _random_words(fmt: WordFormat, rng: random.Random, count: int) -> list[int]:
    return [rng.choice((rng.randrange(1 << fmt.width),
                        fmt.wrap(rng.randint(-8 * fmt.one, 8 * fmt.one)),
                        fmt.wrap(rng.randint(-40, 40)))) for _ in range(count)]


@pytest.mark.parametrize("width", [32, 64])
def test_muldiv_takes_the_modelled_cycles(width: int) -> None:
    fmt = WordFormat(width)
    rng = random.Random(width)
    words = _random_words(fmt, rng, 6)
    cases = [(op, x, y) for op in MULDIV_OPS for x in words[:3] for y in words[3:]]
    cases += [("fdiv", fmt.one, 0), ("fdiv", 0, fmt.one), ("fmul", 0, 0)]
    measured = _measure(MulDiv(width), ("op", "x", "y"),
                        [(MULDIV_OPS.index(op), x, y) for op, x, y in cases])
    for (op, x, y), cycles in zip(cases, measured):
        assert muldiv_cycles(op, x, y, width) == cycles, (op, fmt.signed(x), fmt.signed(y))
        assert call_cycles(op, (x, y), width, function_unit=False) == cycles
    assert len(set(measured)) == 3  # product, quotient, division by zero


def _function_cases(fmt: WordFormat, rng: random.Random) -> list[tuple[str, int, int, int]]:
    w, one, r = fmt.width, fmt.one, fmt.from_real
    x = fmt.wrap
    branches = [
        ("fn_abs", x(-5), 0, 0), ("fn_sqrt", r("2.5"), 0, 0), ("fn_sqrt", x(-one), 0, 0),
        ("fn_sin", r("1.0"), 0, 0), ("fn_cos", x(r("-3.0")), 0, 0), ("fn_tan", r("0.5"), 0, 0),
        ("fn_atan", x(-r("2.0")), 0, 0), ("fn_atan2", 0, 0, 0), ("fn_atan2", one, x(-one), 0),
        ("rot", one, 0, r("0.5")), ("irot", one, one, x(-r("2.0"))), ("rot", 3, 5, r("7.0")),
        ("fn_exp", r("1.5"), 0, 0), ("fn_exp", fmt.max_signed, 0, 0),
        ("fn_exp", x(fmt.min_signed), 0, 0), ("fn_sinh", r("2.0"), 0, 0),
        ("fn_sinh", x(-r(str(w + 3))), 0, 0), ("fn_cosh", r(str(w + 2)), 0, 0),
        ("fn_cosh", x(-one), 0, 0), ("fn_tanh", r("0.25"), 0, 0),
        ("fn_tanh", x(-r(str(w // 2 - 2))), 0, 0),  # k >= F/2 + 2: rounds to one
        ("fn_tanh", r(str(w // 2 + 4)), 0, 0), ("fn_log", 4 * one, 0, 0),  # a power of two
        ("fn_log", r("3.0"), 0, 0), ("fn_log", 0, 0, 0), ("fn_pow", r("2.0"), r("1.5"), 0),
        ("fn_pow", r("100.0"), r("100.0"), 0),  # exp of y ln x saturates in POW_Z
        ("fn_pow", r("0.01"), r("100.0"), 0),  # ... below its range too
        ("fn_exp", r(str(w // 2 + 1)), 0, 0),  # in range, saturates after the CORDIC
        ("fmul", r("1.5"), x(-r("2.25")), 0), ("fmul", fmt.max_signed, fmt.max_signed, 0),
        ("fdiv", one, x(-r("3.0")), 0), ("fdiv", one, 0, 0),  # divide by zero in IDLE
        ("fn_pow", 0, x(-one), 0), ("fn_pow", 0, 0, 0), ("fn_pow", x(-one), one, 0),
        ("rot", one, one, r("3.0")),  # reduced by one turn of pi: rot negates first
        ("fn_log", fmt.max_signed, 0, 0), ("fn_log", 1 << (w - 2), 0, 0),  # widest mantissa
        ("fn_log", (1 << (w - 2)) + 1, 0, 0), ("fn_log", (1 << (w - 2)) + 2, 0, 0),
        # sigmoid: exp's routine on |x| / 2 and a division below |x| = 2 (F + 4), one or
        # zero from BEGIN at and beyond it (min_signed too)
        ("fn_sigmoid", r("0.75"), 0, 0), ("fn_sigmoid", x(-r("3.5")), 0, 0),
        ("fn_sigmoid", 0, 0, 0), ("fn_sigmoid", (w + 8) * one - 1, 0, 0),
        ("fn_sigmoid", (w + 8) * one, 0, 0), ("fn_sigmoid", x(1 - (w + 8) * one), 0, 0),
        ("fn_sigmoid", x(-(w + 8) * one), 0, 0), ("fn_sigmoid", x(fmt.min_signed), 0, 0),
    ]
    if w == 32:
        branches += [("fn_tan", TAN_POLE_32, 0, 0), ("fn_tan", x(-TAN_POLE_32), 0, 0)]
    words = _random_words(fmt, rng, 3 * len(FUNCTION_OPS) * 2 + 2 * len(MULDIV_OPS))
    randoms = [(op, words.pop(), words.pop(), words.pop()) for op in FUNCTION_OPS
               for _ in range(2)]
    randoms += [(op, words.pop(), words.pop(), 0) for op in MULDIV_OPS]
    return branches + randoms


@pytest.mark.parametrize("width", [32, 64])
def test_function_unit_takes_the_modelled_cycles(width: int) -> None:
    fmt = WordFormat(width)
    cases = _function_cases(fmt, random.Random(width + 7))
    assert {op for op, *_ in cases} == set(FUNCTION_OPS) | set(MULDIV_OPS)
    # fmul/fdiv with ``arith``: ``op`` indexes MULDIV_OPS (a core's multiply and divide)
    measured = _measure(FunctionUnit(width), ("arith", "op", "x", "y", "z"),
                        [(1, MULDIV_OPS.index(op), *words) if op in MULDIV_OPS
                         else (0, FUNCTION_OPS.index(op), *words) for op, *words in cases])
    names = vocabulary(fmt)
    accepted = 0
    for (op, x, y, z), cycles in zip(cases, measured):
        assert function_unit_cycles(op, x, y, z, width) == cycles, (
            op, fmt.signed(x), fmt.signed(y), fmt.signed(z))
        args = (x, y) if op in MULDIV_OPS else (x, y, z)
        assert call_cycles(op, args, width) == cycles  # a core with the function unit
        arity = 3 if op in ("rot", "irot") else 2 if op in MULDIV_OPS or op in (
            "fn_atan2", "fn_pow") else 1
        try:
            names[op](*args[:arity])
        except ArithmeticError:  # a faulting call retires nothing: the simulators skip it
            continue
        accepted += 1
        # what the simulators use: the fixed cycles, or the timer over the timing words
        fixed = fixed_call_cycles(op, width)
        timing_words = [args[i] for i in TIMING_ARGUMENTS[op]]
        assert (fixed if fixed is not None else call_timer(op, width)(*timing_words)) == cycles
        low, high = call_cycle_range(op, width)
        assert low <= cycles <= high, (op, low, cycles, high)
    assert accepted >= len(cases) - 12
    assert len(set(measured)) >= 12  # the branches take different times


def test_an_operation_no_unit_has_is_refused() -> None:
    with pytest.raises(ValueError, match="no operation 'fn_sin'"):
        muldiv_cycles("fn_sin", 0, 0, 32)
    with pytest.raises(ValueError, match="no operation 'fn_erf'"):
        function_unit_cycles("fn_erf", 0, 0, 0, 32)
    with pytest.raises(ValueError, match="without the function unit has no 'fn_sin'"):
        call_cycles("fn_sin", (0,), 32, function_unit=False)
