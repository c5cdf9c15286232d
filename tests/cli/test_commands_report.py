"""`revasm report`: terminal, JSON and HTML output, model selection, errors and exit codes."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli
from revasm.report import (
    REPORT_SCHEMA,
    bundled_models,
    gradient_mode_available,
    html_report,
    validate_report,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.pal"))


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def report_json(*args: str) -> tuple[dict, int]:
    result = invoke("report", *args, "--json")
    return json.loads(result.output), result.exit_code


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_report_json_is_one_object_whose_steps_match_revasm_run(path: Path):
    result = invoke("report", str(path), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)  # exactly one object, nothing else on stdout
    assert validate_report(report) == []
    run = json.loads(invoke("run", str(path), "--json").output)
    assert report["runs"][0]["steps"] == run["steps"]
    assert report["runs"][0]["cycles"] == run["cycles"]
    assert report["outputs"].items() <= run["named"].items()


def test_terminal_report_shows_every_table():
    result = invoke("report", str(ROOT / "examples" / "fib.pal"))
    assert result.exit_code == 0
    for heading in ("Op counts by class", "Op counts by instruction", "Traffic", "Occupancy",
                    "Energy", "Bits erased", "cmos45", "adiabatic", "landauer",
                    "restored the initial state"):
        assert heading in result.output


def test_set_changes_the_counts():
    small, _ = report_json(str(ROOT / "examples" / "fib.pal"), "--set", "n=3")
    large, _ = report_json(str(ROOT / "examples" / "fib.pal"), "--set", "n=10")
    assert small["outputs"] == {"fib": 2} and large["outputs"] == {"fib": 55}
    # An iteration is 7 instructions: the entry BNE, ADD, 3 XOR, ADDI, the back-edge BNE.
    assert large["runs"][0]["steps"] - small["runs"][0]["steps"] == 7 * 7
    assert large["runs"][0]["by_instruction"]["XOR"] == 3 * 10


def test_model_option_selects_models_and_model_file_adds_one(tmp_path):
    report, code = report_json(str(ROOT / "examples" / "fib.pal"), "--model", "landauer")
    assert code == 0 and [m["name"] for m in report["energy"]] == ["landauer"]
    data = json.loads(json.dumps(bundled_models()["cmos45"].data))
    data["name"] = "double"
    for entry in data["operations"].values():
        entry["pJ"] *= 2
        entry["pJ_per_cycle"] = entry.get("pJ_per_cycle", 0) * 2
    for key in ("register_access", "memory_access", "instruction_fetch"):
        data[key]["pJ"] *= 2
    path = tmp_path / "double.json"
    path.write_text(json.dumps(data))
    report, code = report_json(str(ROOT / "examples" / "fib.pal"), "--model", "cmos45",
                               "--model-file", str(path))
    assert code == 0
    energies = {m["name"]: m["total_J"] for m in report["energy"]}
    assert energies["double"] == pytest.approx(2 * energies["cmos45"])


def test_html_report_has_tables_and_plots(tmp_path):
    out = tmp_path / "r.html"
    result = invoke("report", str(ROOT / "examples" / "fixed_point.pal"), "--html", str(out))
    assert result.exit_code == 0 and str(out) in result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page and "Bits erased" in page
    if html_report.plots_available():
        assert page.count("<svg") >= 4
    else:
        assert "revasm[plots]" in page


def test_html_report_without_matplotlib_says_how_to_get_plots(tmp_path, monkeypatch):
    monkeypatch.setattr(html_report, "plots_available", lambda: False)
    out = tmp_path / "r.html"
    assert invoke("report", str(ROOT / "examples" / "fib.pal"), "--html", str(out)).exit_code == 0
    page = out.read_text()
    assert "<svg" not in page and "pip install 'revasm[plots]'" in page


def test_schema_option_prints_the_schema():
    result = invoke("report", "--schema")
    assert result.exit_code == 0 and json.loads(result.output) == REPORT_SCHEMA


def test_a_fault_prints_the_report_and_exits_1(tmp_path):
    program = tmp_path / "fault.pal"
    program.write_text(";; pendulum pal file\n.input x $1 fixed = 1.0\n"
                       "start\naddi $3 5\nadddiv $2 $1 $4\nfinish\n")
    report, code = report_json(str(program))
    assert code == 1
    assert report["status"] == "fault" and report["fault"]["kind"] == "divide-by-zero"
    assert report["fault"]["line"] == 5


@pytest.mark.parametrize("args, code, message", [
    (["examples/fib.pal", "--json", "--html", "x.html"], 2, "exclusive"),
    (["examples/fib.pal", "--model", "nope"], 2, "'nope' is not a model"),
    ([], 2, "missing FILE"),
    (["no_such_file.pal"], 1, "no such file"),
    (["examples/fib.pal", "--set", "zz=1"], 2, "neither a register"),
    (["examples/fib.pal", "--loss", "fib"], 2, "need --grad"),
])
def test_bad_input_gives_a_message_and_exit_code_without_traceback(args, code, message,
                                                                    monkeypatch):
    monkeypatch.chdir(ROOT)
    result = invoke("report", *args)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_bad_model_file_is_named_with_its_field(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"name": "bad", "kind": "landauer", "temperature_K": "warm"}')
    result = invoke("report", str(ROOT / "examples" / "fib.pal"), "--model-file", str(path))
    assert result.exit_code == 1
    assert "'temperature_K' must be a number" in result.output and str(path) in result.output


def test_grad_reports_the_gradient_or_says_gradient_mode_is_missing(tmp_path):
    program = tmp_path / "sine.pal"
    program.write_text(";; pendulum pal file\n.input x $1 fixed = 0.5\n.loss y $2\n"
                       "start\naddsin $3 $1\naddmul $2 $3 $1\nsubsin $3 $1\nfinish\n")
    result = invoke("report", str(program), "--set", "x=1.0", "--grad", "--json")
    if not gradient_mode_available():
        assert result.exit_code == 1 and "gradient mode is not available" in result.output
        return
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["mode"] == "gradient" and validate_report(report) == []
    # d/dx (x sin x) = sin x + x cos x at x = 1.
    assert report["gradient"]["x"] == pytest.approx(math.sin(1) + math.cos(1), abs=1e-3)
    assert report["runs"][1]["mode"] == "gradient"
    assert report["erasure"]["gradient_words"] == 1


def test_grad_without_a_declared_loss_says_which_flag_to_use():
    result = invoke("report", str(ROOT / "examples" / "fib.pal"), "--grad")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert ("--loss" in result.output if gradient_mode_available()
            else "gradient mode is not available" in result.output)


LOSS_EXAMPLES = [p for p in EXAMPLES if any(line.lstrip().lower().startswith(".loss")
                                            for line in p.read_text().splitlines())]


@pytest.mark.parametrize("path", LOSS_EXAMPLES, ids=lambda p: p.stem)
def test_grad_report_of_every_example_with_a_loss_agrees_with_revasm_grad(path: Path):
    result = invoke("report", str(path), "--grad", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert validate_report(report) == []
    grad = json.loads(invoke("grad", str(path), "--json").output)
    assert report["width"] == grad["width"]
    assert report["gradient"] == pytest.approx(grad["gradient"])
    assert report["restored"] is True
