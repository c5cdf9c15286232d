"""The compiled engine behind the engine interface: the image translated to native code.

``load`` returns :class:`~revasm.sim.compiled.machine.CompiledLanes`; the engine needs
numba (which brings LLVM), and says so through ``available()`` when it is missing.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from revasm.assembler.image import Image
from revasm.sim.engine import Engine
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

if TYPE_CHECKING:  # numba is imported on the first load, not with the engine table
    from .machine import CompiledLanes


def _available() -> str | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numba is not installed (pip install numba)"
    return None


def _load(image: Image, lanes: int = 1, *, max_steps: int | None = None,
          memory_words: int = DEFAULT_MEMORY_WORDS) -> CompiledLanes:
    from .machine import CompiledLanes

    # REVASM_KERNEL=program|interpreter|auto chooses the kernels (sim/compiled/README.md)
    return CompiledLanes(image, lanes, max_steps=max_steps, memory_words=memory_words,
                         kernel=os.environ.get("REVASM_KERNEL", "auto"))


ENGINE = Engine("compiled", "the image translated to native code (numba/LLVM): each lane "
                            "runs the whole program in machine registers, lanes over the "
                            "cores; kernels cached on disk", _load, available=_available)
