"""Set-up of each local Dask worker process (a Dask preload, ``distributed.worker.preload``).

Two things a user should never see from the workers of ``revasm batch --workers N``:

- Ctrl-C on a terminal reaches every process of the foreground group, the workers too;
  each would print a ``KeyboardInterrupt`` traceback and its cancelled tasks.  The
  command itself handles Ctrl-C (it closes the cluster, says what was kept and that the
  same command resumes, exit 130), so a worker ignores SIGINT.
- A worker that is being closed may log the scheduler's connection going away
  (``CommClosedError``) with a traceback: :class:`ShutdownFilter` drops records below
  CRITICAL once its worker is closing.
"""
from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

#: The worker states in which its log is shutdown noise.
CLOSING = ("closing", "closing_gracefully", "closed", "failed")


class ShutdownFilter(logging.Filter):
    """Drops log records below CRITICAL while ``closing()`` says the cluster is closing."""

    def __init__(self, closing: Callable[[], bool]) -> None:
        super().__init__("revasm-shutdown")
        self.closing = closing

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.CRITICAL or not self.closing()


def distributed_handlers() -> list[logging.Handler]:
    """The handlers Dask's log records reach: the ``distributed`` logger's and the root's."""
    return [*logging.getLogger("distributed").handlers, *logging.getLogger().handlers]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, called in the worker process as the worker starts."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    shutdown = ShutdownFilter(lambda: getattr(worker.status, "name", "") in CLOSING)
    for handler in distributed_handlers():
        handler.addFilter(shutdown)
