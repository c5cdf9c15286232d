"""`revasm report --html`: the page has everything the text and JSON reports have.

The pages are read as a browser's DOM (``tests/support/html_dom.py``): the headings in
order and each table by its caption, compared cell by cell with the JSON report.  The
``long`` test renders them in headless Chromium when one is installed.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from html_dom import Page, chromium, read_page, rendered_dom

from revasm.cli.main import cli
from revasm.report import batch_format, html_report
from revasm.report.units import count, si

ROOT = Path(__file__).resolve().parents[2]
BESSEL = str(ROOT / "examples" / "bessel_j2.pal")
FIB = str(ROOT / "examples" / "fib.pal")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def report_pair(tmp_path: Path, *args: str) -> tuple[dict, Path]:
    """The JSON report and the HTML page of one command."""
    done = invoke("report", *args, "--json")
    report = json.loads(done.output)
    page = tmp_path / "report.html"
    written = invoke("report", *args, "--html", str(page))
    assert written.exit_code == done.exit_code, written.output
    return report, page


def grouped(values: dict) -> dict[str, list[str]]:
    """The rows a values table shows: scalars by name, an array's elements on one row."""
    rows: dict[str, list] = {}
    for name, value in values.items():
        base, _, index = name.partition(".")
        rows.setdefault(base if index.replace(".", "").isdigit() else name, []).append(
            (name, value))
    return {(key if members[0][0] == key else f"{key} ({len(members)} values)"):
            [_shown([value for _, value in members])] for key, members in rows.items()}


def _shown(values: list) -> str:
    """A row's text: the first ``ROW_VALUES`` values, then how many more."""
    text = ", ".join(str(value) for value in values[:html_report.ROW_VALUES])
    more = len(values) - html_report.ROW_VALUES
    return text + (f", … and {more:,} more (every value in --json)" if more > 0 else "")


def test_a_long_array_shows_its_first_values_and_how_many_more():
    values = {f"x.{i}": float(i) for i in range(2000)}
    [(label, text)] = html_report.grouped_values(values)
    assert label == "x (2000 values)"
    assert text.startswith("0.0, 1.0, 2.0") and text.count(", ") == html_report.ROW_VALUES
    assert text.endswith("63.0, … and 1,936 more (every value in --json)")


def test_array_elements_share_one_row():
    values = {"n": 3, "x.0": 1.5, "x.1": -2.0, "icf.0.1": 0.0, "icf.1.0": 4.0}
    assert html_report.grouped_values(values) == [
        ("n", "3"), ("x (2 values)", "1.5, -2.0"), ("icf (2 values)", "0.0, 4.0")]


def check_gradient_page(page: Page, report: dict) -> None:
    """Every section of the text report, the gradient first, each equal to the JSON."""
    sections = page.headings[1:]
    assert sections[:4] == ["Gradient", "Inputs and outputs", "Totals", "Op counts"]
    assert sections.index("Adjoint operations") < sections.index("Energy")
    assert f"Bits erased (W = {report['width']})" in sections
    for caption, key in (("Gradient of the loss", "gradient"), ("Inputs", "inputs"),
                         ("Outputs", "outputs")):
        assert page.table(caption).as_dict() == grouped(report[key]), caption
    totals = page.table("Totals of the protocol").as_dict()
    assert totals["steps (instructions)"] == [count(report["totals"]["steps"])]
    assert totals["cycles"] == [count(report["totals"]["cycles"])]
    for model in report["energy"]:
        assert totals[f"energy, {model['name']}"] == [si(model["total_J"], "J")]
    adjoint = page.table("Adjoint operations (gradient pass)")
    assert adjoint.header == ["operation", "forward", "backward (gradient)", "total"]
    for name, cells in adjoint.as_dict().items():
        per_run = [run["adjoint_operations"].get(name, 0) for run in report["runs"]]
        assert cells == [count(v) for v in per_run] + [count(sum(per_run))]
    classes = page.table("Op counts by class").as_dict()
    assert classes["steps (instructions)"][-1] == count(report["totals"]["steps"])
    cmos = next(m for m in report["energy"] if m["name"] == "cmos45")
    assert page.table("cmos45: energy by part").as_dict() == {
        part.replace("_", " "): [si(joules, "J")] for part, joules in cmos["by_part"].items()}
    assert "adiabatic: switching time" in [t.caption for t in page.tables]
    tape = report["erasure"]["scenarios"]["tape"]["parts"]
    assert f"{count(tape['tape_values_popped'])} value bits" in page.text


def test_gradient_report_page_has_every_section_of_the_text_report(tmp_path):
    report, page = report_pair(tmp_path, BESSEL, "--set", "x=1.0", "--grad")
    check_gradient_page(read_page(page.read_text()), report)


