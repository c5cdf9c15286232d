"""The engine interface (sim/engine.py) and its registry: every engine, one contract.

Each available engine is loaded through the registry and driven only through the
``Lanes`` protocol; its results must equal the reference's bit for bit.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import revasm
from revasm.assembler import assemble, assemble_file
from revasm.cli.main import cli
from revasm.sim.engine import Lanes
from revasm.sim.engines import CHOICES, MODULES, EngineError, available, choose, engine, load
from revasm.sim.host import batch_gradient, gradient, hessian

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL_EXAMPLES = sorted(EXAMPLES.glob("*.pal"))
ENGINES = available()


def test_the_reference_and_vector_engines_are_always_available():
    assert {"reference", "vector"} <= set(ENGINES)
    assert set(ENGINES) <= set(MODULES)
    assert CHOICES == ("auto", *MODULES)


@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_loads_lanes_that_satisfy_the_protocol(name: str):
    image = assemble_file(EXAMPLES / "fib.pal")
    lanes = engine(name).load(image, 3, max_steps=1000)
    assert isinstance(lanes, Lanes)
    assert lanes.lanes == 3 and lanes.width == 32 and lanes.image is image


def test_an_unknown_engine_is_named_with_the_choices():
    with pytest.raises(EngineError, match="unknown engine 'fast'.*reference"):
        engine("fast")


def test_a_trace_needs_an_engine_that_traces():
    assert choose("auto", trace=True).traces
    with pytest.raises(EngineError, match="does not trace"):
        choose("vector", trace=True)


def test_auto_keeps_one_lane_on_the_reference_and_batches_off_it(tmp_path, monkeypatch):
    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))  # no compiled kernel anywhere
    image = assemble_file(EXAMPLES / "fib.pal")
    assert type(choose("auto", lanes=1).load(image, 1)) is type(engine("reference").load(image))
    assert type(choose("auto", lanes=1000).load(image, 1000)) is \
        type(engine("vector").load(image, 1000))


@pytest.mark.skipif("compiled" not in ENGINES, reason="needs numba")
def test_auto_runs_compiled_only_a_cached_kernel_whose_recorded_work_pays(tmp_path, monkeypatch):
    from revasm.sim import engines
    from revasm.sim.compiled import cache, machine
    from revasm.sim.compiled.machine import CompiledLanes

    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(machine, "_MODULES", {})  # no kernel loaded by an earlier test
    monkeypatch.setattr(cache, "_LOADED", {})  # nor a kernel module imported by one
    image = assemble_file(EXAMPLES / "fib.pal")  # 134 steps per lane
    assert not engines.compiled_pays(image, 1, "reference")  # never run compiled
    engine("compiled").load(image, 1).run(1)  # compiles run_serial, records 134 steps
    monkeypatch.setattr(engines, "COMPILED_MIN_WORK", {"reference": 134, "vector": 134 * 300})
    monkeypatch.setattr(engines, "COMPILED_MIN_STEPS", 100)
    assert isinstance(choose("auto", lanes=1).load(image, 1), CompiledLanes)
    # not enough work: 134 steps on one lane below a threshold of 135
    monkeypatch.setattr(engines, "COMPILED_MIN_WORK", {"reference": 135, "vector": 135})
    assert not isinstance(choose("auto", lanes=1).load(image, 1), CompiledLanes)
    # 300 lanes would pay, but their kernel (run_parallel) was never compiled
    monkeypatch.setattr(engines, "COMPILED_MIN_WORK", {"reference": 134, "vector": 134 * 300})
    assert not engines.compiled_pays(image, 300, "vector")
    engine("compiled").load(image, 300).run(1)
    assert engines.compiled_pays(image, 300, "vector")
    assert not engines.compiled_pays(image, 299, "vector")  # below the lane-steps
    monkeypatch.setattr(engines, "COMPILED_MIN_STEPS", 135)  # too few steps per lane
    assert not engines.compiled_pays(image, 300, "vector")
    # a changed program is another image: nothing recorded for it
    other = assemble_file(EXAMPLES / "fib.pal")
    other.words[-1] += 1
    assert not engines.compiled_pays(other, 1, "reference")


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=lambda p: p.stem)
def test_every_engine_runs_every_example_like_the_reference(name: str, path: Path):
    image = assemble_file(path)
    expected = revasm.run(image, engine="reference", max_steps=100_000)
    got = revasm.run(image, engine=name, max_steps=100_000)
    assert got.to_json() == expected.to_json()


@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_faults_like_the_reference_lane_by_lane(name: str):
    image = assemble(""";; pendulum pal file
        .input d $2 int = 1
        start
        addi  $1 7
        adddiv $3 $1 $2
        finish
""", "div.pal")
    machine = load(image, 3, engine_name=name)
    machine.set_bank_word("R", 2, [1, 0, 2])  # lane 1 divides by zero
    machine.run(1)
    assert machine.halted.tolist() == [True, False, True]
    assert machine.faulted.tolist() == [False, True, False]
    fault = machine.fault(1)
    reference = revasm.run(image, {"d": 0}, engine="reference").fault
    assert fault is not None and reference is not None
    assert (fault.kind, fault.pc, fault.step, fault.message) == (
        reference.kind, reference.pc, reference.step, reference.message)
    assert machine.fault(0) is None


JUMP_ONTO_FINISH = """;; pendulum pal file
        start
        bgtz  $2 done     ; lanes with $2 > 0 jump onto FINISH
        addi  $1 7
