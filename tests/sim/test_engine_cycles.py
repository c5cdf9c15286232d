"""Every engine counts the RTL core's cycles, lane by lane, at the paths' edges.

The unit calls whose cycles depend on their operands (tan next to a pole, exp/sinh/cosh,
tanh and sigmoid at their limits, tanh's division, log of an exact mantissa, pow at the
edge of exp's range and of 0, atan2 of (0, 0), rotations reduced by an odd or even number of
turns) run in many lanes at once, each lane on words at or beside an edge, forward,
backward and in gradient mode; the vector engine runs them fused (every lane together) and
one instruction at a time (the lanes split by a diamond), the compiled engine in a
program's kernel (and ``tests/sim/compiled/test_timing.py`` compares its timers with the
scalar ones).  Every engine's cycles must equal the reference's, and the reference's the
schedule's own count from the registers (``isa/timing.step_cycles``).
"""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from revasm.assembler import assemble
from revasm.isa.fixed_point import WordFormat
from revasm.isa.timing import call_costs
from revasm.sim.engines import available, load

ENGINES = available()

#: Block A (every lane) and block B (the lanes with $22 < 0, inside a diamond): every
#: operation whose cycles depend on its operands, reading $1..$8, writing $10..$21, $24.
BLOCK = """\
        {add}tan   $10 $1
        {add}exp   $11 $2
        {add}sinh  $12 $2
        {add}cosh  $13 $2
        {add}tanh  $14 $3
        {add}log   $15 $4
        {add}pow   $16 $4 $5
        {add}atan2 $17 $5 $6
        {rot}      $18 $19 $7
        {irot}     $20 $21 $7
        {add}sigmoid $24 $8
"""
SOURCE = (";; pendulum pal file\n        start\n" + BLOCK.format(add="add", rot="rot", irot="irot")
          + "d1:     bltz  $22 e1\n        addi  $23 1\no1:     bra   j1\n"
          + "e1:     bltz  $22 d1\n" + BLOCK.format(add="sub", rot="irot", irot="rot")
          + "j1:     bgez  $22 o1\n        finish\n")
#: tan's denominator is exactly 0 there at W = 32 (tests/isa/timing/test_units.py)
TAN_POLE_32 = 1498345671


