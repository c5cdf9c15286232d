"""`revasm report --by-line` and ``revasm.report_program``: each source line's counts.

The per-line figures split the whole program's: steps, cycles, per-operation energy
and the bits each scenario erases for the program's work sum over the lines to the
report's totals (the words copied out belong to no line), forward and backward apart.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.assembler import assemble_file
from revasm.cli.main import cli
from revasm.report import build_report, bundled_models, validate_report
from revasm.report.by_line import line_totals, pal_line_map
from revasm.reports import program_line_map, report_program
from revasm.sim.host import load_inputs

ROOT = Path(__file__).resolve().parents[2]
NILANG = ROOT / "examples" / "nilang"
JANUS = ROOT / "examples" / "janus"

DOT_INPUTS = {"x": [0.5, -1.0, 2.0, 0.25], "y": [1.5, 2.0, -0.5, 4.0]}


def _assert_lines_sum_to_totals(report: dict) -> None:
    """Every additive figure of the lines equals the whole program's."""
    assert validate_report(report) == []
    sums = line_totals(report["by_line"])
    runs = {run["direction"]: run for run in report["runs"]}
    assert sums["steps"] == report["totals"]["steps"]
    assert sums["cycles"] == report["totals"]["cycles"]
    assert sums["forward_steps"] == runs["forward"]["steps"]
    assert sums["backward_steps"] == runs.get("backward", {"steps": 0})["steps"]
    for model in report["energy"]:
        if model["kind"] == "per_operation":
            assert sums["energy_J"][model["name"]] == pytest.approx(model["total_J"], rel=1e-12)
    scenarios = report["erasure"]["scenarios"]
    copied = {"results_copied_out", "gradients_copied_out"}
    for scenario, line_parts in (("irreversible", {"overwritten_words"}),
                                 ("tape", {"tape_values_popped", "tape_control_bits",
                                           "adjoint_updates"}),
                                 ("reversible", {"emitted"})):
        parts = scenarios[scenario]["parts"]
        assert sums["bits_erased"][scenario] == sum(parts[p] for p in line_parts)
        assert sums["bits_erased"][scenario] + sum(parts[p] for p in copied
                                                   if p in parts) + \
            parts.get("fault_reset", 0) == scenarios[scenario]["bits_erased"]


def test_the_lines_of_a_compiled_gradient_sum_to_the_whole_program():
    # at -O1 the loop stays a loop (at -O2 it is unrolled: the for line has no code)
    report = report_program(f"{NILANG}/dot.py:dot", DOT_INPUTS, grad=True, level=1)
    assert report["status"] == "finished" and report["restored"] is True
    _assert_lines_sum_to_totals(report)
    section = report["by_line"]
    assert section["language"] == "python"
    assert section["files"] == [str(NILANG / "dot.py")]
    lines = {row["line"]: row for row in section["lines"]}
    body = lines[14]
    assert body["text"].strip() == "out += x[i] * y[i]"
    # the multiply-add runs once per element in each direction, and only on that line
    assert body["by_instruction"]["ADDMUL"] == 8
    assert all("ADDMUL" not in row["by_instruction"] for n, row in lines.items() if n != 14)
    assert body["forward"]["steps"] == body["backward"]["steps"] > 0
    # the loop's control is the for line's
    assert set(lines[13]["by_instruction"]) <= {"ADDI", "BNE", "BEQ", "ADD", "SUB"}


def test_the_lines_of_a_janus_program_and_of_a_pal_file_sum_to_the_whole():
    janus = report_program(JANUS / "factor.ja")
    _assert_lines_sum_to_totals(janus)
    assert janus["by_line"]["language"] == "janus"
    source = (JANUS / "factor.ja").read_text().splitlines()
    for row in janus["by_line"]["lines"]:
        assert row["text"] == source[row["line"] - 1].rstrip()
    image = assemble_file(ROOT / "examples" / "fib.pal")
    models = bundled_models()
    pal = build_report(image, prepare=lambda machine: load_inputs(machine, image),
                       models=list(models.values()), all_models=models,
                       line_map=pal_line_map(image))
    _assert_lines_sum_to_totals(pal)
    assert pal["by_line"]["language"] == "pal"


def test_emitted_words_are_erased_by_the_line_that_emits_them():
    image = assemble_file(ROOT / "examples" / "live_output.pal")
    models = bundled_models()
    report = build_report(image, prepare=lambda machine: load_inputs(machine, image),
                          models=list(models.values()), all_models=models,
                          line_map=pal_line_map(image))
    _assert_lines_sum_to_totals(report)
    emitting = [row for row in report["by_line"]["lines"] if row["bits_erased"]["reversible"]]
    assert emitting and all("EMIT" in row["by_instruction"] for row in emitting)
    assert report["erasure"]["scenarios"]["reversible"]["parts"]["emitted"] > 0


