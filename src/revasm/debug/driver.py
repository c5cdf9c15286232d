"""Driving a session from lines of commands: a script, standard input, or a person.

Every command's events go to one sink: JSON Lines (``--json``: one event object a line)
or the renderer.  A script's session ends with an ``exit`` event that says how it went.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
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
    (``errors``: commands that failed; ``fault``: the session ended stopped at a fault)."""
    errors = 0
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if echo is not None:
            echo(line)
        for event in interpreter.execute(line):
            event["input"] = line
            errors += event["event"] == "error"
            emit(event)
        if interpreter.done:
            break
    fault = interpreter.session.fault
    exit_event: Event = {"event": "exit", "errors": errors, "fault": fault is not None,
                         "time": interpreter.session.time, "pass": interpreter.session.phase}
    emit(exit_event)
    return exit_event
