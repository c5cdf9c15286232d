"""How the command line reports failure: a message, an exit code, no traceback.

Exit codes (the contract scripts rely on): 0 ok; 1 an assembly/compile error
or a machine fault; 2 a usage error (click's own code for bad arguments).

With ``--json`` every failure is also one JSON object on stdout (cli/json_mode.py;
the shape is ``schemas/error.schema.json``, documented in docs/cli.md): a ToolError
carries the fields of that object -- its kind and, when it has one, the place in a
source file.
"""
from __future__ import annotations

import errno
import re
from typing import IO, Any

import click

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
#: Ctrl-C (SIGINT), in every command and mode: 128 + 2, as a shell reports it.
EXIT_INTERRUPTED = 130

#: What an interrupted command keeps: set by the commands that write as they go.
_KEPT: list[str] = []
#: The errors of writing a stream that a command reports as such (not as a bug): a closed
#: pipe, a full disk or quota, an I/O error of the device.
STREAM_ERRORS = {errno.EPIPE: "the reader closed it (broken pipe)",
                 errno.ENOSPC: "no space left on the device",
                 errno.EDQUOT: "the disk quota is exceeded",
                 errno.EIO: "an input/output error of the device"}


def keep_on_interrupt(note: str) -> None:
    """Say what the running command keeps if it is interrupted (``interrupted_message``)."""
    _KEPT.append(note)


def interrupted_message() -> str:
    """``revasm: interrupted: ...`` and what was kept."""
    note = _KEPT[-1] if _KEPT else ("every output file written so far is kept, none is left "
                                    "half-written (each is written whole or not at all)")
    return f"revasm: interrupted: {note}"


def stream_error_message(exc: BaseException) -> str | None:
    """The message of a failed write to an output stream (standard output, a pipe):
    ``revasm: error: cannot write the output: ...``; None for any other error."""
    if not isinstance(exc, OSError) or exc.errno not in STREAM_ERRORS or exc.filename:
        return None
    return f"revasm: error: cannot write the output: {STREAM_ERRORS[exc.errno]}"

#: The kinds of error of the JSON error object (the schema's enum says the same).
ERROR_KINDS = ("assembly", "compile", "usage", "input", "output", "internal", "interrupted",
               "failure")

#: ``FILE: error:`` or ``FILE:LINE:COL: error:`` at the start of a message.
_PLACE = re.compile(r"^(?P<file>[^\s:][^:\n]*?)(?::(?P<line>\d+)(?::(?P<col>\d+))?)?: error: ")


class ToolError(click.ClickException):
    """An error in the user's input or program: printed as is, exit code 1.

    ``kind`` is one of :data:`ERROR_KINDS`; ``file``/``line``/``col`` the place
    (read from a leading ``FILE[:LINE:COL]: error:`` of the message when not given);
    ``diagnostics`` every source diagnostic (assembly errors list them all).
    """

    exit_code = EXIT_FAILURE

    def __init__(self, message: str, *, kind: str = "input", file: str | None = None,
                 line: int | None = None, col: int | None = None,
                 diagnostics: list[dict[str, Any]] | None = None, hint: str | None = None):
        super().__init__(message)
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        if file is None:
            place = _PLACE.match(message)
            if place and not place["file"].startswith("revasm"):
                file = place["file"]
                line = int(place["line"]) if place["line"] else line
                col = int(place["col"]) if place["col"] else col
        self.kind = kind
        self.file = file
        self.line = line
        self.col = col
        self.diagnostics = diagnostics
        self.hint = hint

    def show(self, file: IO[Any] | None = None) -> None:  # click's hook
        click.echo(self.format_message(), err=True)

    def error_json(self) -> dict[str, Any]:
        """The ``error`` member of the JSON error object."""
        out: dict[str, Any] = {"kind": self.kind, "file": self.file, "line": self.line,
                               "col": self.col, "message": self.format_message()}
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics
        if self.hint:
            out["hint"] = self.hint
        return out


def output_error(path: object, exc: OSError, what: str = "") -> ToolError:
    """A file that could not be written (exit 1, kind ``output``)."""
    reason = exc.strerror or str(exc)
    return ToolError(f"{path}: error: cannot write{' ' + what if what else ''}: {reason}",
                     kind="output", file=str(path))
