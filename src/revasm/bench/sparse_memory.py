"""What the whole address space costs the NiLang workloads, per engine, side by side.

The NiLang workloads (``examples/nilang/cases.py``, compiled at W = 32) keep their arrays in
the image's DATA cells and their stacks in the words just above the image.  Each runs, in
the same benchmark run, on every engine in two layouts of the same program:

* ``as_compiled``: the image the compiler emits.  The stack words above it are words of the
  sparse part of memory on the compiled engine (its per-lane table) and the vector engine
  (its rows); the reference holds them in its dense list (65 536 words by default), so it is
  also run with its dense list cut to the image (``reference_sparse``: the stack in its
  sparse part);
* ``dense``: the same program with ``DATA 0`` appended over every address the run touches
  above the image, so that every word it touches is a dense word of every engine.

``ratio`` = seconds as compiled / seconds dense (best of the tries, taken in turn), per
workload and per engine, and the geometric mean per engine: the cost of sparse memory on
these dense-memory workloads (issue 15's target: at most 1.10).  Both layouts must leave the
same values.
Quick: three small workloads on the reference and the vector engine; the compiled engine
runs in full runs only, on every workload: a program's own kernels where they are short,
the interpreter kernel (sim/compiled/interpreter.py) for the long ones, whose own kernels
take minutes to build -- each row says which (``compiled.kernel``).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .common import EXAMPLES, example_module, lanes_like, reference_lane

if TYPE_CHECKING:
    from revasm.assembler.image import Image
    from revasm.compiler.api import CompiledProgram
    from revasm.sim.engine import Lanes

#: A machine of any engine (the compiled engine's also says which kernel it runs).
Machine = Any

QUICK_WORKLOADS = ("rfib", "dot", "ibesselj")
WIDTH = 32
TRY_SECONDS = 1.5  # each layout's tries per engine run at least this long in all (quick: 0.05)
QUICK_TRY_SECONDS = 0.05
MAX_TRIES = 200


def _timed(setup: Callable[[], Machine]) -> tuple[float, Machine]:
    """One run of a machine from ``setup()``: (seconds, the machine)."""
    machine = setup()
    started = time.perf_counter()
    machine.run(1)
    return time.perf_counter() - started, machine


def _best_interleaved(setups: dict[str, Callable[[], Machine]], repeats: int,
                      try_seconds: float) -> dict[str, tuple[float, Machine]]:
    """The fastest run of each layout's machine, the layouts' tries taken in turn (a
    drift of the machine's speed then slows each alike), at least ``repeats`` tries each
    and more for short runs: until each layout has run ~``try_seconds`` (at most
    ``MAX_TRIES``)."""
    warm = {variant: _timed(setup)[0] for variant, setup in setups.items()}
    tries = max(repeats, min(MAX_TRIES, math.ceil(try_seconds / max(max(warm.values()), 1e-6))))
    best: dict[str, tuple[float, Machine]] = {variant: (math.inf, None) for variant in setups}
    for _ in range(tries):
        for variant, setup in setups.items():
            seconds, machine = _timed(setup)
            best[variant] = (min(best[variant][0], seconds), machine)
    return best


def _layouts(case: Any) -> tuple[CompiledProgram, Image, Image, int]:
    """(program, its image, the padded image, words appended)."""
    from revasm.assembler import assemble
    from revasm.compiler import compile_file
    from revasm.programs import load_inputs

    program = compile_file(case.path, case.entry, width=WIDTH)
    image = program.image
    touched: set[int] = set()
    tracer = reference_lane(image)
    load_inputs(program, tracer, case.inputs)
    tracer.run(1, trace=lambda record: touched.update(a for a, _, _ in record.memory))
    above = [address for address in touched if address >= len(image)]
    pad = max(above) + 1 - len(image) if above else 0
    padded = assemble(program.pal + "".join("        data 0\n" for _ in range(pad)),
                      f"{case.name}_dense.pal", WIDTH)
    return program, image, padded, pad


def _measure(case: Any, compiled: bool, lanes: int, repeats: int, try_seconds: float) -> dict:
    from revasm.programs import load_inputs, read_values
    from revasm.sim.engines import load

    program, image, padded, pad = _layouts(case)
    engines: tuple[str, ...] = ("reference", "vector")
    if compiled:
        engines += ("compiled",)
    row: dict = {"words": len(image), "words_appended": pad, "engines": list(engines)}

    def loaded(picture: Image, memory_words: int | None = None) -> Lanes:
        machine = load(picture, 1, engine_name="reference") if memory_words is None else \
            load(picture, 1, engine_name="reference", memory_words=memory_words)
        load_inputs(program, machine, case.inputs)
        return machine

    values: dict[tuple[str, str], object] = {}
    for name in engines:
        timings: dict[str, Any] = {}
        variants: dict[str, tuple[Image, int | None]] = {"as_compiled": (image, None),
                                                         "dense": (padded, None)}
        if name == "reference":
            variants["sparse"] = (image, len(image))
        setups: dict[str, Callable[[], Machine]] = {}
        for variant, (picture, memory_words) in variants.items():
            state = loaded(picture, memory_words)

            def setup(picture: Image = picture, memory_words: int | None = memory_words,
                      state: Lanes = state, name: str = name) -> Machine:
                if name == "reference":
                    return loaded(picture, memory_words)
                return lanes_like(state, lanes, engine=name)
            setup().run(1)  # the reference's blocks compile, the compiled engine's kernel
            setups[variant] = setup
        for variant, (seconds, machine) in _best_interleaved(setups, repeats, try_seconds).items():
            fault = machine.fault(0)
            if fault is not None:
                raise RuntimeError(f"{case.name} ({variant}, {name}): {fault.message}")
            values[(name, variant)] = read_values(program, machine, exact=True)
            timings[f"{variant}_s"] = seconds
            if name == "compiled":
                timings["kernel"] = ("interpreter" if machine.uses_interpreter()
                                     else "program")
        timings["ratio"] = timings["as_compiled_s"] / timings["dense_s"]
        if name == "reference":
            timings["sparse_ratio"] = timings["sparse_s"] / timings["dense_s"]
        row[name] = timings
    row["same_values"] = len({repr(v) for v in values.values()}) == 1
    return row


def run(quick: bool) -> dict:
    cases = {case.name: case for case in
             example_module(EXAMPLES / "nilang" / "cases.py", "nilang_cases").CASES}
    names = QUICK_WORKLOADS if quick else tuple(cases)
    lanes, repeats = (16, 2) if quick else (256, 5)
    workloads: dict = {}
    for name in names:
        try:
            workloads[name] = {"status": "measured",
                               **_measure(cases[name], not quick, lanes, repeats,
                                         QUICK_TRY_SECONDS if quick else TRY_SECONDS)}
        except Exception as exc:  # one workload failing must not hide the others
            workloads[name] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    summary: dict = {}
    for engine, key in (("reference", "ratio"), ("reference", "sparse_ratio"),
                        ("vector", "ratio"), ("compiled", "ratio")):
        ratios = [row[engine][key] for row in workloads.values()
                  if row["status"] == "measured" and engine in row]
        label = f"{engine}_stack_sparse" if key == "sparse_ratio" else engine
        summary[label] = ({"geometric_mean_ratio": math.exp(sum(map(math.log, ratios))
                                                            / len(ratios)),
                           "workloads": len(ratios)} if ratios else
                          {"status": "skipped", "reason": "quick" if quick else "no workload"})
    return {"width": WIDTH, "lanes": lanes, "repeats": repeats, "workloads": workloads,
            "summary": summary, "targets": {"ratio_at_most": 1.10}}
