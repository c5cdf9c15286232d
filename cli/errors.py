"""How the command line reports failure: a message, an exit code, no traceback.

Exit codes (the contract scripts rely on): 0 ok; 1 an assembly/compile error
or a machine fault; 2 a usage error (click's own code for bad arguments).
"""
from __future__ import annotations

import click

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class ToolError(click.ClickException):
    """An error in the user's input or program: printed as is, exit code 1."""

    exit_code = EXIT_FAILURE

    def show(self, file=None) -> None:  # noqa: D102 - click's hook
        click.echo(self.format_message(), err=True)
