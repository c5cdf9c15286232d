"""The tile engine behind the engine interface: lanes in tiles that run in lockstep.

``load`` returns :class:`~revasm.sim.tile.lanes.TileLanes`; the engine needs numba, and
says so through ``available()`` when it is missing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from revasm.assembler.image import Image
from revasm.sim.engine import Engine
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

if TYPE_CHECKING:
    from .lanes import TileLanes


def _available() -> str | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numba is not installed (pip install numba)"
    return None


def _load(image: Image, lanes: int = 1, *, max_steps: int | None = None,
          memory_words: int = DEFAULT_MEMORY_WORDS) -> TileLanes:
    from .lanes import TileLanes

    return TileLanes(image, lanes, max_steps=max_steps, memory_words=memory_words)


ENGINE = Engine("tile", "lanes in tiles that share a PC and run in lockstep, each "
                        "instruction one loop over a tile (numba); one interpreter for "
                        "every program, compiled once per machine", _load,
                available=_available)
