"""``--json``: exactly one JSON object on stdout, whatever happens (docs/cli.md).

:class:`JsonGroup` is the ``revasm`` group.  When the command line holds ``--json``
it runs the command with stdout captured, and then prints either what the command
printed (its result, or the ``"status": "fault"`` object of a machine fault) or, if
the command failed in any other way -- an assembly or compile error, a usage error
(click's, raised before the command's body runs), a file it cannot read or write,
an internal error -- one error object instead::

    {"status": "error", "exit_code": 1,
     "error": {"kind": "assembly", "file": "bad.pal", "line": 3, "col": 9,
               "message": "bad.pal:3:9: error: ...", "diagnostics": [...]}}

Its JSON Schema ships in the package: ``schemas/error.schema.json`` (:func:`error_schema`).
Exit codes and the human text on stderr are the same with or without ``--json``.
"""
from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

import click

from revasm.interrupts import caused_by_ctrl_c

from .errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    ToolError,
    interrupted_message,
    stream_error_message,
)

SCHEMA_FILE = "error.schema.json"

#: The real stdout while a command runs with its stdout captured, and whether the command
#: streamed events to it (``revasm debug --json``: JSON Lines, docs/debugger.md).
_stream: dict[str, Any] = {"stdout": None, "used": False}


def event_stream() -> TextIO:
    """Where a streaming command writes its JSON Lines: the real stdout, past the capture.

    A session's events cannot wait for the command to end (a tool reads each one before it
    sends the next command), so they bypass the one-object capture; an error before the
    first event is still the one error object, and an error after it one more line."""
    _stream["used"] = True
    return _stream["stdout"] or sys.stdout


