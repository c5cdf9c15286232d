"""Speed of the tile engine (``revasm bench tile_speed [--quick]``; sim/tile/README.md).

In one run, on this machine, with numpy's float64 forward of the same series timed beside:

* **J2 gradient** (examples/bessel_j2.pal at W = 64: x in, forward, G[j2] = 1, gradient
  switch on, backward) per lane at 10^4..10^6 lanes (--quick: 10^4, 10^5) on the tile
  engine and on the compiled engine (its program kernel), wall and CPU time per lane, the
  gradient words of both compared lane by lane;
* **tile sizes**: the J2 gradient at 10^5 lanes with tiles of 16..256 lanes;
* **NiLang workloads** (examples/nilang/*.py compiled for gradients at W = 64, every lane
  the workload's inputs): lane-instructions per second of the gradient protocol on the tile
  engine (10^5 lanes, GMM 2 560) and on the compiled engine's interpreter kernel (10^4; both:
  one kernel for every program; a program kernel of these takes minutes to compile), and
  JAX's ``jit(vmap(grad))`` per gradient beside them;
* **divergence**: lanes that loop their own number of times (1..64), tiles split by masks
  against lanes regrouped by PC: time, fetches, lanes per fetch;
* **first result of a never-seen program**: a fresh process runs a 10^5-lane gradient batch
  of a new 30-step program (W = 64) on the tile engine (its interpreter built once, in the
  kernel cache) and on the compiled engine in a fresh kernel cache (it compiles the
  program's kernel first): wall time to the result.

Times are best of ``repeat``; the machine is shared, so the CPU times (every thread of
the process) are the fair figures and the ratios are taken in the same run.
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .common import EXAMPLES, run_child

#: Lanes of a warm-up run: more tiles than run on one thread (``sim/tile/lanes.py``:
#: 4 tiles of 256 lanes), so that both paths' kernels are loaded before anything is timed
#: (a 64-lane warm-up loaded only the serial one; the parallel one's first load, ~0.17 s,
#: then counted in the first measured run).
WARM_LANES = 1024

FMT_ONE = 1 << 32  # 1.0 at W = 64
TERMS = 16


def _series(x: np.ndarray) -> np.ndarray:
    """J2(x) by its series in float64, as examples/bessel_j2.pal computes it."""
    h2 = (x / 2) ** 2
    term = h2 / 2
    total = term.copy()
    for k in range(1, TERMS + 1):
        term = term * h2 / (-k * (k + 2))
        total += term
    return total


def _inputs(lanes: int) -> np.ndarray:
    return np.random.default_rng(1).uniform(-3, 3, lanes)


def _numpy_forward(lanes: int, repeat: int) -> dict:
    x = _inputs(lanes)
    wall = cpu = float("inf")
    for _ in range(max(repeat, 5)):
        w, c = time.perf_counter(), time.process_time()
        _series(x)
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, time.process_time() - c)
    return {"wall_ns": wall * 1e9 / lanes, "cpu_ns": cpu * 1e9 / lanes}


def _j2_protocol(engine_name: str, lanes: int, tile: int | None = None,
                 fuse: str | None = None) -> tuple[dict, Any]:
    """One J2 gradient protocol on a fresh machine: times per lane, and the gradient words
    (``fuse``: the tile engine's policy for J2's own tile kernel, ``TileLanes.fuse``)."""
    from revasm.assembler import assemble_file
    from revasm.sim.engines import engine

    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    if tile is None and fuse is None:
        machine = engine(engine_name).load(image, lanes)
    else:
        from revasm.sim.tile.lanes import TileLanes
        machine = TileLanes(image, lanes, tile=tile)
        machine.fuse = fuse or machine.fuse
    x = (_inputs(lanes) * FMT_ONE).astype(np.int64)
    wall, cpu = time.perf_counter(), time.process_time()
    machine.set_bank_word("R", 1, x)
    machine.run(1)
    forward = time.perf_counter() - wall
    machine.set_bank_word("G", 2, FMT_ONE)
    machine.gradient = True
    machine.run_back()
    gradient = machine.bank_word("G", 1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not bool(np.all(machine.halted)):
        raise RuntimeError(f"J2 did not finish on every lane of the {engine_name} engine")
    per = 1e9 / lanes
    return {"wall_ns": wall * per, "cpu_ns": cpu * per, "forward_wall_ns": forward * per}, \
        gradient


def _best(engine_name: str, lanes: int, repeat: int, tile: int | None = None,
          fuse: str | None = None) -> tuple[dict, Any]:
    runs = [_j2_protocol(engine_name, lanes, tile, fuse) for _ in range(repeat)]
    best = {key: min(run[0][key] for run in runs) for key in runs[0][0]}
    return best, runs[0][1]


def j2_gradients(lanes: tuple[int, ...], repeat: int) -> list[dict]:
    """The J2 gradient per lane on the tile and compiled engines beside numpy's forward."""
    _j2_protocol("tile", 1000, fuse="build")  # the interpreter and J2's tile kernels
    _j2_protocol("tile", 1000, fuse="off")
    _j2_protocol("compiled", 1000)
    rows = []
    for count in lanes:
        tile, tile_words = _best("tile", count, repeat, fuse="cached")
        interpreted, interpreted_words = _best("tile", count, repeat, fuse="off")
        compiled, compiled_words = _best("compiled", count, repeat)
        numpy_forward = _numpy_forward(count, repeat)
        rows.append({
            "lanes": count, "tile": tile, "tile_interpreter": interpreted,
            "compiled": compiled, "numpy_forward": numpy_forward,
            "gradients_equal": bool(np.array_equal(tile_words, compiled_words)
                                    and np.array_equal(interpreted_words, compiled_words)),
            "tile_interpreter_over_numpy_wall": interpreted["wall_ns"]
            / numpy_forward["wall_ns"],
            "tile_over_numpy_wall": tile["wall_ns"] / numpy_forward["wall_ns"],
            "tile_over_numpy_cpu": tile["cpu_ns"] / numpy_forward["cpu_ns"],
            "compiled_over_numpy_wall": compiled["wall_ns"] / numpy_forward["wall_ns"],
            "tile_over_compiled_cpu": tile["cpu_ns"] / compiled["cpu_ns"]})
    return rows


