"""The `revasm` command line: one entry point, one subcommand per job (docs/cli.md)."""
from __future__ import annotations

import sys

import click

from . import (
    commands_asm,
    commands_batch,
    commands_bench,
    commands_compile,
    commands_debug,
    commands_grad,
    commands_report,
    commands_rtl,
    commands_run,
)
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, interrupted_message
from .json_mode import JsonGroup


@click.group(cls=JsonGroup,
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


cli.add_command(commands_asm.asm)
cli.add_command(commands_asm.disasm)
cli.add_command(commands_run.run)
cli.add_command(commands_run.check)
cli.add_command(commands_report.report)
cli.add_command(commands_compile.compile_command)
cli.add_command(commands_compile.grad_expr)
cli.add_command(commands_grad.grad)
cli.add_command(commands_grad.hessian_command)
cli.add_command(commands_rtl.rtl)
cli.add_command(commands_batch.batch)
cli.add_command(commands_bench.bench)
cli.add_command(commands_debug.debug)
cli.add_command(commands_debug.dap)


def main() -> None:
    """Console entry point: click's own errors exit 2; nothing ever prints a traceback.

    With ``--json`` the group itself turns every failure into one JSON object on stdout
    (cli/json_mode.py); this catches what is left without it.
    """
    try:
        cli.main(prog_name="revasm")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo(interrupted_message(), err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a bug in revasm, reported without a traceback
        click.echo(f"revasm: internal error: {type(exc).__name__}: {exc}\n"
                   "Please report this with the command line that caused it.", err=True)
        sys.exit(EXIT_FAILURE)
