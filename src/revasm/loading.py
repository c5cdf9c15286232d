"""Loading a program from a file by its type: what every command does with its FILE.

    import revasm
    revasm.load("examples/fib.pal")                 # PAL source, assembled
    revasm.load("fib.bin")                          # an image (and fib.bin.json, its sidecar)
    revasm.load("fib.hex")                          # a hex memory image (and its sidecar)
    revasm.load("examples/janus/factor.ja")         # Janus, compiled (W = 32)
    revasm.load("examples/nilang/rfib.py:rfib")     # a @reversible Python function, compiled

The word width follows one rule for every file type, command and API call
(docs/decisions.md, "One width default"): ``width`` when given, else the file's own (a
PAL file's ``.width``, an image's header; Janus integers are 32-bit words), else
:data:`~revasm.isa.fixed_point.DEFAULT_WIDTH`.  A given ``width`` overrides a PAL file's
``.width`` and compiles Python at that width; an image or a Janus program has its width
fixed, and another one is a :class:`LoadError`.

A file that cannot be read is a :class:`LoadError`; PAL that does not assemble raises the
assembler's :class:`~revasm.assembler.AssemblyError`, Python or Janus that does not
compile the compiler's :class:`~revasm.compiler.CompileError`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from revasm.assembler import assemble_file, read_bin, read_hex
from revasm.assembler.image import Image
from revasm.isa.fixed_point import DEFAULT_WIDTH

if TYPE_CHECKING:
    from revasm.compiler import CompiledProgram

#: File suffix (lower case) -> kind; any other file is PAL source.
SUFFIXES = {".bin": "image", ".hex": "hex", ".ja": "janus", ".py": "python"}
_KIND_NAMES = {"image": "a .bin image", "hex": "a .hex image", "janus": "a Janus program",
               "python": "a Python program"}


class LoadError(ValueError):
    """A program file that cannot be loaded: missing, unreadable, not an image, or at a
    width it cannot have.  ``path`` is the file, ``reason`` what is wrong with it."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class LoadedProgram:
    """A loaded program: its image, and for Janus and Python source the compiled program
    (the source map and parameters the debugger and ``run_program`` read)."""

    image: Image
    program: CompiledProgram | None = None


def file_kind(path: str | Path) -> str:
    """``pal``, ``image`` (.bin), ``hex``, ``janus`` (.ja) or ``python`` (SRC.py[:FUNC])."""
    source, _function = python_target(str(path))
    return SUFFIXES.get(Path(source).suffix.lower(), "pal")


def python_target(path: str) -> tuple[str, str | None]:
    """``SRC.py:FUNC`` as (``SRC.py``, ``FUNC``); any other path as (path, None)."""
    source, separator, function = path.partition(".py:")
    if separator and function:
        return source + ".py", function
    return path, None


def load(path: str | Path, width: int | None = None, *, gradient: bool = False,
         pendvm: bool = False) -> Image:
    """The program image in ``path`` (PAL, .bin, .hex, .ja or SRC.py[:FUNC]) at ``width``
    (module docstring: the width rule).  ``gradient``: a Python function is compiled with
    the checks for differentiation.  ``pendvm``: PAL source in PendVM-compatibility mode,
    as if it said ``.pendvm`` (docs/assembly.md, "PendVM variants"); for another kind of
    file a LoadError."""
    return load_program(path, width, gradient=gradient, pendvm=pendvm).image


def load_program(path: str | Path, width: int | None = None, *, gradient: bool = False,
                 pendvm: bool = False) -> LoadedProgram:
    """:func:`load`, keeping the compiled program of a Janus or Python source."""
    text = str(path)
    kind = file_kind(text)
    source, function = python_target(text) if kind == "python" else (text, None)
    file = Path(source)
    try:  # exists() raises for a name the system refuses (ENAMETOOLONG, ...)
        exists, is_dir = file.exists(), file.is_dir()
    except OSError as exc:
        raise LoadError(source, f"cannot read: {exc.strerror or exc}") from None
    if not exists:
        raise LoadError(source, "no such file")
    if is_dir:
        raise LoadError(source, "is a directory, not a program")
    if pendvm and kind != "pal":
        raise LoadError(source, "PendVM-compatibility mode (--pendvm) is a way of reading "
                                f"PAL source, and this is {_KIND_NAMES[kind]}")
    if kind == "python":
        return _python(source, function, width, gradient)
    if kind == "janus":
        program = _janus(source, width)
        return LoadedProgram(program.image, program)
    if kind in ("image", "hex"):
        return LoadedProgram(_image(file, kind, width))
    try:
        return LoadedProgram(assemble_file(file, width=width, pendvm=pendvm))
    except OSError as exc:
        raise LoadError(source, f"cannot read: {exc.strerror or exc}") from None


def _image(file: Path, kind: str, width: int | None) -> Image:
    try:
        image = read_bin(file) if kind == "image" else read_hex(file)
    except (OSError, ValueError) as exc:
        raise LoadError(str(file), f"not a revasm image: {exc}") from None
    if width is not None and width != image.width:
        raise LoadError(str(file), f"the image was assembled for W = {image.width}, "
                                   f"not {width}")
    return image


def _janus(source: str, width: int | None) -> CompiledProgram:
    from revasm.compiler.api import JANUS_WIDTH, compile_janus_file
    if width is not None and width != JANUS_WIDTH:
        raise LoadError(source, f"Janus programs run at W = {JANUS_WIDTH} (their integers "
                                f"are 32-bit words, docs/janus.md), not {width}")
    try:
        return compile_janus_file(source)
    except OSError as exc:
        raise LoadError(source, f"cannot read: {exc.strerror or exc}") from None


def _python(source: str, function: str | None, width: int | None,
            gradient: bool) -> LoadedProgram:
    from revasm.compiler import compile_file
    try:
        program = compile_file(source, function, width=width or DEFAULT_WIDTH,
                               for_gradient=gradient)
    except OSError as exc:
        raise LoadError(source, f"cannot read: {exc.strerror or exc}") from None
    return LoadedProgram(program.image, program)
