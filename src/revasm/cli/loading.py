"""Loading a program for a command: ``revasm.load`` (the API owns loading by file type
and the width rule); here its errors become the command's messages."""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from revasm.assembler import AssemblyError
from revasm.assembler.diagnostics import Diagnostic
from revasm.assembler.image import Image
from revasm.loading import LoadedProgram, LoadError, file_kind
from revasm.loading import load_program as load_file

from .errors import ToolError
from .options import pendvm_requested

if TYPE_CHECKING:
    from revasm.compiler import CompileError


def is_janus(path: str) -> bool:
    return file_kind(path) == "janus"


def load_program(path: str, width: int | None = None, *, gradient: bool = False) -> Image:
    """The program in ``path`` (``revasm.load``); errors become ToolError."""
    return open_program(path, width, gradient=gradient).image


def open_program(path: str, width: int | None = None, *,
                 gradient: bool = False) -> LoadedProgram:
    """``revasm.loading.load_program``: the image and, for Python, the compiled program;
    every error a ToolError naming the file (and line, for source that does not build).
    PAL source is assembled in PendVM-compatibility mode when the command was given
    ``--pendvm`` (``options.PENDVM``)."""
    compile_errors: tuple[type[Exception], ...] = ()
    if file_kind(path) in ("janus", "python"):  # only these import the compiler
        from revasm.compiler import CompileError
        compile_errors = (CompileError,)
    try:
        return load_file(path, width, gradient=gradient, pendvm=pendvm_requested())
    except LoadError as exc:
        raise ToolError(f"{exc.path}: error: {exc.reason}", file=exc.path) from None
    except compile_errors as exc:
        raise compile_error(cast("CompileError", exc)) from None
    except AssemblyError as exc:
        if file_kind(path) in ("janus", "python"):  # a compiler bug: its output did not assemble
            raise assembly_error(exc, path, "internal error: the compiled program does not "
                                 "assemble:\n") from None
        raise assembly_error(exc, path) from None


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
