"""The debugger's events as text for a person: rich tables, highlighted source.

Everything shown is rendered from the same events ``--json`` prints (commands.py), so
the terminal and a script see one debugger.  Without a terminal the text has no colour
and a fixed width, so a recorded session (examples/debug/) reads the same everywhere.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from .commands import Event
from .pal_lexer import PalLexer

#: The width of text rendered without a terminal (recorded sessions).
PLAIN_WIDTH = 100
#: The interactive prompt (repl.py), also shown before each scripted command.
PROMPT = "(revasm) "


def make_console(stream: TextIO, *, terminal: bool) -> Console:
    """A console on ``stream``: colours on a terminal, plain fixed-width text otherwise."""
    # markup off: the text shown is the program's and the user's ([1000], dir [f|r])
    if terminal:
        return Console(file=stream, highlight=False, markup=False)
    return Console(file=stream, width=PLAIN_WIDTH, color_system=None, highlight=False,
                   markup=False, force_terminal=False, soft_wrap=True)


class Renderer:
    """Prints events on a rich console."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._by_kind: dict[str, Callable[[Event], None]] = {
            "stopped": self._stopped, "state": self._state, "registers": self._registers,
            "gradient": self._gradient, "named": self._named, "memory": self._memory,
            "output": self._output, "frames": self._frames, "breakpoints": self._breakpoints,
            "breakpoint": self._point_set, "watchpoint": self._point_set,
            "deleted": self._deleted, "value": self._value, "source": self._source,
            "direction": self._direction, "help": self._help, "error": self._error,
            "start": self._state, "exit": self._exit,
        }

    def show(self, event: Event) -> None:
        self._by_kind.get(event["event"], self._raw)(event)

    def echo(self, line: str) -> None:
        """A scripted command, as if typed at the prompt (recorded sessions read so)."""
        self.console.print(PROMPT + line)

    def _print(self, *things: Any) -> None:
        self.console.print(*things)

    # --- where ------------------------------------------------------------------------------

    def _state(self, event: Event) -> None:
        self._print(_where_lines(event))

    def _stopped(self, event: Event) -> None:
        reason = event["reason"]
        going = "back" if event["direction"] == "backward" else "on"
        ran = steps_text(event["steps"])
        head = {
            "step": f"{event['command']}: {ran} {going}",
            "breakpoint": f"{event['command']}: breakpoint {event.get('breakpoint')} after "
                          f"{ran}",
            "watchpoint": f"{event['command']}: watchpoint after {ran}",
            "end": f"{event['command']}: the end: nothing runs later ({ran})",
            "beginning": f"{event['command']}: back at the beginning (START, {ran})",
            "switch": f"{event['command']}: {event.get('message', '')}",
            "fault": f"{event['command']}: machine fault after {ran}",
            "limit": f"{event['command']}: {event.get('message', '')}",
            "interrupted": f"{event['command']}: interrupted after {ran}",
        }.get(reason, f"{event['command']}: {reason}")
        self._print(Text(head, style="bold"))
        for change in event.get("changes", []):
            self._print(f"  watch {change['spec']}: {change['old']} -> {change['new']}")
        if "fault" in event:
            self._print(Text(event["fault"]["report"], style="red"))
        self._print(_where_lines(event))

    # --- values -----------------------------------------------------------------------------

    def _registers(self, event: Event) -> None:
        gradient = event.get("gradient")
        table = _table("register", "value", *(["gradient"] if gradient else []))
        for name, value in event["registers"].items():
            grad = gradient[name] if gradient else 0
            if value or grad:
                table.add_row(name, str(value), *([_real(grad)] if gradient else []))
        self._print(table)
        self._print(f"PC = {event['pc']}  BR = {event['br']}  DIR = {event['dir']:+d}  "
                    "(registers not listed hold 0)")

    def _gradient(self, event: Event) -> None:
        table = _table("place", "word", "value (real)", "gradient")
        for name, pair in event["named"].items():
            table.add_row(name, "", _real(pair["value"]), _real(pair["gradient"]))
        for group, prefix in (("registers", ""), ("memory", "[")):
            for name, pair in event[group].items():
                table.add_row(prefix + name + ("]" if prefix else ""), str(pair["word"]),
                              _real(pair["value"]), _real(pair["gradient"]))
        mode = "on" if event["gradient_mode"] else "off"
        self._print(f"value bank and gradient bank ({event['pass']} pass, gradient mode {mode})")
        self._print(table)

    def _named(self, event: Event) -> None:
        for title, values, grads in (("declared names", event["named"], event.get("gradient")),
                                     ("Python variables", event.get("python"),
                                      event.get("python_gradient"))):
            if values is None:
                continue
            table = _table(title, "value", *(["gradient"] if grads is not None else []))
            for name, value in values.items():
                table.add_row(name, _real(value),
                              *([_real(grads[name])] if grads is not None else []))
            self._print(table)

    def _memory(self, event: Event) -> None:
        gradient = event.get("gradient")
        table = _table("address", "word", *(["gradient"] if gradient else []))
        for address, word in event["words"].items():
            table.add_row(address, str(word), *([_real(gradient[address])] if gradient else []))
        self._print(table)

    def _output(self, event: Event) -> None:
        self._print("output: " + (" ".join(map(str, event["output"])) or "(none)"))
        self._print("tape:   " + (" ".join(map(str, event["tape"])) or "(empty)"))

    def _frames(self, event: Event) -> None:
        for depth, frame in enumerate(event["frames"]):
            line = f" line {frame['line']}" if frame["line"] is not None else ""
            calls = f", calling {frame['calls']}" if "calls" in frame else ""
            self._print(f"#{depth}  {frame['function']} at pc {frame['pc']}{line}{calls}")

    def _value(self, event: Event) -> None:
        text = f"{event['name']} = {_real(event['value'])}"
        if "real" in event:
            text += f"  (as a real: {_real(event['real'])})"
        if "gradient" in event:
            text += f"  gradient {_real(event['gradient'])}"
        self._print(text)

    # --- breakpoints --------------------------------------------------------------------------

    def _point_set(self, event: Event) -> None:
        if event["event"] == "breakpoint":
            line = f", line {event['line']}" if event["line"] is not None else ""
            pcs = ", ".join(map(str, event["pcs"][:6])) + (" ..." if len(event["pcs"]) > 6
                                                           else "")
            self._print(f"breakpoint {event['id']} at {event['spec']} (pc {pcs}{line})")
        else:
            self._print(f"watchpoint {event['id']} on {event['spec']}")

    def _breakpoints(self, event: Event) -> None:
        table = _table("id", "kind", "where", "hits")
        for point in event["breakpoints"]:
            table.add_row(str(point["id"]), point["kind"], point["spec"], str(point["hits"]))
        for point in event["watchpoints"]:
            table.add_row(str(point["id"]), "watch", point["spec"], str(point["hits"]))
        self._print(table)

    def _deleted(self, event: Event) -> None:
        self._print("deleted " + (", ".join(map(str, event["ids"])) or "nothing"))

    # --- the rest ---------------------------------------------------------------------------

    def _source(self, event: Event) -> None:
        numbers = [int(n) for n in event["lines"]]
        code = "\n".join(event["lines"][str(n)] for n in numbers)
        lexer: Any = PalLexer() if event["language"] == "pal" else "python"
        self._print(f"{event['file']}:")
        self._print(Syntax(code, lexer, line_numbers=True, start_line=numbers[0],
                           highlight_lines={event["line"]}, theme="ansi_dark",
                           background_color="default"))

    def _direction(self, event: Event) -> None:
        self._print(f"step, next, finish and continue now go {event['direction']}")

    def _help(self, event: Event) -> None:
        table = _table("command", "aliases", "what it does")
        for name, text in event["commands"].items():
            table.add_row(name, " ".join(event["aliases"].get(name, [])), text)
        self._print(table)

    def _error(self, event: Event) -> None:
        self._print(Text(f"error: {event['message']}", style="red"))

    def _exit(self, event: Event) -> None:
        pass

    def _raw(self, event: Event) -> None:
        self._print(str(event))


