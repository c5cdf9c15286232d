"""`revasm compile`: a @reversible Python function to PAL assembly (or to its IR)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from revasm.assembler import AssemblyError
from revasm.compiler import CompileError, compile_file

from .errors import ToolError


def _split_target(target: str) -> tuple[str, str | None]:
    path, _, func = target.partition(":") if not Path(target).exists() else (target, "", "")
    if ":" in target and not Path(target).exists():
        path, func = target.rsplit(":", 1)
    return path, (func or None)


@click.command("compile")
@click.argument("target", metavar="SRC.py[:FUNC]")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False),
              help="Write here instead of standard output (and OUT.map.json: PAL line -> "
                   "Python line).")
@click.option("--emit", type=click.Choice(["asm", "ir"]), default="asm", show_default=True,
              help="PAL assembly, or the reversible IR.")
@click.option("--inverse", is_flag=True, help="With --emit ir: print the inverse program.")
@click.option("--width", type=click.Choice(["32", "64"]), default="32", show_default=True,
              help="Word width W of the target machine (Q16.16 or Q32.32).")
@click.option("--gradient", is_flag=True,
              help="Also apply the checks for differentiation (no x * x, ...).")
def compile_command(target: str, out: str | None, emit: str, inverse: bool, width: str,
                    gradient: bool) -> None:
    """Compile a @reversible Python function to PAL for the reversible machine.

    FUNC defaults to the last @reversible function of the file; the functions
    it calls are compiled with it.  Errors name the Python file, line and column.

    \b
    Examples:
      revasm compile examples/nilang/rfib.py:rfib -o rfib.pal && revasm run rfib.pal --set n=10
      revasm compile examples/nilang/dot.py --emit ir --inverse
    """
    path, func = _split_target(target)
    if not Path(path).is_file():
        raise ToolError(f"{path}: error: no such file")
    try:
        program = compile_file(path, func, width=int(width), for_gradient=gradient)
    except CompileError as exc:
        raise ToolError(exc.format())
    except AssemblyError as exc:  # a compiler bug: the output did not assemble
        raise ToolError("internal error: the compiled program does not assemble:\n" +
                        "\n".join(d.format() for d in exc.diagnostics))
    if emit == "ir":
        text = program.ir_text(inverse=inverse)
    else:
        if inverse:
            raise click.UsageError("--inverse goes with --emit ir (the assembly of a program "
                                   "already runs backward)")
        text = program.pal
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        Path(out).write_text(text)
        if emit == "asm":
            source_map = {str(line): {"file": e.pos.file, "line": e.pos.line,
                                      "column": e.pos.column, "role": e.role, "note": e.note}
                          for line, e in program.lowered.lines.items() if e.pos}
            Path(out + ".map.json").write_text(json.dumps(source_map, indent=1))
    except OSError as exc:
        raise ToolError(f"{out}: error: cannot write: {exc.strerror or exc}")
    click.echo(f"{target}: {sum(program.image.is_code)} instructions -> {out}", err=True)
