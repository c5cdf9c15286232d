"""The RTL's outside programs: where they are, and where they keep what they made.

Shared by verification (the formal proofs' sby and solvers, the Verilator harnesses) and
synthesis (yosys, nextpnr), so it belongs to neither: :func:`tool` finds a yowasp/z3
executable, :func:`cache_dir` is ``$XDG_CACHE_HOME/revasm/<tool>``, where built
Verilator harnesses (``rtl/verification/verilator.py``) and synthesis results
(``rtl/synthesis/synth.py``) are cached, each keyed by a hash of everything its result
depends on.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def tool(name: str) -> str:
    """A yowasp/z3 executable: beside the running Python first, else on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed (pip install 'revasm[rtl]')")
    return found


def cache_dir(tool: str) -> Path:
    """``$XDG_CACHE_HOME/revasm/<tool>``, or ``~/.cache/revasm/<tool>`` (not created)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "revasm" / tool
