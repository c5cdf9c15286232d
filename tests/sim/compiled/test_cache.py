"""The kernel cache's compile lock (``sim/compiled/cache.compiling``): while one process
compiles a kernel's entry, another that needs it waits instead of compiling it again."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from revasm.sim.compiled import cache

#: In another process: try the lock without waiting; print whether it was free.
_TRY = """
import fcntl, sys
with open(sys.argv[1], "a") as handle:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("held")
    else:
        print("free")
"""


def _other_process_finds(lock: str) -> str:
    return subprocess.run([sys.executable, "-c", _TRY, lock], capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()


def test_a_kernel_being_compiled_is_locked_for_other_processes(tmp_path):
    module = SimpleNamespace(__file__=str(tmp_path / "kernel_abc.py"))
    lock = str(tmp_path / ".kernel_abc.run_serial.lock")
    with cache.compiling(module, "run_serial"):  # type: ignore[arg-type]
        assert _other_process_finds(lock) == "held"
    assert _other_process_finds(lock) == "free"


def test_an_unwritable_cache_compiles_without_a_lock(tmp_path):
    module = SimpleNamespace(__file__=str(tmp_path / "missing" / "kernel_abc.py"))
    with cache.compiling(module, "run_serial"):  # type: ignore[arg-type]
        ran = True
    assert ran and not (tmp_path / "missing").exists()
