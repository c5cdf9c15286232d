"""Compile a reversible function in one call: parse, check, lower, assemble.

    from revasm.compiler import compile_file
    program = compile_file("examples/nilang/rfib.py", "rfib")
    program.pal, program.image                 # the assembly text and the image

Running and differentiating compiled programs is the Python API's job
(``revasm.run_program``, ``revasm.grad_program``; ``src/revasm/programs.py``), which sits above
both the compiler and the simulators.  ``@reversible`` (re-exported by
``compiler/edsl.py``) returns a :class:`ReversibleFunction`, a handle whose
``compile()`` is :func:`compile_function`.
"""
from __future__ import annotations

import gc
import inspect
import linecache
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from revasm.assembler import AssemblyError, assemble
from revasm.assembler.diagnostics import TOO_MANY_ERRORS
from revasm.assembler.image import Image, SourceOrigin

from .backend.lowering import DEFAULT_LEVEL, LEVELS, Lowered, SourceEntry, lower_module
from .errors import CompileError, SourcePos
from .frontend.checks import check_module
from .frontend.parse import parse_file, parse_source
from .ir import nodes as ir
from .ir.inline import inline_calls
from .ir.inline_functions import inline_functions
from .ir.printer import function_text, module_text
from .ir.unroll import unroll_loops

#: A front end's wording of a check (``describe(entry)``): the note in its own terms, and
#: the source position to report it at.
Describe = Callable[[SourceEntry], tuple[str, SourcePos]]


