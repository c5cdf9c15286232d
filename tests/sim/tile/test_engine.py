"""The tile engine (sim/tile): lanes in tiles that share a PC, bit for bit the reference.

The tile interpreter runs any image, so a whole sample of random programs -- straight-line,
structured (loops, diamonds, calls) and faulting ones, side by side in one image, every lane
starting at its own program -- runs as one batch after one compile per width and mode
(``differential.check_batch``: forward, backward, backward from FINISH and a gradient or
Hessian pass, every lane compared field by field with the reference).  Lanes that start at
different programs are the most divergent tiles there are; tile sizes that do not divide the
lane count, one-lane tiles and regrouping run the same checks.  ``tests/sim/test_engines.py``
runs the tile engine through every example, fault kind and mode.
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from differential import check_batch
from hypothesis import given, settings
from hypothesis import strategies as st
from program_generators import (
    examples,
    faulting_programs,
    straight_line_programs,
    structured_programs,
)

pytest.importorskip("numba")

import differential

from revasm.assembler import assemble, assemble_file
from revasm.isa import INSTRUCTIONS
from revasm.isa.fixed_point import WordFormat
from revasm.isa.vocabulary import vocabulary
from revasm.sim.engine import Engine, overflow_counts
from revasm.sim.engines import engine
from revasm.sim.host import gradient
from revasm.sim.tile import kernel
from revasm.sim.tile.lanes import TileLanes
from revasm.sim.tile.source import tile_source

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

#: Programs of each kind per width: every instruction, both widths, a derivative pass each.
SAMPLE = {"straight-line": 60, "structured": 30, "faulting": 60}


def _sample(width: int, sizes: dict[str, int], seed: int) -> list:
    return (examples(straight_line_programs(width, max_length=10), sizes["straight-line"],
                     seed=seed)
            + examples(structured_programs(width, max_procedures=2, statements=4),
                       sizes["structured"], seed=seed)
            + examples(faulting_programs(width), sizes["faulting"], seed=seed))


def _tiles(monkeypatch, **options) -> None:
    """The differential check loads the tile engine, with ``options`` for its lanes."""
    def load(image, lanes, *, max_steps=None, memory_words=None):
        return TileLanes(image, lanes, max_steps=max_steps, memory_words=memory_words,
                         **options)
    monkeypatch.setattr(differential, "ENGINE", Engine("tile", "", load))


def _check(width: int, derivative: str | None, sizes: dict[str, int], seed: int) -> None:
    cases = _sample(width, sizes, seed)
    report = check_batch(cases, seed=seed, derivative=derivative)
    assert not report.failures, "\n".join(report.failures[:20])
    assert report.programs == len(cases)
    assert derivative is None or derivative in report.passes
    assert len(report.faults) >= 3, report.faults  # faults of several kinds, alike


@pytest.mark.parametrize("width, derivative", [(64, "hessian"), (32, "gradient")])
def test_random_programs_run_alike_on_the_tile_engine_and_the_reference(
        monkeypatch, width, derivative):
    _tiles(monkeypatch)
    _check(width, derivative, SAMPLE, seed=200 + width)


@pytest.mark.parametrize("tile, regroup", [(5, False), (1, False), (3, True)])
def test_tile_sizes_that_do_not_divide_the_lanes_and_regrouping(monkeypatch, tile, regroup):
    """The same checks with tiles of 5 lanes (the batch's 3 lanes per program straddle
    them), of one lane, and with the lanes regrouped as tiles thin out."""
    _tiles(monkeypatch, tile=tile, regroup=regroup)
    _check(32, None, {"straight-line": 20, "structured": 20, "faulting": 20}, seed=tile)


def test_the_sample_runs_every_instruction():
    used = set()
    for width in (32, 64):
        for case in _sample(width, SAMPLE, 200 + width):
            used |= {ins.mnemonic for ins in (INSTRUCTIONS[n] for n in _entries(case.image))}
    assert {ins.mnemonic for ins in INSTRUCTIONS} - used == set()


def _entries(image) -> set[int]:
    from revasm.sim.compiled.interpreter import OP, program_arrays

    prog, _imm, code, _dense, _count = program_arrays(image)
    return {int(prog[OP, pc]) for pc in range(len(code)) if code[pc]}


# --- the vocabulary --------------------------------------------------------------------------

def _words(rng: random.Random, width: int, count: int) -> list[int]:
    mask = (1 << width) - 1
    edges = [0, 1, 2, mask, mask - 1, 1 << (width - 1), (1 << (width - 1)) - 1,
             (1 << (width - 1)) + 1, 1 << (width // 2), mask ^ ((1 << (width // 2)) - 1),
             0xFFFFFFFF & mask, 0x80000000 & mask]
    words = edges + [rng.getrandbits(width) for _ in range(count)]
    words += [rng.randrange(-(1 << 40), 1 << 40) & mask for _ in range(count)]
    return words


def test_the_tile_products_are_the_tables():
    """The tile engine's fixed-point product from 32-bit limbs (``tile/vocab.py``) gives
    the table's ``fmul`` and ``ovf_mul`` words at W = 64, on random and edge words."""
    from revasm.sim.tile import vocab

    names = vocabulary(WordFormat(64))
    rng = random.Random(64)
    xs = _words(rng, 64, 600)
    ys = list(reversed(xs))
    rng.shuffle(ys)
    for x, y in zip(xs + xs, xs + ys):
        word, flag = vocab.fmul_ovf64(np.uint64(x), np.uint64(y))
        assert (int(word), int(flag)) == (names["fmul"](x, y), names["ovf_mul"](x, y)), (x, y)
        assert int(vocab.fmul64(np.uint64(x), np.uint64(y))) == names["fmul"](x, y)


