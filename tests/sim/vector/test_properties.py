"""The vector machine equals the reference machine on every lane, bit for bit.

Random programs (``program_generators``), random inputs per lane, both widths:
final registers, memory, BR, DIR, PC, tape, output, steps, cycles and the fault
(kind, PC, step, BR, DIR and message) of every lane, forward, then backward,
and in gradient mode (gradient and tangent banks).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from program_generators import (
    ProgramBuilder,
    ProgramCase,
    straight_line_programs,
    structured_programs,
)
from sampling import sampled

from revasm.machine import MachineFault
from revasm.sim.reference import Machine
from revasm.sim.vector import VectorMachine

MEMORY = 256
MAX_STEPS = 20_000
REGISTER_BANKS = ("G", "T", "TG")
#: Fused-block tile sizes: 0 = whole rows; 1 and 2 split small batches into tiles
#: (2 leaves a short last tile), as TILE_LANES does for large batches.
TILES = st.sampled_from([0, 0, 1, 2])


def many(n: int) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def lane_inputs(draw, case: ProgramCase, lanes: int):
    """Lane 0 gets the case's own values; the others random words (some shared).

    Drawn from one seed (cheap to generate; shrinking keeps the program's).
    """
    rng = random.Random(draw(st.integers(0, 2**32), label="seed"))
    mask = (1 << case.image.width) - 1

    def word(value: int) -> int:
        kind = rng.randrange(4)
        if kind == 0:
            return value
        if kind == 1:
            return rng.randrange(-40, 40)
        if kind == 2:
            return rng.randrange(-(8 << 16), 8 << 16)
        return rng.randrange(0, mask + 1)

    registers = [dict(case.registers)]
    memory = [dict(case.memory)]
    for _ in range(lanes - 1):
        registers.append({r: word(v) for r, v in case.registers.items()})
        memory.append({a: word(v) for a, v in case.memory.items()})
    return registers, memory


def reference_machine(case: ProgramCase, registers: dict, memory: dict) -> Machine:
    machine = Machine(case.image, memory_words=MEMORY, max_steps=MAX_STEPS)
    mask = machine.fmt.mask
    for r, v in registers.items():
        machine.registers[r] = v & mask
    for a, v in memory.items():
        machine.memory[a] = v & mask
    return machine


def vector_machine(case: ProgramCase, registers: list[dict], memory: list[dict],
                   tile: int = 0) -> VectorMachine:
    """``tile`` > 0 runs fused blocks in tiles of that many lanes (as large batches do)."""
    machine = VectorMachine(case.image, len(registers), memory_words=MEMORY, max_steps=MAX_STEPS)
    machine.tile = tile
    for r in case.registers:
        machine.set_register(r, [lane[r] for lane in registers])
    for a in case.memory:
        machine.set_memory(a, np.array([lane[a] & ((1 << 64) - 1) for lane in memory],
                                       dtype=np.uint64))
    return machine


def reference_outcome(machine: Machine, run) -> tuple:
    try:
        run()
        fault = None
    except MachineFault as exc:
        fault = (exc.kind, exc.pc, exc.step, exc.br, exc.direction, exc.message)
    banks = {name: machine.bank_snapshot()[name] for name in REGISTER_BANKS
             if name in machine.bank_snapshot()}
    return machine.snapshot(), machine.steps, machine.cycles, tuple(machine.output), fault, banks


def vector_outcome(machine: VectorMachine, lane: int, banks: tuple[str, ...]) -> tuple:
    exc = machine.fault(lane)
    fault = None if exc is None else (exc.kind, exc.pc, exc.step, exc.br, exc.direction,
                                      exc.message)
    words = {name: tuple(int(machine.bank_word(name, r)[lane]) for r in range(32))
             for name in banks}
    return (machine.snapshot(lane), int(machine.steps[lane]), int(machine.cycles[lane]),
            tuple(machine.output(lane)), fault, words)


def assert_lanes_agree(references: list[Machine], vector: VectorMachine, runs, what: str) -> None:
    present = None
    for lane, reference in enumerate(references):
        expected = reference_outcome(reference, runs(reference))
        if present is None:
            present = tuple(expected[5])
        got = vector_outcome(vector, lane, present)
        assert got[1:] == expected[1:], (what, lane, expected[1:], got[1:])
        assert got[0] == expected[0], (what, lane, expected[0].differences(got[0]))


def check_case(case: ProgramCase, registers: list[dict], memory: list[dict],
               tile: int = 0) -> None:
    references = [reference_machine(case, r, m) for r, m in zip(registers, memory)]
    vector = vector_machine(case, registers, memory, tile)
    vector.run(1)
    assert_lanes_agree(references, vector, lambda m: lambda: m.run(1), "forward")
    vector.run(-1)
    assert_lanes_agree(references, vector, lambda m: lambda: m.run(-1), "backward")


@sampled(many, straight_line_programs(), st.data(), bounded=60, full=250)
def test_every_lane_equals_the_reference_on_straight_line_programs(case, data):
    lanes = data.draw(st.integers(1, 6), label="lanes")
    tile = data.draw(TILES, label="tile")
    check_case(case, *data.draw(lane_inputs(case, lanes), label="inputs"), tile)


@sampled(many, structured_programs(), st.data(), bounded=60, full=300)
def test_every_lane_equals_the_reference_on_structured_programs(case, data):
    """Divergent branches, loops of different trip counts, calls and uncalls."""
    lanes = data.draw(st.integers(1, 6), label="lanes")
    tile = data.draw(TILES, label="tile")
    check_case(case, *data.draw(lane_inputs(case, lanes), label="inputs"), tile)


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), st.data(),
         bounded=30, full=150)
def test_blocks_fused_only_when_entered_again_give_the_same_lanes(case, data):
    """A long program on few lanes fuses a block the second time a run enters it (the
    first, instruction by instruction): forced here on short programs."""
    from revasm.sim.vector import fused

    lanes = data.draw(st.integers(1, 4), label="lanes")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused, "LONG_PROGRAM", 0)
        check_case(case, *data.draw(lane_inputs(case, lanes), label="inputs"))


def test_a_long_program_on_one_lane_fuses_only_what_it_enters_twice():
    from revasm.sim.vector import fused

    # $3 counts 5 trips; the body's three data instructions are one block
    image = ProgramBuilder().op("START").op("ADDI", 5, 5) \
        .label("top").op("BNE", 3, 0, "bottom").op("ADDI", 1, 2).op("ADDI", 2, 1) \
        .op("ADDI", 3, 1).label("bottom").op("BNE", 3, 5, "top").op("FINISH").build()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused, "LONG_PROGRAM", 0)
        vector = VectorMachine(image, 1, memory_words=MEMORY)
        vector.run(1)
    reference = Machine(image, memory_words=MEMORY)
    reference.run(1)
    assert vector.snapshot(0) == reference.snapshot() and reference.registers[1] == 10
    built = [key for key, block in vector._fused.items() if block]
    assert built and all(key in vector._entered for key in built)


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), st.data(),
         bounded=40, full=150)
def test_gradient_mode_lanes_equal_the_reference(case, data):
    """Forward (tangent bank optionally on), seed G, backward with the gradient switch on."""
    lanes = data.draw(st.integers(1, 4), label="lanes")
    registers, memory = data.draw(lane_inputs(case, lanes), label="inputs")
    tangent = data.draw(st.booleans(), label="tangent")
    mask = (1 << case.image.width) - 1
    word = st.integers(0, mask)
    rng = random.Random(data.draw(word, label="seed"))
    seeds = [{rng.randrange(1, 32): rng.randrange(mask + 1) for _ in range(4)}
             for _ in range(lanes)]
    tangents = [{rng.randrange(1, 32): rng.randrange(mask + 1) for _ in range(3)}
                for _ in range(lanes)]
    references = [reference_machine(case, r, m) for r, m in zip(registers, memory)]
    vector = vector_machine(case, registers, memory, data.draw(TILES, label="tile"))
    if tangent:
        vector.tangent = True
        for r in range(1, 32):
            vector.set_bank_word("T", r, [t.get(r, 0) for t in tangents])
        for reference, t in zip(references, tangents):
            reference.tangent = True
            for r, v in t.items():
                reference.tangents[r] = v
    vector.run(1)
    assert_lanes_agree(references, vector, lambda m: lambda: m.run(1), "forward")
    vector.gradient = True
    for r in range(1, 32):
        vector.set_bank_word("G", r, [s.get(r, 0) for s in seeds])
    for reference, s in zip(references, seeds):
        reference.gradient = True
        for r, v in s.items():
            reference.gradients[r] = v
    vector.run_back()

    def back(machine: Machine):
        def run():
            if not machine.halted:
                raise AssertionError("only halted lanes go back")
            machine.br, machine.direction, machine.steps, machine.cycles = 0, -1, 0, 0
            machine.halted = False
            machine.resume()
        return run

    for lane, reference in enumerate(references):
        if not reference.halted:  # faulted forward: the lane stays stopped in both
            assert vector.fault(lane) is not None
            references[lane] = None
    kept = [(lane, ref) for lane, ref in enumerate(references) if ref is not None]
    for lane, reference in kept:
        expected = reference_outcome(reference, back(reference))
        got = vector_outcome(vector, lane, tuple(expected[5]))
        assert got[1:] == expected[1:], ("gradient", lane, expected[1:], got[1:])
        assert got[0] == expected[0], ("gradient", lane, expected[0].differences(got[0]))


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), st.data(),
         bounded=30, full=100)
def test_step_limits_stop_each_lane_where_the_reference_stops(case, data):
    """A small max_steps cuts lanes off mid-block, mid-loop or mid-call."""
    lanes = data.draw(st.integers(1, 4), label="lanes")
    registers, memory = data.draw(lane_inputs(case, lanes), label="inputs")
    limit = data.draw(st.integers(1, 60), label="max_steps")
    references = []
    for r, m in zip(registers, memory):
        reference = reference_machine(case, r, m)
        reference.max_steps = limit
        references.append(reference)
    vector = vector_machine(case, registers, memory)
    vector.max_steps = limit
    vector.run(1)
    assert_lanes_agree(references, vector, lambda m: lambda: m.run(1), "limited")


FAULT_IN_A_BLOCK = """;; pendulum pal file
        start
        addi   $2 5
        add    $3 $2
        adddiv $4 $3 $1     ; divides by x: lanes with x = 0 fault here, mid-block
        addmul $5 $4 $4
        addsqrt $6 $5       ; and lanes with a negative square fault here
        sub    $5 $1
        add    $7 $6
        finish
"""


def test_a_fault_inside_a_fused_block_stops_only_its_lanes_in_any_tile():
    """Guarded templates in a fused block (a division and a square root between plain
    additions): each lane stops where the reference stops, whichever tile it is in,
    and the lanes of the other tiles finish the block."""
    from revasm.assembler import assemble

    for width in (32, 64):
        image = assemble(FAULT_IN_A_BLOCK, width=width)
        one = 1 << (width // 2)
        xs = [one, 2 * one, 0, 3 * one, 0, -one, 5 * one, 0, 7 * one]
        case = ProgramCase(image)
        registers = [{1: x, 5: (-(10 * one) if i == 1 else 0)} for i, x in enumerate(xs)]
        memory = [{} for _ in xs]
        case.registers = dict(registers[0])
        for tile in (0, 1, 2, 4):
            references = [reference_machine(case, r, m) for r, m in zip(registers, memory)]
            vector = vector_machine(case, registers, memory, tile)
            vector.run(1)
            # the division and the root ran inside one fused block of seven templates
            assert max(block[1] for block in vector._fused.values() if block) == 7
            assert_lanes_agree(references, vector, lambda m: lambda: m.run(1), "forward")
            assert [vector.fault(i) is not None for i in range(len(xs))] == \
                [x == 0 or i == 1 for i, x in enumerate(xs)]


MEMORY_IN_A_BLOCK = """;; pendulum pal file
        start
        addi   $2 5
        add    $3 $2
        exch   $4 $1        ; R4 <-> MEM[R1]: uniform, mixed, code or outside memory
        add    $5 $4
        exch   $5 $6        ; and back out through another pointer
        addi   $7 3
        finish
"""


def test_memory_exchanges_inside_a_fused_block_match_the_reference_on_every_lane():
    """EXCH runs inside a fused block when its tile shares one legal address; a tile with
    mixed addresses, or with a lane pointing at code or outside memory, stops there and
    runs it alone (the faulting lanes fault as in the reference)."""
    from revasm.assembler import assemble

    for width in (32, 64):
        image = assemble(MEMORY_IN_A_BLOCK, width=width)
        pointers = [100, 100, 100, 101, 100, 100, 1, 100, 100, 5000, 120, 120]
        registers = [{1: p, 4: 7 * i + 1, 6: 130 + (i % 2)} for i, p in enumerate(pointers)]
        memory = [{100: 11 * i, 101: 13 * i, 120: 17 * i, 130: 0, 131: 0}
                  for i, _ in enumerate(pointers)]
        case = ProgramCase(image, registers=dict(registers[0]), memory=dict(memory[0]))
        for tile in (0, 1, 2, 4):
            check_case(case, registers, memory, tile)
            vector = vector_machine(case, registers, memory, tile)
            vector.run(1)
            assert max(block[1] for block in vector._fused.values() if block) == 6
            assert [vector.fault(i) is not None for i in range(len(pointers))] == \
                [p == 1 for p in pointers]  # 5000: beyond the dense words, still memory
