"""`revasm debug` and `revasm dap`: the reversible debugger in a terminal and for editors."""
from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, cast

import click

from revasm.debug import DebugError, Session, SourceMap
from revasm.debug.session import DEFAULT_STEP_BUDGET
from revasm.isa.fixed_point import WIDTHS, widths_text
from revasm.machine.values import FORMS, shown

from .commands_run import MEMS, SETS
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, ToolError
from .json_mode import event_stream
from .loading import open_program
from .machine_io import initial_words
from .options import STEP_COUNT, WIDTH


def open_session(file: str, sets: tuple[str, ...] = (), mems: tuple[str, ...] = (),
                 width: int | None = None, grad: bool = False, loss: str | None = None,
                 max_steps: int = DEFAULT_STEP_BUDGET) -> Session:
    """A session on FILE (PAL, an image, Janus, or SRC.py[:FUNC]) with its inputs loaded."""
    loaded = open_program(file, width, gradient=grad)
    image, program = loaded.image, loaded.program
    registers, memory = initial_words(image, sets, mems)
    try:
        return Session(image, registers=registers, memory=memory, grad=grad, loss=loss,
                       source=SourceMap(image, program), step_budget=max_steps)
    except DebugError as exc:
        raise ToolError(f"{file}: error: {exc}") from None


@click.command("debug")
@click.argument("file", metavar="FILE")
@SETS
@MEMS
@WIDTH
@click.option("--grad", is_flag=True,
              help="Gradient mode: the forward pass, then grad[loss] = 1 and the gradient pass "
                   "from FINISH back to START, with the gradient bank beside the values.")
@click.option("--loss", metavar="NAME", help="The loss in --grad mode (default: the .loss).")
@click.option("--commands", "commands_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Run the commands in FILE (one a line, # comments) instead of asking.")
@click.option("--max-steps", type=STEP_COUNT, default=DEFAULT_STEP_BUDGET,
              show_default=True,
              help="A command that runs this many instructions without a stop stops there.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the session as JSON Lines: one event object a line.")
def debug(file: str, sets: tuple[str, ...], mems: tuple[str, ...], width: int | None,
          grad: bool, loss: str | None, commands_file: str | None, max_steps: int,
          as_json: bool) -> None:
    """Debug a program forward and backward in time (no trace: the machine runs back).

    FILE is PAL source, an image (.bin) or a Python source SRC.py[:FUNC], whose Python
    lines and variables the debugger follows.  Commands come from the terminal, from
    --commands FILE, or from standard input when it is not a terminal.

    \b
    Examples:
      revasm debug examples/fib.pal
      revasm debug examples/bessel_j2.pal --grad --commands examples/debug/bessel_j2.cmds
      printf 'break top\\ncontinue\\nreverse-step 3\\n' | revasm debug examples/fib.pal
    Commands: step, next, finish, continue and their reverse- forms, break, watch, print,
    registers, gradient, ... (`help` lists them; PendVM's names work too; docs/debugger.md).
    Exit code 1 when a scripted command failed or the session ended at a fault.
    """
    # The terminal's libraries load here, not with every revasm command (~0.3 s).
    from revasm.debug.commands import Interpreter
    from revasm.debug.driver import json_sink, run_lines, start_event
    from revasm.debug.render import Renderer, make_console
    from revasm.debug.repl import interact

    session = open_session(file, sets, mems, width, grad, loss, max_steps)
    lines = _script(commands_file, as_json)
    interpreter = Interpreter(session)
    echo = None
    if as_json:
        emit = json_sink(event_stream())
    else:
        renderer = Renderer(make_console(sys.stdout, terminal=lines is None
                                         and sys.stdout.isatty()))
        emit, echo = renderer.show, renderer.echo
    emit(start_event(interpreter))
    if lines is None:
        interact(interpreter, emit)
        return
    outcome = run_lines(interpreter, lines, emit, echo=echo)
    if outcome["interrupted"]:  # the exit event was the session's last word
        click.echo(f"revasm: interrupted: the session ended at time {outcome['time']}",
                   err=True)
        raise SystemExit(EXIT_INTERRUPTED)
    if outcome["errors"] or outcome["fault"]:
        raise SystemExit(EXIT_FAILURE)


