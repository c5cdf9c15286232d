"""A machine fault as JSON: the one shape every command, report and API result writes."""
from __future__ import annotations

from typing import Any

from .faults import MachineFault

#: The keys of :func:`fault_json`, in order.
FAULT_JSON_KEYS = ("kind", "pc", "line", "source", "message")


def fault_json(fault: MachineFault) -> dict[str, Any]:
    """``kind``, ``pc``, source ``line`` and ``source`` text (None where the PC has no source
    line), ``message``.  Callers add their own context (``pass``, ``lane``, ...) to the
    dict; the shape is in docs/cli.md "On a machine fault"."""
    location = fault.location
    return {"kind": fault.kind, "pc": fault.pc,
            "line": location.line if location else None,
            "source": location.text.strip() if location else None,
            "message": fault.message}
