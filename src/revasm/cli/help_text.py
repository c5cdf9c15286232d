"""Commands whose --help fills a placeholder from the code (a table, a registry)."""
from __future__ import annotations

from collections.abc import Callable

import click


def filled_help(placeholder: str, fill: Callable[[], str]) -> type[click.Command]:
    """A command class whose help text has ``{placeholder}`` replaced by ``fill()`` when
    --help is shown (so the listing is derived, never written twice)."""

    class FilledHelpCommand(click.Command):
        def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            template = self.help or ""
            self.help = template.replace("{" + placeholder + "}", fill())
            try:
                super().format_help_text(ctx, formatter)
            finally:
                self.help = template

    return FilledHelpCommand
