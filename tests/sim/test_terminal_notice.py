"""A long step on a terminal: a live status line with the seconds so far, then one line."""
from __future__ import annotations

import io
import time

from rich.progress import TimeElapsedColumn

from revasm.sim import terminal_notice
from revasm.sim.compiled import machine


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_step_shows_its_elapsed_time_while_it_runs_then_one_line(monkeypatch):
    stderr = FakeTerminal()
    monkeypatch.setattr("sys.stderr", stderr)
    terminal_notice.to_terminal("compiling kernel for fib.pal (15 instructions)... ")
    status = terminal_notice._OPEN["status"]
    try:
        assert status.tasks[0].description == "compiling kernel for fib.pal (15 instructions)"
        time.sleep(1.2)  # no call in between: the clock runs on its own
        elapsed = next(c for c in status.columns if isinstance(c, TimeElapsedColumn))
        assert str(elapsed.render(status.tasks[0])) == "0:00:01"
    finally:
        terminal_notice.to_terminal("done in 1.2 s\n")
    assert "status" not in terminal_notice._OPEN
    assert stderr.getvalue().endswith(
        "compiling kernel for fib.pal (15 instructions)... done in 1.2 s\n")


def test_nothing_is_written_when_stderr_is_not_a_terminal(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    terminal_notice.to_terminal("compiling ... ")
    terminal_notice.to_terminal("done in 1.0 s\n")
    assert stderr.getvalue() == "" and not terminal_notice._OPEN


def test_the_compiled_engine_announces_its_kernel_builds_live():
    assert machine.COMPILE_NOTICE is terminal_notice.to_terminal


def test_under_another_live_display_the_notice_is_plain_text(monkeypatch):
    """A batch's progress bar is a rich live display; rich allows one at a time."""
    from rich.console import Console
    from rich.progress import Progress

    stderr = FakeTerminal()
    monkeypatch.setattr("sys.stderr", stderr)
    with Progress(console=Console(stderr=True)):
        terminal_notice.to_terminal("compiling the interpreter kernel (W = 32)... ")
        terminal_notice.to_terminal("done in 3.0 s\n")
    assert "compiling the interpreter kernel (W = 32)... done in 3.0 s\n" in stderr.getvalue()
    assert not terminal_notice._OPEN