def test_a_gradient_of_arrays_has_one_row_per_array(tmp_path):
    report, page = report_pair(tmp_path, f"{ROOT}/examples/nilang/dot.py:dot", "--grad")
    dom = read_page(page.read_text())
    check_gradient_page(dom, report)
    rows = dom.table("Gradient of the loss").as_dict()
    assert list(rows) == ["x (4 values)", "y (4 values)"]
    assert rows["x (4 values)"] == [", ".join(str(report["gradient"][f"x.{i}"])
                                              for i in range(4))]


def test_value_report_page_has_no_gradient_sections(tmp_path):
    report, page = report_pair(tmp_path, FIB)
    dom = read_page(page.read_text())
    assert "Gradient" not in dom.headings and "Adjoint operations" not in dom.headings
    assert dom.table("Outputs").as_dict() == {k: [str(v)] for k, v in report["outputs"].items()}


def test_plots_compare_two_numbers_or_are_left_out(tmp_path):
    _, page = report_pair(tmp_path, FIB, "--model", "cmos45")
    dom = read_page(page.read_text())
    if html_report.plots_available():  # one model: no energy-per-model bar chart of one bar
        assert "Energy per model" not in dom.figure_captions
        assert dom.figure_captions == ["Op counts by class and run", "Bits erased"]
        assert dom.svgs == 2
    else:
        assert dom.svgs == 0 and "revasm[plots]" in dom.text


def batch_pair(tmp_path: Path, rows: str, *args: str) -> tuple[dict, Page]:
    lanes = tmp_path / "lanes.csv"
    lanes.write_text(rows)
    report, page = report_pair(tmp_path, *args, "--inputs", str(lanes))
    return report, read_page(page.read_text())


def check_batch_page(dom: Page, report: dict) -> None:
    lanes = dom.table("One row per lane")
    assert lanes.header[:2] == ["lane", "status"]
    shown = report["per_lane"][:len(lanes.body())]
    for key, prefix in (("inputs", "in"), ("outputs", "out"), ("gradient", "grad")):
        for name in shown[0].get(key, {}):
            assert lanes.column(f"{prefix}: {name}") == [str(lane[key][name]) for lane in shown]
    assert lanes.column("steps") == [count(lane["steps"]) for lane in shown]
    totals = dom.table("Totals").as_dict()
    assert totals["steps"] == [count(report["totals"]["steps"])]


def test_batch_page_has_per_lane_inputs_outputs_and_gradients(tmp_path):
    report, dom = batch_pair(tmp_path, "x\n0.5\n1.0\n1.5\n", BESSEL, "--grad")
    assert report["per_lane"][1]["inputs"] == {"x": 1.0}
    check_batch_page(dom, report)
    assert len(dom.table("One row per lane").body()) == 3
    if html_report.plots_available():  # j2 and its gradient against x; every lane 570 steps
        assert dom.figure_captions == ["output j2 against input x", "gradient x against input x"]
    else:
        assert dom.svgs == 0


def test_batch_page_lists_the_first_lanes_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(batch_format, "HTML_LANES", 2)
    report, dom = batch_pair(tmp_path, "n\n3\n4\n5\n", FIB)
    assert [row[0] for row in dom.table("One row per lane").body()] == ["0", "1"]
    assert "The first 2 of 3 lanes" in dom.text
    check_batch_page(dom, report)
    if html_report.plots_available():  # n varies: fib against n, and steps differ
        assert dom.figure_captions == ["output fib against input n", "Steps per lane"]


def test_batch_page_without_anything_to_plot_says_so(tmp_path):
    _, dom = batch_pair(tmp_path, "n\n5\n5\n", FIB)
    assert dom.svgs == 0
    if html_report.plots_available():
        assert "No plot: no input varies" in dom.text


@pytest.mark.long
def test_pages_as_headless_chromium_renders_them(tmp_path):
    """What a browser shows: the DOM headless Chromium builds from each page (the pages as
    written where no Chromium is installed), gmm's --by-line report included."""
    def dom(path: Path) -> Page:
        return read_page(rendered_dom(path) if chromium() else path.read_text())

    report, page = report_pair(tmp_path, BESSEL, "--set", "x=1.0", "--grad")
    check_gradient_page(dom(page), report)
    lanes = tmp_path / "lanes.csv"
    lanes.write_text("x\n0.5\n1.0\n")
    batch, batch_page = report_pair(tmp_path, BESSEL, "--grad", "--inputs", str(lanes))
    check_batch_page(dom(batch_page), batch)
    gmm = str(ROOT / "examples" / "nilang" / "gmm.py")
    report, page = report_pair(tmp_path, gmm, "--grad", "--by-line")
    rendered = dom(page)
    check_gradient_page(rendered, report)
    assert rendered.headings[-1] == "By source line"
    listing = rendered.table(f"By source line: {report['by_line']['files'][0]}")
    source = (ROOT / "examples" / "nilang" / "gmm.py").read_text().splitlines()
    assert len(listing.body()) == len(source)
    steps = {row["line"]: row["steps"] for row in report["by_line"]["lines"] if row["line"]}
    assert {i + 1: cells[2] for i, cells in enumerate(listing.body()) if cells[2]} == {
        line: count(n) for line, n in steps.items()}
