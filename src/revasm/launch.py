"""The ``revasm`` command's entry point (and ``python -m revasm``'s).

Ctrl-C while the command line is still loading -- its imports take a tenth of a second or
more -- exits 130 saying so (with ``--json``, as the one error object of kind
``interrupted``), as Ctrl-C does once a command runs (``cli/main.py``), not with a
traceback of whichever import it interrupted.  This module imports only ``sys`` and a
function that imports nothing (``interrupts.py``), so the window left is the interpreter's
own start-up and the package's ``__init__`` (a few milliseconds; the signals campaign
found Ctrl-C in ``json``'s import here when this module imported it first).
"""
from __future__ import annotations

import sys

from revasm.interrupts import caused_by_ctrl_c
from revasm.leftovers import end_here, kept

EXIT_INTERRUPTED = 130
MESSAGE = "revasm: interrupted: before the command started; nothing was done"


def main() -> None:
    """Load the command line and run it."""
    try:
        from revasm.cli.main import main as command_line
    except BaseException as exc:
        if not caused_by_ctrl_c(exc):
            raise
        sys.stderr.write(MESSAGE + "\n")
        if "--json" in sys.argv[1:sys.argv.index("--") if "--" in sys.argv else None]:
            import json  # only now: its import compiles regular expressions, a window more

            error = {"kind": "interrupted", "file": None, "line": None, "col": None,
                     "message": MESSAGE}
            sys.stdout.write(json.dumps({"status": "error", "exit_code": EXIT_INTERRUPTED,
                                         "error": error}) + "\n")
        sys.exit(EXIT_INTERRUPTED)
    end_here()
    try:
        command_line()
    except SystemExit as exc:
        if kept() and isinstance(exc.code, int):
            _exit_now(exc.code)
        raise


def _exit_now(code: int) -> None:
    """End the process with ``code`` without freeing what it holds (``leftovers.py``):
    the command has written its output; the streams are flushed once more first (a failed
    flush exits 1, as the command line's own last flush does)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code)
