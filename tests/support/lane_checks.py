"""Two engines' lanes compared: every lane's state, counts, outputs and faults the same.

Shared by the compiled engine's tests and ``window_program`` (its two kernels against the
reference)."""
from __future__ import annotations

import random

from program_generators import ProgramCase

#: The fields of a fault two engines must agree on.
FAULT_FIELDS = ("kind", "message", "pc", "br", "direction", "registers", "step", "landing_pc",
                "jump_source_pc", "instruction_text")


def assert_same(compiled, reference, banks: tuple[str, ...] = (), addresses=()) -> None:
    """Every lane of two engines' lanes in the same state, with the same counts and faults."""
    assert compiled.lanes == reference.lanes
    assert compiled.steps.tolist() == reference.steps.tolist()
    assert compiled.cycles.tolist() == reference.cycles.tolist()
    assert compiled.halted.tolist() == reference.halted.tolist()
    assert compiled.faulted.tolist() == reference.faulted.tolist()
    for lane in range(compiled.lanes):
        mine, theirs = compiled.snapshot(lane), reference.snapshot(lane)
        assert mine == theirs, (lane, mine.differences(theirs))
        assert compiled.output(lane) == reference.output(lane), lane
        f, g = compiled.fault(lane), reference.fault(lane)
        assert (f is None) == (g is None), (lane, f, g)
        if f is not None:
            for name in FAULT_FIELDS:
                assert getattr(f, name) == getattr(g, name), (lane, name, str(f), str(g))
    for name in banks:
        places = range(32) if name in ("G", "T", "TG") else addresses
        for index in places:
            assert compiled.bank_word(name, index).tolist() == \
                reference.bank_word(name, index).tolist(), (name, index)


def gradient_pass(case: ProgramCase, compiled, reference, seed: int, tangent: bool) -> None:
    """The host protocol on both: seed G (and T), switch on, run back from FINISH."""
    rng = random.Random(seed)
    mask = (1 << case.image.width) - 1
    seeds = {("G", r): rng.randrange(0, mask + 1) for r in rng.sample(range(1, 32), 3)}
    if tangent:
        seeds.update({("T", r): rng.randrange(-(4 << 16), 4 << 16) & mask
                      for r in rng.sample(range(1, 32), 3)})
    for machine in (compiled, reference):
        machine.gradient = True
        machine.tangent = tangent
        for (bank, r), word in seeds.items():
            machine.set_bank_word(bank, r, word)
        machine.run_back()
