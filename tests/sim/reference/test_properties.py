"""Laws of the reference machine, checked on thousands of generated programs (W = 32 and 64):
hundreds in ``make test``, the full counts in ``make test-long`` (``sampling.sampled``)."""
from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from program_generators import (
    ARITHMETIC_FAULTS,
    ProgramCase,
    run_or_fault,
    straight_line_programs,
    structured_programs,
)
from sampling import sampled

from revasm.machine import MachineFault
from revasm.sim.reference import Machine

MAX_STEPS = 200_000


def many(n: int) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def loaded(case: ProgramCase, *, at_finish: bool = False) -> Machine:
    machine = Machine(case.image, memory_words=1024, max_steps=MAX_STEPS)
    case.load(machine, at_finish=at_finish)
    return machine


def outcome(machine: Machine, direction: int = +1, trace=None):
    """Everything observable about a run: final state, counters, output, fault."""
    try:
        machine.run(direction, trace=trace)
        fault = None
    except MachineFault as exc:
        fault = (exc.kind, exc.pc, exc.step, exc.br, exc.direction, exc.message)
    return (machine.snapshot(), machine.steps, machine.cycles, tuple(machine.output), fault)


def assert_round_trip(case: ProgramCase) -> None:
    machine = loaded(case)
    before = machine.snapshot()
    if run_or_fault(machine, +1):  # only data-dependent arithmetic may fault
        return
    assert machine.halted and machine.br == 0 and machine.direction == +1
    assert machine.pc == case.image.finish
    forward_steps, forward_cycles = machine.steps, machine.cycles
    machine.run(-1)
    after = machine.snapshot()
    assert after.turned() == before, after.turned().differences(before)
    assert (machine.steps, machine.cycles) == (
        forward_steps, forward_cycles + _rotation_difference(case))


def _rotation_difference(case: ProgramCase) -> int:
    """How many cycles more the backward run takes than the forward one (isa/timing): only
    a rotation differs -- its undo is the other rotation, whose negation after an odd
    number of turns of pi takes other cycles (ROT_NEG_X, ROT_NEG_Y, ROT_SHEAR: 6; irot's
    ROT_UNNEG_Y, ROT_UNNEG_X: 4)."""
    from revasm.isa.codec import decode
    from revasm.isa.timing import call_costs, rotation_turns
    image = case.image
    if not any(code and decode(word & 0xFFFFFFFF)[0].mnemonic in ("ROT", "IROT")
               for word, code in zip(image.words, image.is_code)):
        return 0
    costs = call_costs(image.width)
    machine = loaded(case)
    records: list = []
    machine.run(1, trace=records.append)
    difference = 0
    registers = [machine.fmt.signed(r) for r in loaded(case).registers]
    for record in records:
        entry, operands = decode(image.words[record.pc] & 0xFFFFFFFF)
        if entry.mnemonic in ("ROT", "IROT") and rotation_turns(
                registers[operands["c"]], costs) & 1:
            # the rotation this step ran (an uncalled procedure runs backward in the
            # forward run), and the one that undoes it in the backward run
            ran = "rot" if (entry.mnemonic == "ROT") == (record.direction > 0) else "irot"
            undo = "irot" if ran == "rot" else "rot"
            difference += costs.negation[undo] - costs.negation[ran]
        for register, _old, new in record.registers:
            registers[register] = machine.fmt.signed(new)
    return difference


@sampled(many, straight_line_programs(), bounded=150, full=700)
def test_backward_run_undoes_forward_run_for_every_straight_line_program(case):
    assert_round_trip(case)


@sampled(many, structured_programs(), bounded=150, full=700)
def test_backward_run_undoes_forward_run_for_every_structured_program(case):
    assert_round_trip(case)


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), bounded=50, full=150)
def test_forward_run_undoes_backward_run_from_the_finish(case):
    """Starting at FINISH from the same initial values, backward then forward restores them."""
    machine = loaded(case, at_finish=True)
    machine.pc, machine.direction = case.image.finish, -1
    before = machine.snapshot()
    # Running backward from an arbitrary state may uncompute into a domain error, or
    # an EMIT may find the tape empty.
    if run_or_fault(machine, -1, ARITHMETIC_FAULTS + ("tape-empty",)):
        return
    machine.run(+1)
    assert machine.snapshot().turned() == before


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), bounded=50, full=200)
def test_every_run_is_deterministic(case):
    assert outcome(loaded(case)) == outcome(loaded(case))


@sampled(many, st.one_of(straight_line_programs(), structured_programs()), bounded=60, full=250)
def test_generated_blocks_and_single_steps_agree(case):
    """The fast path (compiled blocks) and the traced single-step path are one machine."""
    records = []
    fast, slow = loaded(case), loaded(case)
    assert outcome(fast) == outcome(slow, trace=records.append)
    assert len(records) == slow.steps
    assert [r.step for r in records] == list(range(1, len(records) + 1))
    if fast.halted:
        assert outcome(fast, -1) == outcome(slow, -1, trace=records.append)


@sampled(many, structured_programs(), st.data(), bounded=40, full=120)
def test_max_steps_stops_exactly_at_the_limit(case, data):
    machine = loaded(case)
    try:
        machine.run(+1)
    except MachineFault:
        return
    total = machine.steps
    limit = data.draw(st.integers(0, max(0, total - 1)), label="limit")
    limited = Machine(case.image, memory_words=1024, max_steps=limit)
    case.load(limited)
    try:
        limited.run(+1)
    except MachineFault as fault:
        assert fault.kind == "step-limit"
        assert fault.step == limited.steps == limit
    else:
        raise AssertionError("the run should have hit the step limit")
    # The state at the limit is the state after exactly `limit` single steps.
    stepped = loaded(case)
    stepped.pc, stepped.direction, stepped.br = case.image.entry, 1, 0
    for _ in range(limit):
        stepped.step()
    assert limited.snapshot() == stepped.snapshot()
    assert limited.cycles == stepped.cycles


@sampled(many, structured_programs(width=32), structured_programs(width=64), bounded=20,
         full=60)
def test_programs_of_both_widths_round_trip(case32, case64):
    assert case32.image.width == 32 and case64.image.width == 64
    assert_round_trip(case32)
    assert_round_trip(case64)
