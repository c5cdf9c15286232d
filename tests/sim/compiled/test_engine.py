"""The compiled engine (``sim/compiled``) equals the reference machine, bit for bit.

* (the numba vocabulary against the primitives' reference implementations, row by row:
  ``tests/isa/test_primitives.py``);
* every example program, forward and backward, and the J2 gradient;
* random programs (``program_generators``) with random inputs per lane, both widths:
  registers, memory, BR, DIR, PC, tape (snapshot), steps, cycles, output and the fault
  (kind, PC, step, BR, DIR, message) of every lane, forward then backward, and in
  gradient mode with the gradient and tangent banks;
* each fault kind, ``max_steps``, and the per-lane memory table growing past its capacity.

Kernels are compiled into the test run's kernel cache (``REVASM_CACHE_DIR``,
tests/conftest.py), which the other files share: the examples' kernels, and J2's gradient
and Hessian ones, that ``tests/sim/test_engines.py`` compiled are loaded here, not compiled
again (and the other way round); the random samples are bounded so that the module stays
within a few minutes on two cores (``make test-long`` and ``bench/compiled_campaign.py`` run more).
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from lane_checks import assert_same, gradient_pass
from program_generators import (
    ProgramBuilder,
    ProgramCase,
    straight_line_programs,
    structured_programs,
)
from sampling import sampled
from window_program import check_window_program

pytest.importorskip("numba")

from revasm.assembler import assemble, assemble_file
from revasm.sim.compiled.engine import ENGINE
from revasm.sim.engines import engine
from revasm.sim.reference.engine import ReferenceLanes

EXAMPLES = sorted(Path(__file__).resolve().parents[3].joinpath("examples").glob("*.pal"))
MEMORY = 256
MAX_STEPS = 20_000



def few(n: int) -> settings:
    # no shrinking: each shrink step compiles a kernel
    return settings(max_examples=n, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- comparing engines ----------------------------------------------------------------------

def lane_values(case: ProgramCase, lanes: int, seed: int) -> tuple[list[dict], list[dict]]:
    """Lane 0 the case's own inputs, the others random words."""
    rng = random.Random(seed)
    mask = (1 << case.image.width) - 1

    def word(value: int) -> int:
        kind = rng.randrange(4)
        if kind == 0:
            return value & mask
        if kind == 1:
            return rng.randrange(-40, 40) & mask
        if kind == 2:
            return rng.randrange(-(8 << 16), 8 << 16) & mask
        return rng.randrange(0, mask + 1)

    registers = [{r: v & mask for r, v in case.registers.items()}]
    memory = [{a: v & mask for a, v in case.memory.items()}]
    for _ in range(lanes - 1):
        registers.append({r: word(v) for r, v in case.registers.items()})
        memory.append({a: word(v) for a, v in case.memory.items()})
    return registers, memory


def both(case: ProgramCase, lanes: int, seed: int, at_finish: bool = False):
    compiled = ENGINE.load(case.image, lanes, max_steps=MAX_STEPS, memory_words=MEMORY)
    reference = ReferenceLanes(case.image, lanes, max_steps=MAX_STEPS, memory_words=MEMORY)
    registers, memory = lane_values(case, lanes, seed)
    if at_finish:
        for lane in registers:
            lane.update({r: v & ((1 << case.image.width) - 1) for r, v in case.prologue.items()})
    for machine in (compiled, reference):
        for r in registers[0]:
            machine.set_bank_word("R", r, np.array([lane[r] for lane in registers],
                                                    dtype=np.uint64))
        for a in memory[0]:
            machine.set_bank_word("MEM", a, np.array([lane[a] for lane in memory],
                                                      dtype=np.uint64))
    return compiled, reference


# --- example programs -------------------------------------------------------------------------

@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_forward_and_backward(path):
    image = assemble_file(path)
    compiled = ENGINE.load(image, 2, max_steps=1_000_000)
    reference = ReferenceLanes(image, 2, max_steps=1_000_000)
    for machine in (compiled, reference):
        for declared in image.names.values():
            if declared.default is not None:
                if declared.register is not None:
                    machine.set_bank_word("R", declared.register, declared.default)
                else:
                    machine.set_bank_word("MEM", declared.address, declared.default)
        machine.run(1)
    assert_same(compiled, reference)
    if image.finish is not None:
        for machine in (compiled, reference):
            machine.run_back()
        assert_same(compiled, reference)


