"""Output as it runs: every engine hands the words a program shows to ``on_output`` while the
run goes on, and ``revasm run`` prints each on a line of its own before the summary.

One program (``examples/live_output.pal``) serves every test, so the compiled engine builds
one kernel: it shows 7, counts $3 up to n, shows and EMITs n, counts back down and shows n
once more.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from program_generators import mnemonics, straight_line_programs

from revasm.assembler import assemble_file
from revasm.cli.main import cli
from revasm.sim.compiled import slices
from revasm.sim.engines import available, load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LIVE = EXAMPLES / "live_output.pal"
IMAGE = assemble_file(str(LIVE))
ENGINES = [name for name in ("reference", "vector", "compiled") if name in available()]
#: ``revasm run examples/live_output.pal``, as it printed before output was live: the summary.
SUMMARY = """finished after 608 steps, 3648 cycles
  n = 100
  registers: $1=7, $5=100
  output: 7 100 100 100
"""


def listened(machine, run) -> tuple[dict[int, list[int]], list[list[int]]]:
    """What ``on_output`` heard per lane during ``run(listener)``, and each lane's output
    log before the run."""
    before = [machine.output(lane) for lane in range(machine.lanes)]
    heard: dict[int, list[int]] = {lane: [] for lane in range(machine.lanes)}
    run(lambda lane, words: heard[lane].extend(words))
    return heard, before


@pytest.mark.parametrize("engine", ENGINES)
def test_listener_hears_every_word_of_the_output_in_order_both_ways(engine):
    machine = load(IMAGE, 3, engine_name=engine)
    machine.set_bank_word("R", 5, [3, 40, 1])
    heard, before = listened(machine, lambda listen: machine.run(1, on_output=listen))
    assert [heard[lane] for lane in range(3)] == [[7, 3, 3, 3], [7, 40, 40, 40], [7, 1, 1, 1]]
    assert all(before[lane] + heard[lane] == machine.output(lane) for lane in range(3))
    heard, before = listened(machine, lambda listen: machine.run_back(on_output=listen))
    # backward: SHOW $5, the EMIT's word taken back off the tape, SHOW $3, SHOW $1
    assert [heard[lane] for lane in range(3)] == [[3, 3, 3, 7], [40, 40, 40, 7], [1, 1, 1, 7]]
    assert all(before[lane] + heard[lane] == machine.output(lane) for lane in range(3))


@pytest.mark.parametrize("engine", ["reference", "vector"])
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=straight_line_programs(max_length=24))
def test_listener_hears_exactly_the_output_of_every_program(engine, case):
    """Random programs of every data instruction, SHOW or EMIT among them: what the
    listener hears, forward then backward, is what the output log gains."""
    assume(mnemonics(case.image) & {"SHOW", "EMIT"})
    machine = load(case.image, 2, engine_name=engine, max_steps=20_000)
    case.load(machine)
    for run in (lambda listen: machine.run(1, on_output=listen),
                lambda listen: machine.run_back(on_output=listen)):
        heard, before = listened(machine, run)
        assert all(before[lane] + heard[lane] == machine.output(lane) for lane in range(2))


@pytest.mark.skipif("compiled" not in ENGINES, reason="numba is not installed")
@pytest.mark.parametrize("max_steps", [None, 5000, 1850])
def test_compiled_run_cut_into_tiny_slices_ends_as_one_call(monkeypatch, max_steps):
    """Slices of a few steps (most shorter than a loop's block, so lanes are stuck and
    widened too) leave every lane exactly as an unsliced run: state, counts, output, fault."""
    monkeypatch.setattr(slices, "FIRST_SLICE_STEPS", 2)
    monkeypatch.setattr(slices, "MOST_SLICE_STEPS", 5)
    inputs = [1, 300, 2000, 7]
    ends = []
    for listen in (None, lambda lane, words: None):
        machine = load(IMAGE, len(inputs), engine_name="compiled", max_steps=max_steps)
        machine.set_bank_word("R", 5, inputs)
        machine.run(1, on_output=listen)
        forward = [(machine.snapshot(lane), str(machine.fault(lane)))
                   for lane in range(len(inputs))]
        machine.run_back(on_output=listen)
        ends.append((forward, machine.steps.tolist(), machine.cycles.tolist(),
                     [machine.output(lane) for lane in range(len(inputs))],
                     [str(machine.fault(lane)) for lane in range(len(inputs))],
                     [machine.snapshot(lane) for lane in range(len(inputs))]))
    assert ends[0] == ends[1]
    faults = ends[0][4]
    if max_steps == 1850:  # n = 2000 runs out of steps after showing 7; n = 300 (1808) not
        assert "step-limit" in faults[2] and faults[1] == "None"


def test_slices_aim_at_half_the_latency_bound_at_the_rate_measured():
    first = slices.FIRST_SLICE_STEPS
    cut = slices.Slices(run_limit=10**12)
    assert cut.limit(numpy.array([5, 9])) == 9 + first
    half = slices.LIVE_OUTPUT_SECONDS / 2
    cut.timed(half / 3, first, stuck=False)  # 3x too short: 3x the steps (float rounding)
    assert abs(cut.budget - 3 * first) <= 1
    cut.timed(half * 10 / (3 * first), 10, stuck=False)  # a pause after 10 steps, same rate
    assert abs(cut.budget - 3 * first) <= 1
    cut.timed(half / 1000, 3 * first, stuck=False)  # 1000x the rate: at most 8x the budget
    assert abs(cut.budget - 24 * first) <= 8
    cut.timed(100.0, 10, stuck=True)  # a compile: down at once, never below the first
    assert cut.budget == first and cut.room == 16
    assert cut.limit(numpy.array([0])) == 16 * first
    for _ in range(20):  # stuck every time: the limit reaches the run's own
        cut.timed(0.001, 0, stuck=True)
    assert not cut.sliced(cut.limit(numpy.array([0])))


@pytest.mark.parametrize("engine", ENGINES)
def test_run_prints_each_word_then_the_summary_of_before(engine):
    result = CliRunner().invoke(cli, ["run", str(LIVE), "--engine", engine])
    assert result.exit_code == 0, result.output
    assert result.stdout == "7\n100\n100\n100\n" + SUMMARY


@pytest.mark.parametrize("engine", ENGINES)
def test_run_json_is_one_object_with_the_output_inside(engine):
    result = CliRunner().invoke(cli, ["run", str(LIVE), "--engine", engine, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)  # one object: nothing printed before it
    assert payload["output"] == [7, 100, 100, 100] and payload["steps"] == 608


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fault_is_reported_after_the_words_shown_before_it(engine):
    """Backward from FINISH with an empty tape: SHOW $5 prints, the count runs up, and
    taking the EMIT back faults."""
    result = CliRunner().invoke(cli, ["run", str(LIVE), "--engine", engine, "--reverse",
                                      "--set", "n=3"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "3" and lines[1].startswith("fault after 11 steps")
    assert "tape-empty" in result.stderr


def _first_line_while_running(engine: str, *extra: str) -> tuple[str, object]:
    """Start ``revasm run`` on a run of ~10^10 steps, read its first line through a pipe,
    and say whether the process was still running then; then stop it."""
    command = [sys.executable, "-m", "revasm", "run", str(LIVE), "--engine", engine,
               "--set", "n=2000000000", "--max-steps", str(10**15), *extra]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        running = process.poll()
    finally:
        process.kill()
        process.wait()
    return line, running


@pytest.mark.parametrize("engine", [e for e in ("reference", "compiled") if e in ENGINES])
def test_words_reach_a_pipe_while_the_program_still_runs(engine):
    line, exit_code = _first_line_while_running(engine)
    assert line == "7\n"
    assert exit_code is None  # 6 * 10^9 steps to go: the word came as the program showed it
