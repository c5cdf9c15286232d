"""Where a fault is, in the user's terms: the one reading of the source map for every surface.

A compiled program's instructions carry their user-source origin (``SourceLocation.origin``:
the Janus or Python file and line, and for a run-time check what its failure means).  A
fault in such a program is reported at that origin -- by ``fault_json`` (``run``, ``batch``,
reports, the debugger), by ``str(MachineFault)`` and by the Python API's ``ProgramFault``
-- with the generated PAL only as extra detail (``pal_line``).  A PAL program's faults are
at their PAL line, as before.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from revasm.assembler.image import SourceLocation, SourceOrigin
from revasm.isa.fixed_point import word_format


class MachineFault(Protocol):
    """What this module reads of a ``faults.MachineFault`` (which itself reports through
    this module, so the type is structural here)."""

    @property
    def message(self) -> str: ...
    @property
    def location(self) -> SourceLocation | None: ...
    @property
    def jump_source_location(self) -> SourceLocation | None: ...
    @property
    def registers(self) -> Sequence[int]: ...
    @property
    def width(self) -> int: ...


@dataclass(frozen=True)
class FaultPlace:
    """A fault's place and message as a person reads them.

    ``file``/``line``/``column``/``text``: the user's source (the PAL source for PAL
    programs); ``message``: the check's note with the values it saw, else the machine's
    message; ``check``: the check's kind (empty for the machine's own faults); ``pal_file``
    and ``pal_line``: the generated PAL, for compiled programs (None otherwise)."""

    file: str | None
    line: int | None
    column: int | None
    text: str | None
    message: str
    check: str = ""
    pal_file: str | None = None
    pal_line: int | None = None
    pal_text: str | None = None


def fault_place(fault: MachineFault) -> FaultPlace:
    """The place and message of ``fault`` in the user's source (module docstring)."""
    location = fault.location
    if location is None or location.origin is None:
        return FaultPlace(location.file if location else None,
                          location.line if location else None,
                          location.column if location else None,
                          location.text.strip() if location else None, fault.message)
    # A failed check: the trap pad the jump landed on (or the faulting PC, or the jump's
    # source) carries the check's note; else the faulting instruction's own origin.
    for candidate in (location, fault.jump_source_location):
        origin = candidate.origin if candidate is not None else None
        if origin is not None and origin.note and (origin.role == "check"
                                                   or candidate is location):
            return _place(origin, location, with_values(origin.note, fault), origin.check)
    return _place(location.origin, location, fault.message, location.origin.check)


def _place(origin: SourceOrigin, pal: SourceLocation | None, message: str,
           check: str) -> FaultPlace:
    return FaultPlace(origin.file, origin.line, origin.column, origin.text, message, check,
                      pal.file if pal else None, pal.line if pal else None,
                      pal.text.split(";", 1)[0].strip() if pal else None)


_MARKER = re.compile(r"\{\$(\d+)([+-]\d+)?(?:@([\d,]+))?\}")


def with_values(note: str, fault: MachineFault) -> str:
    """A check's note with its ``{$r}`` markers replaced by the faulting state's values:
    ``{$r+k}`` adds k, ``{$r@3,4}`` reads a flat index as the indices of a 3 x 4 array."""
    fmt = word_format(fault.width)

    def value(match: re.Match) -> str:
        register = int(match.group(1))
        if register >= len(fault.registers):
            return match.group(0)
        number = fmt.signed(fault.registers[register]) + int(match.group(2) or 0)
        if not match.group(3):
            return str(number)
        indices = []
        for extent in reversed([int(x) for x in match.group(3).split(",")]):
            number, index = divmod(number, extent)
            indices.append(index)
        return ", ".join(map(str, reversed(indices)))
    return _MARKER.sub(value, note)
