"""A machine fault as JSON: the one shape every command, report and API result writes."""
from __future__ import annotations

from typing import Any

from .fault_place import fault_place
from .faults import MachineFault

#: The keys of :func:`fault_json`, in order (a compiled program's fault adds ``check``,
#: ``pal_file``, ``pal_line`` and ``pal_source``).
FAULT_JSON_KEYS = ("kind", "pc", "file", "line", "source", "message")


def fault_json(fault: MachineFault) -> dict[str, Any]:
    """``kind``, ``pc``, the source ``file``, ``line`` and ``source`` text (None where the PC
    has no source line), ``message``.  For a compiled Janus or Python program the file and
    line are the user's (``fault_place``), the message the failed check's in that language's
    terms with the values it saw, and the generated PAL comes as ``pal_file``, ``pal_line``
    and ``pal_source``.  Callers add their own context (``pass``, ``lane``, ...) to the
    dict; the shape is in docs/cli.md "On a machine fault"."""
    place = fault_place(fault)
    out: dict[str, Any] = {"kind": fault.kind, "pc": fault.pc, "file": place.file,
                           "line": place.line, "source": place.text,
                           "message": place.message}
    if place.pal_line is not None:
        out.update(check=place.check or None, pal_file=place.pal_file,
                   pal_line=place.pal_line, pal_source=place.pal_text)
    return out