def test_j2_gradient_and_hessian_vector_product():
    image = assemble_file(EXAMPLES[0].parent / "bessel_j2.pal", width=64)
    lanes = 5
    x = np.array([int(v * 2**32) for v in (1.0, -2.5, 0.3, 2.9, 0.0)], dtype=np.int64)
    compiled = engine("compiled").load(image, lanes)
    reference = ReferenceLanes(image, lanes)
    for machine in (compiled, reference):
        machine.set_bank_word("R", 1, x)
        machine.run(1)
        machine.set_bank_word("G", 2, 1 << 32)
        machine.gradient = True
        machine.tangent = True
        machine.set_bank_word("T", 1, 1 << 32)
        machine.run_back()
    assert_same(compiled, reference, banks=("G", "T", "TG"))
    gradient = int(compiled.bank_word("G", 1)[0]) / 2**32
    assert abs(gradient - 0.2102436159) < 1e-8  # dJ2/dx at 1.0 (docs/gradient.md)


# --- random programs ---------------------------------------------------------------------------

def _forward_and_back_alike(compiled, reference) -> None:
    """Both machines forward to FINISH, then back to START: the same state after each."""
    for direction in (1, -1):
        for machine in (compiled, reference):
            if direction > 0:
                machine.run(1)
            else:
                machine.run_back()
        assert_same(compiled, reference)


# (hypothesis's first example is the simplest program: a bounded sample of n has n - 1 others)
@sampled(few, case=straight_line_programs(), seed=st.integers(0, 2**32), bounded=3, full=6)
def test_straight_line_programs(case, seed):
    compiled, reference = both(case, 3, seed)
    _forward_and_back_alike(compiled, reference)
    gradient_pass(case, compiled, reference, seed, tangent=seed % 2 == 0)
    assert_same(compiled, reference, banks=("G", "T", "TG") if seed % 2 == 0 else ("G",),
                addresses=sorted(case.memory))


@sampled(few, case=structured_programs(), seed=st.integers(0, 2**32), bounded=2, full=4)
def test_structured_programs(case, seed):
    compiled, reference = both(case, 3, seed)
    _forward_and_back_alike(compiled, reference)


# --- faults, limits, capacity -------------------------------------------------------------------

FAULTS = {
    "divide-by-zero": "start\n adddiv $3 $1 $2\n finish\n",
    "domain-error": "start\n addlog $3 $1\n finish\n",
    "memory-address": "start\n exch $3 $1\n finish\n",
    "tape-empty": "start\n emit $1\n finish\n",
    "illegal": "start\n addi $1 1\n",
}


@pytest.mark.parametrize("name, direction", [
    ("divide-by-zero", 1), ("divide-by-zero", -1), ("domain-error", 1), ("domain-error", -1),
    ("memory-address", 1), ("memory-address", -1), ("tape-empty", -1), ("uncaught-jump", 1),
    ("illegal", 1)])
def test_faults_like_the_reference(name, direction):
    if name == "uncaught-jump":  # the assembler refuses it: built directly
        image = (ProgramBuilder(32).op("START").op("BRA", "there").op("ADDI", 1, 1)
                 .label("there").op("ADDI", 2, 1).op("FINISH").build())
    else:
        image = assemble(";; pendulum pal file\n" + FAULTS[name], width=32)
    compiled = ENGINE.load(image, 3, max_steps=100, memory_words=MEMORY)
    reference = ReferenceLanes(image, 3, max_steps=100, memory_words=MEMORY)
    for machine in (compiled, reference):
        machine.set_bank_word("R", 1, np.array([0, 5, (1 << 32) - 3], dtype=np.uint64))
        machine.set_bank_word("R", 2, np.array([0, 0, 7], dtype=np.uint64))
        machine.run(direction)
    assert_same(compiled, reference)
    assert any(compiled.fault(lane) is not None for lane in range(3))


def test_window_above_the_image_grows_and_takes_in_table_words():
    """Stacks just above the image go to the window, which doubles as they climb; a far
    word first lands in the table, then the grown window takes it in: bit for bit with the
    reference, forward and in gradient mode (tests/support/window_program.py; the interpreter
    kernel's case is in tests/sim/compiled/test_interpreter.py)."""
    compiled = check_window_program("program")
    assert compiled.window >= 128