class ReversibleFunction:
    """What ``@reversible`` returns: the function's file and name, for the compiler."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self.source_file = inspect.getsourcefile(function) or "<unknown>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.__name__} is a reversible program, not a Python function: "
                        f"run it with revasm.run_program({self.__name__}, ...)")

    def __invert__(self) -> Any:  # ``~f(...)`` only means something to the compiler
        return self

    def compile(self, **options: Any) -> CompiledProgram:
        """This function compiled (``compile_function``'s options)."""
        return compile_function(self, **options)



def reversible(function: Any) -> ReversibleFunction:
    """Mark a function as a reversible program for ``revasm compile``."""
    return ReversibleFunction(function)


@dataclass
class CompiledProgram:
    """A compiled entry function: IR, PAL text, assembled image, source map."""

    module: ir.Module
    entry: str
    lowered: Lowered
    image: Image

    @property
    def pal(self) -> str:
        return self.lowered.pal

    @property
    def function(self) -> ir.Function:
        return self.module.functions[self.entry]

    def ir_text(self, inverse: bool = False) -> str:
        return module_text(self.module, inverse=inverse)

    def source_of_pc(self, pc: int | None) -> SourceEntry | None:
        """The Python position (and role) of the instruction at ``pc``."""
        if pc is None:
            return None
        location = self.image.location(pc)
        return self.lowered.lines.get(location.line) if location else None

    def role_of_pc(self, pc: int) -> str:
        entry = self.source_of_pc(pc)
        return entry.role if entry else "control"


def compile_source(text: str, entry: str | None = None, filename: str = "<source>", *,
                   width: int = 32, for_gradient: bool = False,
                   max_registers: int | None = None, checks: bool | Iterable[str] = True,
                   inline: bool = True, level: int = DEFAULT_LEVEL) -> CompiledProgram:
    """:func:`compile_file` on source text."""
    return deep(lambda: _finish(parse_source(text, filename), entry, width, for_gradient,
                                max_registers, checks, inline, level), filename)


def compile_file(path: str | Path, entry: str | None = None, *, width: int = 32,
                 for_gradient: bool = False, max_registers: int | None = None,
                 checks: bool | Iterable[str] = True, inline: bool = True,
                 level: int = DEFAULT_LEVEL) -> CompiledProgram:
    """Compile ``entry`` (default: the file's last @reversible function).

    ``checks=False`` (NiLang's ``@invcheckoff``) drops the runtime guards
    (docs/language.md, *Runtime checks*); ``inline=False`` keeps every call a portal
    call instead of inlining small straight-line functions; ``level`` is the
    optimisation level (``LEVELS``; docs/language.md, *Optimisation levels*): 0 the
    plain statement-by-statement lowering, the reference every level computes the same
    bits as, 1 the peephole, constant pool and single-pass conditions, 2 (the default)
    also the -O2 passes (inlining, unrolling, pointers, held bounds and conditions,
    hoisted guards, combined immediates).
    """
    return deep(lambda: _finish(parse_file(path), entry, width, for_gradient, max_registers,
                                checks, inline, level), str(path))


def compile_function(function: ReversibleFunction, **options: Any) -> CompiledProgram:
    """Compile a ``@reversible`` function (``compile_file``'s options): from its file, or,
    for a function defined in a notebook cell or at a prompt that keeps what was typed
    (IPython, Jupyter, Python 3.13's REPL: their text is in :mod:`linecache`), from that
    text, as :func:`compile_source` would.  The other ``@reversible`` functions it calls
    must be in the same file or cell.  A function whose text nothing kept (the plain
    ``python`` prompt, ``exec`` of a string) is a :class:`CompileError` saying what to do."""
    path = function.source_file
    if Path(path).is_file():
        return compile_file(path, function.__name__, **options)
    return compile_source(source_text(function), function.__name__, path, **options)


def source_text(function: ReversibleFunction) -> str:
    """The text of the file or notebook cell ``function`` was defined in, as
    :mod:`linecache` holds it (IPython registers each cell there under its own name)."""
    path = function.source_file
    code = getattr(function.function, "__code__", None)
    lines = linecache.getlines(path, getattr(function.function, "__globals__", None))
    if lines:
        return "".join(lines)
    name = function.__name__
    raise CompileError(
        SourcePos(path, getattr(code, "co_firstlineno", 1), 1),
        f"cannot read the source of {name}: it was defined where no source text is kept "
        "(a plain `python` prompt, or exec of a string), and the compiler reads source",
        hint=f"put it in a .py file and call revasm.compile_file(path, {name!r}), or pass "
             f"its text to revasm.compile_source(text, {name!r}); in IPython or Jupyter, "
             "define it in a cell (cells keep their text)")


#: Janus integers are 32-bit words (compiler/frontend/janus/words.py).
JANUS_WIDTH = 32


def compile_janus_file(path: str | Path, *, checks: bool | Iterable[str] = True,
                       inline: bool = True, level: int = DEFAULT_LEVEL) -> CompiledProgram:
    """Compile a Janus program (``.ja``, docs/janus.md) for the W = 32 machine: its
    ``main`` is the entry, main's variables its declared names."""
    from .frontend.janus import parse_janus_file
    return deep(lambda: _janus(parse_janus_file(path), checks, inline, level), str(path))


def compile_janus_source(text: str, filename: str = "<janus>", *,
                         checks: bool | Iterable[str] = True, inline: bool = True,
                         level: int = DEFAULT_LEVEL) -> CompiledProgram:
    """:func:`compile_janus_file` on source text."""
    from .frontend.janus import parse_janus
    return deep(lambda: _janus(parse_janus(text, filename), checks, inline, level), filename)


#: The stack of the thread a compilation runs on, and the recursion limit it runs under:
#: the front ends, the IR passes and the backend walk the program's tree recursively, and
#: nesting or an expression's length is the user's (400 nested ifs, a 1000-term sum).
#: The limit leaves every frame 10 KiB of the stack (CPython frames that pass through C
#: take a few KiB): a program nested deeper is a CompileError, never a stack overflow.
COMPILE_STACK_BYTES = 1 << 30
COMPILE_RECURSION_LIMIT = 100_000
_deep_lock = threading.Lock()
_deep_users = 0
_T = TypeVar("_T")


def _leave_deep() -> None:
    """One compilation thread fewer; the last one restores the recursion limit."""
    global _deep_users
    with _deep_lock:
        _deep_users -= 1
        if _deep_users == 0:
            sys.setrecursionlimit(deep.saved_limit)  # type: ignore[attr-defined]
            if deep.collecting:  # type: ignore[attr-defined]
                gc.enable()


def deep(task: Callable[[], _T], file: str) -> _T:
    """``task()`` (a compilation of ``file``) on a thread with a large stack and a high
    recursion limit, so that deeply nested programs compile; one nested deeper still is a
    CompileError at the file, not a RecursionError."""
    global _deep_users
    if threading.current_thread().name == "revasm-compile":  # already on one
        return task()
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, task()))
        except BaseException as exc:  # handed to the calling thread
            outcome.append((False, exc))
        finally:
            _leave_deep()
    with _deep_lock:
        if _deep_users == 0:
            deep.saved_limit = sys.getrecursionlimit()  # type: ignore[attr-defined]
            sys.setrecursionlimit(max(COMPILE_RECURSION_LIMIT, deep.saved_limit))  # type: ignore[attr-defined]
            # The cyclic collector off while compiling: the passes allocate millions of
            # small acyclic objects (freed by reference counting), and its collections
            # over them took half of a 10^5-statement compilation
            deep.collecting = gc.isenabled()  # type: ignore[attr-defined]
            gc.disable()
        _deep_users += 1
        size = threading.stack_size()
        try:
            threading.stack_size(COMPILE_STACK_BYTES)
            worker = threading.Thread(target=run, name="revasm-compile", daemon=True)
        finally:
            threading.stack_size(size)
    try:
        worker.start()
    except BaseException:
        _leave_deep()
        raise
    # the worker, not this thread, gives the recursion limit back: a caller interrupted
    # while it waits (Ctrl-C, a time-out's signal) must not lower the limit under a
    # compilation still running deep on the worker (CPython stops the process then)
    worker.join()
    ok, value = outcome[0]
    if ok:
        return value
    if isinstance(value, RecursionError):
        raise CompileError(SourcePos(file, 1, 1), "the program is nested too deeply to compile "
                                                  f"(more than {COMPILE_RECURSION_LIMIT:,} "
                                                  "levels of statements or expression terms)",
                           "split it into procedures (functions)") from None
    raise value