def _script(commands_file: str | None, as_json: bool) -> Iterable[str] | None:
    """The script's lines: --commands FILE, or standard input when it is not a terminal
    (or with --json, whose output is for a program), read line by line as they come, so
    a tool can wait for each command's events; None for the interactive terminal."""
    if commands_file is not None:
        try:
            return Path(commands_file).read_text().splitlines()
        except FileNotFoundError:
            raise ToolError(f"{commands_file}: error: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ToolError(f"{commands_file}: error: cannot read: {exc}") from None
    if sys.stdin is None:
        return []
    if as_json or not sys.stdin.isatty():
        return iter(sys.stdin.readline, "")
    return None


@click.command("dap")
@click.option("--port", type=click.IntRange(0, 65535), metavar="N", default=None,
              help="Listen on localhost port N instead of stdin/stdout: each connection is "
                   "one debug session (VS Code's \"debugServer\": N); 0 takes a free port. "
                   "Runs until Ctrl-C.")
@click.option("--json", "as_json", is_flag=True, hidden=True,
              help="Accepted for uniformity: the protocol's messages are JSON already.")
def dap(port: int | None, as_json: bool) -> None:
    """Serve the Debug Adapter Protocol on stdin/stdout (or a localhost port), for VS Code
    and other editors.

    \b
    The launch request takes "program" (PAL, .bin or SRC.py[:FUNC]), "grad" (true for
    gradient mode), "set" (["x=1.0", ...] or {"x": 1.0}) and "width"; stepBack and
    reverseContinue run the machine backward (supportsStepBack).  docs/debugger.md has a
    VS Code launch configuration.
    Examples:
      revasm dap                 (what an editor runs: stdin/stdout)
      revasm dap --port 4711     (a server: launch.json's "debugServer": 4711)
    """
    from revasm.debug.dap import serve

    if port is not None:
        _serve_port(port)
        return
    stdout = event_stream() if as_json else sys.stdout
    # a text stream's bytes go to its buffer; a stream without one takes bytes itself
    serve(sys.stdin.buffer, stdout.buffer if hasattr(stdout, "buffer")
          else cast(IO[bytes], stdout), _dap_session)


def _serve_port(port: int) -> None:
    """`revasm dap --port N`: serve on localhost until Ctrl-C or SIGTERM, then close every
    session and exit 0 (a server's normal end); a port that cannot be taken is an error."""
    import signal

    from revasm.debug.dap import LOCALHOST, TcpServer

    try:
        server = TcpServer(port, _dap_session)
    except OSError as exc:
        raise ToolError(f"revasm dap: cannot listen on {LOCALHOST}:{port}: "
                        f"{exc.strerror or exc}") from None

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    click.echo(f"revasm dap: listening on {LOCALHOST}:{server.port} (one debug session a "
               "connection; Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        signal.signal(signal.SIGTERM, previous)
    click.echo(f"revasm dap: stopped after {server.sessions} session(s)", err=True)


def _dap_session(arguments: dict) -> Session:
    """A session from a DAP launch request's arguments (errors: ToolError or DebugError)."""
    program = arguments.get("program")
    if not isinstance(program, str) or not program:
        raise DebugError('launch needs "program": the PAL file (or SRC.py[:FUNC]) to debug')
    sets = _launch_sets(arguments.get("set", []))
    width = arguments.get("width")
    if width is not None and width not in WIDTHS:
        raise DebugError(f'"width" is {widths_text()}')
    try:
        return open_session(program, tuple(sets), (), width, bool(arguments.get("grad")),
                            arguments.get("loss"))
    except click.ClickException as exc:
        raise DebugError(exc.format_message()) from None


def _launch_sets(sets: object) -> list[str]:
    """A launch's ``"set"`` as ``--set`` takes it: a list of ``"NAME=VALUE"`` strings, or an
    object ``{NAME: VALUE}`` whose values are numbers or strings (``"raw:0x8000"``); each
    value then goes through the one value rule (machine/values.py) like ``--set``'s."""
    if isinstance(sets, dict):
        out = []
        for name, value in sets.items():
            if not name.strip() or "=" in name:
                raise DebugError(f'"set": {name[:40]!r} is not a name (an object\'s keys are '
                                 "the names: {\"x\": 1.0})")
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise DebugError(f'"set": the value of {name[:40]!r} is a number or a string '
                                 f"({FORMS}), not {json.dumps(value)[:40]}")
            out.append(f"{name.strip()}={shown(value)}")
        return out
    if not isinstance(sets, list) or not all(isinstance(item, str) for item in sets):
        raise DebugError('"set" is a list of "NAME=VALUE" strings or an object {"NAME": VALUE}')
    return sets


#: The DAP server's launch loader, public so that the fuzz campaign (bench/fuzz.py) drives
#: the server exactly as `revasm dap` does.
dap_session = _dap_session
