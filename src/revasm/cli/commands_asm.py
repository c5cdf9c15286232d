"""`revasm asm` and `revasm disasm`: source to image and back."""
from __future__ import annotations

import json
from pathlib import Path

import click

from revasm.assembler import bin_bytes, disassemble, listing_text
from revasm.assembler.files import GroupWriteError, write_atomic_all
from revasm.assembler.image import encoding_problem
from revasm.assembler.image_io import hex_text, sidecar_text

from .errors import ToolError, output_error
from .loading import load_program
from .options import PENDVM, WIDTH
from .outputs import image_inputs, refuse_overwrite


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False),
              help="Image to write (default: FILE with .bin or .hex).")
@click.option("--format", "fmt", type=click.Choice(["bin", "hex"]), default="bin",
              show_default=True, help="Raw binary image, or hex for the RTL memory init.")
@click.option("--listing", is_flag=True, help="Also print a listing: address, word, source.")
@WIDTH
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object (what was written; the listing).")
def asm(file: str, out: str | None, fmt: str, listing: bool, width: int | None,
        as_json: bool) -> None:
    """Assemble a PAL file into an image, with a JSON sidecar (symbols, PC -> line).

    \b
    Example:
      revasm asm examples/fib.pal -o fib.bin --listing
    writes fib.bin and fib.bin.json; `revasm run fib.bin` runs it.
    """
    image = load_program(file, width)
    target = Path(out) if out else Path(file).with_suffix("." + fmt)
    # PendVM-compatibility mode's wide immediates: no word holds them
    problem = encoding_problem(image, f"a .{fmt} image",
                               f"run the PAL source itself (revasm run --pendvm {file})")
    if problem is not None:
        place = image.location(min(image.immediates))
        raise ToolError(f"{file}: error: cannot write {target}: {problem}",
                        line=place.line if place else None, col=place.column if place else None)
    sidecar = target.with_name(target.name + ".json")
    # Never over the source (nor an image's sidecar): `asm x.bin` would otherwise replace x.bin.
    refuse_overwrite([target, sidecar], image_inputs(file), "-o" if out else "FILE",
                     "choose another output file" if out else "name the output with -o")
    try:  # the image and its sidecar both or neither, each whole (files.py)
        write_atomic_all([(target, bin_bytes(image) if fmt == "bin" else hex_text(image)),
                          (sidecar, sidecar_text(image))])
    except GroupWriteError as exc:
        raise output_error(exc.path, exc) from None
    code = sum(image.is_code)
    if as_json:
        payload = {"status": "ok", "file": file, "output": str(target), "sidecar": str(sidecar),
                   "format": fmt, "width": image.width, "instructions": code,
                   "data_words": len(image) - code}
        if listing:
            payload["listing"] = listing_text(image)
        click.echo(json.dumps(payload))
    elif listing:
        click.echo(listing_text(image), nl=False)
    click.echo(f"{file}: {code} instructions, {len(image) - code} data words, W = "
               f"{image.width} -> {target} (+ {sidecar.name})", err=True)


@click.command()
@click.argument("image", type=click.Path(dir_okay=False))
@PENDVM
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object (the PAL text as \"source\").")
def disasm(image: str, as_json: bool) -> None:
    """Print an image (or a PAL file, once assembled) as PAL source that
    re-assembles to the same words.

    \b
    Example:
      revasm asm examples/fib.pal -o fib.bin && revasm disasm fib.bin
    """
    program = load_program(image)
    text = disassemble(program)
    if as_json:
        click.echo(json.dumps({"status": "ok", "file": image, "width": program.width,
                               "source": text}))
    else:
        click.echo(text, nl=False)
