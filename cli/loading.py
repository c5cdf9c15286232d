"""Loading a program for a command: PAL source or an assembled image."""
from __future__ import annotations

import re
from pathlib import Path

from revasm.assembler import AssemblyError, assemble_file, read_bin
from revasm.assembler.image import Image

from .errors import ToolError

IMAGE_SUFFIXES = (".bin",)

#: Gradients want the finer resolution: without --width or a .width directive,
#: the gradient commands (grad, hessian, batch --grad, report --grad) run at W = 64.
GRADIENT_DEFAULT_WIDTH = 64
_WIDTH_DIRECTIVE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*:\s*)*\.width\b",
                              re.IGNORECASE | re.MULTILINE)


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
            raise ToolError(f"{path}: error: not a revasm image: {exc}") from None
        if width is not None and width != image.width:
            raise ToolError(f"{path}: error: the image was assembled for W = {image.width}, "
                            f"not {width}")
        return image
    try:
        return assemble_file(file, width=width)
    except AssemblyError as exc:
        raise ToolError("\n".join(d.format() for d in exc.diagnostics)
                        + f"\n{len(exc.diagnostics)} error(s) in {path}") from None
    except UnicodeDecodeError:
        raise ToolError(f"{path}: error: not a text file "
                        "(is it a binary image? name it .bin)") from None


def load_gradient_program(file: str, width: str | None) -> Image:
    """The program at the requested width; W = 64 when neither flag nor file says."""
    if width is None and Path(file).suffix != ".bin":
        try:
            declares = bool(_WIDTH_DIRECTIVE.search(Path(file).read_text()))
        except (OSError, UnicodeDecodeError):
            declares = True  # let load_program report it
        if not declares:
            return load_program(file, GRADIENT_DEFAULT_WIDTH)
    return load_program(file, int(width) if width else None)
