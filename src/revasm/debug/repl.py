"""The interactive debugger: prompt_toolkit for line editing, history and completion.

An empty line repeats the last command (as gdb does); Ctrl-D or ``quit`` ends the session.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import WordCompleter
from prompt_toolkit.history import InMemoryHistory

from .commands import COMMAND_WORDS, Interpreter
from .driver import Sink
from .render import PROMPT


def completion_words(interpreter: Interpreter) -> list[str]:
    """Commands, labels, declared names, registers and Python variables."""
    session = interpreter.session
    words = set(COMMAND_WORDS) | set(session.image.names) | {f"${i}" for i in range(32)}
    words |= {name for names in session.source.labels.values() for name in names}
    words |= {"breakpoints", "registers", "locals", "frames", "PC", "BR", "DIR"}
    return sorted(words)


@contextmanager
def interruptible(interpreter: Interpreter) -> Iterator[None]:
    """Ctrl-C while a command runs stops it between two instructions (never inside one, so
    the state stays one the machine can run back from)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    session = interpreter.session

    def request(signum: int, frame: Any) -> None:
        session.interrupt_requested = True

    previous = signal.signal(signal.SIGINT, request)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        session.interrupt_requested = False


def interact(interpreter: Interpreter, emit: Sink, **terminal: Any) -> None:
    """Read commands from the terminal until ``quit`` or end of input (``terminal``: the
    prompt_toolkit ``input``/``output`` to use instead of the real terminal, for tests)."""
    prompt: PromptSession[str] = PromptSession(
        history=InMemoryHistory(),
        completer=WordCompleter(completion_words(interpreter), sentence=True), **terminal)
    last = ""
    while not interpreter.done:
        try:
            line = prompt.prompt(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        line = line.strip() or last
        if not line:
            continue
        last = line
        with interruptible(interpreter):
            events = interpreter.execute(line)
        for event in events:
            emit(event)
