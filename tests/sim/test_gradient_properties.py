"""The gradient pass is itself exactly reversible, on generated programs (W = 32 and 64).

For every program of tests/support/program_generators.py: run forward (with the
tangent bank on or off), fill the gradient banks with random words, run
backward with the gradient switch on, then forward again in gradient mode:
values, gradients, tangents and gradient tangents come back bit for bit.
The backward pass in gradient mode also restores the values exactly as a
plain backward run does.  Faults of the arithmetic (a derivative that divides
by zero, e.g. sqrt at 0) are possible and end the example.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_generators import (
    ProgramCase,
    run_or_fault,
    straight_line_programs,
    structured_programs,
)

from revasm.machine import MachineFault
from revasm.sim.reference import Machine

MEMORY_WORDS = 256


def many(n: int) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _fill(bank: list[int], rng: random.Random, mask: int) -> None:
    for i in range(len(bank)):
        small = rng.random() < 0.5  # small words too, so that products do not always wrap
        bank[i] = rng.randrange(-4096, 4096) & mask if small else rng.randrange(mask + 1)


def assert_gradient_pass_reversible(case: ProgramCase, tangent: bool, seed: int) -> None:
    rng = random.Random(seed)
    machine = Machine(case.image, memory_words=MEMORY_WORDS, max_steps=100_000, tangent=tangent)
    case.load(machine)
    mask = machine.fmt.mask
    if tangent:
        _fill(machine.tangents, rng, mask)
        _fill(machine.memory_tangents, rng, mask)
    before = machine.snapshot()
    if run_or_fault(machine, +1):
        return
    at_finish = machine.snapshot()
    machine.gradient = True
    for name in machine.bank_snapshot():
        if name.startswith("G") or name.startswith("TG"):
            _fill(machine.bank(name), rng, mask)
    banks_at_finish = machine.bank_snapshot()
    fault = run_or_fault(machine, -1)
    if fault:
        assert fault.run_pass is None and "in gradient mode" in fault.message
        return
    # The values are uncomputed exactly as without the gradient switch.
    assert machine.snapshot().turned() == before, machine.snapshot().differences(before)
    machine.run(+1)
    assert machine.snapshot() == at_finish, machine.snapshot().differences(at_finish)
    assert machine.bank_snapshot() == banks_at_finish


@many(150)
@given(straight_line_programs(), st.booleans(), st.integers(0, 2 ** 32))
def test_gradient_pass_backward_then_forward_restores_everything_straight_line(case, tangent,
                                                                               seed):
    assert_gradient_pass_reversible(case, tangent, seed)


@many(150)
@given(structured_programs(), st.booleans(), st.integers(0, 2 ** 32))
def test_gradient_pass_backward_then_forward_restores_everything_structured(case, tangent, seed):
    assert_gradient_pass_reversible(case, tangent, seed)


@many(60)
@given(structured_programs(), st.integers(0, 2 ** 32))
def test_blocks_and_single_steps_agree_in_gradient_mode(case, seed):
    """The generated blocks carry the same adjoint rules as the single-step path."""
    results = []
    for traced in (False, True):
        rng = random.Random(seed)
        machine = Machine(case.image, memory_words=MEMORY_WORDS, max_steps=100_000,
                          tangent=True)
        case.load(machine)
        _fill(machine.tangents, rng, machine.fmt.mask)
        try:
            machine.run(+1)
            machine.gradient = True
            _fill(machine.gradients, rng, machine.fmt.mask)
            _fill(machine.gradient_tangents, rng, machine.fmt.mask)
            machine.run(-1, trace=(lambda record: None) if traced else None)
            fault = None
        except MachineFault as exc:
            fault = (exc.kind, exc.pc, exc.step)
        results.append((machine.snapshot(), machine.bank_snapshot(), fault))
    assert results[0] == results[1]
