"""The vector machine by example: lanes, faults per lane, wide products, templates."""
from __future__ import annotations

import random

import numpy as np
import pytest
from program_generators import ProgramBuilder

from revasm.isa.elementary import fx_mul
from revasm.isa.fixed_point import WordFormat
from revasm.machine import MachineFault
from revasm.sim.reference import Machine
from revasm.sim.vector import TemplateError, VectorMachine, vector_source
from revasm.sim.vector.words import mul_round


def lane_call(name: str, fmt: WordFormat, *columns) -> tuple[list, object]:
    """A vocabulary name applied to one lane per value of the columns (signed ints):
    the result words and the lane context (which lanes faulted)."""
    from revasm.sim.vector.vocabulary import LaneContext, vector_vocabulary

    ctx = LaneContext(np)
    ctx.reset(len(columns[0]))
    words = [np.array([v & fmt.mask for v in column], dtype=np.uint64) for column in columns]
    return vector_vocabulary(fmt, np, ctx)[name](*words).tolist(), ctx


def divide_program(width: int = 32):
    b = ProgramBuilder(width)
    b.op("START").op("ADDDIV", 3, 1, 2).op("ADDI", 4, 7).op("FINISH")
    return b.build()


def test_a_faulting_lane_stops_alone_with_the_reference_fault():
    image = divide_program()
    machine = VectorMachine(image, 3, xp=np)
    machine.set_register(1, [1 << 16, 5 << 16, 3 << 16])
    machine.set_register(2, [2 << 16, 0, 4 << 16])
    machine.run(1)
    assert machine.fault_kinds() == ["", "divide-by-zero", ""]
    assert machine.halted.tolist() == [True, False, True]
    assert machine.register(3).tolist() == [1 << 15, 0, 3 << 14]  # 0.5, untouched, 0.75
    assert machine.register(4).tolist() == [7, 0, 7]
    reference = Machine(image)
    reference.registers[1], reference.registers[2] = 5 << 16, 0
    with pytest.raises(MachineFault) as caught:
        reference.run(1)
    fault = machine.fault(1)
    assert (fault.kind, fault.pc, fault.step, fault.message) == (
        caught.value.kind, caught.value.pc, caught.value.step, caught.value.message)
    assert machine.fault(0) is None


def test_lanes_with_different_trip_counts_and_addresses():
    """A loop of per-lane length, then EXCH through a per-lane address."""
    b = ProgramBuilder(32)
    b.op("START").op("ADDI", 9, 1)
    b.label("top").op("BNE", 4, 0, "bottom")
    b.op("ADDI", 5, 3).op("ADDI", 4, 1)
    b.label("bottom").op("BNE", 4, 1, "top")  # $1 = trip count
    b.op("ADD", 6, 2).op("ADDI", 6, "data").op("EXCH", 5, 6).op("FINISH")
    b.label("data").data(10).data(20).data(30)
    image = b.build()
    trips = [1, 3, 2, 5]
    machine = VectorMachine(image, 4, memory_words=64)
    machine.set_register(1, trips)
    machine.set_register(2, [0, 1, 2, 1])
    machine.run(1)
    assert not machine.faulted.any()
    for lane, (n, offset) in enumerate(zip(trips, [0, 1, 2, 1])):
        reference = Machine(image, memory_words=64)
        reference.registers[1], reference.registers[2] = n, offset
        reference.run(1)
        assert machine.snapshot(lane) == reference.snapshot()
        assert int(machine.steps[lane]) == reference.steps


def test_step_limit_stops_only_the_long_lanes():
    b = ProgramBuilder(32)
    b.op("START").label("top").op("BNE", 4, 0, "bottom").op("ADDI", 4, 1)
    b.label("bottom").op("BNE", 4, 1, "top").op("FINISH")
    machine = VectorMachine(b.build(), 2, max_steps=20)
    machine.set_register(1, [2, 50])
    machine.run(1)
    assert machine.fault_kinds() == ["", "step-limit"]
    assert int(machine.steps[1]) == 20


