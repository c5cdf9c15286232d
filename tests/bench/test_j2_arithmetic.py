"""bench/j2_arithmetic.py, the J2 gradient's arithmetic by hand (the floor the speed
benchmark reports), computes the compiled engine's gradient words exactly."""
from __future__ import annotations

import numpy as np
import pytest

from revasm.assembler import assemble_file
from revasm.batching.inputs import to_words
from revasm.bench import j2_arithmetic
from revasm.bench.common import EXAMPLES
from revasm.isa.fixed_point import WordFormat
from revasm.sim.engines import load
from revasm.sim.host import batch_gradient


def test_hand_written_gradient_equals_the_compiled_engine_bit_for_bit():
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    # 40 lanes: below the engine's parallel threshold, one kernel entry point to compile
    xs = np.concatenate([np.linspace(-3.0, 3.0, 37), [0.0, 1e-9, 2.9999]])
    words = to_words(xs, WordFormat(64), fixed=True)
    machine = load(image, len(xs), engine_name="compiled")
    machine.set_bank_word("R", image.names["x"].register, words)
    expected = batch_gradient(machine).gradient["x"]
    assert np.array_equal(j2_arithmetic.gradient_words(words), expected)


def test_an_inexact_lane_is_an_error_not_a_floor():
    # x = 2^31 - 1 (raw): h = x / 2 squared overflows W = 64 fixed point
    with pytest.raises(ValueError, match="1 lanes overflowed"):
        j2_arithmetic.gradient_words(np.array([0, (1 << 62)], dtype=np.int64))


def test_a_division_costs_nanoseconds():
    assert 0.05 < j2_arithmetic.division_ns(count=1 << 12, repeats=2) < 1000
