"""Execution traces: one record per executed instruction, and its one-line form."""
from __future__ import annotations

from dataclasses import dataclass

from revasm.assembler.image import SourceLocation


@dataclass(frozen=True)
class TraceRecord:
    """What one instruction did.

    ``step`` is the instruction's 1-based number in the run; ``direction`` is
    DIR while it executed.  Changes are ``(where, old, new)`` triples of W-bit
    words; ``br`` and ``dir_change`` are ``(old, new)`` or ``None``;
    ``output`` holds the words it appended to the SHOW/EMIT log.
    """

    step: int
    pc: int
    direction: int
    text: str
    location: SourceLocation | None
    registers: tuple[tuple[int, int, int], ...]
    memory: tuple[tuple[int, int, int], ...]
    br: tuple[int, int] | None
    dir_change: tuple[int, int] | None
    output: tuple[int, ...]
    width: int = 32

    def __str__(self) -> str:
        return format_trace_line(self)


def _signed(word: int, width: int) -> int:
    return word - ((word & (1 << (width - 1))) << 1)


def format_trace_line(record: TraceRecord) -> str:
    """``     12  pc 5   +  ADD $3 $4             ; fib.pal:9   $3: 5 -> 9``"""
    arrow = "+" if record.direction > 0 else "-"
    where = f"; line {record.location.line}" if record.location else ""
    head = f"{record.step:>8}  pc {record.pc:<5} {arrow}  {record.text:<22}{where:<12}"
    changes = []
    w = record.width
    for register, old, new in record.registers:
        changes.append(f"${register}: {_signed(old, w)} -> {_signed(new, w)}")
    for address, old, new in record.memory:
        changes.append(f"[{address}]: {_signed(old, w)} -> {_signed(new, w)}")
    if record.br is not None:
        changes.append(f"BR: {record.br[0]} -> {record.br[1]}")
    if record.dir_change is not None:
        changes.append(f"DIR: {record.dir_change[0]:+d} -> {record.dir_change[1]:+d}")
    for word in record.output:
        changes.append(f"out {_signed(word, w)}")
    return (head + "  " + "  ".join(changes)).rstrip()
