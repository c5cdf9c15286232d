"""Helpers the benchmarks share: best-of timing, example modules, batches of one input."""
from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The repository's examples (benchmarks run from a source checkout).
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def best_seconds(function: Callable[[], Any], repeats: int) -> float:
    """The fastest of ``repeats`` wall-clock runs of ``function``."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def example_module(path: Path, name: str) -> Any:
    """A Python file of ``examples/`` (inputs, float64 references) imported as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def lanes_like(loaded: Any, lanes: int, max_steps: int | None = None,
               engine: str = "vector") -> Any:
    """``lanes`` lanes of ``engine`` whose every lane holds the state of lane 0 of
    ``loaded`` (registers, and the memory words that differ from the image)."""
    from revasm.sim.engines import load

    image = loaded.image
    state = loaded.snapshot(0)
    machine = load(image, lanes, engine_name=engine, max_steps=max_steps)
    for register, word in enumerate(state.registers):
        if register and word:
            machine.set_bank_word("R", register, word)
    for address, word in enumerate(state.memory):
        if word and (address >= len(image) or not image.is_code[address]) and (
                address >= len(image) or word != image.words[address]):
            machine.set_bank_word("MEM", address, word)
    return machine


def reference_lane(image: Any) -> Any:
    """One lane of the reference engine on ``image`` (to load inputs through)."""
    from revasm.sim.engines import load

    return load(image, 1, engine_name="reference")
