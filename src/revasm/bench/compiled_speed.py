"""Speed of the compiled engine: the J2 gradient per lane, where its time goes, and scalar
instructions per second.

    python bench/compiled_speed.py [--lanes 10000 100000 1000000] [--vector]

J2 (examples/bessel_j2.pal, W = 64): inputs in, forward to FINISH, grad[J2] = 1, gradient
switch on, backward to START (the host protocol), on a fresh machine each time (making it
is not timed; touching its new memory is).  Per lane, best of ``--repeat``:

* wall-clock and CPU time (every thread of the process).  On a machine shared with other
  jobs the wall clock also measures them; the CPU time is this engine's own work;
* the kernels' wall time, forward (value mode) and backward (gradient mode), and the
  host's (the run loop's bookkeeping, ``set_bank_word``/``bank_word``);
* numpy's float64 forward of the same series over the same lanes (``bench/bessel.py``),
  timed in the same run, and the ratios (the issue's target: the gradient within 8x of
  that forward at 10^6 lanes);
* with ``--vector``, the vector engine on the same lanes (same gradient words?).

Scalar: one lane running a long counted loop (``LOOP`` below), instructions per second.
Compile time is excluded (the kernels are compiled, or loaded from the cache, first).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from revasm.assembler import assemble, assemble_file
from revasm.bench.bessel import series
from revasm.sim.engines import engine

LOOP = """;; pendulum pal file
        start
        li    $5 {n}
top:    bne   $3 $0 bottom
        add   $2 $1
        xor   $1 $2
        xor   $2 $1
        xor   $1 $2
        addi  $4 3
        sub   $4 $1
        addmul $6 $4 $2
        submul $7 $6 $3
        addi  $3 1
bottom: bne   $3 $5 top
        finish
"""
FMT_ONE = 1 << 32  # 1.0 at W = 64


@dataclass
class Timing:
    """One protocol's times per lane, in ns (kernels: wall time inside them)."""

    wall: float
    cpu: float
    forward: float = 0.0
    backward: float = 0.0
    gradient: int = 0

    @property
    def host(self) -> float:
        return self.wall - self.forward - self.backward


def inputs(lanes: int) -> np.ndarray:
    """x in [-3, 3): the lanes' inputs (the series' range)."""
    return np.random.default_rng(1).uniform(-3, 3, lanes)


def j2_gradient(engine_name: str, lanes: int) -> Timing:
    """The gradient protocol on a fresh machine, timed (ns per lane)."""
    image = assemble_file("examples/bessel_j2.pal", width=64)
    machine = engine(engine_name).load(image, lanes)
    x = (inputs(lanes) * FMT_ONE).astype(np.int64)
    kernel = getattr(machine, "kernel_seconds", None)  # the compiled engine's clock
    marks = []

    def mark() -> None:
        marks.append(getattr(machine, "kernel_seconds", 0.0))

    wall, cpu = time.perf_counter(), time.process_time()
    machine.set_bank_word("R", 1, x)
    mark()
    machine.run(1)
    mark()
    machine.set_bank_word("G", 2, FMT_ONE)
    machine.gradient = True
    mark()
    machine.run_back()
    mark()
    gradient = machine.bank_word("G", 1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert bool(np.all(machine.halted)), "J2 did not finish on every lane"
    per = 1e9 / lanes
    timing = Timing(wall * per, cpu * per, gradient=int(gradient[0]))
    if kernel is not None:
        timing.forward = (marks[1] - marks[0]) * per
        timing.backward = (marks[3] - marks[2]) * per
    return timing


def numpy_forward(lanes: int, repeat: int) -> Timing:
    """numpy's float64 forward of the series over the lanes (best wall, best CPU)."""
    x = inputs(lanes)
    best = Timing(float("inf"), float("inf"))
    for _ in range(max(repeat, 5)):
        wall, cpu = time.perf_counter(), time.process_time()
        series(x)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best = Timing(min(best.wall, wall * 1e9 / lanes), min(best.cpu, cpu * 1e9 / lanes))
    return best


def best_of(engine_name: str, lanes: int, repeat: int) -> Timing:
    """The fastest of ``repeat`` protocols (each field its own best)."""
    runs = [j2_gradient(engine_name, lanes) for _ in range(repeat)]
    return Timing(min(r.wall for r in runs), min(r.cpu for r in runs),
                  min(r.forward for r in runs), min(r.backward for r in runs),
                  runs[0].gradient)


def scalar_rate(n: int) -> float:
    image = assemble(LOOP.format(n=n), width=64)
    engine("compiled").load(image, 1).run(1)  # compile (or load) first
    machine = engine("compiled").load(image, 1)
    t0 = time.perf_counter()
    machine.run(1)
    elapsed = time.perf_counter() - t0
    return int(machine.steps[0]) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--vector", action="store_true", help="also time the vector engine")
    parser.add_argument("--loop", type=int, default=20_000_000, help="scalar loop iterations")
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine (best kept)")
    args = parser.parse_args()
    names = ["compiled", "vector"] if args.vector else ["compiled"]
    for name in names:
        j2_gradient(name, 64)  # compile or load the kernels, start the threads
    for lanes in args.lanes:
        forward = numpy_forward(lanes, args.repeat)
        print(f"{lanes} lanes, per lane (best of {args.repeat}); numpy float64 forward: "
              f"{forward.wall:.0f} ns wall, {forward.cpu:.0f} ns CPU")
        compiled = None
        for name in names:
            t = best_of(name, lanes, args.repeat)
            compiled = compiled or t
            line = (f"  {name:9} J2 gradient {t.wall:6.0f} ns wall ({t.wall / forward.wall:4.1f}x "
                    f"numpy), {t.cpu:6.0f} ns CPU ({t.cpu / forward.cpu:4.1f}x)")
            if name == "compiled":
                line += (f"; kernels: forward {t.forward:.0f}, backward {t.backward:.0f}, "
                         f"host {t.host:.0f} ns wall")
            else:
                line += f"; same gradient: {t.gradient == compiled.gradient}"
            print(line, flush=True)
    rate = scalar_rate(args.loop)
    print(f"compiled: scalar {rate / 1e6:.0f} M instructions/s on a {args.loop}-iteration loop")


if __name__ == "__main__":
    main()