def _janus(program: Any, checks: bool | Iterable[str], inline: bool,
           level: int) -> CompiledProgram:
    """A parsed Janus program compiled, its run-time checks worded in Janus terms."""
    from .frontend.janus.messages import JanusChecks
    module = _janus_module(program)
    words = JanusChecks(program)
    return _finish(module, "main", JANUS_WIDTH, False, None, checks, inline, level,
                   lambda entry: words.describe(entry.pos or SourcePos(module.file, 1, 1),
                                                entry.note, entry.check, entry.role))


def _janus_module(program: Any) -> ir.Module:
    """A parsed Janus program, checked and lowered; errors show their source line."""
    from .frontend.janus import check_program
    from .frontend.janus.lowering import lower_program
    try:
        return lower_program(check_program(program))
    except CompileError as exc:
        if not exc.source_line and 0 < exc.pos.line <= len(program.source_lines):
            exc.source_line = program.source_lines[exc.pos.line - 1]
        raise


def _finish(module: ir.Module, entry: str | None, width: int, for_gradient: bool,
            max_registers: int | None, checks: bool | Iterable[str] = True,
            inline: bool = True, level: int = DEFAULT_LEVEL,
            describe: Describe | None = None) -> CompiledProgram:
    if level not in LEVELS:
        raise ValueError(f"optimisation level {level!r}: the levels are "
                         + ", ".join(map(str, LEVELS)))
    if entry is None:
        entry = list(module.functions)[-1]
    if entry not in module.functions:
        known = ", ".join(module.functions)
        raise CompileError(SourcePos(module.file, 1, 1),
                           f"no @reversible function {entry!r} in this file (it has: {known})")
    proofs = check_module(module, for_gradient=for_gradient)
    plain = inline_calls(module) if inline else module  # what -O0 and -O1 lower
    lowered_module = plain
    if level >= 2:
        if inline:
            lowered_module = inline_calls(inline_functions(module, proofs.written,
                                                           proofs))
        lowered_module = unroll_loops(lowered_module)
    try:
        lowered = lower_module(lowered_module, entry, width, max_registers, for_gradient,
                               proofs, checks, level, plain if level >= 2 else None)
    except CompileError as exc:
        if not exc.source_line and 0 < exc.pos.line <= len(module.source_lines):
            exc.source_line = module.source_lines[exc.pos.line - 1]
        raise
    try:
        image = assemble(lowered.pal, filename=f"{Path(module.file).stem}.{entry}.pal",
                         width=width, parsed=lowered.statements,
                         origins=partial(source_origins, lowered, module.source_lines,
                                         describe))  # (made when the locations are read)
    except AssemblyError as exc:
        too_far = _too_far(exc, lowered, module)
        if too_far is None:
            raise
        raise too_far from None
    return CompiledProgram(module, entry, lowered, image)


