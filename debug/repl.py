"""The interactive debugger: prompt_toolkit for line editing, history and completion.

An empty line repeats the last command (as gdb does); Ctrl-D or ``quit`` ends the session.
"""
from __future__ import annotations

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


def interact(interpreter: Interpreter, emit: Sink) -> None:
    """Read commands from the terminal until ``quit`` or end of input."""
    prompt: PromptSession[str] = PromptSession(
        history=InMemoryHistory(),
        completer=WordCompleter(completion_words(interpreter), sentence=True))
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
        for event in interpreter.execute(line):
            emit(event)
