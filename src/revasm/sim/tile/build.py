"""The background build of a per-program tile kernel: ``python -m revasm.sim.tile.build MARKER``.

``kernel.build_in_background`` writes the marker (the image, mode, direction and memory
size, pickled) and starts this in a detached process; it compiles the kernel's entry
points into numba's cache with the arguments a run passes, then removes the marker, so
later runs of the program find the kernel ready (``TileLanes._fused_module``).
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

from .lanes import TileLanes


def build(marker: Path) -> None:
    """Compile the per-program kernel a marker names, then remove the marker."""
    try:
        image, gradient, tangent, direction, memory_words = pickle.loads(marker.read_bytes())
        lanes = TileLanes(image, 1, memory_words=memory_words)
        lanes.gradient, lanes.tangent = gradient, tangent
        lanes.build_fused(direction)
    finally:
        marker.unlink(missing_ok=True)


if __name__ == "__main__":  # pragma: no cover - the background build's own process
    build(Path(sys.argv[1]))