def tile_sizes(lanes: int, sizes: tuple[int, ...], repeat: int) -> list[dict]:
    """The J2 gradient per lane with tiles of each size."""
    rows = []
    for size in sizes:
        best, _ = _best("tile", lanes, repeat, tile=size)
        rows.append({"tile": size, "lanes": lanes, **best})
    return rows


# --- the J2 gradient end to end through ``revasm batch`` ------------------------------------

def j2_batch(lanes: tuple[int, ...], repeat: int, budget: float) -> dict:
    """Wall time of ``revasm batch examples/bessel_j2.pal --inputs x.npz --grad -o out.npz``
    in a fresh process per run (best of ``repeat``), with the default engine choice and
    with ``--engine tile``; per lane, the difference of the largest and smallest batch
    over their lanes (the start-up subtracted when both run on one engine), beside
    numpy's float64 forward of the largest.  J2 has run before (its steps recorded, its
    tile kernels built: what ``auto`` and the tile engine find on a second run)."""
    from revasm.assembler import assemble_file
    from revasm.sim.engines import tile_pays

    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="revasm-j2batch-") as scratch:
        for choice in ("auto", "tile"):
            seconds = {}
            for count in lanes:
                inputs = Path(scratch) / f"x{count}.npz"
                np.savez(inputs, x=_inputs(count))
                best = float("inf")
                for _ in range(repeat):
                    done = run_child([sys.executable, "-m", "revasm", "batch",
                                      str(EXAMPLES / "bessel_j2.pal"), "--inputs", str(inputs),
                                      "--grad", "-o", str(Path(scratch) / "out.npz"),
                                      "--engine", choice], budget)
                    if done["exit_code"] == 0 and not done["timed_out"]:
                        best = min(best, done["wall_s"])
                seconds[count] = best
            small, large = min(lanes), max(lanes)
            per_lane = (seconds[large] - seconds[small]) / (large - small)
            rows[choice] = {"seconds": {str(k): v for k, v in seconds.items()},
                            "per_lane_ns": per_lane * 1e9}
        # (the last run above: --engine tile on the most lanes, its columns in out.npz)
        with np.load(Path(scratch) / "out.npz") as written:
            columns = {name: written[name] for name in written.files}
        numpy_forward = _numpy_forward(max(lanes), repeat)
        rows["floors"] = _floors(columns, Path(scratch) / "floor.npz", repeat,
                                 numpy_forward["wall_ns"])
    for choice in ("auto", "tile"):
        rows[choice]["over_numpy_forward"] = rows[choice]["per_lane_ns"] / \
            numpy_forward["wall_ns"]
    rows["numpy_forward"] = numpy_forward
    rows["auto_picks_tile"] = {str(count): tile_pays(image, count, "vector")
                               for count in lanes}
    return rows


