"""The `revasm` command line (click)."""
from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="revasm")
def main() -> None:
    """revasm: assemble, run, check and differentiate reversible programs."""
