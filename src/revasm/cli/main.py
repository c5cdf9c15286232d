"""The `revasm` command line: one entry point, one subcommand per job (docs/cli.md)."""
from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Iterator
from typing import Any

import click

from revasm.interrupts import caused_by_ctrl_c

from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, interrupted_message
from .json_mode import JsonGroup

#: Every subcommand: name -> (module in revasm.cli, the click command's name there, the
#: first sentence of its help).  A command's module is imported only when the command runs
#: (or its own --help is asked for), so ``revasm --help`` and a small ``revasm run`` do not
#: pay for numba, the RTL or the benchmarks; the summaries are what ``revasm --help`` lists
#: (tests/cli/test_main.py checks each against the command's own help).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "asm": ("commands_asm", "asm",
            "Assemble a PAL file into an image, with a JSON sidecar (symbols, PC -> line)."),
    "disasm": ("commands_asm", "disasm",
               "Print an image (or a PAL file, once assembled) as PAL source that "
               "re-assembles to the same words."),
    "run": ("commands_run", "run", "Run a program (PAL source or image) from START to FINISH."),
    "check": ("commands_run", "check",
              "Check reversibility: run forward to FINISH, then backward to START, and compare "
              "every register, memory word, BR, DIR, the output tape and the overflow counter "
              "with the initial state."),
    "report": ("commands_report", "report",
               "Op counts by instruction and class, cycles, register/memory traffic, peak "
               "occupancy, bits erased (reversible vs irreversible vs tape AD) and energy "
               "under documented models, for the protocol \"run forward, copy the results "
               "out, run backward\" on the reference simulator (with --grad: backward with "
               "the gradient switch on, gradients copied out)."),
    "compile": ("commands_compile", "compile_command",
                "Compile a @reversible Python function (or a Janus program, .ja) to PAL."),
    "grad-expr": ("commands_compile", "grad_expr",
                  "Value and gradient of an expression, computed on the reversible machine."),
    "grad": ("commands_grad", "grad",
             "Gradient of a program's loss by reverse mode on the machine itself."),
    "hessian": ("commands_grad", "hessian_command",
                "Hessian of a program's loss by forward-over-reverse on the machine."),
    "rtl": ("commands_rtl", "rtl",
            "The co-processor in Amaranth: lockstep simulation, Verilog, formal proofs, "
            "synthesis."),
    "batch": ("commands_batch", "batch",
              "Run a program once per input row, all rows at once (one lane per row)."),
    "bench": ("commands_bench", "bench",
              "Run benchmarks and save bench/results/NAME.json (and a PNG plot)."),
    "debug": ("commands_debug", "debug",
              "Debug a program forward and backward in time (no trace: the machine runs "
              "back)."),
    "dap": ("commands_debug", "dap",
            "Serve the Debug Adapter Protocol on stdin/stdout (or a localhost port), for "
            "VS Code and other editors."),
}


class LazyCommands(dict[str, click.Command]):
    """The group's ``commands``: a dict whose entries of :data:`COMMANDS` are imported on
    first use -- one by name (``commands[name]``, ``get``), all when listed (``items()``,
    iteration) -- so code that reads ``cli.commands`` sees every command as before."""

    def _load(self, name: str) -> None:
        if name in COMMANDS and not dict.__contains__(self, name):
            module_name, attribute, _summary = COMMANDS[name]
            module = importlib.import_module(f"{__package__}.{module_name}")
            dict.__setitem__(self, name, getattr(module, attribute))

    def _load_all(self) -> None:
        for name in COMMANDS:
            self._load(name)

    def __missing__(self, name: str) -> click.Command:
        self._load(name)
        if not dict.__contains__(self, name):
            raise KeyError(name)
        return dict.__getitem__(self, name)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or dict.__contains__(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        self._load(name)
        return dict.get(self, name, default)

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._load_all()
        return dict.keys(self)

    def values(self) -> Any:
        self._load_all()
        return dict.values(self)

    def items(self) -> Any:
        self._load_all()
        return dict.items(self)


class LazyGroup(JsonGroup):
    """The ``revasm`` group with its subcommands imported on first use (:data:`COMMANDS`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``revasm --help`` from the summaries: no command imported."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit))
                for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="revasm")
def cli() -> None:
    """revasm: assemble, run, check and differentiate programs for a reversible,
    differentiable processor.

    \b
    Every instruction runs backward as well as forward:
      revasm run examples/fib.pal --json          run to FINISH, print the state
      revasm check examples/fib.pal --random 50   forward then backward restores state?
      revasm asm examples/fib.pal -o fib.bin      assemble to a binary image
    """


#: The standard output the interpreter made, kept alive when :func:`whole_writes` replaces
#: it (collected, it would close descriptor 1).
_REPLACED: list[Any] = []


def whole_writes() -> None:
    """Make every write to stdout whole or an error.  Under ``python -u`` or
    ``PYTHONUNBUFFERED`` stdout's text layer writes straight to the raw file, and when a pipe
    takes only part of a write CPython drops the rest without a word (it reports the whole
    length written): the tail of a large ``--json`` object vanished and the command exited
    0.  A buffered writer in between writes everything or raises (a closed pipe, a full
    disk: reported as such); line-buffered, so output still appears as it comes."""
    stream = sys.stdout
    if stream is None or not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        return
    raw = io.FileIO(stream.fileno(), "w", closefd=False)
    whole = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding,
                             errors=stream.errors, line_buffering=True)
    _REPLACED.append(stream)
    if sys.__stdout__ is stream:
        setattr(sys, "__stdout__", whole)  # noqa: B010 - Final to mypy; the last flush
    sys.stdout = whole


def main() -> None:
    """Console entry point: click's own errors exit 2; nothing ever prints a traceback.

    With ``--json`` the group itself turns every failure into one JSON object on stdout
    (cli/json_mode.py); this catches what is left without it.
    """
    try:
        whole_writes()
        cli.main(prog_name="revasm")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo(interrupted_message(), err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a bug in revasm, reported without a traceback
        if caused_by_ctrl_c(exc):  # Ctrl-C while a class was being made: still Ctrl-C
            click.echo(interrupted_message(), err=True)
            sys.exit(EXIT_INTERRUPTED)
        click.echo(f"revasm: internal error: {type(exc).__name__}: {exc}\n"
                   "Please report this with the command line that caused it.", err=True)
        sys.exit(EXIT_FAILURE)
