"""The programs of examples/nilang: the files that define @reversible functions.

The folder also holds plain Python beside them (inputs, float64 references, the
counts script); a file is a program exactly when it marks a function @reversible.
"""
from __future__ import annotations

from pathlib import Path

NILANG = Path(__file__).resolve().parents[2] / "examples" / "nilang"


def program_files() -> list[Path]:
    return sorted(p for p in NILANG.glob("*.py") if "@reversible" in p.read_text())