def test_a_program_line_map_sends_every_instruction_to_a_line_of_its_function():
    from revasm.compiler import compile_file
    program = compile_file(NILANG / "dot.py", "dot", level=1)
    line_map = program_line_map(program)
    code = [pc for pc in range(len(program.image)) if program.image.is_code[pc]]
    assert set(line_map.lines) == set(code)  # every instruction has a Python line
    assert {line for _, line in line_map.lines.values()} == {12, 13, 14}
    # -O2 unrolls the loop: its control is gone, the body's four copies keep line 14
    unrolled = program_line_map(compile_file(NILANG / "dot.py", "dot", level=2))
    assert {line for _, line in unrolled.lines.values()} == {12, 14}


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_cli_by_line_json_terminal_and_html(tmp_path: Path):
    target = f"{NILANG}/dot.py:dot"
    sets = [a for name, values in DOT_INPUTS.items() for i, v in enumerate(values)
            for a in ("--set", f"{name}.{i}={v}")]
    result = _invoke("report", target, "--grad", "--by-line", *sets, "--width", "64",
                     "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    _assert_lines_sum_to_totals(report)
    assert report["width"] == 64  # Python compiles at the width asked for
    assert report["gradient"]["x.0"] == pytest.approx(DOT_INPUTS["y"][0])
    text = _invoke("report", target, "--grad", "--by-line", *sets)
    assert text.exit_code == 0, text.output
    assert "By source line" in text.output and "out += x[i] * y[i]" in text.output
    page = tmp_path / "dot.html"
    html = _invoke("report", target, "--grad", "--by-line", *sets, "--html", str(page))
    assert html.exit_code == 0, html.output
    content = page.read_text()
    assert "By source line" in content and 'class="bar"' in content
    # every line of the source is listed, the hot one with its heat
    assert content.count("<pre>") == len((NILANG / "dot.py").read_text().splitlines())
    assert "out += x[i] * y[i]" in content


def test_cli_by_line_of_a_compiled_pal_file_uses_its_source_map(tmp_path: Path):
    pal = tmp_path / "dot.pal"
    done = _invoke("compile", f"{NILANG}/dot.py:dot", "-O1", "-o", str(pal))
    assert done.exit_code == 0, done.output
    mapped = json.loads(_invoke("report", str(pal), "--by-line", "--json").output)
    assert mapped["by_line"]["language"] == "python"
    assert {row["line"] for row in mapped["by_line"]["lines"]} == {12, 13, 14}
    (tmp_path / "dot.pal.map.json").unlink()
    plain = json.loads(_invoke("report", str(pal), "--by-line", "--json").output)
    assert plain["by_line"]["language"] == "pal"
    assert len(plain["by_line"]["lines"]) > 3
    assert line_totals(plain["by_line"])["steps"] == line_totals(mapped["by_line"])["steps"]


def test_cli_by_line_refuses_a_batch_and_reports_compile_errors(tmp_path: Path):
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("n\n3\n4\n")
    refused = _invoke("report", str(ROOT / "examples" / "fib.pal"), "--by-line",
                      "--inputs", str(lanes))
    assert refused.exit_code == 2 and "--by-line" in refused.output
    bad = tmp_path / "bad.py"
    bad.write_text("from revasm.compiler import reversible\n@reversible\ndef f(x: Int):\n"
                   "    x += y\n")
    failed = _invoke("report", f"{bad}:f", "--by-line")
    assert failed.exit_code == 1 and "bad.py:" in failed.output


def test_a_run_that_faults_is_split_by_line_up_to_the_fault(tmp_path: Path):
    source = tmp_path / "div.pal"
    source.write_text(";; pendulum pal file\n.width 32\n.input x $1 fixed = 1.0\n"
                      ".input y $2 fixed = 0.0\n"
                      "        start\n        addi  $3 5\n        adddiv $4 $1 $2\n"
                      "        finish\n")
    image = assemble_file(source)
    models = bundled_models()
    report = build_report(image, prepare=lambda machine: load_inputs(machine, image),
                          models=list(models.values()), all_models=models,
                          line_map=pal_line_map(image))
    assert report["status"] == "fault" and validate_report(report) == []
    sums = line_totals(report["by_line"])
    assert sums["steps"] == report["totals"]["steps"] == report["runs"][0]["steps"]
    assert {row["line"] for row in report["by_line"]["lines"]} <= {5, 6, 7}