done:   finish
"""


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("back", ["run(-1)", "run_back"])
def test_a_jump_onto_finish_halts_with_its_offset_and_runs_back_on_every_engine(
        name: str, back: str):
    image = assemble(JUMP_ONTO_FINISH, "finish.pal")
    machine = load(image, 4, engine_name=name)
    machine.set_bank_word("R", 2, [-1, 0, 1, 5])
    before = [machine.snapshot(lane) for lane in range(4)]
    machine.run(1)
    assert machine.halted.all()
    halted = [machine.snapshot(lane) for lane in range(4)]
    # the jumping lanes halt on FINISH (pc 3) with BR = the offset 3 - 1
    assert [(s.pc, s.br, s.registers[1]) for s in halted] == [(3, 0, 7), (3, 0, 7),
                                                              (3, 2, 0), (3, 2, 0)]
    reference = load(image, 4, engine_name="reference")
    reference.set_bank_word("R", 2, [-1, 0, 1, 5])
    reference.run(1)
    assert halted == [reference.snapshot(lane) for lane in range(4)]
    if back == "run_back":
        machine.run_back()
    else:
        machine.run(-1)
    assert machine.halted.all()
    assert [machine.snapshot(lane) for lane in range(4)] == [s.turned() for s in before]
    assert machine.steps.tolist() == [4, 4, 3, 3]  # FINISH, (ADDI,) BGTZ, START


@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_holds_words_anywhere_in_the_address_space_per_lane(name: str):
    image = assemble(""";; pendulum pal file
        start
        addi  $1 -1        ; the top word, 2^32 - 1
        exch  $2 $1
        addi  $1 1
        finish
""", "top.pal")
    machine = load(image, 3, engine_name=name)
    machine.set_bank_word("MEM", 0xFFFFFFFF, [5, 6, 7])
    machine.set_bank_word("MEM", 70_000, [1, 2, 3])
    machine.run(1)
    assert machine.bank_word("R", 2).tolist() == [5, 6, 7]
    assert machine.bank_word("MEM", 0xFFFFFFFF).tolist() == [0, 0, 0]
    assert [machine.snapshot(lane).high_memory for lane in range(3)] == [
        ((70_000, 1),), ((70_000, 2),), ((70_000, 3),)]
    machine.run(-1)
    assert machine.bank_word("MEM", 0xFFFFFFFF).tolist() == [5, 6, 7]


@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_differentiates_like_the_reference(name: str):
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    expected = gradient(image, inputs={"x": 1.25}, engine="reference")
    got = gradient(image, inputs={"x": 1.25}, engine=name)
    assert (got.loss, got.gradient, got.forward, got.backward) == (
        expected.loss, expected.gradient, expected.forward, expected.backward)
    second = hessian(image, inputs={"x": 1.25}, engine=name)
    assert second.hessian == hessian(image, inputs={"x": 1.25}, engine="reference").hessian


@pytest.mark.parametrize("name", ENGINES)
def test_batch_gradient_on_every_engine_equals_the_scalar_protocol_per_lane(name: str):
    image = assemble_file(EXAMPLES / "apex.pal", width=64)
    xs = [0.25, -0.5, 1.5]
    machine = load(image, len(xs), engine_name=name)
    result = revasm.batch(image, {"x": xs, "y": [0.5] * 3}, grad=True, engine=name)
    for lane, x in enumerate(xs):
        expected = gradient(image, inputs={"x": x, "y": 0.5}, engine="reference")
        assert result.loss[lane] == float(expected.loss)
        assert {k: v[lane] for k, v in result.gradient.items()} == {
            k: float(v) for k, v in expected.gradient.items()}
    assert isinstance(machine, Lanes)
    direct = batch_gradient(result.machine)  # the passes again from START: same words
    assert np.array_equal(direct.ok, np.ones(3, dtype=bool))


@pytest.mark.parametrize("name", ENGINES)
def test_check_restores_every_random_state_on_every_engine(name: str):
    image = assemble_file(EXAMPLES / "multiply.pal")
    result = revasm.check(image, random=6, seed=3, engine=name)
    assert result.failures == [] and result.restored == 7


def test_the_cli_takes_the_engine_by_name_and_gives_the_same_json():
    runner = CliRunner()
    outputs = set()
    for name in ENGINES:
        result = runner.invoke(cli, ["run", str(EXAMPLES / "multiply.pal"), "--set", "a=12",
                                     "--engine", name, "--json"])
        assert result.exit_code == 0, result.output
        outputs.add(json.dumps(json.loads(result.stdout), sort_keys=True))
    assert len(outputs) == 1


def test_the_cli_refuses_a_trace_on_an_engine_that_cannot_trace():
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "fib.pal"), "--trace",
                                      "--engine", "vector"])
    assert result.exit_code == 2
    assert "does not trace" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("name", [name for name in ENGINES if name != "reference"])
def test_rtl_sim_refuses_an_engine_that_cannot_watch_every_instruction(name: str):
    result = CliRunner().invoke(cli, ["rtl", "sim", str(EXAMPLES / "fib.pal"), "--engine", name])
    assert result.exit_code == 2
    assert f"the {name} engine does not trace; use --engine reference" in result.output
