"""Random straight-line programs run alike on the compiled engine and the reference, and what
the whole bounded sample covers.

The checks (``tests/support/differential.py``): programs laid side by side in one image, many per
kernel build, every lane bit for bit forward, backward, backward from FINISH, and on some
batches the gradient or Hessian pass.  The sample is split by kind of program into this
file, ``tests/sim/compiled/test_differential_structured.py`` and ``..._faults.py``, so that
pytest's workers share it; ``bench/compiled_campaign.py`` runs the same checks on 10^4
programs.
"""
from __future__ import annotations

import pytest
from differential import (
    MAX_STEPS,
    PASSES,
    SAMPLES,
    WIDTHS,
    batches,
    check_kind,
    first_derivative,
    sample_cases,
)
from program_generators import (
    POINTERS,
    ProgramCase,
    concatenate,
    examples,
    faulting_programs,
    mnemonics,
    straight_line_programs,
)
from sampling import SAMPLES as SAMPLE_NAMES

from revasm.isa import INSTRUCTIONS, decode
from revasm.sim.reference.engine import ReferenceLanes

#: The bounded sample in ``make test``, the full one in ``make test-long``.


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_random_straight_line_programs_run_alike_on_both_engines(width, sample):
    reports = check_kind("straight-line", width, sample)
    assert {"gradient", "hessian"} <= set().union(*(r.passes for r in reports))


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_sample_covers_every_instruction_and_pass(sample):
    """Each sample's programs (all kinds, both widths) use every instruction of the ISA
    table, and its batches run every pass (the fault kinds: ``..._faults.py``)."""
    used: set[str] = set()
    passes = {"forward", "backward", "from-finish"}
    for kind, (_, derivative_every) in SAMPLES[sample].items():
        for width in WIDTHS:
            cases = sample_cases(kind, width, sample)
            used.update(*(mnemonics(case.image) for case in cases))
            passes.update(derivative for _, derivative in
                          batches(cases, derivative_every, first=first_derivative(width))
                          if derivative)
    assert {ins.mnemonic for ins in INSTRUCTIONS} - used == set()
    assert set(PASSES) - passes == set()


def test_a_batch_runs_each_program_as_it_runs_alone():
    """Lanes started at their own program's START in a batch image end as the program
    alone ends: registers, steps, cycles, faults; and backward from FINISH alike."""
    cases = examples(straight_line_programs(32, max_length=6), 6, seed=7)
    cases += examples(faulting_programs(32), 4, seed=7)
    batch = concatenate(cases)
    lanes = ReferenceLanes(batch.image, len(cases), max_steps=MAX_STEPS,
                           memory_words=len(batch.image) + 64)
    for k in range(len(cases)):
        relocated = batch.relocated(k)
        for register, value in relocated.registers.items():
            lanes.machines[k].registers[register] = value & ((1 << 32) - 1)
        for address, value in relocated.memory.items():
            lanes.machines[k].memory[address] = value & ((1 << 32) - 1)
    lanes.run(1, start=batch.entries)
    for k, case in enumerate(cases):
        alone = ReferenceLanes(case.image, 1, max_steps=MAX_STEPS)
        case.load(alone)
        alone.run(1)
        if not _reads_pointers(case):  # (a pointer's value moved with the program)
            moved = list(alone.machines[0].registers)
            for pointer in POINTERS:
                moved[pointer] = (moved[pointer] + batch.offsets[k]) & ((1 << 32) - 1)
            assert lanes.machines[k].registers == moved, k
        assert (lanes.steps[k], lanes.cycles[k]) == (alone.steps[0], alone.cycles[0]), k
        f, g = lanes.fault(k), alone.fault(0)
        assert (f and f.kind) == (g and g.kind), k
        if f is not None and g is not None and f.pc is not None:
            assert f.pc == g.pc + batch.offsets[k], k
    assert lanes.halted.any() and lanes.faulted.any()


def _reads_pointers(case: ProgramCase) -> bool:
    """Whether an instruction reads an EXCH pointer register as a value."""
    for word, code in zip(case.image.words, case.image.is_code):
        if code:
            ins, operands = decode(word)
            if any(operands[name] in POINTERS for name, kind in
                   zip(ins.operand_names, ins.operand_kinds)
                   if kind == "reg" and not (ins.mnemonic == "EXCH" and name == "b")
                   and not (ins.mnemonic == "ADDI" and operands["a"] in POINTERS)):
                return True
    return False
