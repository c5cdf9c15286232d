"""The kernel cache: generated modules on disk, keyed by their source and the engine version.

A kernel module's text is a function of the image (its decoded cells), the mode, the
memory size and the generator; its file name is the hash of that text and of the
engine's own sources (:func:`engine_version`), so an image seen before loads its
module -- and numba's ``cache=True`` loads the machine code compiled beside it
(``__pycache__``) -- without compiling anything.  The directory is ``$REVASM_CACHE_DIR``,
else ``$XDG_CACHE_HOME/revasm`` (``~/.cache/revasm``), then ``kernels/``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType

#: Bump by hand for a change the hashed sources do not show (none so far).
ENGINE_VERSION = "1"

_SOURCES = ("vocab.py", "translate.py", "generate.py", "cache.py")
_LOADED: dict[str, ModuleType] = {}


def cache_dir() -> Path:
    """Where kernels live (created on first use)."""
    root = os.environ.get("REVASM_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "revasm"
    return base / "kernels"


@lru_cache(maxsize=1)
def engine_version() -> str:
    """The engine version and a hash of the sources kernels depend on."""
    import numba

    digest = hashlib.sha256(f"{ENGINE_VERSION} numba {numba.__version__}".encode())
    here = Path(__file__).parent
    for name in _SOURCES:
        digest.update((here / name).read_bytes())
    return f"{ENGINE_VERSION}-{digest.hexdigest()[:12]}"


def load_module(source: str) -> ModuleType:
    """The module of a kernel source, written to the cache directory once and imported."""
    key = hashlib.sha256(f"{engine_version()}\n{source}".encode()).hexdigest()[:24]
    module = _LOADED.get(key)
    if module is not None:
        return module
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"kernel_{key}.py"
    if not path.exists():
        temporary = directory / f".kernel_{key}.{os.getpid()}.tmp"
        temporary.write_text(source)
        os.replace(temporary, path)
    name = f"revasm_kernel_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    _LOADED[key] = module
    return module
