"""Loading a program for a command: PAL source or an assembled image."""
from __future__ import annotations

from pathlib import Path

from revasm.assembler import AssemblyError, assemble_file, read_bin
from revasm.assembler.image import Image

from .errors import ToolError

IMAGE_SUFFIXES = (".bin",)


def load_program(path: str, width: int | None = None) -> Image:
    """Assemble a PAL file (or read a binary image); errors become ToolError."""
    file = Path(path)
    if not file.exists():
        raise ToolError(f"{path}: error: no such file")
    if file.is_dir():
        raise ToolError(f"{path}: error: is a directory, not a program")
    if file.suffix in IMAGE_SUFFIXES:
        try:
            image = read_bin(file)
        except (OSError, ValueError) as exc:
            raise ToolError(f"{path}: error: not a revasm image: {exc}")
        if width is not None and width != image.width:
            raise ToolError(f"{path}: error: the image was assembled for W = {image.width}, "
                            f"not {width}")
        return image
    try:
        return assemble_file(file, width=width)
    except AssemblyError as exc:
        raise ToolError("\n".join(d.format() for d in exc.diagnostics)
                        + f"\n{len(exc.diagnostics)} error(s) in {path}")
    except UnicodeDecodeError:
        raise ToolError(f"{path}: error: not a text file (is it a binary image? name it .bin)")
