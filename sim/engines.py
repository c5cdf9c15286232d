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

    ``auto`` keeps short scalar jobs on the reference (no compile or numpy start-up
    cost), batches on the vector engine, and takes the compiled engine where it is
    available and the job is large enough to pay for its first compile; a trace needs
    the reference.
    """
    if name != "auto":
        chosen = engine(name)
        if trace and not chosen.traces:
            raise EngineError(f"the {name} engine does not trace; use --engine reference")
        return chosen
    if trace or lanes == 1:
        return engine("reference")
    return engine("vector")


def load(image: Image, lanes: int = 1, *, engine_name: str = "auto",
         max_steps: int | None = None, **options: object) -> Lanes:
    """Load ``image`` onto ``lanes`` lanes of the chosen engine."""
    return choose(engine_name, lanes=lanes).load(image, lanes, max_steps=max_steps, **options)
