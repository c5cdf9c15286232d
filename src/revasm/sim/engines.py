"""The registry of simulator engines: a name -> the module that implements it.

Each module defines ``ENGINE``, an :class:`Engine` record whose ``load(image, lanes, ...)``
returns :class:`~revasm.sim.engine.Lanes`.  Modules are imported on first use, so an engine
with heavy dependencies (numba) costs nothing until it is asked for.  Adding an engine is
one module and one line in :data:`MODULES`.
"""
from __future__ import annotations

import importlib
from typing import Any

from revasm.assembler.image import Image
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

from .engine import Engine, Lanes

#: Engine name -> module path, in order of preference for ``auto`` (last = the oracle).
MODULES: dict[str, str] = {
    "compiled": "revasm.sim.compiled.engine",
    "tile": "revasm.sim.tile.engine",
    "vector": "revasm.sim.vector.engine",
    "reference": "revasm.sim.reference.engine",
}

#: ``auto`` moves a job off the reference onto the vector engine from this many lanes.
#: Measured (bench/results/vector_throughput.json): the vector engine passes the reference
#: at about 20 lanes on straight-line code but only at about 150 on branchy code, and a
#: 10M-step program (examples/nilang/gmm.py) ran 2 lanes in 3.2 s on the reference and in
#: 128 s on the vector engine.
VECTOR_MIN_LANES = 256

#: ``auto`` moves a job onto the compiled engine only when the program's kernel is compiled
#: in the disk cache (a run on the compiled engine put it there and recorded its steps per
#: lane, ``sim/compiled/cache.py``) and the job's work -- recorded steps per lane x lanes --
#: pays for the compiled engine's start-up (numba's initialisation and the cached kernel's
#: loading, ~0.5-2 s measured; per-lane set-up ~2 us): at least this many steps against the
#: reference (2e7 steps/s at best) and this many lane-steps against the vector engine
#: (~4 ns per lane-step on J2 to the compiled engine's ~1 ns).  Measurements: docs/decisions.md.
COMPILED_MIN_WORK = {"reference": 2 * 10**7, "vector": 5 * 10**8}
#: ... and, against the vector engine, at least this many steps per lane (the compiled
#: engine's per-lane set-up is worth ~1000 vector lane-steps).
COMPILED_MIN_STEPS = 2000

#: ``auto`` runs a job of at least this many lanes on the tile engine when its interpreter
#: is built for the image's width (value and gradient mode: ``sim/tile/ready.py``) and the
#: job's work pays for its start-up (numba's import and the cached interpreter's loading,
#: ~0.5-1 s): at least :data:`TILE_MIN_WORK` lane-steps against the engine it replaces --
#: the steps per lane of the program's last run (tile or compiled engine), else the number
#: of its code cells (a loop-free program's most).  The tile engine runs ~1 G lane-steps/s
#: (J2, the NiLang workloads: bench/results/tile_speed.json), the vector engine ~0.25 G at
#: best and the reference ~2 * 10^7 steps/s.
TILE_MIN_LANES = 32
TILE_MIN_WORK = {"reference": 2 * 10**7, "vector": 2 * 10**8}
#: ... or, against the vector engine, at least this many steps per lane (each of its
#: steps costs numpy's dispatch, ~10 us, whatever the lanes).
TILE_MIN_STEPS = 20_000

#: ... and from this many lanes when a program's recorded steps per lane (a previous tile
#: run) make the job at least this many lane-steps: the reference runs ~2 * 10^6 a second,
#: the vector engine's start-up and dispatch cost less than that much work.
VECTOR_KNOWN_LANES = 16
VECTOR_KNOWN_WORK = 10**5
#: ... or from this many lanes of a program whose steps are known, however few: the
#: reference sets up each lane's machine (~2 ms a lane), the vector engine's dispatch is
#: ~20 us a step whatever the lanes, so from 64 lanes it wins at any step count under
#: 6 400 -- and from 1 563 steps the lane-steps above send the job to it anyway
#: (``revasm bench engine_choice``: 30 steps on 100 lanes, 1.3x slower on the reference,
#: in two runs).
VECTOR_KNOWN_MANY = 64

#: The names ``--engine`` accepts.
CHOICES = ("auto", *MODULES)

class EngineError(ValueError):
    """An engine name that is not known, or an engine that cannot run here."""


def engine(name: str) -> Engine:
    """The engine called ``name`` (not ``auto``; see :func:`choose`)."""
    try:
        path = MODULES[name]
    except KeyError:
        raise EngineError(f"unknown engine {name!r} (engines: {', '.join(CHOICES)})") from None
    try:
        found: Engine = importlib.import_module(path).ENGINE
    except ImportError as exc:
        raise EngineError(f"the {name} engine cannot run here: {exc}") from None
    why_not = found.available()
    if why_not:
        raise EngineError(f"the {name} engine cannot run here: {why_not}")
    return found


def available() -> list[str]:
    """The engines that can run on this machine, in order of preference."""
    names = []
    for name in MODULES:
        try:
            engine(name)
        except EngineError:
            continue
        names.append(name)
    return names


