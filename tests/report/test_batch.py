"""`revasm report --inputs`: a batch of lanes, aggregates and per-lane distribution."""
from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest
from click.testing import CliRunner

from revasm.assembler import assemble_file
from revasm.cli.main import cli
from revasm.report import bundled_models
from revasm.report.batch import build_batch_report, distribution
from revasm.report.schema import BATCH_SCHEMA, validate_batch_report
from revasm.sim.host import load_inputs

ROOT = Path(__file__).resolve().parents[2]
FIB = str(ROOT / "examples" / "fib.pal")
MODELS = bundled_models()


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def single(n: int) -> dict:
    return json.loads(invoke("report", FIB, "--set", f"n={n}", "--json").output)


def test_distribution_statistics():
    stats = distribution([1, 2, 3, 4, 100])
    assert (stats["min"], stats["median"], stats["max"]) == (1, 3, 100)
    assert stats["mean"] == pytest.approx(22)
    assert stats["p05"] == pytest.approx(1.2) and stats["p95"] == pytest.approx(80.8)


def test_batch_from_csv_sums_and_spreads_the_single_reports(tmp_path):
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("n\n3\n10\n18\n")
    result = invoke("report", FIB, "--inputs", str(lanes), "--json")
    assert result.exit_code == 0, result.output
    batch = json.loads(result.output)
    singles = [single(n) for n in (3, 10, 18)]
    assert validate_batch_report(batch) == []
    assert batch["lanes"] == batch["finished"] == 3 and batch["faults"] == {}
    assert [lane["steps"] for lane in batch["per_lane"]] == [s["totals"]["steps"] for s in singles]
    assert [lane["outputs"] for lane in batch["per_lane"]] == [{"fib": 2}, {"fib": 55},
                                                               {"fib": 2584}]
    assert batch["totals"]["steps"] == sum(s["totals"]["steps"] for s in singles)
    for model in ("cmos45", "adiabatic", "landauer"):
        joules = [next(m["total_J"] for m in s["energy"] if m["name"] == model)
                  for s in singles]
        assert batch["energy_J"][model] == pytest.approx(sum(joules))
        assert batch["distribution"][f"energy_J.{model}"]["max"] == pytest.approx(max(joules))
    irreversible = [s["erasure"]["scenarios"]["irreversible"]["bits_erased"] for s in singles]
    assert batch["bits_erased"]["irreversible"] == sum(irreversible)
    assert batch["distribution"]["bits_erased.irreversible"]["min"] == min(irreversible)
    if "vector_forward_steps_agree" in batch["engines"]:  # the batched simulator is there
        assert batch["engines"]["vector_forward_steps_agree"] is True


def test_batch_from_npz_equals_batch_from_csv(tmp_path):
    numpy.savez(tmp_path / "lanes.npz", n=numpy.array([4, 7]))
    (tmp_path / "lanes.csv").write_text("n\n4\n7\n")
    from_npz = json.loads(invoke("report", FIB, "--inputs", str(tmp_path / "lanes.npz"),
                                 "--json").output)
    from_csv = json.loads(invoke("report", FIB, "--inputs", str(tmp_path / "lanes.csv"),
                                 "--json").output)
    assert from_npz["per_lane"] == from_csv["per_lane"]


def test_a_faulting_lane_is_counted_and_the_exit_code_is_1(tmp_path):
    program = tmp_path / "div.pal"
    program.write_text(";; pendulum pal file\n.input x $1 fixed = 1.0\n.input y $4 fixed = 1.0\n"
                       ".output q $2\nstart\nadddiv $2 $1 $4\nfinish\n")
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("y\n2.0\n0.0\n0.5\n")
    result = invoke("report", str(program), "--inputs", str(lanes), "--json")
    assert result.exit_code == 1
    batch = json.loads(result.output)
    assert validate_batch_report(batch) == []
    assert batch["finished"] == 2 and batch["faults"] == {"divide-by-zero": 1}
    assert [lane["status"] for lane in batch["per_lane"]] == ["finished", "fault", "finished"]
    assert batch["per_lane"][2]["outputs"] == {"q": 2.0}


def test_terminal_and_html_batch_reports(tmp_path):
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("n\n1\n2\n")
    text = invoke("report", FIB, "--inputs", str(lanes)).output
    assert "over 2 lanes" in text and "Per lane" in text and "median" in text
    out = tmp_path / "b.html"
    assert invoke("report", FIB, "--inputs", str(lanes), "--html", str(out)).exit_code == 0
    assert "Per-lane distribution" in out.read_text()


@pytest.mark.parametrize("content, message", [  # the messages of batching/inputs.py
    ("n\n", "no rows"),
    ("n,m\n1\n", "no value for column 'm'"),
    ("zz\n1\n", "neither a register"),
    ("n\nabc\n", "column 'n'"),
])
def test_bad_inputs_files_are_named_with_the_problem(tmp_path, content, message):
    lanes = tmp_path / "lanes.csv"
    lanes.write_text(content)
    result = invoke("report", FIB, "--inputs", str(lanes))
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output


def test_build_batch_report_api_takes_one_loader_per_lane():
    image = assemble_file(FIB)
    loaders = [lambda m, n=n: load_inputs(m, image, {"n": n}) for n in (5, 6)]
    report = build_batch_report(image, loaders,
                                models=[MODELS["cmos45"]], all_models=MODELS)
    assert [lane["outputs"]["fib"] for lane in report["per_lane"]] == [5, 8]
    assert report["distribution"]["steps"]["max"] - report["distribution"]["steps"]["min"] == 14


def test_the_batch_schema_rejects_a_broken_report_and_is_documented(tmp_path):
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("n\n1\n")
    batch = json.loads(invoke("report", FIB, "--inputs", str(lanes), "--json").output)
    del batch["per_lane"][0]["steps"]
    batch["lanes"] = -1
    problems = validate_batch_report(batch)
    assert "$.per_lane[0]: missing 'steps'" in problems and "$.lanes: -1 is below 0" in problems
    docs = (ROOT / "docs" / "energy.md").read_text()
    fields = set(BATCH_SCHEMA["properties"]) | set(
        BATCH_SCHEMA["properties"]["per_lane"]["items"]["properties"])
    missing = sorted(f for f in fields if f"`{f}`" not in docs)
    assert not missing, f"docs/energy.md does not describe: {missing}"
