"""``revasm.rtl_sim`` (src/revasm/rtl_sim.py): ``revasm rtl sim`` as a Python call, the
command only printing what the call returns."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from click.testing import CliRunner

import revasm
from revasm.cli.main import cli
from revasm.rtl_sim import RtlSimError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def command_json(*args: object) -> tuple[dict, int]:
    result = CliRunner().invoke(cli, ["rtl", "sim", *map(str, args), "--json"])
    return json.loads(result.stdout), result.exit_code


def test_the_lockstep_agrees_both_ways_and_the_command_prints_the_calls_json():
    image = revasm.load(EXAMPLES / "multiply.pal")
    result = revasm.rtl_sim(image, {"a": 12, "b": 34}, name="multiply")
    assert result.ok and result.status == "agree" and result.backend == "amaranth"
    assert [(run.direction, run.status) for run in result.runs] == \
        [(1, "finished"), (-1, "finished")]
    assert result.steps == sum(run.steps for run in result.runs) > 0
    path = EXAMPLES / "multiply.pal"
    out, code = command_json(path, "--set", "a=12", "--set", "b=34")
    assert code == 0 and out == {**result.to_json(), "file": str(path)}


def test_gradient_mode_takes_the_declared_loss_as_every_gradient_run_does():
    image = revasm.load(EXAMPLES / "x1_plus_x1x2.pal")
    result = revasm.rtl_sim(image, grad=True, max_steps=10_000)
    assert result.ok and result.gradient and result.to_json()["gradient"] is True
    assert [run.direction for run in result.runs] == [1, -1]
    named = revasm.rtl_sim(image, grad=True, loss="f", max_steps=10_000)
    assert [run.cycles for run in named.runs] == [run.cycles for run in result.runs]


def test_what_the_core_cannot_take_is_an_error_before_anything_runs(tmp_path):
    fib = revasm.load(EXAMPLES / "fib.pal")
    with pytest.raises(RtlSimError, match="needs a loss") as info:
        revasm.rtl_sim(fib, grad=True)
    assert info.value.about_program
    with pytest.raises(RtlSimError, match="power of two") as info:
        revasm.rtl_sim(fib, memory_words=100)
    assert not info.value.about_program
    with pytest.raises(RtlSimError, match="low memory window") as info:
        revasm.rtl_sim(fib, memory_words=32, stack_words=24)
    assert info.value.about_program
    with pytest.raises(RtlSimError, match="directions"):
        revasm.rtl_sim(fib, directions="sideways")
    with pytest.raises(RtlSimError, match="gradient mode runs forward, then backward"):
        revasm.rtl_sim(revasm.load(EXAMPLES / "x1_plus_x1x2.pal"), grad=True,
                       directions="forward")
    program = tmp_path / "nofinish.pal"
    program.write_text(";; pendulum pal file\n        start\n        addi $1 1\n")
    with pytest.raises(RtlSimError, match="needs a FINISH"):
        revasm.rtl_sim(revasm.load(program), directions="reverse")


def test_the_command_names_the_file_or_itself_by_whose_fault_it_is():
    result = CliRunner().invoke(cli, ["rtl", "sim", str(EXAMPLES / "fib.pal"), "--grad"])
    assert result.exit_code == 1
    assert f"{EXAMPLES / 'fib.pal'}: error: gradient mode needs a loss" in result.output
    result = CliRunner().invoke(cli, ["rtl", "sim", str(EXAMPLES / "fib.pal"),
                                      "--memory-words", "100"])
    assert result.exit_code == 1
    assert "revasm rtl sim: error: memory_words must be a power of two" in result.output
