"""Driving a session from lines of commands: a script, standard input, or a person.

Every command's events go to one sink: JSON Lines (``--json``: one event object a line)
or the renderer.  A script's session ends with an ``exit`` event that says how it went.
"""
from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

from .commands import Event, Interpreter

Sink = Callable[[Event], None]


def json_sink(stream: TextIO) -> Sink:
    """One JSON object a line, flushed at once (a tool may wait for each event)."""
    def emit(event: Event) -> None:
        stream.write(json.dumps(event) + "\n")
        stream.flush()
    return emit


def start_event(interpreter: Interpreter) -> Event:
    """Where the session starts, and what it debugs."""
    event = interpreter.where_event("start")
    session = interpreter.session
    event.update(width=session.image.width, grad=session.grad,
                 breakpoints_on=["labels", "pcs", "PAL lines"]
                 + ([f"{session.source.language.capitalize()} lines"]
                    if session.source.program is not None else []))
    return event


def run_lines(interpreter: Interpreter, lines: Iterable[str], emit: Sink, *,
              echo: Callable[[str], None] | None = None) -> Event:
    """Execute each line; every event carries its ``input`` line.  Returns the ``exit`` event
    (``errors``: commands that failed; ``fault``: the session ended stopped at a fault;
    ``interrupted``: Ctrl-C ended it).

    Ctrl-C (SIGINT) ends the session and still emits the ``exit`` event, always the last:
    while a command runs the machine stops between two instructions (the command's events
    say ``interrupted``), while the next line is awaited the wait ends."""
    errors = 0
    state = {"busy": False, "interrupted": False}
    session = interpreter.session

    def on_interrupt(signum: int, frame: object) -> None:
        state["interrupted"] = True
        if state["busy"]:
            session.interrupt_requested = True  # stop at the next instruction boundary
        else:
            raise KeyboardInterrupt

    with _handling_sigint(on_interrupt):
        try:
            for raw in lines:
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                state["busy"] = True
                if echo is not None:
                    echo(line)
                for event in interpreter.execute(line):
                    event["input"] = line
                    errors += event["event"] == "error"
                    emit(event)
                state["busy"] = False
                session.interrupt_requested = False
                if interpreter.done or state["interrupted"]:
                    break
        except KeyboardInterrupt:
            state["interrupted"] = True
        state["busy"] = True  # the exit event is written whole
        fault = session.fault
        exit_event: Event = {"event": "exit", "errors": errors, "fault": fault is not None,
                             "time": session.time, "pass": session.phase,
                             "interrupted": state["interrupted"]}
        emit(exit_event)
    return exit_event


@contextmanager
def _handling_sigint(handler: Callable[[int, object], None]) -> Iterator[None]:
    """``handler`` for SIGINT inside the block (in the main thread; elsewhere Python
    cannot set one, and KeyboardInterrupt never comes there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
