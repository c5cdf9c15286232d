"""Optimisation levels: every level computes -O0's words, only the instruction count changes.

Random eDSL programs that walk arrays (tests/support/edsl_programs.py) and random Janus programs
(tests/support/janus_programs.py), and every example, compiled at -O0, -O1 and -O2: the same
output words, the same loss and gradient words, the machine restored by the backward
run, and ``revasm check`` (forward then backward from random inputs) passing on the
optimised image.  -O0 is the plain lowering, the reference (docs/language.md,
*Optimisation levels*).
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from edsl_programs import inputs as edsl_inputs
from edsl_programs import random_program as edsl_program
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from janus_programs import machine_inputs
from janus_programs import random_program as janus_program
from nilang_examples import program_files

import revasm
from revasm.compiler import compile_file, compile_source
from revasm.compiler.api import LEVELS, compile_janus_file, compile_janus_source
from revasm.programs import ProgramFault, grad_program, read_values, run_program
from revasm.sim.engines import load as load_engine
from revasm.sim.host import load_inputs

ROOT = Path(__file__).resolve().parents[2]
JANUS = sorted((ROOT / "examples" / "janus").glob("*.ja"))


def _edsl_words(source: str, seed: int, width: int, level: int) -> tuple:
    """Every parameter's exact value after the forward run (restored by the backward run:
    ``reverse_check``), the loss and the gradient words, and the steps."""
    program = compile_source(source, "f", "levels.py", width=width, for_gradient=True,
                             level=level)
    result = run_program(program, edsl_inputs(seed), width=width, reverse_check=True)
    gradient = grad_program(program, edsl_inputs(seed))
    return (read_values(program, result.machine, exact=True), gradient.exact.loss,
            dict(gradient.exact.gradient)), result.steps, program


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([32, 64]))
@example(5578223, 32)  # a hoisted guard of a loop whose counter lives in memory (spilled)
@example(3249, 32)  # its inputs overflow Q16.16 in a product: every level faults there alike
def test_random_edsl_programs_give_the_same_words_at_every_level(seed, width):
    source = edsl_program(seed)
    outcomes = {level: _edsl_outcome(source, seed, width, level) for level in LEVELS}
    assert outcomes[1][0] == outcomes[0][0], source
    assert outcomes[2][0] == outcomes[0][0], source
    program = outcomes[2][1]
    if program is not None:  # (a run that faulted at every level alike has no state to check)
        check = revasm.check(program.image, random=3, seed=seed)
        assert check.failures == [], source


def _edsl_outcome(source: str, seed: int, width: int, level: int) -> tuple:
    """``_edsl_words``'s words and program, or the fault the run met: its kind and source
    line (its PC differs between levels), and no program."""
    try:
        words, _steps, program = _edsl_words(source, seed, width, level)
    except ProgramFault as fault:
        return ("fault", fault.fault.kind, fault.pos.line if fault.pos else None), None
    return words, program


@pytest.mark.parametrize("seed", [3, 11, 29, 47, 61, 83, 97, 131])
def test_random_janus_programs_give_the_same_words_at_every_level(seed):
    source = janus_program(seed)
    rng = random.Random(seed)
    outcomes = []
    for level in LEVELS:
        compiled = compile_janus_source(source, "levels.ja", level=level)
        forward = revasm.run(compiled.image, engine="reference", max_steps=10 ** 7)
        # revasm.run gives a Janus program's arrays and stacks as lists: the scalars
        state = {name: rng.randint(-999, 999) for name, value in forward.named.items()
                 if not isinstance(value, list)}
        rng.seed(seed)  # every level starts backward from the same state
        backward = revasm.run(compiled.image, machine_inputs(state), reverse=True,
                              engine="reference", max_steps=10 ** 7)
        outcomes.append([(run.status, run.fault.kind if run.fault else None,
                          run.named if run.status == "finished" else None)
                         for run in (forward, backward)])
    assert outcomes[1] == outcomes[0], source
    assert outcomes[2] == outcomes[0], source


@pytest.mark.parametrize("path", program_files(), ids=lambda p: p.stem)
def test_every_nilang_example_compiles_checks_and_gives_the_same_words(path):
    values = []
    for level in LEVELS:
        program = compile_file(path, width=64, level=level)
        if level:  # the optimised programs run backward to their inputs from random ones
            check = revasm.check(program.image, random=2 if level == 2 else 0, seed=1,
                                 max_steps=None)
            assert check.failures == [], (path.name, level)
        machine = load_engine(program.image, 1, engine_name="auto", max_steps=None)
        load_inputs(machine, program.image)
        machine.run(1)
        assert machine.fault(0) is None
        values.append(read_values(program, machine, exact=True))
    assert values[1] == values[0] and values[2] == values[0], path.name


@pytest.mark.parametrize("path", JANUS, ids=lambda p: p.stem)
def test_every_janus_example_gives_the_same_words_at_every_level(path):
    named = []
    for level in LEVELS:
        image = compile_janus_file(path, level=level).image
        result = revasm.run(image, engine="reference")
        assert result.status == "finished"
        check = revasm.check(image, engine="reference")
        assert check.failures == [], (path.name, level)
        named.append(result.named)
    assert named[1] == named[0] and named[2] == named[0], path.name


def test_optimisation_level_is_checked_and_o2_is_the_default():
    source = edsl_program(5)
    default = compile_source(source, "f", "levels.py")
    assert default.pal == compile_source(source, "f", "levels.py", level=2).pal
    with pytest.raises(ValueError, match="optimisation level"):
        compile_source(source, "f", "levels.py", level=3)


def test_o2_is_shorter_than_o0_on_array_walks():
    # not a speed test: the instructions a run executes, which the passes exist to cut
    steps = {}
    for level in LEVELS:
        _, steps[level], _ = _edsl_words(edsl_program(17), 17, 64, level)
    assert steps[2] < steps[1] < steps[0]


def test_the_command_line_takes_the_level():
    import json

    from click.testing import CliRunner

    from revasm.cli.main import cli
    target = str(ROOT / "examples" / "nilang" / "dot.py") + ":dot"
    out = {}
    for flag in ("-O0", "-O1", "-O2", None):
        args = ["compile", target, "--json"] + ([flag] if flag else [])
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        out[flag] = json.loads(result.output)
    assert [out[f]["level"] for f in ("-O0", "-O1", "-O2", None)] == [0, 1, 2, 2]
    assert out["-O0"]["instructions"] > out["-O2"]["instructions"]
    assert out[None]["text"] == out["-O2"]["text"]
    bad = CliRunner().invoke(cli, ["compile", target, "-O3"])
    assert bad.exit_code == 2