def test_the_tile_quotients_are_the_tables():
    """The W = 64 quotient without a divide instruction (``fdiv_short64``) gives the table's
    ``fdiv`` and ``ovf_div`` words wherever ``fdiv_short_ok64`` admits it -- and admits the
    quotients below 2^40 of small operands -- and the W = 32 quotient from a float64
    division (``fdiv_ovf32``) gives them everywhere; random and edge words, y != 0."""
    from revasm.sim.tile import vocab

    rng = random.Random(32)
    for width in (32, 64):
        names = vocabulary(WordFormat(width))
        xs = _words(rng, width, 800)
        ys = [y for y in _words(rng, width, 800) if y]
        admitted = 0
        for x in xs:
            for y in rng.sample(ys, 12) + ys[:12]:
                expected = (names["fdiv"](x, y), names["ovf_div"](x, y))
                if width == 32:
                    word, flag = vocab.fdiv_ovf32(np.uint64(x), np.uint64(y))
                    assert (int(word), int(flag)) == expected, (x, y)
                    continue
                if vocab.fdiv_short_ok64(np.uint64(x), np.uint64(y)):
                    admitted += 1
                    word, flag = vocab.fdiv_short64(np.uint64(x), np.uint64(y))
                    assert (int(word), int(flag)) == expected, (x, y)
        if width == 64:
            assert admitted > 5000
            ok = vocab.fdiv_short_ok64
            assert ok(np.uint64(3 << 32), np.uint64(7 << 20))  # a quotient near 2^44
            assert not ok(np.uint64(1 << 62), np.uint64(3))  # near 2^92: too long
            assert not ok(np.uint64(1 << 40), np.uint64(1 << 62))  # a divisor of 2^62


@st.composite
def _signed_words(draw) -> int:
    """A W = 64 word of any length (so that short quotients are common), either sign."""
    bits = draw(st.integers(0, 64))
    value = draw(st.integers(0, (1 << bits) - 1)) if bits else 0
    return (-value if draw(st.booleans()) else value) & ((1 << 64) - 1)


@settings(max_examples=3000, deadline=None)
@given(_signed_words(), _signed_words(), _signed_words())
def test_a_quotient_of_a_quotient_is_admitted_only_where_its_own_test_admits_it(x, y, z):
    """The guard's test for ``(x/y)/z`` from the operands' lengths (``fdiv_chain_ok64``)
    admits no division the exact test on the quotient (``fdiv_short_ok64(x/y, z)``)
    refuses, so the fast loop's short division stays exact."""
    from revasm.sim.tile import vocab

    x, y, z = np.uint64(x), np.uint64(y), np.uint64(z)
    if y and z and vocab.fdiv_short_ok64(x, y) and vocab.fdiv_chain_ok64(x, y, z):
        quotient, _ = vocab.fdiv_short64(x, y)
        assert vocab.fdiv_short_ok64(np.uint64(quotient), z), (x, y, z)


def test_a_guard_admits_a_quotient_of_a_quotient_from_operands_that_still_hold():
    """``short_division_checks`` admits ``(x/y)/z`` from x and y (no quotient computed for
    the check) only while neither x, y nor the quotient's name has been assigned since."""
    from revasm.sim.tile.source import short_division_checks

    lines = ["q, f = fdiv_ovf(r6, r12, 64)", "r12 = r12 + U(1)", "z, w = fdiv_ovf(q, r12, 64)",
             "q2, f2 = fdiv_ovf(r6, r12, 64)", "z2, w2 = fdiv_ovf(q2, r12, 64)",
             "q3, f3 = fdiv_ovf(U(4294967296), r6, 64)", "q3 += U(1)",
             "z3, w3 = fdiv_ovf(q3, r6, 64)"]
    checks = [line for line in short_division_checks(lines) if line.startswith("bad")]
    assert checks == ["bad += 0 if fdiv_short_ok64(r6, r12) else 1",
                      "bad += 0 if fdiv_short_ok64(q, r12) else 1",  # r12 changed
                      "bad += 0 if fdiv_short_ok64(r6, r12) else 1",
                      "bad += 0 if fdiv_chain_ok64(r6, r12, r12) else 1",
                      "bad += 0 if fdiv_short_ok64(U(4294967296), r6) else 1",
                      "bad += 0 if fdiv_short_ok64(q3, r6) else 1"]  # q3 changed
    assert "fdiv_ovf" not in "\n".join(short_division_checks(lines))