def _table(*columns: str) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, justify="left" if column in ("register", "place", "address",
                                                                "declared names", "id",
                                                                "kind", "where", "command",
                                                                "aliases", "what it does",
                                                                "Python variables")
                         else "right")
    return table


def _real(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _where_lines(event: Event) -> str:
    line = f"{event['file']}:{event['line']}" if event.get("line") is not None else event["file"]
    function = event.get("python_function")
    lines = [f"  pc {event['pc']}  {line}  {event['source'] or event['instruction']}"
             + (f"  (in {function})" if function else "")]
    if event.get("pal_file") is not None:  # a compiled program: its generated PAL line
        pal = f"{event['pal_file']}:{event['pal_line']}" if event.get("pal_line") is not None \
            else event["pal_file"]
        lines.append(f"  {pal}  {event.get('pal_source') or event['instruction']}")
    mode = " (gradient mode on)" if event["gradient_mode"] else ""
    halted = "  halted" if event["halted"] else ""
    lines.append(f"  BR = {event['br']}  DIR = {event['dir']:+d}  time {event['time']}  "
                 f"{event['pass']} pass{mode}  call depth {event['depth']}{halted}")
    return "\n".join(lines)


def steps_text(count: int) -> str:
    """``1 step``, ``5 steps``: how every stop line and fault report counts steps."""
    return f"{count} step" if count == 1 else f"{count} steps"
