"""Where the RTL tools keep what they made: ``$XDG_CACHE_HOME/revasm/<tool>``.

Built Verilator harnesses (``rtl/verilator.py``) and synthesis results (``rtl/synth.py``)
are cached there, each keyed by a hash of everything its result depends on.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(tool: str) -> Path:
    """``$XDG_CACHE_HOME/revasm/<tool>``, or ``~/.cache/revasm/<tool>`` (not created)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "revasm" / tool