def error_schema() -> dict[str, Any]:
    """The JSON Schema of the error object (package data: revasm/cli/schemas/)."""
    text = (resources.files(__package__) / "schemas" / SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for JSON: ``--json`` before any ``--``."""
    for token in argv:
        if token == "--":
            return False
        if token == "--json":
            return True
    return False


def error_object(kind: str, message: str, exit_code: int, *, file: str | None = None,
                 line: int | None = None, col: int | None = None,
                 **extra: Any) -> dict[str, Any]:
    """The JSON error object (``{"status": "error", "exit_code", "error": {...}}``)."""
    error: dict[str, Any] = {"kind": kind, "file": file, "line": line, "col": col,
                             "message": message or kind}
    error.update({key: value for key, value in extra.items() if value is not None})
    return {"status": "error", "exit_code": exit_code, "error": error}


def _usage_object(exc: click.UsageError) -> dict[str, Any]:
    option = None
    if isinstance(exc, click.BadParameter):
        if exc.param_hint is not None:
            hint = exc.param_hint
            option = " / ".join(hint) if isinstance(hint, (list, tuple)) else str(hint)
        elif exc.param is not None:
            option = " / ".join(exc.param.opts) or exc.param.name
    message = exc.format_message()
    if exc.ctx is not None:
        message = f"{exc.ctx.command_path}: {message}"
    return error_object("usage", message, exc.exit_code, option=option)


class _Captured(io.StringIO):
    """Captured stdout; click writes text to it as to a terminal's stdout."""

    encoding = "utf-8"


class JsonGroup(click.Group):
    """The top-level group: with ``--json``, every outcome is one JSON object on stdout."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """No argument holds a NUL byte (none from a shell can; a file name never does):
        a usage error here, before click hands one to the operating system."""
        for arg in args:
            if "\x00" in arg:
                raise click.UsageError(f"argument {arg!r} contains a NUL byte", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """The command, with a write to a broken output stream (a closed pipe, a full disk)
        turned into an ``output`` error that says so -- before click's own handling, which
        ends on a closed pipe with exit code 1 and no word."""
        try:
            return super().invoke(ctx)
        except OSError as exc:
            message = stream_error_message(exc)
            if message is None:
                raise
            if sys.__stdout__ in (sys.stdout, _stream["stdout"]):  # the process's own stdout
                _silence(sys.__stdout__)  # what it still buffers goes nowhere, quietly
            raise ToolError(message, kind="output") from None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(args=argv, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=standalone_mode, **extra)
        if not wants_json(argv):
            self._main_text(argv, prog_name, complete_var, **extra)
        stdout = sys.stdout
        captured = _Captured()
        sys.stdout = captured
        _stream.update(stdout=stdout, used=False)
        outcome: dict[str, Any] | None = None
        code = 0
        try:
            value = super().main(args=argv, prog_name=prog_name, complete_var=complete_var,
                                 standalone_mode=False, **extra)
            code = value if isinstance(value, int) else 0
        except ToolError as exc:
            exc.show()
            code = exc.exit_code
            outcome = {"status": "error", "exit_code": code, "error": exc.error_json()}
        except click.UsageError as exc:
            exc.show()
            code = exc.exit_code
            outcome = _usage_object(exc)
        except click.ClickException as exc:
            exc.show()
            code = exc.exit_code
            outcome = error_object("input", exc.format_message(), code)
        except (click.Abort, KeyboardInterrupt):
            message = interrupted_message()
            click.echo(message, err=True)
            code = EXIT_INTERRUPTED
            outcome = error_object("interrupted", message, code)
        except SystemExit as exc:
            code = _exit_code(exc)
        except Exception as exc:  # a bug in revasm, reported without a traceback
            if caused_by_ctrl_c(exc):  # Ctrl-C while a class was being made: still Ctrl-C
                message = interrupted_message()
                click.echo(message, err=True)
                code = EXIT_INTERRUPTED
                outcome = error_object("interrupted", message, code)
            else:
                streamed_failure = stream_error_message(exc)  # or an unwritable stream
                message = streamed_failure or (
                    f"revasm: internal error: {type(exc).__name__}: {exc}\n"
                    "Please report this with the command line that caused it.")
                click.echo(message, err=True)
                code = EXIT_FAILURE
                outcome = error_object("output", message, code) if streamed_failure else \
                    error_object("internal", message, code, exception=type(exc).__name__)
        finally:
            sys.stdout = stdout
            streamed = _stream["used"]
            _stream.update(stdout=None, used=False)
        printed = captured.getvalue()
        written = True
        if streamed and outcome is None:  # the event stream was the output
            if printed.strip():
                click.echo(printed, err=True, nl=False)
        elif outcome is None and _is_one_object(printed):
            # The command's own object: its result, or a machine fault ("status": "fault").
            written = _write(stdout, printed if printed.endswith("\n") else printed + "\n")
        else:
            if outcome is None and code == 0:  # --help, --version: text, wrapped
                outcome = {"status": "ok", "text": printed}
            else:
                if outcome is None:  # a failure without its object (a command never should)
                    outcome = error_object("failure", f"revasm: exited with code {code} "
                                           "without a JSON object", code)
                if printed.strip():  # nothing is lost: what the command printed, on stderr
                    click.echo(printed, err=True, nl=False)
            written = _write(stdout, json.dumps(outcome) + "\n")
        written = _write(stdout, "") and written
        sys.exit(code if written else EXIT_FAILURE)

    def _main_text(self, argv: list[str], prog_name: str | None, complete_var: str | None,
                   **extra: Any) -> None:
        """Without ``--json``: click's own handling, but Ctrl-C exits 130 saying what was
        kept (click's says "Aborted!" and exits 1), and a stream that cannot be written
        (a closed pipe, a full disk) is reported as such, not as a bug."""
        try:
            value = super().main(args=argv, prog_name=prog_name, complete_var=complete_var,
                                 standalone_mode=False, **extra)
            code = value if isinstance(value, int) else 0
        except click.ClickException as exc:
            exc.show()
            code = exc.exit_code
        except (click.Abort, KeyboardInterrupt):
            click.echo(interrupted_message(), err=True)
            code = EXIT_INTERRUPTED
        except SystemExit as exc:
            code = _exit_code(exc)
        except OSError as exc:
            message = stream_error_message(exc)
            if message is None:
                raise
            click.echo(message, err=True)
            _silence(sys.stdout)
            code = EXIT_FAILURE
        if not _write(sys.stdout, ""):
            code = EXIT_FAILURE
        sys.exit(code)


def _write(stream: TextIO, text: str) -> bool:
    """Write and flush ``text``; a stream that cannot be written (``stream_error_message``)
    is reported on stderr and silenced, and the answer is False."""
    try:
        stream.write(text)
        stream.flush()
    except OSError as exc:
        message = stream_error_message(exc)
        if message is None:
            raise
        click.echo(message, err=True)
        _silence(stream)
        return False
    return True


def _silence(stream: TextIO | None) -> None:
    """Point a broken stream's descriptor at /dev/null, so that the interpreter's last flush
    of what it still buffers does not fail again on the way out."""
    if stream is None:
        return
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    click.echo(str(exc.code), err=True)
    return EXIT_FAILURE


def _is_one_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


__all__ = ["EXIT_INTERRUPTED", "EXIT_USAGE", "JsonGroup", "error_object", "error_schema",
           "event_stream", "wants_json"]