@pytest.mark.parametrize("limit", [1, 5, 17, 40])
def test_max_steps_is_exact(limit):
    image = assemble_file(EXAMPLES[0].parent / "fib.pal")
    compiled = ENGINE.load(image, 2, max_steps=limit)
    reference = ReferenceLanes(image, 2, max_steps=limit)
    for machine in (compiled, reference):
        machine.run(1)
    assert_same(compiled, reference)


def test_memory_table_grows_and_no_finish():
    """Lanes touching more addresses than the first table holds pause, grow it, go on."""
    source = ";; pendulum pal file\n start\n" + "".join(
        f" addi $2 1\n exch $2 $1\n addi $1 {k}\n" for k in range(1, 40)) + " finish\n"
    image = assemble(source, width=64)
    lanes = 4
    compiled = ENGINE.load(image, lanes, memory_words=4096)
    reference = ReferenceLanes(image, lanes, memory_words=4096)
    start = np.array([100, 1000, 3000, 50], dtype=np.uint64)
    for machine in (compiled, reference):
        machine.set_bank_word("R", 1, start)
        machine.run(1)
    assert compiled.capacity >= 64
    assert_same(compiled, reference)
    for machine in (compiled, reference):
        machine.run(-1)
    assert_same(compiled, reference)
    no_finish = assemble(";; pendulum pal file\n start\n addi $1 1\n", width=32)
    compiled = ENGINE.load(no_finish, 2)
    reference = ReferenceLanes(no_finish, 2)
    for machine in (compiled, reference):
        machine.run(-1)
    assert_same(compiled, reference)


@pytest.mark.parametrize("limit", [7, 150, 283])
def test_step_limit_in_the_gradient_pass_hands_the_lane_to_the_oracle(limit):
    """J2's backward gradient pass stopped by max_steps: the last steps before the limit
    run on the reference machine (a hand-off), memory and gradient banks included."""
    image = assemble_file(EXAMPLES[0].parent / "bessel_j2.pal", width=64)
    x = np.array([int(v * 2**32) for v in (1.0, -2.5, 0.3)], dtype=np.int64)
    compiled = ENGINE.load(image, 3)
    reference = ReferenceLanes(image, 3)
    for machine in (compiled, reference):
        machine.set_bank_word("R", 1, x)
        machine.run(1)
        machine.set_bank_word("G", 2, 1 << 32)
        machine.gradient = True
    compiled.max_steps = limit
    for machine in reference.machines:
        machine.max_steps = limit
    for machine in (compiled, reference):
        machine.run_back()
    assert all(f.kind == "step-limit" for f in map(compiled.fault, range(3)))
    assert_same(compiled, reference, banks=("G",), addresses=range(1000, 1020))


def test_the_second_run_of_a_program_loads_its_kernel_from_the_cache(tmp_path):
    """A fresh process finds the kernel module and its machine code on disk: no compile.

    Both runs are processes of their own on a cache directory of their own, so kernels
    other tests already hold in this process's memory cannot stand in for the disk."""
    import os
    import subprocess
    import sys
    path = EXAMPLES[0].parent / "fib.pal"
    first = ENGINE.load(assemble_file(path), 1)
    first.run(1)
    script = (
        "from revasm.assembler import assemble_file\n"
        "from revasm.sim.compiled.engine import ENGINE\n"
        f"m = ENGINE.load(assemble_file({str(path)!r}), 1)\n"
        "m.run(1)\n"
        "k = m.kernel_module()\n"
        "s = k.run_serial.stats\n"
        "print(sum(s.cache_misses.values()), sum(s.cache_hits.values()), int(m.steps[0]))\n")
    env = dict(os.environ, REVASM_CACHE_DIR=str(tmp_path / "kernels"))

    def process() -> list[str]:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, check=True).stdout.split()

    compiled = process()
    assert compiled[0] != "0" and compiled[2] == str(int(first.steps[0]))  # it compiled
    assert process() == ["0", "1", str(int(first.steps[0]))]  # no miss, one hit, same run


@few(2)
@given(case=structured_programs(), seed=st.integers(0, 2**32))
def test_structured_programs_in_gradient_mode(case, seed):
    """Loops, diamonds and calls with the gradient and tangent banks on (backward)."""
    compiled, reference = both(case, 2, seed)
    for machine in (compiled, reference):
        machine.run(1)
    gradient_pass(case, compiled, reference, seed, tangent=True)
    assert_same(compiled, reference, banks=("G", "T", "TG"), addresses=sorted(case.memory))
