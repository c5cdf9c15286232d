"""How `revasm rtl synth` shows its stages: a live rich status line on a terminal, plain
lines otherwise, always on stderr (stdout holds the table or, with --json, the one JSON
object).  The status line's clock runs on its own (rich refreshes it), so a place and route
that logs nothing for half an hour still shows it is alive and for how long.
"""
from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

import click


class SynthProgress:
    """Stages and tool activity of each part, as they happen.

    On a terminal one status line (a rich ``Progress``: spinner, text, elapsed time)
    shows the part, the stage, the pass the tool's log names and the time the part has
    taken so far, ticking every second; a line is kept per finished stage.  Elsewhere (a
    pipe, a log file, CI) one plain line per stage.  ``say`` prints a message line.
    """

    def __init__(self, parts: int, *, terminal: bool | None = None) -> None:
        self.parts = parts
        self.index = 0
        self.name = ""
        self.stage_name = ""
        self.began = time.perf_counter()
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.progress: Any = None
        self.task: Any = None
        self.console: Any = None

    def __enter__(self) -> SynthProgress:
        if self.terminal:  # rich is imported here: the other commands do not pay for it
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self.console = Console(stderr=True)
            self.progress = Progress(SpinnerColumn(),
                                     TextColumn("{task.description}", markup=False),
                                     TimeElapsedColumn(), console=self.console,
                                     transient=True, redirect_stdout=False,
                                     redirect_stderr=False)
            self.task = self.progress.add_task("starting", total=None)
            self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.progress is not None:
            self.progress.stop()

    @property
    def status_text(self) -> str:
        """What the status line says now (empty off a terminal)."""
        return str(self.progress.tasks[0].description) if self.progress is not None else ""

    def _show(self, text: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=text)

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
        if self.progress is not None:  # the clock counts this part's time
            self.progress.reset(self.task, total=None)

    def stage(self, stage: str, detail: str) -> None:
        """A stage starts (``rtl.synthesis.synth.STAGES``)."""
        self.stage_name = stage
        seconds = time.perf_counter() - self.began
        self._show(f"{self._where()}: {stage} ({detail})")
        self._line(f"  {self._where()}: {stage} ({detail}) at {seconds:.0f} s")

    def activity(self, text: str) -> None:
        """The pass or step a tool's log says it is in: the status line only."""
        self._show(f"{self._where()}: {self.stage_name}: {text}")

    def done(self, cached: bool, seconds: float) -> None:
        if cached:
            self._line(f"  {self._where()}: from the cache (synthesised before in "
                       f"{seconds:.0f} s; --no-cache to run again)")
        else:
            self._line(f"  {self._where()}: done in {time.perf_counter() - self.began:.0f} s")
