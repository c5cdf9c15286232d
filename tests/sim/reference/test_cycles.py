"""The reference machine counts the RTL core's cycles (isa/timing) on every path.

Its fast path adds up each generated block's fixed cycles and, for a unit call whose
cycles depend on its operands, a line after the statement (``sim/reference/blocks.py``);
its single-step path (``--trace``, the lockstep co-simulation) adds each instruction's.
Both must give the count the schedule gives instruction by instruction
(``isa/timing.step_cycles`` over the registers of each step), forward, backward and in
gradient mode, on every example and on random programs.  ``tests/rtl/verification/test_cosim.py``
checks the same count against the RTL core itself at every retired instruction.
"""
from __future__ import annotations

import glob

import pytest
from program_generators import examples, structured_programs

from revasm.assembler import assemble, assemble_file
from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.isa.timing import step_cycles
from revasm.machine import MachineFault, TraceRecord
from revasm.machine.values import RawWord
from revasm.sim.reference import Machine

EXAMPLES = sorted(glob.glob("examples/*.pal"))


def _scheduled(image: Image, records: list[TraceRecord], registers: list[int],
               gradient: bool) -> int:
    """The schedule's count of a traced run: each step's cycles over its registers."""
    registers = list(registers)
    total = 0
    for record in records:
        total += step_cycles(image.words[record.pc], record.direction < 0, registers,
                             image.width, gradient=gradient)
        for register, _old, new in record.registers:
            registers[register] = new
    return total


def _run_both_ways(image: Image, prepare, direction: int, *, gradient: bool = False,
                   seed_loss: int | None = None) -> tuple[int, int, int, int] | None:
    """(fast-path cycles, traced cycles, schedule's count, steps) of one run, from the
    state ``prepare`` leaves (after a forward run for a backward one; ``None`` when that
    faults).  A run may fault: the count covers the instructions it completed."""
    counts = []
    for traced in (False, True):
        machine = Machine(image)
        prepare(machine)
        if direction < 0:
            try:
                machine.run(1)
            except MachineFault:
                return None
        if gradient:
            machine.gradient = True
            machine.gradients[seed_loss] = WordFormat(image.width).one
        records: list[TraceRecord] = []
        start = list(machine.registers)
        try:
            machine.run(direction, trace=records.append if traced else None)
        except MachineFault:
            pass
        counts.append((machine.cycles, machine.steps, records, start))
    (fast, steps, _, _), (slow, slow_steps, records, start) = counts
    assert steps == slow_steps
    return fast, slow, _scheduled(image, records, start, gradient), steps


def _defaults(image: Image):
    def prepare(machine: Machine) -> None:
        for name, declared in image.names.items():
            if declared.default is not None:
                machine.set(name, RawWord(declared.default))  # a declared default is a word
    return prepare


@pytest.mark.parametrize("path", EXAMPLES)
def test_every_example_counts_the_schedule_s_cycles(path: str) -> None:
    image = assemble_file(path)
    directions = (1, -1) if image.finish is not None else (1,)
    for direction in directions:
        counts = _run_both_ways(image, _defaults(image), direction)
        assert counts is not None
        fast, slow, scheduled, steps = counts
        assert fast == slow == scheduled, (direction, fast, slow, scheduled)
        assert fast >= 6 * steps
    losses = [d.register for d in image.names.values() if d.role == "loss"]
    if losses and losses[0] is not None and image.finish is not None:
        counts = _run_both_ways(image, _defaults(image), -1, gradient=True,
                                seed_loss=losses[0])
        assert counts is not None
        fast, slow, scheduled, _ = counts
        assert fast == slow == scheduled


#: Compiled examples: Janus programs and NiLang functions (small enough to trace).
COMPILED = [("janus", "examples/janus/fib_pair.ja"), ("janus", "examples/janus/isqrt.ja"),
            ("janus", "examples/janus/physics.ja"), ("nilang", "examples/nilang/rfib.py:rfib"),
            ("nilang", "examples/nilang/dot.py"), ("nilang", "examples/nilang/ibesselj.py")]


@pytest.mark.parametrize(("language", "path"), COMPILED, ids=[p for _, p in COMPILED])
def test_compiled_examples_count_the_schedule_s_cycles(language: str, path: str) -> None:
    """Programs the compiler writes (procedures called and uncalled, loops, the function
    unit) count the schedule's cycles too, forward and backward."""
    from revasm.compiler.api import compile_file, compile_janus_file
    if language == "janus":
        image = compile_janus_file(path).image
    else:
        file, _, entry = path.partition(":")
        image = compile_file(file, entry or None).image
    for direction in (1, -1):
        counts = _run_both_ways(image, _defaults(image), direction)
        assert counts is not None
        fast, slow, scheduled, steps = counts
        assert fast == slow == scheduled, direction
        assert steps > 10


@pytest.mark.parametrize("width", [32, 64])
def test_random_programs_count_the_schedule_s_cycles(width: int) -> None:
    """Structured random programs (loops, procedures, every data instruction), forward,
    backward and backward in gradient mode (G of $1 seeded)."""
    cases = examples(structured_programs(width), 40, seed=width + 11)
    timed = gradient_runs = 0
    for case in cases:
        for direction in (1, -1):
            counts = _run_both_ways(case.image, case.load, direction)
            if counts is None:
                continue
            fast, slow, scheduled, steps = counts
            assert fast == slow == scheduled, (case.description, direction)
            timed += steps
        counts = _run_both_ways(case.image, case.load, -1, gradient=True, seed_loss=1)
        if counts is not None:
            fast, slow, scheduled, _ = counts
            assert fast == slow == scheduled, case.description
            gradient_runs += 1
    assert timed > 1000 and gradient_runs > 20


def test_the_cycles_of_a_few_programs_by_hand() -> None:
    """START and FINISH 6 each; ADDI 6; SWAP 7 (WRITEB); ADDMUL 6 + a product on the
    function unit at W = 32: IDLE, BEGIN (2), 33 steps + the MUL return, ARITH_MUL (2)
    = 39; ROT by 0.5 (no reduction): 7 + 515."""
    image = assemble(""";; pendulum pal file
        start
        addi $1 3
        swap $1 $2
        addmul $3 $1 $2
        finish
""")
    machine = Machine(image)
    machine.run(1)
    assert machine.cycles == 6 + 6 + 7 + (6 + 39) + 6
    machine.run(-1)
    assert machine.cycles == 6 + 6 + 7 + (6 + 39) + 6
    rotation = assemble(""";; pendulum pal file
.input theta $3 fixed = 0.5
        start
        rot $1 $2 $3
        finish
""")
    machine = Machine(rotation)
    machine.set("theta", 0.5)
    machine.run(1)
    assert machine.cycles == 6 + (7 + 515) + 6
    # an angle past pi/2 is first reduced by a turn of pi: a division (53 cycles), a
    # product (34), ROT_TURNS and ROT_REDUCED, and an odd turn negates both words first
    # (ROT_NEG_X, ROT_NEG_Y, ROT_SHEAR: 2 cycles each)
    machine = Machine(rotation)
    machine.set("theta", 3.0)
    machine.run(1)
    assert machine.cycles == 6 + (7 + 515 + 53 + 34 + 2 + 6) + 6