def choose(name: str = "auto", *, lanes: int = 1, trace: bool = False) -> Engine:
    """The engine for a job: ``name``, or for ``auto`` the fastest one that pays.

    ``auto`` keeps scalar jobs and small batches on the reference (no compile or numpy
    start-up cost; below :data:`VECTOR_MIN_LANES` lanes it is also the faster one) and
    large batches on the vector engine, unless the tile or the compiled engine pays: its
    loader looks at the image and runs the job on the tile engine when its interpreter is
    built and the job's work amortises its start-up (:func:`tile_pays`), else compiled
    when the program's kernel is in the disk cache and its recorded work amortises the
    start-up (:func:`compiled_pays`).  A trace needs the reference.
    """
    if name != "auto":
        chosen = engine(name)
        if trace and not chosen.traces:
            raise EngineError(f"the {name} engine does not trace; use --engine reference")
        return chosen
    if trace:
        return engine("reference")
    fallback = engine("reference" if lanes < VECTOR_MIN_LANES else "vector")

    def load_auto(image: Image, lanes: int = 1, **options: Any) -> Lanes:
        memory_words = options.get("memory_words", DEFAULT_MEMORY_WORDS)
        return engine(auto_engine(image, lanes, memory_words)).load(image, lanes, **options)

    return Engine("auto", f"{fallback.name}, or tile or compiled where it pays", load_auto,
                  available=fallback.available)


def auto_engine(image: Image, lanes: int,
                memory_words: int = DEFAULT_MEMORY_WORDS) -> str:
    """The engine ``auto`` runs ``lanes`` lanes of ``image`` on (a job without a trace).

    The base engine is the one the job runs on unless a compiled one pays: the reference
    below :data:`VECTOR_MIN_LANES` lanes, else the vector engine -- or the vector engine
    for a known program on enough lanes (:func:`vector_pays`).  The tile and the compiled
    engine must beat the base (``revasm bench engine_choice``: 10^5 steps on 100 lanes ran
    1.4x faster on the tile engine than on the vector engine, which ``auto`` had picked by
    weighing the tile engine against the reference).  A batch run in parts asks once, for
    all its lanes (``batching/running.py``)."""
    base = "reference" if lanes < VECTOR_MIN_LANES else "vector"
    if base == "reference" and vector_pays(image, lanes, memory_words):
        base = "vector"
    for compiled, pays in (("tile", tile_pays), ("compiled", compiled_pays)):
        if pays(image, lanes, base, memory_words):
            try:
                engine(compiled)
            except EngineError:
                continue
            return compiled
    return base


def vector_pays(image: Image, lanes: int, memory_words: int = DEFAULT_MEMORY_WORDS) -> bool:
    """Whether ``auto`` runs fewer than :data:`VECTOR_MIN_LANES` lanes on the vector engine
    rather than the reference: at least :data:`VECTOR_KNOWN_LANES` lanes of a program whose
    steps per lane a previous tile run recorded, with at least :data:`VECTOR_KNOWN_WORK`
    lane-steps (``revasm bench engine_choice``: 10^3 and 10^4 steps on 100 lanes ran
    1.6x slower on the reference), or at least :data:`VECTOR_KNOWN_MANY` lanes of such a
    program, whatever its steps."""
    if lanes < VECTOR_KNOWN_LANES:
        return False
    from revasm.sim.tile import ready

    steps = ready.recorded_steps(image, memory_words)
    return steps is not None and (steps * lanes >= VECTOR_KNOWN_WORK
                                  or lanes >= VECTOR_KNOWN_MANY)


def tile_pays(image: Image, lanes: int, instead: str,
              memory_words: int = DEFAULT_MEMORY_WORDS) -> bool:
    """Whether ``auto`` runs ``lanes`` lanes of ``image`` on the tile engine rather than
    on ``instead`` (the cost model above :data:`TILE_MIN_WORK`).  Reads two small files
    and hashes the image; imports no numba, generates nothing."""
    if lanes < TILE_MIN_LANES:
        return False
    from revasm.sim.tile import ready

    if not (ready.is_ready(image.width) and ready.is_ready(image.width, gradient=True)):
        return False
    steps = ready.recorded_steps(image, memory_words)
    if steps is None:
        from revasm.sim.compiled import cache

        steps = cache.recorded_steps(image, memory_words, "run_parallel")
    if steps is None:
        steps = float(sum(1 for flag in image.is_code if flag))
    if instead == "vector" and steps >= TILE_MIN_STEPS:
        return True
    return steps * lanes >= TILE_MIN_WORK.get(instead, TILE_MIN_WORK["vector"])


def compiled_pays(image: Image, lanes: int, instead: str,
                  memory_words: int = DEFAULT_MEMORY_WORDS) -> bool:
    """Whether ``auto`` runs ``lanes`` lanes of ``image`` compiled rather than on the
    ``instead`` engine: the kernel is compiled in the cache and the steps per lane recorded
    with it, times ``lanes``, reach :data:`COMPILED_MIN_WORK` (and, against the vector
    engine, :data:`COMPILED_MIN_STEPS` per lane).  Costs a hash of the image and one small
    file read; imports nothing heavy."""
    from revasm.sim.compiled import cache

    if not cache.run_record(image, memory_words).exists():
        return False
    runner = "run_parallel" if lanes >= cache.PARALLEL_LANES else "run_serial"
    steps = cache.recorded_steps(image, memory_words, runner)
    if steps is None:
        return False
    if instead == "vector" and steps < COMPILED_MIN_STEPS:
        return False
    return steps * lanes >= COMPILED_MIN_WORK.get(instead, COMPILED_MIN_WORK["vector"])


def load(image: Image, lanes: int = 1, *, engine_name: str = "auto",
         max_steps: int | None = None, **options: object) -> Lanes:
    """Load ``image`` onto ``lanes`` lanes of the chosen engine."""
    return choose(engine_name, lanes=lanes).load(image, lanes, max_steps=max_steps, **options)
