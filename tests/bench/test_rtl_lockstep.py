"""bench/rtl_lockstep.py: random programs three ways on the RTL; what it records and its exit
status (a small campaign on the Verilator path, whose W = 32 build
tests/rtl/verification/test_verilator.py shares through the build cache)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from revasm.bench import rtl_lockstep
from revasm.rtl.verification.verilator import missing_tools

ARGS = ["--programs", "4", "--widths", "32", "--paths", "verilator"]


@pytest.fixture(autouse=True)
def _verilator() -> None:
    if missing_tools():
        pytest.skip("the Verilator path needs verilator")


def test_a_campaign_records_every_run_and_no_problem(tmp_path, capsys):
    assert rtl_lockstep.main([*ARGS, "--results", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "rtl_lockstep.json").read_text())
    (row,) = result["rows"]
    assert (row["path"], row["width"], row["programs"], row["jobs"]) == ("verilator", 32, 4, 12)
    assert result["problems"] == row["problems"] == 0
    assert row["runs"] == sum(row["outcomes"].values()) >= 12
    kinds = {key.split()[0] for key in row["outcomes"]}
    assert kinds == {"value", "gradient", "gradient-both"}
    assert row["cycles"] > row["steps"] > 0
    assert "0 problems" in capsys.readouterr().out


def test_a_divergence_is_recorded_and_fails_the_campaign(tmp_path, monkeypatch):
    """START counted a cycle long by the reference: each job's first run diverges at its
    first step."""
    import rtl_programs
    rtl_programs.miscount(monkeypatch, lambda entry, backward, gradient:
                          entry.mnemonic == "START")
    assert rtl_lockstep.main([*ARGS, "--results", str(tmp_path)]) == 1
    result = json.loads((tmp_path / "rtl_lockstep.json").read_text())
    assert result["problems"] >= 12
    assert "the reference's cycle count (isa/timing) puts the commit at" in \
        result["rows"][0]["first_problems"][0]