def source_origins(lowered: Lowered, source_lines: Sequence[str],
                   describe: Describe | None = None) -> dict[int, SourceOrigin]:
    """Each PAL line the compiler placed -> its user-source origin
    (``SourceLocation.origin``): the one source map that faults, breakpoints, stack frames
    and reports read, given to the assembler for the locations it makes.  ``describe``
    rewords a check's note in the front end's terms."""
    out: dict[int, SourceOrigin] = {}
    #: one origin object per place and check (a statement's instructions share it), keyed
    #: by the position object's identity: a SourcePos's own hash, and ``describe`` for each
    #: instruction, were most of this function's time on a 10^5-statement program
    origins: dict[tuple, SourceOrigin] = {}
    texts: dict[int, str] = {}  # a source line's text, stripped
    last: tuple[SourceEntry | None, SourceOrigin | None] = (None, None)
    for line, entry in lowered.lines.items():
        if entry is last[0]:  # the lines of one statement share their entry
            if last[1] is not None:
                out[line] = last[1]
            continue
        last = (entry, None)
        if entry.pos is None:
            continue
        key = (id(entry.pos), entry.note, entry.check, entry.role)
        origin = origins.get(key)
        if origin is None:
            pos, note = entry.pos, entry.note
            if describe is not None and entry.note:
                note, pos = describe(entry)
            text = texts.get(pos.line)
            if text is None:  # each line stripped once: a 6*10^4-term sum on one line has
                # as many origins, and stripping the line for each took 36 s
                text = texts[pos.line] = source_lines[pos.line - 1].strip() \
                    if 0 < pos.line <= len(source_lines) else ""
            origin = origins[key] = SourceOrigin(pos.file, pos.line, pos.column, text, note,
                                                 entry.check, entry.role)
        out[line] = origin
        last = (entry, origin)
    return out


def _too_far(exc: AssemblyError, lowered: Lowered, module: ir.Module) -> CompileError | None:
    """A program whose branches span more than the offset fields hold (every error a branch
    offset), as a CompileError at the source line of the first such branch."""
    # (the note that the assembler stopped counting is no error of its own)
    errors = [d for d in exc.diagnostics if not d.message.startswith(TOO_MANY_ERRORS)]
    if not errors or not all("branch offset" in d.message for d in errors):
        return None
    entry = next((lowered.lines.get(d.line) for d in exc.diagnostics
                  if lowered.lines.get(d.line) is not None), None)
    pos = entry.pos if entry is not None and entry.pos else SourcePos(module.file, 1, 1)
    line = module.source_lines[pos.line - 1] if 0 < pos.line <= len(module.source_lines) \
        else ""
    return CompileError(pos, "the compiled program is too large: a branch of this statement "
                             "spans more instructions than a branch offset holds (16 bits)",
                        "split the work into procedures (functions): each call is a portal, "
                        "and every / and % or product in a condition is code repeated at "
                        "each test", line)


__all__ = ["DEFAULT_LEVEL", "LEVELS", "CompileError", "CompiledProgram", "ReversibleFunction",
           "compile_file", "compile_function", "compile_janus_file", "compile_janus_source",
           "compile_source", "function_text", "reversible"]
