"""Numbers for people: joules with SI prefixes, counts with thousands separators."""
from __future__ import annotations

import math

_PREFIXES = [(1e0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"),
             (1e-18, "a"), (1e-21, "z"), (1e-24, "y")]


def si(value: float, unit: str) -> str:
    """``7.213e-11, "J"`` -> ``"72.13 pJ"``."""
    if value == 0 or not math.isfinite(value):
        return f"0 {unit}" if value == 0 else f"{value} {unit}"
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.4g} {prefix}{unit}"
    return f"{value:.3e} {unit}"


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
