"""What ``auto`` knows about the tile engine without importing numba or generating code.

* whether the tile interpreter of a width and mode is compiled in the kernel cache: a
  marker file written after its first run (:func:`mark_ready`), named by the hashes of the
  tile engine's and the compiled engine's sources, so a changed engine or numba reads as
  not built;
* the steps per lane of a program's last value-mode run on the tile engine
  (:func:`record_steps`, :func:`recorded_steps`), beside the compiled engine's records.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from functools import lru_cache
from pathlib import Path

from revasm.assembler.image import Image
from revasm.sim.compiled import cache

#: The tile engine's sources the generated modules depend on (besides the compiled
#: engine's, which ``cache.engine_version`` covers): the interpreter's text and the
#: vocabulary it imports.  (A per-program kernel's text is its own key: ``fused.py``
#: changes it where it changes what it writes.)
SOURCES = ("source.py", "vocab.py")


@lru_cache(maxsize=1)
def tile_version() -> str:
    """A hash of the tile engine's sources that the generated modules depend on."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def _marker(width: int, gradient: bool, tangent: bool) -> Path:
    mode = f"{'g' if gradient else ''}{'t' if tangent else ''}" or "v"
    return cache.cache_dir() / \
        f"tile_ready_{cache.engine_version()}_{tile_version()}_W{width}_{mode}"


_MARKED: set[tuple[int, bool, bool]] = set()


def mark_ready(width: int, gradient: bool, tangent: bool) -> None:
    """Note that the tile interpreter of this width and mode ran (so numba's cache holds
    it); once per process."""
    key = (width, gradient, tangent)
    if key in _MARKED:
        return
    _MARKED.add(key)
    try:
        marker = _marker(width, gradient, tangent)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # a cache that cannot be written only costs ``auto`` its knowledge


def is_ready(width: int, gradient: bool = False, tangent: bool = False) -> bool:
    """Whether the tile interpreter of this width and mode has run from the kernel cache."""
    return _marker(width, gradient, tangent).exists()


def _record(image: Image, memory_words: int) -> Path:
    return cache.cache_dir() / f"tile_run_{cache.image_key(image, memory_words)}.json"


#: The record this process last wrote for each path (a repeated run writes nothing).
_WRITTEN: dict[Path, float] = {}


def record_steps(image: Image, memory_words: int, steps: float) -> None:
    """Remember the steps per lane of a value-mode run of ``image`` on the tile engine."""
    path = _record(image, memory_words)
    if _WRITTEN.get(path) == float(steps):
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps({"steps": float(steps)}))
        os.replace(temporary, path)
        _WRITTEN[path] = float(steps)
    except OSError:
        pass


def recorded_steps(image: Image, memory_words: int) -> float | None:
    """The steps per lane of the last value-mode run of ``image`` on the tile engine, or
    None."""
    try:
        record = json.loads(_record(image, memory_words).read_text())
    except (OSError, ValueError):
        return None
    steps = record.get("steps") if isinstance(record, dict) else None
    return float(steps) if isinstance(steps, (int, float)) else None
