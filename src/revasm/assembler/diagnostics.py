"""Source diagnostics: ``file:line:col: error: message``, the line, and a caret.

The assembler collects every problem of a file before it gives up, so that a
user fixes them all in one round; :class:`AssemblyError` carries the list.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    """One problem at a place in a source file (line and column are 1-based)."""

    file: str
    line: int
    column: int
    message: str
    source_text: str
    severity: str = "error"

    def caret_line(self) -> str:
        """Spaces (tabs kept, so the caret lines up in a terminal) then ``^``."""
        prefix = self.source_text[: max(self.column - 1, 0)]
        pad = "".join("\t" if ch == "\t" else " " for ch in prefix)
        return pad + " " * (self.column - 1 - len(prefix)) + "^"

    def format(self) -> str:
        head = f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"
        return f"{head}\n{self.source_text}\n{self.caret_line()}"

    def __str__(self) -> str:
        return self.format()


class AssemblyError(Exception):
    """Assembly failed; ``diagnostics`` lists every error found, in source order."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__(self.format())

    def format(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


#: After this many errors the assembler stops (clang stops after 20): enough to fix a real
#: file in one round, where a file that is not PAL at all (a 21 MB waveform given as a
#: program) had made two million of them -- 94 s and 3.4 GB, and all of them printed.
MAX_ERRORS = 100
#: How the diagnostic that ends a stopped assembly begins.
TOO_MANY_ERRORS = "too many errors"


class DiagnosticLog:
    """Collects the diagnostics of one source file, up to :data:`MAX_ERRORS`."""

    def __init__(self, filename: str, lines: list[str]):
        self.filename = filename
        self.lines = lines
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[Diagnostic] = set()

    def error(self, line: int, column: int, message: str) -> None:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        diagnostic = Diagnostic(self.filename, line, column, message, text)
        if diagnostic not in self._seen:  # e.g. one cause seen in two expanded words
            self._seen.add(diagnostic)
            self.diagnostics.append(diagnostic)
            if len(self.diagnostics) >= MAX_ERRORS:
                self._stop(line, text)

    def _stop(self, line: int, text: str) -> None:
        """Give up: the errors so far, then one that says why there are no more."""
        ordered = sorted(self.diagnostics, key=lambda d: (d.line, d.column))
        ordered.append(Diagnostic(self.filename, line, 1,
                                  f"{TOO_MANY_ERRORS}: stopped after {MAX_ERRORS} (is "
                                  f"{self.filename} a PAL source file?)", text))
        raise AssemblyError(ordered)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def raise_if_errors(self) -> None:
        if self.errors:
            ordered = sorted(self.diagnostics, key=lambda d: (d.line, d.column))
            raise AssemblyError(ordered)