def _edges(width: int, rng: random.Random) -> dict[int, list[int]]:
    """Per register $1..$7, words at and beside each edge of the operations that read it."""
    fmt = WordFormat(width)
    k = call_costs(width)
    one, top = fmt.one, fmt.max_signed
    around = lambda v: [v - 1, v, v + 1]  # noqa: E731
    tan = [0, one, -one, top, fmt.min_signed] + around(k.half_pi) + around(-k.half_pi)
    tan += around(3 * k.half_pi)
    if width == 32:
        tan += around(TAN_POLE_32) + around(-TAN_POLE_32)
    exp = around(k.exp_limit) + around(-k.exp_limit) + [0, top, fmt.min_signed, one]
    tanh = around(k.tanh_limit) + around(-k.tanh_limit) + [0, one, -one]
    # tanh's division: exp's k reaches F/2 + 2 about |x| = (F/2 + 1.5) ln 2
    edge = int((k.tanh_k_limit - Fraction(1, 2)) * Fraction(6931471805599453, 10**16)
               * one)
    tanh += [edge + d for d in range(-3 * one // 1000, 3 * one // 1000, one // 4000)]
    logs = [1, 2, one, one + 1, 3 * one, top, 1 << (width - 2), (1 << (width - 2)) + 1,
            (1 << (width - 2)) + 2, (1 << (width - 3)) + 1]
    # pow's range: y ln x = W + 2 at x = e (ln x = 1): y around W + 2
    pow_y = [fmt.from_real(width + 2) + d for d in (-2, -1, 0, 1, 2)] + [0, one, -one]
    pow_y += [fmt.from_real(-(width + 2)) + d for d in (-1, 0, 1)]
    angles = [0, one] + around(k.half_pi) + around(-k.half_pi) + around(k.pi + k.half_pi)
    angles += around(2 * k.pi + k.half_pi) + [top, fmt.min_signed + 1, -3 * k.pi]
    sigmoid = around(k.sigmoid_limit) + around(-k.sigmoid_limit) + [0, one, -one, top,
                                                                      fmt.min_signed]
    words = {1: tan, 2: exp, 3: tanh, 4: logs, 5: pow_y, 6: [0, 0, one, -one], 7: angles,
             8: sigmoid}
    for register, values in words.items():  # log's $4 positive: log faults below
        values += [rng.randrange(1 if register == 4 else -top, top) for _ in range(6)]
    e = fmt.from_real("2.718281828459045235360287")
    words[4] += [e, e + 1, e - 1]
    return words


def _lanes(width: int) -> tuple[int, dict[int, np.ndarray]]:
    rng = random.Random(width)
    words = _edges(width, rng)
    lanes = max(len(v) for v in words.values())
    mask = (1 << width) - 1
    columns = {r: np.array([v[i % len(v)] & mask for i in range(lanes)], dtype=np.uint64)
               for r, v in words.items()}
    # x of pow is $4 (log's): pair every pow exponent with e on some lanes
    columns[22] = np.array([(-1 if i % 2 else 1) & mask for i in range(lanes)],
                           dtype=np.uint64)
    return lanes, columns


def _run(name: str, width: int, gradient: bool) -> tuple[np.ndarray, np.ndarray]:
    """(cycles forward, cycles backward) of every lane on engine ``name``; in gradient
    mode the backward pass with G of $16 seeded, as the host protocol does."""
    image = assemble(SOURCE, "edges.pal", width=width)
    lanes, columns = _lanes(width)
    machine = load(image, lanes, engine_name=name)
    for register, words in columns.items():
        machine.set_bank_word("R", register, words)
    machine.run(1)
    forward = np.array(machine.cycles).copy()
    assert np.array(machine.halted).all(), "every lane runs through (no fault)"
    if gradient:
        machine.gradient = True
        machine.set_bank_word("G", 16, WordFormat(width).one)
    machine.run_back()
    assert np.array(machine.halted).all()
    return forward, np.array(machine.cycles).copy()


@pytest.mark.parametrize("width", [32, 64])
def test_the_reference_counts_the_schedule_on_every_edge(width: int) -> None:
    """Lane by lane, the reference's count of both passes equals the schedule's count
    from the registers of each step (its trace)."""
    from revasm.isa.timing import step_cycles
    from revasm.sim.reference import Machine
    image = assemble(SOURCE, "edges.pal", width=width)
    lanes, columns = _lanes(width)
    for lane in range(lanes):
        machine = Machine(image)
        for register, words in columns.items():
            machine.registers[register] = int(words[lane])
        for direction in (1, -1):
            records = []
            registers = list(machine.registers)
            machine.run(direction, trace=records.append)
            expected = 0
            for record in records:
                expected += step_cycles(image.words[record.pc], direction < 0, registers,
                                        width)
                for register, _old, new in record.registers:
                    registers[register] = new
            assert machine.cycles == expected, (lane, direction)


KERNELS = [e for e in ENGINES if e != "reference"]
if "compiled" in ENGINES:  # the compiled engine's kernel for any program, too
    KERNELS.append("compiled-interpreter")


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("gradient", [False, True], ids=["value", "gradient"])
def test_every_engine_counts_the_reference_s_cycles_on_every_edge(
        name: str, width: int, gradient: bool, monkeypatch) -> None:
    expected = _run("reference", width, gradient)
    if name == "compiled-interpreter":
        monkeypatch.setenv("REVASM_KERNEL", "interpreter")
        name = "compiled"
    got = _run(name, width, gradient)
    for way, mine, theirs in zip(("forward", "backward"), got, expected):
        differ = np.nonzero(mine != theirs)[0]
        assert differ.size == 0, (way, differ[:5], mine[differ[:5]], theirs[differ[:5]])
    # the edges do change the count: lanes differ by whole paths of the function unit
    assert len(set(expected[0].tolist())) >= 8
