"""Options several commands share, written once: ``--width`` and ``--pendvm``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from revasm.isa.fixed_point import DEFAULT_WIDTH, WIDTHS

F = TypeVar("F", bound=Callable[..., Any])

#: What a width means, as help texts say it.
FORMATS = "Q16.16 or Q32.32"


def width_value(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    """The ``--width`` callback: the chosen width as an int (None when not given)."""
    return int(value) if value is not None else None


def width_option(default: int | None = None, help: str | None = None) -> Callable[[F], F]:
    """``--width {32,64}``, given to the command as an int.

    ``default=None`` (a command that loads a program file): None unless given, so that the
    one width rule applies (``revasm.load``: the option, else the file's own width, else
    DEFAULT_WIDTH).  A number: the width of a command with no file to say it (the RTL's
    Verilog, proofs and synthesis, a compiled Python function).
    """
    if help is None:
        help = (f"Word width W ({FORMATS}). Default: the file's .width, else "
                f"{DEFAULT_WIDTH}; given, it overrides a .width (an image or a Janus "
                "program has a width of its own).") if default is None else \
            f"Word width W ({FORMATS})."
    return click.option("--width", type=click.Choice([str(w) for w in WIDTHS]),
                        default=None if default is None else str(default),
                        show_default=default is not None, callback=width_value, help=help)


#: Where ``--pendvm`` leaves its word for :func:`pendvm_requested` (``ctx.meta``, which
#: every context of one command line shares).
PENDVM_META = "revasm.pendvm"


def _pendvm_value(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[PENDVM_META] = True
    return value


#: ``--pendvm``: PendVM-compatibility mode for PAL source, as if it said ``.pendvm``.  Not
#: a parameter of the command: ``cli/loading.py`` reads it when it assembles the FILE, so
#: every command that loads a program has it with no change to its own code.
PENDVM = click.option(
    "--pendvm", is_flag=True, expose_value=False, callback=_pendvm_value,
    help="PendVM-compatibility mode for PAL source, as if it said .pendvm: ADDI, XORI, "
         "ANDIX and SLTIX take any 32-bit immediate, as PendVM's 1997 parser does "
         "(ROOPL++'s output), at the same addresses; such an image runs on every engine "
         "but cannot be written as .bin/.hex nor run on the RTL (docs/assembly.md, "
         "PendVM variants).")


def pendvm_requested() -> bool:
    """Whether the running command was given ``--pendvm``."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(PENDVM_META))


def program_options(f: F) -> F:
    """The options of every command that loads a program file: ``--width`` (the one
    width rule) and ``--pendvm``."""
    return width_option()(PENDVM(f))


#: ``--width`` and ``--pendvm`` of every command that loads a program file.
WIDTH = program_options


#: The type of every ``--max-steps``: 1 .. 2^64 - 1, where 2^62 and up mean no limit
#: (``sim/engine.py`` ``step_limit``); a larger number is a usage error, not a crash.
STEP_COUNT = click.IntRange(min=1, max=(1 << 64) - 1)
