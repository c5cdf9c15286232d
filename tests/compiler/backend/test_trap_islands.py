"""Trap pads in islands (a program longer than a guard's 16-bit branch offset reaches):
the same words, faults at the same source lines, and the backward run restoring the
machine, as with the pads after the entry stub.  The spacing is made small here, so that
short random programs get islands."""
from __future__ import annotations

import pytest
from edsl_programs import inputs as edsl_inputs
from edsl_programs import random_program as edsl_program
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from janus_programs import random_program as janus_program

import revasm
from revasm.compiler import compile_source
from revasm.compiler.api import compile_janus_source
from revasm.compiler.backend import lowering
from revasm.machine.fault_place import fault_place
from revasm.programs import ProgramFault, read_values, run_program


def _edsl(source: str, seed: int) -> tuple:
    program = compile_source(source, "f", "islands.py", width=32, for_gradient=True)
    try:
        result = run_program(program, edsl_inputs(seed), width=32, reverse_check=True)
    except ProgramFault as fault:
        return ("fault", fault.fault.kind, fault.pos.line if fault.pos else None), program
    return read_values(program, result.machine, exact=True), program


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1))
def test_edsl_programs_compute_the_same_with_trap_islands(seed):
    source = edsl_program(seed)
    plain, program = _edsl(source, seed)
    assert "_island:" not in program.pal
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lowering, "ISLAND_SPACING", 7)
        islands, program = _edsl(source, seed)
    if "_trap:" in program.pal:  # guards: then islands hold their pads
        assert "_island:" in program.pal
    assert islands == plain, source


@pytest.mark.parametrize("seed", [3, 11, 29, 47, 61])
def test_janus_programs_compute_the_same_with_trap_islands(seed):
    source = janus_program(seed)
    outcomes = []
    for spacing in (lowering.ISLAND_SPACING, 5):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(lowering, "ISLAND_SPACING", spacing)
            compiled = compile_janus_source(source, "islands.ja")
        assert ("_island:" in compiled.pal) == (spacing == 5)
        forward = revasm.run(compiled.image, engine="reference", max_steps=10 ** 7)
        line = fault_place(forward.fault).line if forward.fault else None
        outcomes.append((forward.status, forward.fault.kind if forward.fault else None, line,
                         forward.named if forward.status == "finished" else None))
    assert outcomes[1] == outcomes[0], source


def test_a_failed_check_in_a_long_program_faults_at_its_line():
    # an if whose fi assertion is the test's negation, behind 10 000 statements: its pad is
    # 10 000 instructions and more from the guard in the old layout, reachable only from an island
    body = "\n".join(f"    v{k % 3} ^= v{(k + 1) % 3}" for k in range(10000))
    source = (f"procedure main()\n    int v0\n    int v1\n    int v2\n{body}\n"
              "    if v0 < 5 then\n        v1 += 1\n    else\n        v2 += 1\n"
              "    fi v0 >= 5\n")
    compiled = compile_janus_source(source, "long.ja")
    assert "_island:" in compiled.pal
    # an island's jumps have no source line (a line step passes them)
    islands = [pc for name, pc in compiled.image.symbols.items() if "_island" in name]
    assert islands and all(compiled.source_of_pc(pc) is None or
                           compiled.source_of_pc(pc).pos is None for pc in islands)
    run = revasm.run(compiled.image, engine="reference", max_steps=10 ** 6)
    assert run.status == "fault" and run.fault.kind == "uncaught-jump"
    place = fault_place(run.fault)
    assert place.line == 10009 and place.message.startswith("the fi assertion v0 >= 5")
