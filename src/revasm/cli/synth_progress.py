"""How `revasm rtl synth` shows its stages: a rich status line on a terminal, plain lines
otherwise, always on stderr (stdout holds the table or, with --json, the one JSON object).
"""
from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

import click


class SynthProgress:
    """Stages and tool activity of each part, as they happen.

    On a terminal one status line (rich) shows the part, the stage, the pass the tool's
    log names and the seconds so far, and a line is kept per finished stage; elsewhere
    (a pipe, a log file, CI) one plain line per stage.  ``say`` prints a message line.
    """

    def __init__(self, parts: int, *, terminal: bool | None = None) -> None:
        self.parts = parts
        self.index = 0
        self.name = ""
        self.stage_name = ""
        self.began = time.perf_counter()
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.status: Any = None
        self.console: Any = None

    def __enter__(self) -> SynthProgress:
        if self.terminal:  # rich is imported here: the other commands do not pay for it
            from rich.console import Console
            self.console = Console(stderr=True)
            self.status = self.console.status("")
            self.status.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.status is not None:
            self.status.stop()

    def _line(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text, markup=False, highlight=False)
        else:
            click.echo(text, err=True)

    def _where(self) -> str:
        return f"[{self.index}/{self.parts}] {self.name}"

    def say(self, text: str) -> None:
        self._line(text)

    def start_part(self, name: str) -> None:
        self.index += 1
        self.name = name
        self.began = time.perf_counter()

    def stage(self, stage: str, detail: str) -> None:
        """A stage starts (``rtl.synthesis.synth.STAGES``)."""
        self.stage_name = stage
        seconds = time.perf_counter() - self.began
        if self.status is not None:
            self.status.update(f"{self._where()}: {stage} ({detail}) {seconds:.0f} s")
        self._line(f"  {self._where()}: {stage} ({detail}) at {seconds:.0f} s")

    def activity(self, text: str) -> None:
        """The pass or step a tool's log says it is in: the status line only."""
        if self.status is not None:
            seconds = time.perf_counter() - self.began
            self.status.update(f"{self._where()}: {self.stage_name}: {text} {seconds:.0f} s")

    def done(self, cached: bool, seconds: float) -> None:
        if cached:
            self._line(f"  {self._where()}: from the cache (synthesised before in "
                       f"{seconds:.0f} s; --no-cache to run again)")
        else:
            self._line(f"  {self._where()}: done in {time.perf_counter() - self.began:.0f} s")
