"""Compile errors: a message at a Python source position, with the line, a caret and a hint.

Formatted like the assembler's diagnostics (``file:line:col: error: message``),
so that editors and users read both the same way.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, unsafe_hash=True)
class SourcePos:
    """A 1-based line and column in a Python file."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class CompileError(Exception):
    """A program outside the eDSL's grammar or failing a static check."""

    def __init__(self, pos: SourcePos, message: str, hint: str = "",
                 source_line: str = "") -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message
        self.hint = hint
        self.source_line = source_line

    def format(self) -> str:
        lines = [f"{self.pos}: error: {self.message}"]
        if self.source_line:
            lines.append("  " + self.source_line.rstrip())
            lines.append("  " + " " * (self.pos.column - 1) + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()
