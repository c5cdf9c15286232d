"""The tile interpreter's modules: generated once per width and mode, cached on disk.

The module's text (``source.py``) does not depend on the program, so each of the eight
(W = 32 or 64; value, gradient, tangent, both) is compiled by numba once per machine and
kept with the compiled engine's kernels (``sim/compiled/cache.py``: its directory, and
numba's ``cache=True`` machine code beside the module).  The text carries a hash of the
tile engine's own sources, and the compiled engine's cache key covers its vocabulary and
numba's version, so a changed engine never loads stale machine code.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from revasm.assembler.image import Image
from revasm.sim.compiled import cache

from .ready import tile_version
from .source import tile_source

_MODULES: dict[tuple[int, bool, bool], ModuleType] = {}


@lru_cache(maxsize=8)
def source(width: int, gradient: bool = False, tangent: bool = False) -> str:
    """The tile interpreter module's text for a width and mode."""
    return f"# tile engine sources {tile_version()}\n" + tile_source(width, gradient, tangent)


def module(width: int, gradient: bool = False, tangent: bool = False) -> ModuleType:
    """The tile interpreter module for a width and mode, loaded from the kernel cache
    (written there on first use; numba compiles its entry points on their first call
    unless its cache holds them).  A process that finds the module's file named in the
    cache's index (:func:`_index`) loads it without generating its text (~0.4 s of
    Python a mode)."""
    key = (width, gradient, tangent)
    found = _MODULES.get(key)
    if found is None:
        found = _load_indexed(width, gradient, tangent)
    if found is None:
        found = cache.load_module(source(width, gradient, tangent))
        try:
            _index(width, gradient, tangent).write_text(Path(found.__file__ or "").name)
        except OSError:
            pass  # an index that cannot be written only costs the next process the text
    _MODULES[key] = found
    return found


def _index(width: int, gradient: bool, tangent: bool) -> Path:
    """The file naming the interpreter module of a width and mode in the kernel cache,
    itself named by the tile engine's and the compiled engine's versions (a changed
    generator names another file)."""
    mode = f"{'g' if gradient else ''}{'t' if tangent else ''}" or "v"
    return cache.cache_dir() / \
        f"tile_module_{cache.engine_version()}_{tile_version()}_{_inputs_version()}_" \
        f"W{width}_{mode}"


@lru_cache(maxsize=1)
def _inputs_version() -> str:
    """A hash of the other sources the interpreter's text is generated from: the ISA
    package (the table's templates, their adjoints, the word format), the machine's
    concepts and the compiled interpreter's decoding (its fields)."""
    import hashlib

    root = Path(__file__).resolve().parent.parent.parent
    digest = hashlib.sha256()
    for folder in ("isa", "machine"):
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    digest.update((root / "sim" / "compiled" / "interpreter.py").read_bytes())
    return digest.hexdigest()[:12]


def _load_indexed(width: int, gradient: bool, tangent: bool) -> ModuleType | None:
    import importlib.util

    try:
        name = _index(width, gradient, tangent).read_text().strip()
    except OSError:
        return None
    path = cache.cache_dir() / name
    if not (name.startswith("kernel_") and name.endswith(".py") and path.exists()):
        return None
    module_name = f"revasm_kernel_{path.stem[len('kernel_'):]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    cache.with_bytecode(path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def is_compiled(loaded: ModuleType, function: str) -> bool:
    """Whether numba's cache holds ``function`` of a loaded tile module (its first call
    then compiles nothing)."""
    return cache.module_is_compiled(loaded, function)


# --- per-program tile kernels (``fused.py``) -------------------------------------------------

#: Images larger than this get no per-program kernel (generating its text alone would cost
#: more than it saves; its blocks would exceed ``fused.MAX_BLOCKS`` anyway).
PROGRAM_WORDS = 2048
#: A background build older than this is presumed dead (its marker is ignored).
BUILD_STALE_SECONDS = 900
_PROGRAMS: dict[tuple[str, bool, bool, int], ModuleType | None] = {}


def program_module(image: Image, gradient: bool, tangent: bool, direction: int
                   ) -> ModuleType | None:
    """The per-program tile kernel's module for an image, mode and run direction, loaded
    from the kernel cache (written there first; nothing compiled), or None when the program
    has none (no block to fuse, or too large)."""
    if len(image) > PROGRAM_WORDS:
        return None
    key = (cache.image_key(image, 0), gradient, tangent, direction)
    if key in _PROGRAMS:
        return _PROGRAMS[key]
    from .fused import program_source

    text = program_source(image, gradient, tangent, direction)
    found = None if text is None else cache.load_module(
        f"# tile engine sources {tile_version()}\n{text}")
    _PROGRAMS[key] = found
    return found


def program_ready(loaded: ModuleType) -> bool:
    """Whether numba's cache holds both entry points of a per-program kernel."""
    return all(cache.module_is_compiled(loaded, name) for name in ("run_serial", "run_parallel"))


def build_marker(loaded: ModuleType) -> Path:
    """The file that says a background build of a per-program kernel is under way (it
    holds what the build needs: the image, mode and direction, pickled)."""
    path = Path(loaded.__file__ or "")
    return path.with_name(f".{path.stem}.building")


def build_in_background(image: Image, gradient: bool, tangent: bool, direction: int,
                        memory_words: int) -> bool:
    """Start a detached process that compiles the per-program kernel into numba's cache
    (``python -m revasm.sim.tile.build``), unless one is already at it; True when one
    was started.  The run that asks goes on on the interpreter; later runs find it."""
    loaded = program_module(image, gradient, tangent, direction)
    if loaded is None or program_ready(loaded):
        return False
    marker = build_marker(loaded)
    try:
        if time.time() - marker.stat().st_mtime < BUILD_STALE_SECONDS:
            return False
        marker.unlink()
    except FileNotFoundError:
        pass
    try:
        descriptor = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "wb") as handle:
        pickle.dump((image, gradient, tangent, direction, memory_words), handle)
    subprocess.Popen([sys.executable, "-m", "revasm.sim.tile.build", str(marker)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    return True
