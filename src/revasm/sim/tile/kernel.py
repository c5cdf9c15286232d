"""The tile interpreter's modules: generated once per width and mode, cached on disk.

The module's text (``source.py``) does not depend on the program, so each of the eight
(W = 32 or 64; value, gradient, tangent, both) is compiled by numba once per machine and
kept with the compiled engine's kernels (``sim/compiled/cache.py``: its directory, and
numba's ``cache=True`` machine code beside the module).  The text carries a hash of the
tile engine's own sources, and the compiled engine's cache key covers its vocabulary and
numba's version, so a changed engine never loads stale machine code.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from revasm.sim.compiled import cache

from .source import tile_source

#: The tile engine's sources the generated module depends on (besides the compiled
#: engine's, which ``cache.engine_version`` covers).
_SOURCES = ("source.py", "vocab.py", "kernel.py")
_MODULES: dict[tuple[int, bool, bool], ModuleType] = {}


@lru_cache(maxsize=1)
def tile_version() -> str:
    """A hash of the tile engine's sources that the generated modules depend on."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=8)
def source(width: int, gradient: bool = False, tangent: bool = False) -> str:
    """The tile interpreter module's text for a width and mode."""
    return f"# tile engine sources {tile_version()}\n" + tile_source(width, gradient, tangent)


def module(width: int, gradient: bool = False, tangent: bool = False) -> ModuleType:
    """The tile interpreter module for a width and mode, loaded from the kernel cache
    (written there on first use; numba compiles its entry points on their first call
    unless its cache holds them)."""
    key = (width, gradient, tangent)
    found = _MODULES.get(key)
    if found is None:
        found = _MODULES[key] = cache.load_module(source(width, gradient, tangent))
    return found


def is_compiled(loaded: ModuleType, function: str) -> bool:
    """Whether numba's cache holds ``function`` of a loaded tile module (its first call
    then compiles nothing)."""
    return cache.module_is_compiled(loaded, function)