#: The fewest of the columns a gradient batch writes: its status, loss and gradient.
FEWEST_COLUMNS = ("status", "loss", "grad_x")


def _floors(columns: dict, path: Path, repeat: int, numpy_ns: float) -> dict:
    """What the end-to-end target leaves for the engine: the time per lane of writing the
    batch's own result columns with ``revasm batch``'s writer (whole, then only
    :data:`FEWEST_COLUMNS`), and of the J2 gradient's arithmetic alone
    (``j2_arithmetic``: one exact numba loop over lanes on every core, no interpreter), each
    over numpy's forward, and the sum of the arithmetic and the default columns' write."""
    from revasm.batching.sinks import write_npz

    from .j2_arithmetic import gradient_words

    lanes = len(columns["status"])
    out: dict[str, Any] = {"lanes": lanes,
                           "default_columns": sorted(columns),
                           "default_bytes_per_lane": sum(v.nbytes for v in columns.values())
                           / lanes}
    for key, kept in (("write_default", columns),
                      ("write_fewest", {k: columns[k] for k in FEWEST_COLUMNS})):
        best = float("inf")
        for _ in range(max(repeat, 3)):
            start = time.perf_counter()
            write_npz(str(path), kept)
            best = min(best, time.perf_counter() - start)
        out[f"{key}_ns"] = best * 1e9 / lanes
    words = (_inputs(lanes) * FMT_ONE).astype(np.int64).view(np.uint64)
    gradient_words(words[:1024])  # compiled (or loaded from the cache) before the clock
    best = float("inf")
    for _ in range(max(repeat, 3)):
        start = time.perf_counter()
        gradient_words(words)
        best = min(best, time.perf_counter() - start)
    out["arithmetic_ns"] = best * 1e9 / lanes
    out["arithmetic_and_write_default_ns"] = out["arithmetic_ns"] + out["write_default_ns"]
    for key in ("write_default", "write_fewest", "arithmetic", "arithmetic_and_write_default"):
        out[f"{key}_over_numpy_forward"] = out[f"{key}_ns"] / numpy_ns
    return out


# --- NiLang workloads ----------------------------------------------------------------------

#: name -> (file, entry, lanes on the tile engine, lanes on the compiled engine, --quick
#: lanes): at least the issue's 10^4 lanes (GMM 256) -- on the tile engine 10^5 (GMM 2 560),
#: where a run's fixed cost (its banks and tables set up, its threads started: ~2 ms) is
#: under a tenth of the time; the compiled engine runs lane after lane (its rate does not
#: grow with them), at the issue's counts.
NILANG = {"dot": ("dot.py", "dot", 100_000, 10_000, 1_000),
          "givens100": ("givens100.py", "givens_loss", 100_000, 10_000, None),
          "sparse_dot": ("sparse_dot.py", "sparse_dot", 100_000, 10_000, None),
          "petersen": ("petersen.py", "embedding_loss", 100_000, 10_000, None),
          "gmm": ("gmm.py", "gmm", 2_560, 256, None)}
_INPUT_NAMES = {"dot": "dot", "givens100": "givens_network_n100",
                "sparse_dot": "sparse_frobenius_dot", "petersen": "petersen_embedding",
                "gmm": "adbench_gmm"}


def _loss_name(program: Any) -> str:
    """The parameter a compiled program's gradient is of: the one marked Loss, else its
    only fixed-point output."""
    from revasm.compiler.ir import nodes as ir

    params = program.function.params
    losses = [p for p in params if p.role == "loss"] or \
        [p for p in params if p.role == "output" and p.type == ir.FIXED]
    return losses[0].name


