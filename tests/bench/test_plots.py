"""Benchmark plots: every committed result with numbers plots something, labels readable,
and `revasm bench` names each plot it writes on stderr."""
from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.bench import BENCHMARKS
from revasm.bench.plots import figure_for, panels, plot, unit_of
from revasm.cli.main import cli
from revasm.report.html_report import plots_available

RESULTS = sorted((Path(__file__).resolve().parents[2] / "bench" / "results").glob("*.json"))


def test_units_come_from_the_key_names():
    assert unit_of("instructions_per_second") == unit_of("lanes_per_s") == "rate"
    assert unit_of("first_seconds") == unit_of("wall_ns") == unit_of("load_s") == "time"
    assert unit_of("steps") is None


def test_panels_label_records_by_their_names_and_share_the_common_prefix():
    result = {"seconds": 3.0, "results": [
        {"name": "loop", "engine": "compiled", "width": 32, "instructions_per_second": 5e8,
         "seconds": 0.1},
        {"name": "loop", "engine": "reference", "width": 32, "instructions_per_second": 5e6,
         "seconds": 1.0}]}
    (rate_axis, rates), (time_axis, times) = panels(result)
    assert rate_axis.startswith("results: per second")
    assert rates == [("loop compiled W=32 / instructions_per_second", 5e8),
                     ("loop reference W=32 / instructions_per_second", 5e6)]
    assert ("whole benchmark", 3.0) in times


@pytest.mark.parametrize("path", RESULTS, ids=[p.stem for p in RESULTS])
def test_every_committed_result_plots_with_labels_that_do_not_overlap(path, tmp_path):
    result = json.loads(path.read_text())
    name = result.get("benchmark", path.stem)
    figure = figure_for(name, result)
    if not plots_available():
        assert figure.startswith("skipped: matplotlib is not installed")
        return
    assert not isinstance(figure, str), figure  # e.g. sim_speed: "nothing to plot" before
    from matplotlib import pyplot
    try:
        _labels_apart(name, figure)
    finally:
        pyplot.close(figure)  # (left open, later tests of this worker warn of 20 figures)
    drawn = plot(name, result, tmp_path / "p.png")
    assert drawn == str(tmp_path / "p.png") and (tmp_path / "p.png").stat().st_size > 1000


def _labels_apart(name: str, figure) -> None:
    """No two tick labels of an axis overlap, none is cut off at the left."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axis in figure.axes:
        boxes = [label.get_window_extent(renderer) for label in axis.get_yticklabels()
                 if label.get_text()]
        assert all(not a.overlaps(b) for a, b in combinations(boxes, 2)), name
        assert all(box.x0 >= 0 for box in boxes), name  # no label cut off at the left
        xboxes = [label.get_window_extent(renderer) for label in axis.get_xticklabels()
                  if label.get_text()]
        assert all(not a.overlaps(b) for a, b in combinations(xboxes, 2)), name


def test_bench_names_each_plot_on_stderr(tmp_path, monkeypatch):
    monkeypatch.setitem(BENCHMARKS, "tiny", lambda quick: {
        "status": "measured", "runs": [{"engine": "a", "run_s": 0.5},
                                       {"engine": "b", "run_s": 0.25}]})
    done = CliRunner().invoke(cli, ["bench", "tiny", "--quick", "--results", str(tmp_path),
                                    "--json"])
    assert done.exit_code == 0, done.output
    assert set(json.loads(done.stdout)) == {"tiny"}  # stdout: the JSON alone
    png = tmp_path / "tiny.quick.png"
    if plots_available():
        assert f"tiny: plot {png}" in done.stderr and png.is_file()
    else:
        assert "plot" not in done.stderr
