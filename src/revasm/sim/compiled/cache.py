"""The kernel cache: generated modules on disk, keyed by their source and the engine version.

A kernel module's text is a function of the image (its decoded cells), the mode, the
memory size and the generator; its file name is the hash of that text and of the
engine's own sources (:func:`engine_version`), so an image seen before loads its
module -- and numba's ``cache=True`` loads the machine code compiled beside it
(``__pycache__``) -- without compiling anything.  The directory is ``$REVASM_CACHE_DIR``,
else ``$XDG_CACHE_HOME/revasm`` (``~/.cache/revasm``), then ``kernels/``.

Beside the kernels, ``run_<image hash>.json`` records the steps per lane of a program's
last value-mode run on the compiled engine: ``auto`` (``sim/engines.py``) picks the
compiled engine for a job whose kernel is compiled and whose work pays for its start-up.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from revasm.assembler.image import Image

#: Bump by hand for a change the hashed sources do not show (none so far).
ENGINE_VERSION = "1"

_SOURCES = ("vocab.py", "overflow.py", "translate.py", "generate.py", "pipeline.py", "cache.py")
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
    """The engine version and a hash of the sources kernels depend on, numba's version
    file among them (read, not imported: ``auto`` asks without importing numba)."""
    digest = hashlib.sha256(ENGINE_VERSION.encode())
    spec = importlib.util.find_spec("numba")
    if spec is not None and spec.origin:
        numba_version = Path(spec.origin).with_name("_version.py")
        digest.update(numba_version.read_bytes() if numba_version.exists()
                      else spec.origin.encode())
    here = Path(__file__).parent
    for name in _SOURCES:
        path = here / name
        if path.exists():
            digest.update(path.read_bytes())
    return f"{ENGINE_VERSION}-{digest.hexdigest()[:12]}"


def kernel_key(source: str) -> str:
    """The name of a kernel source in the cache (its hash and the engine version's)."""
    return hashlib.sha256(f"{engine_version()}\n{source}".encode()).hexdigest()[:24]


def is_compiled(source: str, function: str) -> bool:
    """Whether numba's cache holds machine code of ``function`` of this kernel source
    (its index file beside the module), so that running it compiles nothing."""
    stem = f"kernel_{kernel_key(source)}"
    return any((cache_dir() / "__pycache__").glob(f"{stem}.{function}-*.nbi"))


def module_is_compiled(module: ModuleType, function: str) -> bool:
    """:func:`is_compiled` for a loaded kernel module."""
    path = Path(module.__file__ or "")
    return any((path.parent / "__pycache__").glob(f"{path.stem}.{function}-*.nbi"))


@contextmanager
def compiling(module: ModuleType, function: str) -> Iterator[None]:
    """Hold the kernel cache's lock on compiling ``function`` of ``module`` (a file lock
    beside the module): two processes that need one kernel first (two test workers, two
    runs of a user's) compile it once -- the second waits, then its first call loads the
    machine code numba cached.  Without ``fcntl`` or a writable cache: no lock."""
    path = Path(module.__file__ or "")
    try:
        import fcntl

        handle = open(path.with_name(f".{path.stem}.{function}.lock"), "a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def with_bytecode(path: Path) -> None:
    """Write the bytecode of the kernel module at ``path`` beside it if it is not there: a
    tile interpreter's module is 6 000 lines, which Python compiled again on every import
    where it may not write bytecode itself (``PYTHONDONTWRITEBYTECODE``: 0.15 s of each
    command's start); it still reads bytecode that is there."""
    import py_compile

    if os.path.exists(importlib.util.cache_from_source(str(path))):
        return
    try:
        py_compile.compile(str(path), doraise=True)
    except (OSError, py_compile.PyCompileError):
        pass  # the import compiles it, as before


def load_module(source: str) -> ModuleType:
    """The module of a kernel source, written to the cache directory once and imported."""
    key = kernel_key(source)
    module = _LOADED.get(key)
    if module is not None:
        return module
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"kernel_{key}.py"
    if not path.exists():
        # the process and the thread: two chunks of a batch may load it at once
        temporary = directory / f".kernel_{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        temporary.write_text(source)
        os.replace(temporary, path)
    name = f"revasm_kernel_{key}"
    with_bytecode(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    _LOADED[key] = module
    return module


# --- what ``auto`` knows about a program's compiled runs ----------------------------------------

def image_key(image: Image, memory_words: int) -> str:
    """The name of an image (its words, code cells and width) and memory size in the cache."""
    digest = hashlib.sha256(f"{engine_version()} W{image.width} M{memory_words}\n".encode())
    digest.update(bytes(bool(flag) for flag in image.is_code))
    digest.update(",".join(str(word) for word in image.words).encode())
    if image.immediates:  # PendVM-compatibility mode's wide immediates: not in the words
        digest.update(f"\n{sorted(image.immediates.items())}".encode())
    return digest.hexdigest()[:24]


#: Fewer active lanes than this run on one thread (no pool start-up): ``machine.runner_for``,
#: and ``auto``'s reading of a run record (``sim/engines.py``) without importing numba.
PARALLEL_LANES = 64


def run_record(image: Image, memory_words: int) -> Path:
    """The file that records ``image``'s last value-mode run on the compiled engine."""
    return cache_dir() / f"run_{image_key(image, memory_words)}.json"


def record_run(path: Path, module: ModuleType, steps: float) -> None:
    """Remember a value-mode run of an image on the compiled engine in its
    :func:`run_record` file: the kernel module and the steps per lane the run took
    (``auto`` reads them, :func:`recorded_steps`)."""
    record = {"module": str(Path(module.__file__ or "").resolve()), "steps": float(steps)}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        temporary.write_text(json.dumps(record))
        os.replace(temporary, path)
    except OSError:
        pass  # a cache that cannot be written only costs ``auto`` its knowledge


def recorded_steps(image: Image, memory_words: int, runner: str) -> float | None:
    """The steps per lane of the last value-mode run of ``image`` on the compiled engine,
    if its kernel's ``runner`` (``run_serial``/``run_parallel``) is compiled in the cache;
    else None.  Reads one small file: no numba import, no kernel generated."""
    path = run_record(image, memory_words)
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    module = record.get("module") if isinstance(record, dict) else None
    if not isinstance(module, str):
        return None
    kernel = Path(module)  # where the kernel was loaded from (its numba cache beside it)
    if not any((kernel.parent / "__pycache__").glob(f"{kernel.stem}.{runner}-*.nbi")):
        return None
    steps = record.get("steps")
    return float(steps) if isinstance(steps, (int, float)) else None
