"""The numpy vector machine behind the engine interface (it already has the lane-axis API)."""
from __future__ import annotations

from typing import Any

from revasm.assembler.image import Image
from revasm.sim.engine import Engine, step_limit
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

from .machine import VectorMachine


def _load(image: Image, lanes: int = 1, *, max_steps: int | None = None,
          memory_words: int = DEFAULT_MEMORY_WORDS, xp: Any = None) -> VectorMachine:
    return VectorMachine(image, lanes, max_steps=step_limit(max_steps),
                         memory_words=memory_words, xp=xp)


ENGINE = Engine("vector", "numpy lanes in SIMT groups: one program, many inputs, portable "
                          "to array libraries with numpy's API", _load)
