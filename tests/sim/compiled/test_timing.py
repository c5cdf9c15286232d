"""sim/compiled/timing.py: the kernels' unit timers equal isa/timing's scalar ones.

Every timed operation at both widths over random words and the words at and beside each
path's edge (tan's poles, exp's, tanh's and sigmoid's limits, log's exact mantissas, pow's range,
the rotation's turns of pi), called as the kernels call them (uint64 words).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("numba")

from revasm.isa.fixed_point import WordFormat
from revasm.isa.timing import (
    TIMER_PREFIX,
    TIMING_ARGUMENTS,
    call_costs,
    call_timer,
    fixed_call_cycles,
)
from revasm.isa.timing.units import UNIT_CALLS
from revasm.sim.compiled import timing

TAN_POLE_32 = 1498345671


def _words(width: int, rng: random.Random) -> list[int]:
    fmt = WordFormat(width)
    k = call_costs(width)
    edges = [0, 1, fmt.one, fmt.max_signed, fmt.min_signed, 1 << (width - 2),
             (1 << (width - 2)) + 1, k.exp_limit, k.tanh_limit, k.sigmoid_limit, k.half_pi, k.pi,
             k.pi + k.half_pi, 2 * k.pi + k.half_pi, 3 * k.half_pi,
             fmt.from_real(width + 2), fmt.from_real("2.718281828459045")]
    if width == 32:
        edges.append(TAN_POLE_32)
    words = [e + d for e in edges for d in (-1, 0, 1)]
    words += [-w for w in words]
    words += [rng.randrange(1 << width) for _ in range(300)]
    words += [fmt.wrap(rng.randint(-8 * fmt.one, 8 * fmt.one)) for _ in range(300)]
    return [w & fmt.mask for w in words]


@pytest.mark.parametrize("width", [32, 64])
def test_every_kernel_timer_is_the_scalar_timer(width: int) -> None:
    rng = random.Random(width)
    words = _words(width, rng)
    timed = [op for op in sorted(UNIT_CALLS) if fixed_call_cycles(op, width) is None]
    assert len(timed) == 11
    for op in timed:
        kernel = getattr(timing, f"{TIMER_PREFIX}{op}")
        scalar = call_timer(op, width)
        arity = len(TIMING_ARGUMENTS[op])
        for _ in range(len(words)):
            args = [rng.choice(words) for _ in range(arity)]
            if op in ("fn_log", "fn_pow") and WordFormat(width).signed(args[0]) < 0:
                continue  # log and pow of x < 0 fault: never timed
            if op == "fn_log" and args[0] == 0:
                continue
            got = kernel(*(np.uint64(a) for a in args), width)
            assert got == scalar(*args), (op, args)