def test_the_chained_test_admits_j2s_quotients():
    """J2's gradient divides h^2/d by d (h^2 <= 2.25, |d| >= 3, Q32.32): the chained test
    admits every such lane, so its ADDDIV steps keep the fast loop."""
    from revasm.sim.tile import vocab

    one = 1 << 32
    for k in range(1, 17):
        for h2 in (0, 1, one // 7, one, 9 * one // 4):
            d = (-(k * (k + 2)) * one) & ((1 << 64) - 1)
            assert vocab.fdiv_chain_ok64(np.uint64(h2), np.uint64(d), np.uint64(d)), (k, h2)


def test_the_tile_rotations_are_the_compiled_engines():
    """The branchless rotations by a planned angle (``tile/vocab.py``: ``rot_planned``,
    ``irot_planned`` and their overflow tests, products from limbs) give the compiled
    engine's words and events at both widths: random and edge words, angles of every size
    (so plans that negate first, and shears that wrap)."""
    from revasm.sim.compiled import overflow
    from revasm.sim.compiled import vocab as compiled
    from revasm.sim.tile import vocab

    rng = random.Random(2)
    wrapped = 0
    for width in (32, 64):
        w = np.int64(width)
        words = _words(rng, width, 150)
        angles = _words(rng, width, 40) + [rng.randrange(-(4 << (width // 2)),
                                                         4 << (width // 2)) & ((1 << width) - 1)
                                           for _ in range(40)]
        for theta in angles:
            plan = compiled.rotation_plan(np.uint64(theta), w)
            for x, y in zip(words, rng.sample(words, len(words))):
                ux, uy = np.uint64(x), np.uint64(y)
                for tile_fn, compiled_fn in (
                        (vocab.rot_planned, compiled.rot_planned),
                        (vocab.irot_planned, compiled.irot_planned),
                        (vocab.ovf_rot_planned, overflow.ovf_rot_planned),
                        (vocab.ovf_irot_planned, overflow.ovf_irot_planned)):
                    expected = compiled_fn(ux, uy, *plan, w)
                    got = tile_fn(ux, uy, *plan, w)
                    assert np.all(np.asarray(got) == np.asarray(expected)), \
                        (tile_fn, width, theta, x, y)
                wrapped += int(overflow.ovf_rot_planned(ux, uy, *plan, w))
    assert wrapped > 1000  # the wrapping shears were tried too


# --- divergence, re-convergence, tiles ---------------------------------------------------------

DIAMOND = """;; pendulum pal file
.input  p $1 int = 0
        start
if:     bgtz  $1 else      ; lanes with p > 0 take the else arm
        addi  $2 1         ; the then arm
        addi  $2 2
fi:     bra   join
else:   bgtz  $1 if
        addi  $3 5         ; the else arm
join:   blez  $1 fi        ; both arms meet here
        addi  $4 1
        finish
"""


def _alike(machine, reference, lanes: int) -> None:
    assert machine.steps.tolist() == reference.steps.tolist()
    assert machine.cycles.tolist() == reference.cycles.tolist()
    assert machine.halted.tolist() == reference.halted.tolist()
    for lane in range(lanes):
        assert machine.snapshot(lane) == reference.snapshot(lane), lane


def test_a_diamond_parts_the_tile_and_its_lanes_meet_again():
    """A branch splits a tile by mask; the arms run one after the other and the lanes meet
    at the join: START, the branch, then-arm (3), else-arm landing and body (2), then the
    join, the instruction after it and FINISH once for the whole tile -- 10 fetches, not
    the 8 + 7 of the two arms' lanes run apart; a tile whose lanes agree takes 8."""
    image = assemble(DIAMOND, "diamond.pal")
    p = np.array([1, -1] * 32, dtype=np.int64)
    for values, fetches in ((p, 10), (np.full(64, -1), 8), (np.full(64, 3), 7)):
        machine = TileLanes(image, 64, tile=64)
        reference = engine("reference").load(image, 64)
        for lanes in (machine, reference):
            lanes.set_bank_word("R", 1, values)
            lanes.run(1)
        _alike(machine, reference, 64)
        assert machine.dispatches == fetches
        machine.run_back()
        reference.run_back()
        _alike(machine, reference, 64)


LOOP = """;; pendulum pal file
.input  n $1 int = 1
        start
top:    bne   $2 $0 bottom  ; the loop entry falls through, its back edge lands here
        addi  $3 3
        add   $4 $3
        addi  $2 1
bottom: bne   $2 $1 top     ; again while i != n
        finish
"""


@pytest.mark.parametrize("tile", [1, 7, 64])
def test_lanes_that_loop_different_trip_counts_alike_with_and_without_regrouping(tile):
    """Each lane loops its own number of times (1..40): tiles of 7 and 64 lanes on 150
    lanes (the last tile partial), forward and back, with the tiles split by masks and
    with the running lanes regrouped; regrouping fetches fewer instructions."""
    image = assemble(LOOP, "loop.pal")
    rng = np.random.default_rng(tile)
    trips = rng.integers(1, 41, 150)
    reference = engine("reference").load(image, 150)
    reference.set_bank_word("R", 1, trips)
    reference.run(1)
    fetches = {}
    for regroup in (False, True):
        machine = TileLanes(image, 150, tile=tile, regroup=regroup)
        machine.set_bank_word("R", 1, trips)
        machine.run(1)
        _alike(machine, reference, 150)
        fetches[regroup] = machine.dispatches
        machine.run_back()
        assert machine.halted.all()
        assert machine.bank_word("R", 4).tolist() == [0] * 150
    if tile > 1:
        assert fetches[True] < fetches[False]
    else:
        assert fetches[True] == fetches[False] == int(reference.steps.sum())


OVERFLOWING = """;; pendulum pal file
.input  a $1 fixed = 1.0
        start
        addmul $2 $1 $1    ; a * a: beyond Q16.16 for |a| > 181
        addi   $3 1
        adddiv $4 $1 $2    ; a / (a * a)
        finish
"""


@pytest.mark.parametrize("strict", [False, True])
def test_overflow_counts_and_strict_faults_like_the_reference(strict):
    """Overflow events counted per lane (OV), or with the strict switch a fault before the
    instruction writes anything, lane by lane as the reference -- in the fast loop's tiles
    (lanes that agree) and in the exact loop (a tile where some lanes overflow)."""
    from revasm.sim.engine import overflow_counts

    image = assemble(OVERFLOWING, "overflow.pal")
    values = np.array([1, 300, -2, 200, 5, -1000] * 50, dtype=np.int64) << 16
    values[:64] = 3 << 16  # a first tile (of 64) whose lanes all agree
    machines = [TileLanes(image, len(values), tile=64), engine("reference").load(image,
                                                                                 len(values))]
    for machine in machines:
        machine.strict = strict
        machine.set_bank_word("R", 1, values)
        machine.run(1)
    tile, reference = machines
    _alike(tile, reference, len(values))
    assert overflow_counts(tile).tolist() == overflow_counts(reference).tolist()
    assert tile.faulted.tolist() == reference.faulted.tolist()
    assert bool(reference.faulted.any()) == strict
    for lane in range(len(values)):
        mine, theirs = tile.fault(lane), reference.fault(lane)
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert (mine.kind, mine.pc, mine.step, mine.message) == (
                theirs.kind, theirs.pc, theirs.step, theirs.message)


#: The declarations of the memory tests' programs: what :func:`_forward_alike` sets ($1 = p,
#: $5 = x) and :func:`_backward_alike` differentiates ($7).
LANES_HEADER = """;; pendulum pal file
.width  64
.input  p  $1 int = 0
.input  x  $5 fixed = 1.0
.loss   y  $7
        start
"""

STACKING = LANES_HEADER + """\
        addi   $2 1000       ; an address in each lane's table, 1000 + p
        add    $2 $1
        addi   $8 20         ; an address in the window, 20 + p
        add    $8 $1
        add    $9 $5
        exch   $9 $8         ; memory[20 + p] = x
        addmul $3 $5 $5
        exch   $3 $2         ; memory[1000 + p] = x^2
        addi   $2 1
        addmul $4 $5 $5
        exch   $4 $2         ; memory[1001 + p] = x^2
        exch   $6 $2         ; and back: $6 = x^2
        addmul $7 $6 $5      ; y = x^3
        exch   $10 $8        ; $10 = x
        addmul $7 $10 $5     ; y = x^3 + x^2
        finish
"""


def _forward_alike(image, p, x) -> list:
    """The tile engine (tiles of 64) and the reference, ``$1 = p`` and ``$5 = x`` on their
    lanes, run forward and compared lane by lane."""
    lanes = len(p)
    machines = [TileLanes(image, lanes, tile=64), engine("reference").load(image, lanes)]
    for machine in machines:
        machine.set_bank_word("R", 1, p)
        machine.set_bank_word("R", 5, x)
        machine.run(1)
    _alike(*machines, lanes)
    return machines


def _backward_alike(machines: list) -> None:
    """The gradient pass of ``$7`` on both (:func:`_forward_alike`), compared lane by lane."""
    for machine in machines:
        machine.set_bank_word("G", 7, 1 << 32)
        machine.gradient = True
        machine.run_back()
    _alike(*machines, machines[0].lanes)
    assert machines[0].bank_word("G", 5).tolist() == machines[1].bank_word("G", 5).tolist()


def test_memory_steps_at_one_address_on_every_lane_and_at_several():
    """A memory step whose lanes all look up one slot runs its uniform fast loop (the slot
    a scalar: contiguous rows; with no per-lane look-up when every lane's table already
    holds the word at lane lo's slot), one whose lanes differ the fast loop with a slot per lane,
    a tile with a new address the exact loop (a lane's table grows): forward and in the
    gradient pass, lane by lane the reference's, table and window addresses alike."""
    image = assemble(STACKING, "stacking.pal")
    lanes = 212
    p = np.zeros(lanes, dtype=np.int64)
    p[70] = 3  # the second tile: one lane at other addresses
    p[128:192] = np.arange(64) % 4  # the third: four addresses
    p[192:] = 2  # the last (partial) tile: one address, not the first tiles'
    x = np.random.default_rng(5).integers(-3 << 32, 3 << 32, lanes)
    machines = _forward_alike(image, p, x)
    _backward_alike(machines)
    assert machines[0].halted.all()
    source = tile_source(64, gradient=True)
    for name in ("step_exch_f", "step_exch_b"):
        text = source.split(f"def {name}(")[1].split("\n@njit")[0]
        for shared in ("if fast and varied == 0:", "if fast and differ == 0:"):
            uniform = text.split(shared)[1].split("return left")[0]
            assert "SLOT0 = SLOTS[0, 0]" in uniform and "window_slot(" not in uniform
            assert "SLOTS[k" not in uniform and "DENSE[" not in uniform
        check = text.split("if fast and differ == 0:")[0]
        assert check.count("window_slot(") == 1 and "KEYS[lane, ROW] == K0" in check


PUSHING = LANES_HEADER + """\
        addi   $2 2001       ; a table word at 2001 + p: where 3000's probe starts when p = 0
        add    $2 $1
        add    $9 $5
        exch   $9 $2
        addi   $4 3000       ; a stack of new table words, alike on every lane
""" + "".join("""        addmul $3 $5 $5
        exch   $3 $4         ; push x^2
        addi   $4 1
""" for _ in range(6)) + """        addi   $4 -1
        exch   $10 $4        ; and pop it
        addmul $7 $10 $5     ; y = x^3
        finish
"""


def test_lanes_in_lockstep_push_new_words_at_lane_los_slot():
    """A memory step at a word new to the lanes' tables stores it in every table at lane
    lo's slot when each lane's probe would end there (the tiles of p = 0 and of p = 1
    lanes), and leaves it to each lane's own probe otherwise (a tile of p = 0 lanes but one:
    there 2001 + p does not sit on 3000's path, so 3000 takes another slot): values,
    counts and every table slot as the per-lane probe puts them, in the gradient pass too."""
    from revasm.sim.compiled.machine import FIRST_CAPACITY
    from revasm.sim.compiled.vocab import EMPTY, find_slot, probe_start, table_key

    starts = [int(probe_start(table_key(np.uint64(a)), FIRST_CAPACITY)) for a in (2001, 3000)]
    assert starts[0] == starts[1]  # the p = 0 lanes' 3000 probes past 2001's slot
    image = assemble(PUSHING, "pushing.pal")
    lanes = 200
    p = np.zeros(lanes, dtype=np.int64)
    p[100] = 1  # the second tile: one lane whose 3000 goes where lane lo's cannot
    p[128:192] = 1  # the third: alike among themselves
    x = np.random.default_rng(6).integers(-3 << 32, 3 << 32, lanes)
    machines = _forward_alike(image, p, x)
    tile = machines[0]
    for lane in range(lanes):  # each lane's table as its own probes, in order, build it
        keys = np.full((1, tile.KEYS.shape[1]), EMPTY, dtype=np.uint64)
        for address in [2001 + int(p[lane]), *range(3000, 3006)]:
            find_slot.py_func(keys, 0, np.uint64(address), 0)
        assert tile.KEYS[lane].tolist() == keys[0].tolist(), lane
    _backward_alike(machines)
    text = tile_source(64).split("def step_exch_f(")[1].split("\n@njit")[0]
    assert "KEYS[U(lo + k), ROW] = K0" in text.split("if fast and differ == 0:")[0]


ROTATIONS = """;; pendulum pal file
.width 64
        start
        rot    $1 $2 $3      ; by theta
        addmul $4 $1 $2
        irot   $4 $5 $6      ; by phi
        rot    $2 $4 $3      ; by theta again
        finish
"""


def test_rotations_by_angles_the_lanes_share_in_runs_alternate_or_do_not():
    """A rotation step remembers its angle's plan (two CORDIC runs) from one lane to the
    next and plans again only where a lane's angle differs: lanes of one angle (0, the plan
    set up before the loop, and others), runs of a few, angles that alternate lane by lane,
    every lane its own -- forward and in the gradient pass, lane by lane the reference's."""
    image = assemble(ROTATIONS, "rotations.pal")
    lanes = 200
    rng = np.random.default_rng(11)
    theta = np.zeros(lanes, dtype=np.int64)
    theta[:64] = 5 << 32  # the first tile shares one angle past pi/2: the plan negates
    theta[64:128] = np.repeat(rng.integers(-7 << 32, 7 << 32, 8), 8)  # runs of 8
    theta[128:192] = np.array([1 << 31, -(3 << 32)] * 32)  # alternating
    theta[192:] = rng.integers(-(1 << 63), 1 << 63, lanes - 192)  # each its own, any word
    phi = np.full(lanes, 5 << 31, dtype=np.int64)
    phi[64::3] = -(1 << 30)
    x = rng.integers(-4 << 32, 4 << 32, lanes)
    x[:4] = [-(1 << 63), (1 << 63) - 1, -(1 << 62), 1 << 62]  # shared angle, shears that wrap
    x[64:68] = x[:4]
    words = {1: x, 2: np.full(lanes, 3 << 31),
             3: theta, 5: np.arange(lanes, dtype=np.int64) << 28, 6: phi}
    machines = [TileLanes(image, lanes, tile=64), engine("reference").load(image, lanes)]
    for machine in machines:
        for register, values in words.items():
            machine.set_bank_word("R", register, values)
        machine.run(1)
    _alike(*machines, lanes)
    assert len({*machines[0].bank_word("R", 2).tolist()}) > 100  # the rotations did turn
    overflowed = overflow_counts(machines[1])
    assert overflowed[:4].all() and overflowed[64:68].all()  # events counted both ways
    for machine in machines:
        machine.set_bank_word("G", 4, 1 << 32)
        machine.set_bank_word("G", 2, 1 << 31)
        machine.gradient = True
        machine.run_back()
    _alike(*machines, lanes)
    for register in (1, 2, 3, 5, 6):
        assert machines[0].bank_word("G", register).tolist() == \
            machines[1].bank_word("G", register).tolist()
    text = tile_source(64, gradient=True).split("def step_rot_f(")[1].split("\n@njit")[0]
    # two plans, each set up once and re-planned in the exact loop; each once before the
    # loop of a tile whose lanes share the angle
    assert text.count("rotation_plan(") == 6
    shared = text.split("if differ == 0:")[1].split("return left")[0]
    assert shared.count("rotation_plan(") == 2 and "cycles_rot(R[lane, o_c], 64)" not in \
        shared.split("for k in range(n):")[1]


def test_one_lane_differentiates_like_the_reference():
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    expected = gradient(image, inputs={"x": 0.75}, engine="reference")
    got = gradient(image, inputs={"x": 0.75}, engine="tile")
    assert (got.loss, got.gradient, got.forward, got.backward) == (
        expected.loss, expected.gradient, expected.forward, expected.backward)


def test_the_interpreter_has_one_leaf_per_entry_and_direction():
    """Derived from the table: every data entry has a step function per direction (its
    fast and its exact loop), called from a leaf of that direction's tree; every control
    entry a leaf of each direction's tree, and a branch also one of the trees that try all
    lanes one way -- in value and in gradient mode.  START/FINISH step before dispatch."""
    for gradient_mode in (False, True):
        source = tile_source(32, gradient=gradient_mode)
        for ins in INSTRUCTIONS:
            if ins.kind in ("start", "finish"):
                continue
            leaves = 4 if ins.kind == "branch" else 2
            assert source.count(f"# {ins.mnemonic}\n") == leaves, ins.mnemonic
            if ins.kind == "data":
                for suffix in ("f", "b"):
                    name = f"step_{ins.mnemonic.lower()}_{suffix}"
                    assert source.count(f"def {name}(") == 1, name
                    assert source.count(f"left = {name}(") == 1, name


def test_the_module_name_changes_with_the_tile_engine_sources():
    assert kernel.source(64).startswith(f"# tile engine sources {kernel.tile_version()}\n")
    assert kernel.source(64) != kernel.source(32)


def test_the_tile_vocabulary_by_width_is_the_tables():
    """The names the translated templates call (``fmul_ovf(x, y, W)``, ``fmul``,
    ``fdiv_ovf``, ``fdiv``: the compiled vocabulary's, width last) are the tile engine's
    vector-friendly versions in the tile kernels; each gives the table's words at both
    widths on random and edge words (y != 0 for the quotients)."""
    from revasm.sim.tile import vocab

    rng = random.Random(7)
    for width in (32, 64):
        names = vocabulary(WordFormat(width))
        xs = _words(rng, width, 300)
        ys = [y for y in _words(rng, width, 300) if y]
        w = np.int64(width)
        for x, y in zip(xs, ys, strict=False):
            ux, uy = np.uint64(x), np.uint64(y)
            product = (names["fmul"](x, y), names["ovf_mul"](x, y))
            assert tuple(map(int, vocab.fmul_ovf(ux, uy, w))) == product, (width, x, y)
            assert int(vocab.fmul(ux, uy, w)) == product[0]
            quotient = (names["fdiv"](x, y), names["ovf_div"](x, y))
            assert tuple(map(int, vocab.fdiv_ovf(ux, uy, w))) == quotient, (width, x, y)
            assert int(vocab.fdiv(ux, uy, w)) == quotient[0]


def test_the_fast_loops_call_the_vector_forms():
    """At W = 64 every division of a guard and a fast loop is the division without a divide
    instruction, admitted by its check (counted without a branch; in the gradient pass that
    of ``-(b/c)/c`` from b and c, ``fdiv_chain_ok64``); the exact loops keep the
    128/64 division; a step that calls the function unit (an elementary function, a
    rotation) has no guard and fast loop -- a rotation only its loop for a tile that shares
    the angle (``shared_angles``), with the exact loop after it."""
    import re

    for gradient_mode in (False, True):
        source = tile_source(64, gradient=gradient_mode)
        steps = re.findall(r"\ndef (step_\w+)\((.*?)(?=\n@njit|\Z)", source, re.S)
        assert len(steps) > 50
        fast_divisions = scalar_steps = 0
        for name, text in steps:
            short = len(re.findall(r"\bfdiv_short64\(", text))
            checks = len(re.findall(r"\bfdiv_(short|chain)_ok64\(", text))
            exact = len(re.findall(r"\bfdiv_ovf\(", text))
            scalar = re.search(r"\b(fn_\w+|rot_planned|irot_planned)\(", text)
            scalar_steps += scalar is not None
            assert not (scalar and "if fast:" in text), name
            rotation = re.search(r"\b(rot_planned|irot_planned)\(", text) is not None
            assert ("# one plan per angle for the tile" in text) == rotation, name
            if "if fast:" in text:
                assert short == 2 * checks and exact == checks, name
                # a check that branches kept LLVM from vectorising the gradient guards
                assert "if not fdiv_short_ok64(" not in text, name
                assert "if not fdiv_chain_ok64(" not in text, name
                fast_divisions += checks
            else:
                assert short == checks == 0, name
        assert fast_divisions > 0 and scalar_steps >= 4 * 14


# --- per-program kernels (fused.py) -----------------------------------------------------------

FUSING = """;; pendulum pal file
.input  x  $1 fixed = 1.0
.input  y  $2 fixed = 1.0
.loss   f  $6
        start
        addi   $16 3           ; trips
        addi   $17 1000        ; a stack in memory
top:    bne    $15 $0 bottom
        addmul $3 $1 $2        ; t += x y        (overflows on some lanes)
        adddiv $4 $3 $2        ; u = t / y       (y = 0 faults; a tiny y is a long quotient)
        add    $6 $4           ; f += u
        subdiv $4 $3 $2        ; u = 0
        exch   $3 $17          ; push t, t = 0   (memory: the interpreter's step)
        addi   $17 1
        addi   $15 1
bottom: bne    $15 $16 top
        finish
"""


@pytest.mark.parametrize("width", [32, 64])
def test_the_program_kernel_runs_like_the_reference(monkeypatch, width):
    """A program's own tile kernel (fused blocks, the interpreter's steps between them,
    branches all lanes take alike) on 600 lanes in tiles of 256: the first tile holds
    lanes that fault in a block (y = 0), overflow, or (W = 64) need the exact quotient, so
    its blocks are undone and the interpreter finishes it; the other tiles run the kernel
    to FINISH.  Forward, then the gradient backward: every lane as the reference."""
    from revasm.sim.tile import fused

    monkeypatch.setenv("REVASM_TILE_FUSE", "build")
    image = assemble(FUSING, "fusing.pal", width=width)
    one = 1 << (width // 2)
    rng = np.random.default_rng(width)
    x = (rng.uniform(-3, 3, 600) * one).astype(np.int64)
    y = (rng.uniform(-2, 2, 600) * one).astype(np.int64)
    y[[3, 50]] = 0
    x[[7, 90]] = (1 << (width - 2)) // one * one  # x y overflows
    if width == 64:
        y[[11, 120]] = 1  # 2^-32: a quotient too long for the fast division
    assert fused.describe(image, False, False, 1)["blocks"] >= 2
    machine = TileLanes(image, 600, tile=256)
    reference = engine("reference").load(image, 600)
    for lanes in (machine, reference):
        lanes.set_bank_word("R", 1, x)
        lanes.set_bank_word("R", 2, y)
        lanes.run(1)
    assert machine.fused
    _alike(machine, reference, 600)
    assert machine.faulted.tolist() == reference.faulted.tolist()
    assert reference.faulted[[3, 50]].all() and not reference.faulted[256:].any()
    for lanes in (machine, reference):
        lanes.set_bank_word("G", 6, one)
        lanes.gradient = True
        lanes.run_back()
    assert machine.fused
    _alike(machine, reference, 600)
    for bank in ("G", "R"):
        for register in (1, 2, 3, 4, 6):
            assert machine.bank_word(bank, register).tolist() == \
                reference.bank_word(bank, register).tolist()


def test_the_program_kernel_is_used_only_when_ready(monkeypatch):
    """``cached``: a program whose kernel numba has not compiled runs on the interpreter
    (a small run asks no background build); ``off``: never; J2 fuses its loop's runs."""
    from revasm.sim.tile import fused

    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    shape = fused.describe(image, True, False, -1)
    assert shape["blocks"] == 3 and shape["cells"] >= 20
    fresh = assemble(FUSING.replace("addi   $16 3", "addi   $16 5"), "fresh.pal", width=32)
    for policy in ("cached", "off"):
        monkeypatch.setenv("REVASM_TILE_FUSE", policy)
        machine = TileLanes(fresh, 8)
        machine.set_bank_word("R", 2, 1 << 16)
        machine.run(1)
        assert not machine.fused and machine.halted.all()
    monkeypatch.setenv("REVASM_TILE_FUSE", "sometimes")
    with pytest.raises(ValueError, match="cached, build or off"):
        TileLanes(fresh, 8).run(1)


def test_auto_chooses_the_tile_engine_when_its_interpreter_is_built_and_the_work_pays(
        monkeypatch, tmp_path):
    """``auto``'s cost model (``engines.tile_pays``): never before the tile interpreter of
    the width has run (value and gradient mode); then by the lane-steps -- the steps of
    the program's last tile run, else its code cells -- against the engine it replaces,
    and never for a handful of lanes."""
    from revasm.sim import engines
    from revasm.sim.tile import ready

    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ready, "_MARKED", set())
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    assert not engines.tile_pays(image, 10**6, "vector")
    ready.mark_ready(64, False, False)
    assert not engines.tile_pays(image, 10**6, "vector")  # the gradient mode: not built
    ready.mark_ready(64, True, False)
    cells = sum(1 for flag in image.is_code if flag)
    assert engines.tile_pays(image, -(-engines.TILE_MIN_WORK["vector"] // cells), "vector")
    assert not engines.tile_pays(image, engines.TILE_MIN_WORK["vector"] // cells // 2,
                                 "vector")
    ready.record_steps(image, 1 << 16, 300.0)  # J2's steps per lane, from a run
    assert ready.recorded_steps(image, 1 << 16) == 300.0
    assert engines.tile_pays(image, 10**6, "vector", memory_words=1 << 16)
    assert not engines.tile_pays(image, 10**5, "vector", memory_words=1 << 16)
    assert engines.tile_pays(image, 10**5, "reference", memory_words=1 << 16)
    assert not engines.tile_pays(image, engines.TILE_MIN_LANES - 1, "reference",
                                 memory_words=1 << 16)
    assert not engines.tile_pays(assemble_file(EXAMPLES / "bessel_j2.pal", width=32), 10**6,
                                 "vector")  # another width: its interpreter not built


def test_auto_runs_a_known_long_job_of_few_lanes_on_the_vector_engine(monkeypatch, tmp_path):
    """Below ``VECTOR_MIN_LANES`` lanes ``auto`` keeps the reference unless a previous run
    recorded enough steps per lane (``engines.vector_pays``)."""
    from revasm.sim import engines
    from revasm.sim.engines import choose
    from revasm.sim.tile import ready

    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    words = 1 << 16
    assert not engines.vector_pays(image, 100, words)  # nothing recorded
    ready.record_steps(image, words, 300.0)
    assert engines.vector_pays(image, 400, words)
    assert not engines.vector_pays(image, 60, words)  # 1.8 * 10^4 lane-steps, 60 lanes
    assert engines.vector_pays(image, engines.VECTOR_KNOWN_MANY, words)  # lanes enough
    ready.record_steps(image, words, 30.0)
    assert engines.vector_pays(image, 100, words)  # few steps on many lanes
    assert not engines.vector_pays(image, engines.VECTOR_KNOWN_MANY - 1, words)
    ready.record_steps(image, words, 300.0)
    assert not engines.vector_pays(image, engines.VECTOR_KNOWN_LANES - 1, words)
    ready.record_steps(image, words, 1000.0)
    assert engines.vector_pays(image, 150, words) and 150 < engines.VECTOR_MIN_LANES
    loaded = choose("auto", lanes=150).load(image, 150, memory_words=words)
    assert type(loaded) is type(engine("vector").load(image, 1))
    other = assemble_file(EXAMPLES / "bessel_j2.pal", width=32)  # nothing recorded
    few = choose("auto", lanes=150).load(other, 150)
    assert type(few) is type(engine("reference").load(other, 1))
    # a job that long on those lanes: the tile engine, once built, is weighed against the
    # vector engine, not the reference (10^5 steps on 100 lanes: 10^7 lane-steps, under
    # the reference's threshold, over the vector engine's steps per lane)
    monkeypatch.setattr(ready, "_MARKED", set())
    ready.mark_ready(64, False, False)
    ready.mark_ready(64, True, False)
    ready.record_steps(image, words, 1e5)
    assert not engines.tile_pays(image, 100, "reference", words)
    assert engines.vector_pays(image, 100, words) and engines.tile_pays(image, 100, "vector",
                                                                        words)
    long = choose("auto", lanes=100).load(image, 100, memory_words=words)
    assert type(long) is TileLanes


def test_the_default_tile_grows_with_the_batch_and_splits_it_evenly():
    """Tiles of 256 lanes for small batches; larger batches get tiles of up to TILE_MAX
    lanes, a multiple of TILE_ALIGN, their count a multiple of the threads."""
    from revasm.sim.tile.lanes import TILE_ALIGN, TILE_LANES, TILE_MAX, tile_lanes

    assert tile_lanes(1, 2) == tile_lanes(1000, 4) == TILE_LANES
    for lanes in (1, 999, 1024, 2560, 4096, 10_000, 100_000, 1 << 17, 10**6):
        for threads in (1, 2, 4):
            size = tile_lanes(lanes, threads)
            assert TILE_LANES <= size <= TILE_MAX and size % TILE_ALIGN == 0
            tiles = -(-lanes // size)
            rounds = -(-lanes // (threads * TILE_MAX))  # tiles a thread runs at least
            assert tiles <= rounds * threads  # no thread runs more than the fewest it can
    assert tile_lanes(100_000, 2) == TILE_MAX
    assert tile_lanes(2560, 2) == 1280


def test_a_large_batch_on_its_default_tiles_is_the_batch_on_tiles_of_256():
    """J2's gradient on 5 000 lanes (default tiles of 1 280 lanes) gives the words, counts
    and steps of the same lanes in tiles of 256, every lane."""
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    x = (np.random.default_rng(5).uniform(-3, 3, 5000) * (1 << 32)).astype(np.int64)
    machines = [TileLanes(image, 5000), TileLanes(image, 5000, tile=256)]
    assert machines[0].tile == 1280
    for machine in machines:
        machine.set_bank_word("R", 1, x)
        machine.run(1)
        machine.set_bank_word("G", 2, 1 << 32)
        machine.gradient = True
        machine.run_back()
    big, small = machines
    for name in ("R", "G"):
        assert np.array_equal(big.bank(name), small.bank(name))
    assert np.array_equal(big.CTL, small.CTL)
    assert bool(np.all(big.halted))


def test_the_tiles_of_the_running_lanes_are_numpys_unique_tiles():
    """``tiles_of`` (a binary search past each tile) against ``numpy.unique`` of every
    running lane's tile, on dense, sparse and empty sets of lanes."""
    from revasm.sim.tile.lanes import tiles_of

    rng = np.random.default_rng(7)
    for lanes, tile in ((100_000, 2048), (1000, 256), (37, 5), (5, 1), (0, 4)):
        for share in (1.0, 0.5, 0.01):
            active = np.flatnonzero(rng.random(lanes) < share).astype(np.int64)
            assert np.array_equal(tiles_of(active, tile), np.unique(active // tile))