def _nilang_rate(program: Any, inputs: dict, lanes: int, engine_name: str) -> dict:
    """Lane-instructions per second of the gradient protocol (forward and backward) on
    ``lanes`` lanes that all hold ``inputs``."""
    from revasm.programs import load_inputs
    from revasm.sim.compiled.machine import CompiledLanes
    from revasm.sim.host import batch_gradient
    from revasm.sim.tile.lanes import TileLanes

    loss = _loss_name(program)
    if engine_name == "tile":
        machine: Any = TileLanes(program.image, lanes)
    else:
        machine = CompiledLanes(program.image, lanes, kernel="interpreter")
    load_inputs(program, machine, inputs)
    wall, cpu = time.perf_counter(), time.process_time()
    result = batch_gradient(machine, loss=loss, wrt=[loss])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = int(result.forward_steps.sum()) + int(result.machine.steps.sum())
    return {"lanes": lanes, "wall_s": wall, "cpu_s": cpu, "lane_instructions": steps,
            "lane_instructions_per_s": steps / wall, "lane_instructions_per_cpu_s": steps / cpu,
            "lanes_ok": int(np.sum(result.ok)),
            "gradient_of_loss": int(result.gradient[loss][0])}


def nilang(quick: bool, repeat: int = 1) -> dict:
    """Every NiLang workload's gradient throughput on both engines, best of ``repeat``, and
    JAX's ``jit(vmap(grad))`` per gradient beside it (``nilang_compare.jax_baseline``, over
    the same batch; GMM one ``jit(grad)``); --quick: the dot product on the tile engine."""
    from revasm.bench.nilang_compare import inputs_of, jax_baseline
    from revasm.compiler import compile_file

    rows = {}
    for name, (file, entry, lanes, compiled_lanes, quick_lanes) in NILANG.items():
        if quick and quick_lanes is None:
            continue
        count = quick_lanes if quick and quick_lanes is not None else lanes
        program = compile_file(EXAMPLES / "nilang" / file, entry, width=64, for_gradient=True)
        inputs = inputs_of(_INPUT_NAMES[name])
        row: dict[str, Any] = {"image_words": len(program.image)}
        for engine_name in ("tile",) if quick else ("tile", "compiled_interpreter"):
            many = count if engine_name == "tile" else compiled_lanes
            # load the kernels: the serial and the parallel path's (WARM_LANES)
            _nilang_rate(program, inputs, min(count, WARM_LANES), engine_name)
            runs = [_nilang_rate(program, inputs, many, engine_name) for _ in range(repeat)]
            best = max(runs, key=lambda run: run["lane_instructions_per_s"])
            best["per_gradient_s"] = best["wall_s"] / many
            row[engine_name] = best
        if not quick:
            row["tile_over_compiled_interpreter"] = (
                row["tile"]["lane_instructions_per_s"]
                / row["compiled_interpreter"]["lane_instructions_per_s"])
            jax = jax_baseline(_INPUT_NAMES[name], inputs, compiled_lanes)
            row["jax"] = jax
            if jax.get("status") == "measured":
                row["tile_over_jax_per_gradient"] = (row["tile"]["per_gradient_s"]
                                                    / jax["per_gradient_s"])
        rows[name] = row
    return rows


# --- divergence ----------------------------------------------------------------------------

LOOP = """;; pendulum pal file
.input  n $1 int = 1
        start
top:    bne   $2 $0 bottom  ; the loop entry falls through, its back edge lands here
        addi  $3 3
        add   $4 $3
        addmul $5 $3 $4
        addi  $2 1
bottom: bne   $2 $1 top     ; again while i != n
        finish
"""


def divergence(lanes: int, repeat: int) -> dict:
    """Lanes looping 1..64 times: tiles split by masks against lanes regrouped by PC."""
    from revasm.assembler import assemble
    from revasm.sim.tile.lanes import TileLanes

    image = assemble(LOOP, "loop.pal", width=64)
    trips = np.random.default_rng(2).integers(1, 65, lanes)
    rows: dict[str, Any] = {}
    for regroup in (False, True):
        best = float("inf")
        for _ in range(repeat + 1):
            machine = TileLanes(image, lanes, regroup=regroup)
            machine.set_bank_word("R", 1, trips)
            started = time.process_time()
            machine.run(1)
            best = min(best, time.process_time() - started)
        steps = int(machine.steps.sum())
        rows["regroup" if regroup else "masks"] = {
            "cpu_s": best, "lane_steps": steps, "fetches": machine.dispatches,
            "lanes_per_fetch": steps / machine.dispatches, "kernel_calls": machine.calls,
            "regroupings": machine.regroupings}
    rows["mean_trips"] = float(trips.mean())
    rows["tile"] = TileLanes(image, 1).tile
    return rows


# --- the first result of a program never seen before ----------------------------------------

