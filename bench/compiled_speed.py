"""Speed of the compiled engine: the J2 gradient per lane, and scalar instructions per second.

    python bench/compiled_speed.py [--lanes 100000] [--vector]

J2 (examples/bessel_j2.pal, W = 64): inputs in, forward to FINISH, grad[J2] = 1, gradient
switch on, backward to START (the host protocol); ns per gradient per lane, with the
vector engine in the same run for comparison (``--vector``).  Scalar: one lane running a
long counted loop (``LOOP`` below), instructions per second.  Compile time is excluded
(the kernels are compiled, or loaded from the cache, before timing).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from revasm.assembler import assemble, assemble_file
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


def j2_gradient(engine_name: str, lanes: int) -> tuple[float, float]:
    image = assemble_file("examples/bessel_j2.pal", width=64)
    machine = engine(engine_name).load(image, lanes)
    fmt_one = 1 << 32
    rng = np.random.default_rng(1)
    x = (rng.uniform(-3, 3, lanes) * fmt_one).astype(np.int64)
    t0 = time.perf_counter()
    machine.set_bank_word("R", 1, x)
    machine.run(1)
    machine.set_bank_word("G", 2, fmt_one)
    machine.gradient = True
    machine.run_back()
    gradient = machine.bank_word("G", 1)
    elapsed = time.perf_counter() - t0
    assert bool(np.all(machine.halted)), "J2 did not finish on every lane"
    return elapsed * 1e9 / lanes, float(gradient[0])


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
    parser.add_argument("--lanes", type=int, default=100_000)
    parser.add_argument("--vector", action="store_true", help="also time the vector engine")
    parser.add_argument("--loop", type=int, default=20_000_000, help="scalar loop iterations")
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine (best kept)")
    args = parser.parse_args()
    names = ["compiled", "vector"] if args.vector else ["compiled"]
    results = {}
    for name in names:
        j2_gradient(name, 64)  # compile or load the kernels
        runs = [j2_gradient(name, args.lanes) for _ in range(args.repeat)]
        results[name] = (min(ns for ns, _ in runs), runs[0][1])
    for name, (ns, g) in results.items():
        same = "" if name == "compiled" else f", same gradient: {g == results['compiled'][1]}"
        print(f"{name:9} J2 gradient {ns:.0f} ns per lane at {args.lanes} lanes (best of "
              f"{args.repeat}{same})")
    rate = scalar_rate(args.loop)
    print(f"compiled: scalar {rate / 1e6:.0f} M instructions/s on a {args.loop}-iteration loop")


if __name__ == "__main__":
    main()
