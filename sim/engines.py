"""The registry of simulator engines: a name -> the module that implements it.

Each module defines ``ENGINE``, an :class:`Engine` record whose ``load(image, lanes, ...)``
returns :class:`~revasm.sim.engine.Lanes`.  Modules are imported on first use, so an engine
with heavy dependencies (numba) costs nothing until it is asked for.  Adding an engine is
one module and one line in :data:`MODULES`.
"""
from __future__ import annotations

import importlib

from revasm.assembler.image import Image

from .engine import Engine, Lanes

#: Engine name -> module path, in order of preference for ``auto`` (last = the oracle).
MODULES: dict[str, str] = {
    "compiled": "revasm.sim.compiled.engine",
    "vector": "revasm.sim.vector.engine",
    "reference": "revasm.sim.reference.engine",
}

#: ``auto`` moves a job off the reference onto the vector engine from this many lanes.
#: Measured (bench/results/vector_throughput.json): the vector engine passes the reference
#: at about 20 lanes on straight-line code but only at about 150 on branchy code, and a
#: 10M-step program (examples/nilang/gmm.py) ran 2 lanes in 3.2 s on the reference and in
#: 128 s on the vector engine.
VECTOR_MIN_LANES = 256

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
    large batches on the vector engine; the compiled engine is chosen by name until its
    first-compile cost is bounded for large programs.  A trace needs the reference.
    """
    if name != "auto":
        chosen = engine(name)
        if trace and not chosen.traces:
            raise EngineError(f"the {name} engine does not trace; use --engine reference")
        return chosen
    if trace or lanes < VECTOR_MIN_LANES:
        return engine("reference")
    return engine("vector")


def load(image: Image, lanes: int = 1, *, engine_name: str = "auto",
         max_steps: int | None = None, **options: object) -> Lanes:
    """Load ``image`` onto ``lanes`` lanes of the chosen engine."""
    return choose(engine_name, lanes=lanes).load(image, lanes, max_steps=max_steps, **options)