def new_program(seed: int) -> str:
    """A 30-step W = 64 program never seen before (a random constant in it): products,
    quotients and sums of x, its loss a polynomial-and-quotient chain."""
    rng = random.Random(seed)
    constant = rng.randrange(1 << 20, 1 << 30)
    lines = [";; pendulum pal file", ".input  x $1 fixed = 0.5", ".loss   y $2",
             "        start", f"        li     $3 {constant}", "        li     $4 1.5"]
    body = []
    for k in range(5, 29):
        a, b = rng.choice([(1, 3), (1, 4), (3, 4)])
        op = rng.choice(["addmul", "addmul", "add"])
        body.append(f"        {op} ${k} ${a} ${b}" if op != "add" else f"        add ${k} ${a}")
    body.append("        adddiv $29 $5 $4")
    lines += body + ["        add    $2 $29", "        finish", ""]
    return "\n".join(lines)


def first_result_child(arguments: list[str]) -> None:
    """In a fresh process: assemble the program, a gradient batch on ``lanes`` lanes of the
    engine, and say how long since the process started."""
    started = float(arguments[3])
    from revasm.assembler import assemble
    from revasm.sim.engines import engine
    from revasm.sim.host import batch_gradient

    image = assemble(Path(arguments[0]).read_text(), "new.pal", width=64)
    lanes = int(arguments[2])
    machine = engine(arguments[1]).load(image, lanes)
    machine.set_bank_word("R", 1, (np.linspace(-1, 1, lanes) * FMT_ONE).astype(np.int64))
    result = batch_gradient(machine)
    print(json.dumps({"seconds": time.time() - started, "lanes_ok": int(np.sum(result.ok)),
                      "steps": int(result.forward_steps[0])}), flush=True)


def first_result(lanes: int, budget: float, engines: tuple[str, ...]) -> dict:
    """Wall time from a fresh process's start to the result of a 10^5-lane gradient batch
    of a never-seen program: the tile engine with its interpreter in the kernel cache, the
    compiled engine in a fresh kernel cache (it compiles the program's kernels)."""
    from revasm.sim.tile import kernel

    kernel.module(64, False, False)  # the tile interpreter: built (cached) before
    kernel.module(64, True, False)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="revasm-first-") as scratch:
        for name in engines:
            path = Path(scratch) / f"{name}.pal"
            path.write_text(new_program(random.randrange(1 << 30)))
            env = dict(os.environ)
            if name == "compiled":
                env["REVASM_CACHE_DIR"] = str(Path(scratch) / "cache")
            done = run_child([sys.executable, "-c",
                              "import sys; from revasm.bench.tile_speed import "
                              "first_result_child; first_result_child(sys.argv[1:])",
                              str(path), name, str(lanes), repr(time.time())], budget, env=env)
            lines = [line for line in done.get("stdout", "").splitlines()
                     if line.startswith("{")]
            rows[name] = {**json.loads(lines[-1]), "process_wall_s": done["wall_s"]} \
                if lines else {"status": "did not finish", "timed_out": done["timed_out"],
                               "stderr": done["stderr"][-400:]}
    return rows


def run(quick: bool) -> dict:
    """The whole benchmark (``revasm bench tile_speed``); ``--quick`` (seconds once the
    tile interpreter is built): small batches, the NiLang dot product on the tile engine
    alone, the first result of a new program on the tile engine alone."""
    import numba

    repeat = 2 if quick else 3
    lanes = (1_000, 10_000) if quick else (10_000, 100_000, 1_000_000)
    result: dict[str, Any] = {
        "threads": numba.get_num_threads(),
        "load_average": os.getloadavg()[0],
        "j2_gradient": j2_gradients(lanes, repeat),
        "j2_batch": j2_batch((1_000, 100_000) if quick else (1_000, 1_000_000), repeat,
                             600),
        "tile_sizes": tile_sizes(10_000 if quick else 100_000,
                                 (16, 64, 256) if quick else (16, 64, 256, 1024, 2048, 4096),
                                 repeat),
        "divergence": divergence(5_000 if quick else 100_000, repeat),
        "nilang": nilang(quick, 1 if quick else 2),
        "first_result": first_result(10_000 if quick else 100_000, 600,
                                     ("tile",) if quick else ("tile", "compiled")),
    }
    result["load_average_after"] = os.getloadavg()[0]
    return result
