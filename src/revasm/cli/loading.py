"""Loading a program for a command: PAL source or an assembled image."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from revasm.assembler import AssemblyError, assemble_file, read_bin
from revasm.assembler.diagnostics import Diagnostic
from revasm.assembler.image import Image

from .errors import ToolError

if TYPE_CHECKING:
    from revasm.compiler import CompileError

IMAGE_SUFFIXES = (".bin",)
#: Janus source (docs/janus.md): compiled for the W = 32 machine when a command loads it.
JANUS_SUFFIXES = (".ja",)


def is_janus(path: str) -> bool:
    return Path(path).suffix.lower() in JANUS_SUFFIXES

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
    if is_janus(path):
        return load_janus(path, width)
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
        raise assembly_error(exc, path) from None
    except UnicodeDecodeError:
        raise ToolError(f"{path}: error: not a text file "
                        "(is it a binary image? name it .bin)") from None
    except OSError as exc:
        raise ToolError(f"{path}: error: cannot read: {exc.strerror or exc}") from None


def load_janus(path: str, width: int | None = None) -> Image:
    """Compile a Janus program to its image (W = 32, the width of Janus integers)."""
    from revasm.compiler import CompileError
    from revasm.compiler.api import JANUS_WIDTH, compile_janus_file
    if width is not None and width != JANUS_WIDTH:
        raise ToolError(f"{path}: error: Janus programs run at W = {JANUS_WIDTH} (their "
                        f"integers are 32-bit words, docs/janus.md), not {width}", file=path)
    try:
        return compile_janus_file(path).image
    except CompileError as exc:
        raise compile_error(exc) from None
    except AssemblyError as exc:  # a compiler bug: the output did not assemble
        raise assembly_error(exc, path, "internal error: the compiled program does not "
                             "assemble:\n") from None
    except OSError as exc:
        raise ToolError(f"{path}: error: cannot read: {exc.strerror or exc}") from None


def _positive(number: int) -> int | None:
    return number if number >= 1 else None


def diagnostic_json(diagnostic: Diagnostic) -> dict:
    """One assembler diagnostic as the JSON error object lists it."""
    return {"file": diagnostic.file, "line": max(diagnostic.line, 1),
            "col": max(diagnostic.column, 1), "message": diagnostic.message,
            "severity": diagnostic.severity}


def assembly_error(exc: AssemblyError, path: str, prefix: str = "") -> ToolError:
    """The ToolError of a source that does not assemble: every diagnostic, the first's place."""
    first = exc.diagnostics[0] if exc.diagnostics else None
    return ToolError(prefix + "\n".join(d.format() for d in exc.diagnostics)
                     + f"\n{len(exc.diagnostics)} error(s) in {path}", kind="assembly",
                     file=first.file if first else path,
                     line=_positive(first.line) if first else None,
                     col=_positive(first.column) if first else None,
                     diagnostics=[diagnostic_json(d) for d in exc.diagnostics])


def compile_error(exc: CompileError, prefix: str = "") -> ToolError:
    """The ToolError of a CompileError: its message, place and hint."""
    return ToolError(prefix + exc.format(), kind="compile", file=exc.pos.file,
                     line=_positive(exc.pos.line), col=_positive(exc.pos.column),
                     hint=exc.hint or None)


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
