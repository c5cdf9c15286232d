"""A long step announced on a terminal: what it is doing and the seconds so far, live.

The compiled engine's first kernel builds and the Verilator model's first build take from
seconds to a minute, and say so through a notice function (``COMPILE_NOTICE`` in
``sim/compiled/machine.py``, ``BUILD_NOTICE`` in ``rtl/verification/verilator.py``) in two
calls: ``"compiling ...... "`` as the step starts, ``"done in 1.3 s\\n"`` as it ends.
:func:`to_terminal` shows the first as a rich status line (a spinner, the text and the
elapsed time, refreshed as the step runs) and replaces it by the whole line when the step
ends.  Only on a terminal: when stderr is a pipe or a file nothing is written (a log, CI,
``--json`` runs read by programs stay as they were).
"""
from __future__ import annotations

import sys
import threading
from typing import Any

_LOCK = threading.Lock()
_OPEN: dict[str, Any] = {}


def live_status(text: str) -> Any:
    """A started rich ``Progress`` on stderr showing ``text`` and the time elapsed; the
    caller stops it.  Transient: the line goes when it stops."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False),
                        TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                        redirect_stdout=False, redirect_stderr=False)
    progress.add_task(text, total=None)
    progress.start()
    return progress


def to_terminal(text: str) -> None:
    """A notice's two calls, on a terminal: a live status line while the step runs (the
    first call, not ending in a newline), then the whole line (the second)."""
    if not sys.stderr.isatty():
        return
    with _LOCK:
        if not text.endswith("\n"):
            if "status" in _OPEN:  # a step inside a step: the outer line stays
                return
            _OPEN["text"] = text
            try:
                _OPEN["status"] = live_status(text.rstrip(". ").rstrip())
            except Exception:  # rich's LiveError: another live display (a progress bar) runs
                sys.stderr.write(text)  # the plain announcement, finished by the next call
                sys.stderr.flush()
                _OPEN["text"] = ""
            return
        status = _OPEN.pop("status", None)
        begun = _OPEN.pop("text", "")
        if status is not None:
            status.stop()
        sys.stderr.write(begun + text)
        sys.stderr.flush()
