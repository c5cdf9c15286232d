"""`revasm asm` and `revasm disasm`: source to image and back."""
from __future__ import annotations

from pathlib import Path

import click

from revasm.assembler import disassemble, listing_text, write_bin, write_hex, write_sidecar

from .errors import ToolError
from .loading import load_program

WIDTH = click.option("--width", type=click.Choice(["32", "64"]), default=None,
                     help="Word width W (Q16.16 or Q32.32). Default: the file's .width, else 32.")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False),
              help="Image to write (default: FILE with .bin or .hex).")
@click.option("--format", "fmt", type=click.Choice(["bin", "hex"]), default="bin",
              show_default=True, help="Raw binary image, or hex for the RTL memory init.")
@click.option("--listing", is_flag=True, help="Also print a listing: address, word, source.")
@WIDTH
def asm(file: str, out: str | None, fmt: str, listing: bool, width: str | None) -> None:
    """Assemble a PAL file into an image, with a JSON sidecar (symbols, PC -> line).

    \b
    Example:
      revasm asm examples/fib.pal -o fib.bin --listing
    writes fib.bin and fib.bin.json; `revasm run fib.bin` runs it.
    """
    image = load_program(file, int(width) if width else None)
    target = Path(out) if out else Path(file).with_suffix("." + fmt)
    try:
        if fmt == "bin":
            write_bin(image, target)
        else:
            write_hex(image, target)
        sidecar = target.with_name(target.name + ".json")
        write_sidecar(image, sidecar)
    except OSError as exc:
        raise ToolError(f"{target}: error: cannot write: {exc.strerror or exc}") from None
    if listing:
        click.echo(listing_text(image), nl=False)
    code = sum(image.is_code)
    click.echo(f"{file}: {code} instructions, {len(image) - code} data words, W = "
               f"{image.width} -> {target} (+ {sidecar.name})", err=True)


@click.command()
@click.argument("image", type=click.Path(dir_okay=False))
def disasm(image: str) -> None:
    """Print an image (or a PAL file, once assembled) as PAL source that
    re-assembles to the same words.

    \b
    Example:
      revasm asm examples/fib.pal -o fib.bin && revasm disasm fib.bin
    """
    click.echo(disassemble(load_program(image)), nl=False)