def test_the_wide_product_equals_python_integers_at_both_widths():
    rng = random.Random(5)
    for width in (32, 64):
        fmt = WordFormat(width)
        edges = [fmt.min_signed, fmt.max_signed, -1, 0, 1, fmt.min_signed + 1, 1 << (width // 2)]
        xs = edges + [rng.randint(fmt.min_signed, fmt.max_signed) for _ in range(300)]
        ys = list(reversed(edges)) + [rng.randint(fmt.min_signed, fmt.max_signed)
                                      for _ in range(300)]
        got = mul_round(np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64), width, np)
        expected = [fx_mul(x, y, fmt) & ((1 << 64) - 1) for x, y in zip(xs, ys)]
        assert got.tolist() == expected


def test_templates_become_lane_code_and_unsupported_ones_say_why():
    source = vector_source("if R[1] == R[2]: BR = BR + 3", ("R", "MEM"))
    assert "_where(" in source and "BR" in source
    assert "R[3] = _xor(R[3], R[4])" in vector_source("R[3] ^= R[4]", ("R",))
    with pytest.raises(TemplateError, match="only assignments"):
        vector_source("if R[1]: show(R[2])", ("R",))
    with pytest.raises(TemplateError, match="Q"):
        vector_source("Q[1] = 0", ("R", "MEM"))


def test_backward_run_restores_every_lane():
    image = divide_program(64)
    machine = VectorMachine(image, 2)
    machine.set_register(1, [3 << 32, -(7 << 31)])
    machine.set_register(2, [5 << 31, 1 << 32])
    before = [machine.snapshot(lane) for lane in range(2)]
    machine.run(1)
    machine.run(-1)
    assert [machine.snapshot(lane).turned() for lane in range(2)] == before


def test_vector_division_equals_the_scalar_division_at_both_widths():
    from revasm.isa.elementary import fx_div
    rng = random.Random(9)
    for width in (32, 64):
        fmt = WordFormat(width)
        edges = [fmt.min_signed, fmt.max_signed, -1, 1, 3, fmt.min_signed + 1, 1 << (width // 2)]
        pairs = [(x, y) for x in edges for y in edges]
        pairs += [(rng.randint(fmt.min_signed, fmt.max_signed),
                   rng.randint(fmt.min_signed, fmt.max_signed) >> rng.randrange(width))
                  for _ in range(400)]
        pairs = [(x, y) for x, y in pairs if y != 0] + [(5, 0)]
        got, ctx = lane_call("fdiv", fmt, *zip(*pairs))
        for (x, y), value in zip(pairs[:-1], got):
            assert value == fx_div(x, y, fmt) & fmt.mask, (width, x, y)
        assert ctx.failed.tolist() == [False] * (len(pairs) - 1) + [True]


def test_vectorized_circular_functions_equal_the_scalar_ones():
    from revasm.isa import elementary
    from revasm.sim.vector import circular
    fmt = WordFormat(32)
    rng = random.Random(3)
    xs = [fmt.min_signed, fmt.max_signed, 0, 1, -1, 102943, 102944, -205887, 3 * 102944]
    xs += [rng.randint(fmt.min_signed, fmt.max_signed) for _ in range(1500)]
    xs += [rng.randint(-(10 << 16), 10 << 16) for _ in range(1500)]
    values = np.array(xs, dtype=np.int64)
    for name in ("sin", "cos", "tan", "atan"):
        got = getattr(circular, f"fx_{name}")(values, np).tolist()
        assert got == [elementary.FUNCTIONS[name](x, fmt) for x in xs], name
    ys = [rng.choice(xs[:9]) if rng.random() < 0.1 else x >> rng.randrange(32)
          for x in reversed(xs)]
    got = circular.fx_atan2(np.array(ys, dtype=np.int64), values, np).tolist()
    assert got == [elementary.fx_atan2(y, x, fmt) for y, x in zip(ys, xs)]


def test_vectorized_hyperbolic_functions_and_log_equal_the_scalar_ones():
    from revasm.isa import elementary
    from revasm.sim.vector import hyperbolic
    fmt = WordFormat(32)
    rng = random.Random(4)
    xs = [fmt.min_signed, fmt.max_signed, 0, 1, -1, 1 << 16, 34 << 16, (34 << 16) - 1, 45426]
    xs += [rng.randint(fmt.min_signed, fmt.max_signed) for _ in range(800)]
    xs += [rng.randint(-(40 << 16), 40 << 16) for _ in range(1500)]
    values = np.array(xs, dtype=np.int64)
    for name in ("exp", "sinh", "cosh", "tanh"):
        got = getattr(hyperbolic, f"fx_{name}")(values, np).tolist()
        assert got == [elementary.FUNCTIONS[name](x, fmt) for x in xs], name
    positive = [x for x in xs if x > 0]
    got = hyperbolic.fx_log(np.array(positive, dtype=np.int64), np).tolist()
    assert got == [elementary.fx_log(x, fmt) for x in positive]


def test_vector_square_root_equals_the_scalar_one_at_both_widths():
    from revasm.isa.elementary import fx_sqrt
    rng = random.Random(6)
    for width in (32, 64):
        fmt = WordFormat(width)
        xs = [0, 1, 2, 3, fmt.max_signed, 1 << (width // 2)]
        xs += [rng.randint(0, fmt.max_signed) >> rng.randrange(width) for _ in range(800)]
        xs += [-5]
        got, ctx = lane_call("fn_sqrt", fmt, xs)
        assert got[:-1] == [fx_sqrt(x, fmt) for x in xs[:-1]], width
        assert ctx.failed.tolist() == [False] * (len(xs) - 1) + [True]


def _fast_path_batches(rng: random.Random, bits_a: int, bits_b: int, count: int) -> tuple:
    """Random signed operands below 2**bits_a and 2**bits_b, with the extremes and
    values next to the rounding boundaries (the float fast paths' hard cases)."""
    top_a, top_b = (1 << bits_a) - 1, (1 << bits_b) - 1
    xs = [top_a, -top_a, 0, 1, -1, 1 << 31, -(1 << 31), (1 << 31) + 1]
    ys = [top_b, top_b, -top_b, -1, 1, 1 << 32, (1 << 32) - 1, -(1 << 33) + 1]
    for _ in range(count):
        xs.append(rng.randint(-top_a, top_a) >> rng.randrange(bits_a))
        ys.append(rng.randint(-top_b, top_b) >> rng.randrange(bits_b))
    return xs, ys


def test_the_wide_product_fast_path_equals_python_integers():
    """W = 64 products of batches whose |a b| < 2**113 take the float64 path."""
    rng = random.Random(11)
    fmt = WordFormat(64)
    for bits_a, bits_b in ((56, 57), (40, 40), (20, 63), (63, 50), (33, 33), (63, 63)):
        xs, ys = _fast_path_batches(rng, bits_a, bits_b, 400)
        got = mul_round(np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64), 64, np)
        expected = [fx_mul(x, y, fmt) & ((1 << 64) - 1) for x, y in zip(xs, ys)]
        assert got.tolist() == expected, (bits_a, bits_b)


def test_the_w64_division_fast_path_equals_the_scalar_division():
    """Batches with quotients below 2**50 and divisors below 2**58 (float64 estimate
    plus exact corrections) and just outside those bounds (long division)."""
    from revasm.isa.elementary import fx_div
    rng = random.Random(12)
    fmt = WordFormat(64)
    for bits_n, bits_d in ((34, 41), (50, 57), (60, 58), (17, 3), (63, 63), (45, 20)):
        top_n, top_d = (1 << bits_n) - 1, (1 << bits_d) - 1
        pairs = [(top_n, top_d), (-top_n, top_d | 1), (top_n, 1 << (bits_d - 1))]
        for _ in range(400):
            d = rng.randint(1, top_d) >> rng.randrange(bits_d // 2)
            pairs.append((rng.randint(-top_n, top_n), d or 1 if rng.random() < .5 else -(d or 1)))
        pairs += [(q * d + d // 2 + e, d) for q, d, e in
                  [(rng.randrange(1 << 10), rng.randint(1 << 33, top_d), e)
                   for e in (-1, 0, 1) for _ in range(30 if bits_d > 34 else 0)]
                  if abs(q * d + d // 2 + e) <= top_n]
        if (bits_n, bits_d) == (60, 58):
            # A batch of dividends a hair from a multiple of the divisor (d > 2**53),
            # where the float estimate is off by one: x 2**32 + d // 2 = Q d + t 2**32 - Q.
            pairs = []
            for _ in range(200):
                m, t = rng.randrange(1 << 20, 1 << 23), rng.randrange(-2, 3)
                q = rng.randrange(1 << 36, 1 << 38) if t == 0 else (t << 32) - rng.randrange(6)
                if q > 0:
                    pairs.append(((2 * q - 1) * m + t, (m << 33) + 1))
        got, ctx = lane_call("fdiv", fmt, *zip(*pairs))
        for (x, y), value in zip(pairs, got):
            assert value == fx_div(x, y, fmt) & fmt.mask, (bits_n, bits_d, x, y)
