"""Fuzzing the readers: every bad input gets a clear error, never a traceback (docs/cli.md).

Five targets, each fed inputs made by mutating the real examples (insert, delete,
replace and duplicate tokens, lines or bytes), so that inputs reach past the first
check of each reader:

* ``assembler`` -- PAL text into :func:`revasm.assembler.assemble` (only ``AssemblyError``,
  each diagnostic at ``file:line:col`` inside the text);
* ``image`` -- bytes into the image readers: raw binary, hex, sidecar (only
  ``ImageFormatError``);
* ``batch_inputs`` -- CSV and ``.npz`` bytes into ``revasm.batching.inputs.read_columns`` and
  ``to_words`` (only ``BatchInputError``);
* ``frontend`` -- Python source into :func:`revasm.compiler.compile_source` (only
  ``CompileError``);
* ``cli`` -- argument lists into the ``revasm`` command (through click's ``CliRunner``):
  exit code 0, 1 or 2, never "internal error" or a traceback.

``tests/bench/test_fuzz.py`` runs each target a bounded number of times with hypothesis driving
the mutations; :func:`run` (``revasm bench fuzz``) is the long run, 10⁵ inputs per target
from a seeded random generator.  Anything else raised is a :class:`FuzzFailure` holding the
input, so a failure can be replayed.
"""
from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import signal
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .common import EXAMPLES

#: One edit of a token list: (operation, position, choice), all non-negative integers.
Edit = tuple[int, int, int]

FULL_INPUTS = 100_000
QUICK_INPUTS = 300

#: Strings the mutators insert besides the corpus's own tokens: edge cases of every reader.
SPECIALS = (
    "\r", "\r\n", "\n", "\t", "\x00", "\ufeff", "\x0c", "\u2028", "\xff", "é", " ",
    "-", "+", ".", ",", ":", ";", "=", "$", "$0", "$31", "$32", "$-1", "$99999999999",
    "0", "-0", "1", "-1", "0x", "0xFFFFFFFFFFFFFFFF", "0x8000000000000000", "9" * 40,
    "1e999", "-1e999", "nan", "inf", "1.5", "-0.5", "65536", "70000", "-70000", "0b102",
    "..", "in", "1..0", "fixed", "int", ".width", "64", "128", ".input", ".output",
    ".loss", ".name", ".const", ".equ", "DATA", "start", "finish", "bra", "(", ")", "[",
    "]", "{", "}", "'", '"', "#", "\\", "lambda", "while", "for", "if", "else", "def",
    "return", "@reversible", "**", "//", "<<", ">>", "~", "not", "and", "or",
    "ancilla", "free", "Fixed", "Int", "Array", "Out", "Loss", "routine", "inverse",
    "x" * 300, "a" * 5000,
)

_TOKEN = re.compile(r"\s+|[A-Za-z_$.][A-Za-z0-9_.$]*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|.", re.S)


#: What a check returns: the input was taken (``OK``) or refused with the target's own
#: documented error (``CLEAN``); anything else is a :class:`FuzzFailure`.
OK = "ok"
CLEAN = "clean error"


#: A file's directories up to the package (site-packages, src, the standard library), which
#: differ between machines: dropped from what the results keep.
_PREFIX = re.compile(r"(?:[A-Za-z]:)?[/\\][^\s\"':]*?[/\\]"
                     r"(?:site-packages|src|lib[/\\]python3\.\d+)[/\\]")


def scrub(text: str) -> str:
    """``text`` with this machine's directories cut from the file names in it."""
    return _PREFIX.sub("", text)


class FuzzFailure(AssertionError):
    """An input that got something other than the target's documented error.  ``kind``
    (the exception's class name, ``position``, ``exit code``, ...) is what the minimiser
    keeps while it shrinks the input."""

    def __init__(self, target: str, data: Any, detail: str, kind: str = "") -> None:
        detail = scrub(detail)
        super().__init__(f"{target}: {detail}\ninput: {data!r}"[:4000])
        self.target = target
        self.data = data
        self.detail = detail
        self.kind = kind or detail.split(":", 1)[0]


# --- the corpus and the mutators -----------------------------------------------------

def _read(paths: Sequence[Path]) -> list[str]:
    return [p.read_text() for p in paths]


def pal_corpus() -> list[str]:
    return _read(sorted(EXAMPLES.glob("*.pal")) + sorted((EXAMPLES / "errors").glob("*.pal")))


def python_corpus() -> list[str]:
    names = ("rfib", "rfibn", "dot", "umm", "qr", "sparse_dot", "ibesselj", "givens100",
             "petersen", "gmm")
    return _read([EXAMPLES / "nilang" / f"{name}.py" for name in names])


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def vocabulary(texts: Sequence[str]) -> list[str]:
    """Every distinct token of the corpus, and the special strings."""
    seen = dict.fromkeys(SPECIALS)
    for text in texts:
        seen.update(dict.fromkeys(t for t in tokens(text) if not t.isspace()))
    return list(seen)


def mutate_text(text: str, edits: Sequence[Edit], vocab: Sequence[str]) -> str:
    """``text`` after ``edits``: 0 delete a token, 1 insert one, 2 replace one, 3 duplicate
    a run of tokens, 4 delete a line, 5 duplicate a line, 6 swap two lines, 7 cut the text."""
    parts = tokens(text)
    for op, where, choice in edits:
        op %= 8
        if op >= 4:
            lines = "".join(parts).split("\n")
            at = where % max(len(lines), 1)
            if op == 4 and lines:
                del lines[at]
            elif op == 5 and lines:
                lines.insert(at, lines[at])
            elif op == 6 and lines:
                other = choice % len(lines)
                lines[at], lines[other] = lines[other], lines[at]
            elif op == 7:
                joined = "\n".join(lines)
                lines = [joined[:where % (len(joined) + 1)]]
            parts = tokens("\n".join(lines))
            continue
        at = where % (len(parts) + 1)
        word = vocab[choice % len(vocab)]
        if op == 0 and parts:
            del parts[min(at, len(parts) - 1)]
        elif op == 1:
            parts.insert(at, word)
        elif op == 2 and parts:
            parts[min(at, len(parts) - 1)] = word
        elif op == 3 and parts:
            span = parts[at:at + 1 + choice % 8]
            parts[at:at] = span
    return "".join(parts)


def mutate_bytes(data: bytes, edits: Sequence[Edit]) -> bytes:
    """``data`` after byte edits: 0 flip bits, 1 insert, 2 delete a run, 3 overwrite a byte,
    4 duplicate a run, 5 truncate, 6 write a 32-bit little-endian number."""
    buf = bytearray(data)
    for op, where, choice in edits:
        op %= 7
        at = where % (len(buf) + 1)
        if op == 0 and buf:
            buf[min(at, len(buf) - 1)] ^= 1 << (choice % 8)
        elif op == 1:
            buf[at:at] = bytes([choice % 256])
        elif op == 2:
            del buf[at:at + 1 + choice % 16]
        elif op == 3 and buf:
            buf[min(at, len(buf) - 1)] = choice % 256
        elif op == 4:
            buf[at:at] = buf[at:at + 1 + choice % 32]
        elif op == 5:
            del buf[at:]
        elif op == 6:
            buf[at:at + 4] = (choice * 2654435761 % (1 << 32)).to_bytes(4, "little")
    return bytes(buf)


def random_edits(rng: random.Random, most: int = 6) -> list[Edit]:
    return [(rng.randrange(8), rng.randrange(1 << 20), rng.randrange(1 << 20))
            for _ in range(rng.randint(1, most))]


# --- the targets -------------------------------------------------------------------------

def _unexpected(target: str, data: Any, exc: BaseException) -> FuzzFailure:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}revasm{os.sep}" in f.filename
            and f"{os.sep}bench{os.sep}" not in f.filename]
    shown = (ours[-1:] if ours and ours[-1] not in frames[-2:] else []) + frames[-2:]
    tb = "".join(traceback.format_list(shown))
    return FuzzFailure(target, data, f"{type(exc).__name__}: {str(exc)[:500]}\n{tb}",
                       type(exc).__name__)


def check_assembler(text: str) -> str:
    """``assemble`` gives an image or an ``AssemblyError`` with positions inside the text."""
    from revasm.assembler import AssemblyError, assemble

    try:
        assemble(text, "fuzz.pal")
    except AssemblyError as exc:
        lines = max(1, len(re.split(r"\r\n|\r|\n", text)))
        for d in exc.diagnostics:
            if d.file != "fuzz.pal" or not 1 <= d.line <= lines or d.column < 1:
                raise FuzzFailure("assembler", text, f"diagnostic outside the text: "
                                  f"{d.format()}", "position") from None
        return CLEAN
    except Exception as exc:
        raise _unexpected("assembler", text, exc) from None
    return OK


def check_image(data: bytes, kind: str, directory: Path) -> str:
    """A file of ``kind`` (bin, hex, sidecar) read with the image readers: an image or an
    ``ImageFormatError``."""
    from revasm.assembler import ImageFormatError, read_bin, read_hex
    from revasm.assembler.disassemble import disassemble

    path = directory / ("fuzz.hex" if kind == "hex" else "fuzz.bin")
    if kind == "sidecar":
        path.write_bytes(_FUZZ_BIN)
        (directory / "fuzz.bin.json").write_bytes(data)
    else:
        path.write_bytes(data)
        sidecar = directory / (path.name + ".json")
        if sidecar.exists():
            sidecar.unlink()
    try:
        image = read_hex(path) if kind == "hex" else read_bin(path)
        disassemble(image)
    except ImageFormatError:
        return CLEAN
    except Exception as exc:
        raise _unexpected(f"image ({kind})", data, exc) from None
    return OK


def check_batch_inputs(data: bytes, suffix: str, directory: Path) -> str:
    """Bytes as a ``.csv``, ``.npz`` or ``.parquet`` inputs file (or a Zarr array's
    metadata), through both readers -- the whole-file ``batching/inputs.read_columns`` with
    ``to_words``, and the chunked ``batching/sources.open_source`` -- columns or a
    ``BatchInputError``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr warns about the odd files it is given
        return _check_batch_inputs(data, suffix, directory)


def _check_batch_inputs(data: bytes, suffix: str, directory: Path) -> str:
    from revasm.batching.inputs import BatchInputError, read_columns, to_words
    from revasm.batching.sources import open_source
    from revasm.isa.fixed_point import WIDTHS, word_format

    if suffix == ".zarr":
        path = directory / "fuzz.zarr"
        if path.exists():
            shutil.rmtree(path)
        shutil.copytree(_ZARR_SEED, path)
        _zarr_metadata(path).write_bytes(data)
    else:
        path = directory / f"fuzz{suffix}"
        path.write_bytes(data)
    outcome = OK
    try:
        if suffix in (".csv", ".npz"):
            columns = read_columns(str(path))
            for values in columns.values():
                for width in WIDTHS:
                    for fixed in (None, True, False):
                        try:
                            to_words(values, word_format(width), fixed=fixed, name="c")
                        except BatchInputError:
                            outcome = CLEAN
    except BatchInputError:
        outcome = CLEAN
    except Exception as exc:
        raise _unexpected(f"batch inputs ({suffix})", data, exc) from None
    try:
        source = open_source(str(path))
        rows = source.read(0, min(source.lanes, 64))
        for values in rows.values():
            to_words(values, word_format(32), name="c")
    except BatchInputError:
        outcome = CLEAN
    except Exception as exc:
        raise _unexpected(f"batch source ({suffix})", data, exc) from None
    return outcome


def check_frontend(text: str) -> str:
    """``compile_source`` gives a program or a ``CompileError`` at a position in the text."""
    from revasm.compiler import CompileError, compile_source

    try:
        compile_source(text, filename="fuzz.py")
    except CompileError as exc:
        if exc.pos.file != "fuzz.py" or exc.pos.line < 1 or exc.pos.column < 1:
            raise FuzzFailure("frontend", text, f"error outside the text: {exc}",
                              "position") from None
        return CLEAN
    except Exception as exc:
        raise _unexpected("frontend", text, exc) from None
    return OK


def check_janus(text: str) -> str:
    """``compile_janus_source`` (parser, checks, lowering, assembly of the result) gives a
    program or a ``CompileError`` at a line of the text; an ``AssemblyError`` of the PAL
    it generated is the compiler's bug, not the user's."""
    from revasm.compiler import CompileError
    from revasm.compiler.api import compile_janus_source

    try:
        compile_janus_source(text, "fuzz.ja")
    except CompileError as exc:
        lines = max(1, len(text.splitlines()) + 1)
        if exc.pos.file != "fuzz.ja" or not 1 <= exc.pos.line <= lines or exc.pos.column < 1:
            raise FuzzFailure("janus", text, f"error outside the text: {exc}",
                              "position") from None
        return CLEAN
    except Exception as exc:
        raise _unexpected("janus", text, exc) from None
    return OK


#: The files the CLI target's argument lists name (made by :func:`cli_workspace`).
CLI_FILES = ("fib.pal", "multiply.pal", "fixed_point.pal", "x1_plus_x1x2.pal", "bad.pal",
             "broken.pal", "fib.bin", "fib.hex", "nosidecar.bin", "junk.bin", "junk.hex",
             "ab.csv", "xs.csv", "xs.npz", "junk.npz", "nan.csv", "rfib.py", "dot.py",
             "cr.pal", "cr.py", "latin1.pal", "empty.pal", "dir", "missing.pal", "model.json",
             "fib_pair.ja", "factor.ja", "cmds.txt", "xs.parquet")
CLI_COMMANDS = ("asm", "disasm", "run", "check", "report", "compile", "grad-expr", "grad",
                "hessian", "batch", "debug", "dap")
#: Options that make a command a server, which runs until it is stopped (Ctrl-C, SIGTERM):
#: no input of the cli target -- each waited out the 30 s limit as a false "timeout" (the
#: full run found `dap --port`); tests/debug/test_dap_tcp.py serves and stops it.
SERVING_OPTIONS = {"dap": frozenset({"--port"})}


def cli_workspace(directory: Path) -> None:
    """The files the CLI target names, in ``directory`` (the run's working directory)."""
    from revasm.assembler import assemble_file, write_bin, write_hex, write_sidecar

    for name in ("fib.pal", "multiply.pal", "fixed_point.pal", "x1_plus_x1x2.pal",
                 "ab.csv", "xs.csv", "xs.npz", "my_process.json"):
        shutil.copy(EXAMPLES / name, directory / name)
    shutil.copy(EXAMPLES / "my_process.json", directory / "model.json")
    for name in ("bad.pal", "broken.pal"):
        shutil.copy(EXAMPLES / "errors" / name, directory / name)
    for name in ("rfib.py", "dot.py"):
        shutil.copy(EXAMPLES / "nilang" / name, directory / name)
    for name in ("fib_pair.ja", "factor.ja"):
        shutil.copy(EXAMPLES / "janus" / name, directory / name)
    shutil.copy(EXAMPLES / "xs.parquet", directory / "xs.parquet")
    (directory / "cmds.txt").write_text("break top\nstep 3\nprint $1\nreverse-continue\n"
                                        "memory 0 4\nset $2 7\ncontinue\n")
    image = assemble_file(EXAMPLES / "fib.pal")
    write_bin(image, directory / "fib.bin")
    write_sidecar(image, directory / "fib.bin.json")
    write_hex(image, directory / "fib.hex")
    write_sidecar(image, directory / "fib.hex.json")
    write_bin(image, directory / "nosidecar.bin")
    (directory / "junk.bin").write_bytes(b"RVIM\x01\x00 \x00" + b"\xff" * 40)
    (directory / "junk.hex").write_text("1zz\n")
    (directory / "junk.npz").write_bytes(b"PK\x03\x04 not a zip")
    (directory / "nan.csv").write_text("x,theta\nnan,1\n")
    (directory / "cr.pal").write_bytes((EXAMPLES / "fib.pal").read_bytes().replace(b"\n", b"\r"))
    (directory / "cr.py").write_bytes((EXAMPLES / "nilang" / "rfib.py").read_bytes()
                                      .replace(b"\n", b"\r"))
    (directory / "latin1.pal").write_bytes(b";; pendulum pal file\n; caf\xe9\n start\n finish\n")
    (directory / "empty.pal").write_text("")
    (directory / "dir").mkdir(exist_ok=True)


#: Values for options and arguments that take one (besides the files and choices).
CLI_VALUES = ("n=5", "x=3", "x=0.5", "a=nan", "b=1e99", "$3=1", "n=", "=", "zz=1", "70000=1",
              "5=1", "-1=1", "fib=2", "x=0.5,y=2", "x", "c", "y", "x1,x2", ",", "0", "1", "3",
              "10", "-1", "99999999999999999999", "sin(x)", "x/0", "(", "sq(x/y)*sin(x)",
              "log(x)", "x**y", "rfib.py:rfib", "rfib.py:nope", "dot.py:", "", "-", "out.bin",
              "out.hex", "out.npz", "out.pal", "out.html", "out.json", "out.parquet",
              "18446744073709551615", "18446744073709551616", "9223372036854775808", "2.0",
              "n=2.0", "n=2.5", "x=40000.0", "x=0x10", "n=-99999999999", "x=raw:5")
CLI_EXPRESSIONS = ("sin(x)", "x/0", "(", "sq(x/y)*sin(x)", "log(x)", "x**y", "atan2(x, y)",
                   "", "x +", "1e999*x", "nosuch(x)", "x" * 200)


#: The ``revasm`` click group the ``cli`` target drives.  The command line sits above the
#: benchmarks (it imports them), so it hands itself over: ``revasm bench`` sets this, and
#: so do the tests; without it the ``cli`` target is reported as not available.
COMMAND_LINE: Any = None


class CommandLineMissing(RuntimeError):
    """The ``cli`` target was asked for with no command line handed over."""


def _command_line() -> Any:
    if COMMAND_LINE is None:
        raise CommandLineMissing("the cli target runs under `revasm bench fuzz`, which hands "
                                 "the command line over")
    return COMMAND_LINE


def random_arguments(rng: random.Random) -> list[str]:
    """A command line shaped like a real one: a command, its arguments and some of its
    own options with plausible values (read from the click command), sometimes edited."""
    import click

    cli = _command_line()
    name = rng.choice(CLI_COMMANDS)
    command = cli.commands[name]
    words = [name]
    serving = SERVING_OPTIONS.get(name, frozenset())
    options = [p for p in command.params if isinstance(p, click.Option)
               and not serving & set(p.opts)]

    def value(param: click.Parameter) -> str:
        kind = param.type
        if isinstance(kind, click.Choice) and rng.random() < 0.9:
            return str(rng.choice(list(kind.choices)))
        if isinstance(kind, click.Path) or rng.random() < 0.3:
            return rng.choice(CLI_FILES)
        return rng.choice(CLI_VALUES)

    for param in command.params:
        if isinstance(param, click.Argument) and rng.random() < 0.97:
            words.append(rng.choice(CLI_EXPRESSIONS) if param.name == "expression"
                         else value(param))
    for option in options:
        if option.required:
            words += [option.opts[0], value(option)]
    for _ in range(rng.randint(0, 4)):
        if not options:
            break
        option = rng.choice(options)
        flag = rng.choice(option.opts)
        if option.is_flag or option.count:
            words.append(flag)
        else:
            words += [flag, value(option)]
    if rng.random() < 0.1:  # an edit: a token dropped, added or replaced
        at = rng.randrange(len(words) + 1)
        op = rng.randrange(3)
        if op == 0 and at < len(words):
            del words[at]
        else:
            word = rng.choice(CLI_VALUES + CLI_FILES + SPECIALS[:40])
            words[at:at + (op == 2)] = [word]
    return words


def check_cli(arguments: list[str], runner: Any = None) -> str:
    """``revasm ARGS`` in the working directory (see :func:`cli_workspace`): exit 0, 1 or 2,
    and no traceback or "internal error" in what it prints."""
    from click.testing import CliRunner

    result = (runner or CliRunner()).invoke(_command_line(), arguments, catch_exceptions=True)
    output = result.output
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise _unexpected("cli", arguments, exc)
    if result.exit_code not in (0, 1, 2):
        raise FuzzFailure("cli", arguments, f"exit code {result.exit_code}\n{output[-2000:]}",
                          "exit code")
    if "internal error" in output or "Traceback (most recent call last)" in output:
        raise FuzzFailure("cli", arguments, f"printed:\n{output[-2000:]}", "internal error")
    return OK if result.exit_code == 0 else CLEAN


# --- the debugger, DAP and signals -------------------------------------------------------

class DebuggerKit:
    """What the debugger targets drive, handed over by the command line (as
    :data:`COMMAND_LINE` is: the debugger sits beside the benchmarks, not below them).

    ``open_session(file, max_steps=N)`` makes a session, ``interpreter(session)`` its
    command interpreter, ``serve(reader, writer, loader)`` the DAP server and ``loader``
    the server's launch request -> session; ``command_words`` every command name."""

    def __init__(self, open_session: Callable[..., Any], interpreter: Callable[[Any], Any],
                 serve: Callable[..., None], loader: Callable[[dict], Any],
                 command_words: Sequence[str]) -> None:
        self.open_session = open_session
        self.interpreter = interpreter
        self.serve = serve
        self.loader = loader
        self.command_words = tuple(command_words)


#: Set by ``revasm bench`` (and the tests) with :func:`revasm.cli.commands_bench.hand_over`.
DEBUGGER: DebuggerKit | None = None

#: The programs the debugger and DAP targets open (copied into the run's directory).
DEBUG_PROGRAMS = ("fib.pal", "fixed_point.pal", "bessel_j2.pal", "procedure.pal",
                  "fib_pair.ja", "rfib.py")

#: Arguments of debugger commands: counts, registers, addresses, names, lines, values.
DEBUG_ARGS = ("1", "3", "0", "-1", "100", "2", "999999999999", "18446744073709551615",
              "1e99", "1.5", "nan", "-0", "0x10", "$0", "$1", "$2", "$31", "$32", "$-1",
              "[0]", "[3]", "[-1]", "[99999999999]", "[", "]", "top", "start", "finish",
              "fib", "n", "a", "b", "x", "nosuch", ":1", ":14", ":0", ":-3", ":99999",
              "fib.pal:5", "rfib.py:3", "fib_pair.ja:9", "x.pal:", "f", "r", "breakpoints",
              "registers", "locals", "frames", "PC", "BR", "DIR", "40000.0", "99999999999",
              "1.5e99", "raw:5", "2.0", "-70000", "\x00", "é", "*", "")


def debug_workspace(directory: Path) -> None:
    """The debugger targets' programs, in ``directory``."""
    for name in DEBUG_PROGRAMS:
        where = (EXAMPLES / "janus" if name.endswith(".ja") else
                 EXAMPLES / "nilang" if name.endswith(".py") else EXAMPLES)
        shutil.copy(where / name, directory / name)


def random_commands(rng: random.Random, words: Sequence[str]) -> list[str]:
    """A few debugger command lines: a command (sometimes a word that is none) and 0-3
    arguments, some of them long numbers or junk."""
    lines = []
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(words) if rng.random() < 0.95 else rng.choice(SPECIALS)
        args = [rng.choice(DEBUG_ARGS) for _ in range(rng.choice((0, 1, 1, 2, 2, 3)))]
        lines.append(" ".join([name, *args]))
    return lines


def check_debugger(program: str, lines: Sequence[str], directory: Path) -> str:
    """Debugger command lines on a fresh session of ``program``: each line answers with
    events, an ``error`` event when it is wrong, never an exception."""
    kit = _debugger()
    session = kit.open_session(str(directory / program), max_steps=5000)
    interpreter = kit.interpreter(session)
    outcome = OK
    for line in lines:
        try:
            events = interpreter.execute(line)
            json.dumps(events)  # the --json stream prints every event
        except Exception as exc:
            raise _unexpected("debugger", (program, list(lines)), exc) from None
        if any(e.get("event") == "error" for e in events):
            outcome = CLEAN
        if interpreter.done:
            break
    return outcome


#: DAP requests the campaign sends, and values it puts in their arguments.
DAP_COMMANDS = ("initialize", "launch", "setBreakpoints", "setFunctionBreakpoints",
                "setExceptionBreakpoints", "configurationDone", "threads", "stackTrace",
                "scopes", "variables", "evaluate", "continue", "next", "stepIn", "stepOut",
                "stepBack", "reverseContinue", "pause", "setVariable", "source", "restart",
                "disconnect", "terminate", "nosuch")
DAP_VALUES: tuple[Any, ...] = (None, 0, 1, -1, 3, 2 ** 31, 2 ** 64, -2 ** 63, 1.5, 1e308, True,
                               "", "x", "n", "$1", "[0]", "top", [], {}, [1], {"a": 1},
                               "a" * 1000)


def _dap_arguments(rng: random.Random, command: str, program: str) -> Any:
    """Plausible arguments for ``command``, some of them replaced by odd values."""
    pick = rng.choice
    shaped: dict[str, Any] = {
        "initialize": {"clientID": "fuzz", "linesStartAt1": pick((True, False, None))},
        "launch": {"program": program, "stopOnEntry": pick((True, False)),
                   "grad": pick((False, False, True)), "set": pick(([], ["n=5"], ["x=0.5"],
                                                                    ["n=2.0"], {"n": 3}, "n=1")),
                   "width": pick((None, 16, 32, 64, 7))},
        "setBreakpoints": {"source": {"path": program},
                           "breakpoints": [{"line": pick((1, 3, 5, 9, 14, 0, -1, 10 ** 9))}
                                           for _ in range(rng.randint(0, 3))]},
        "setFunctionBreakpoints": {"breakpoints": [{"name": pick(("top", "fib", "nosuch", ""))}
                                                   for _ in range(rng.randint(0, 2))]},
        "setExceptionBreakpoints": {"filters": []},
        "stackTrace": {"threadId": 1, "startFrame": pick((0, 1, -1, 10 ** 12)),
                       "levels": pick((0, 1, 20, -5, 10 ** 12))},
        "scopes": {"frameId": pick((0, 1, 2, -1, 10 ** 12))},
        "variables": {"variablesReference": pick((1, 2, 3, 4, 5, 0, -1, 10 ** 12)),
                      "start": pick((None, 0, -1, 10 ** 12)), "count": pick((None, 0, 5, -1))},
        "evaluate": {"expression": pick(("$1", "n", "[0]", "PC", "nosuch", "", "$99",
                                         "[99999999999]")), "frameId": pick((None, 0, 7))},
        "setVariable": {"variablesReference": pick((1, 2)), "name": pick(("$1", "n", "x")),
                        "value": pick(("5", "2.0", "1.5e99", "99999999999", "x"))},
    }
    arguments = shaped.get(command, {"threadId": 1})
    if rng.random() < 0.15:
        arguments = dict(arguments)
        key = pick(list(arguments) or ["threadId"])
        arguments[key] = pick(DAP_VALUES)
    if rng.random() < 0.03:
        return pick(DAP_VALUES)
    return arguments


def random_dap_messages(rng: random.Random, program: str) -> list[bytes]:
    """A session's framed messages: mostly initialize, launch, configurationDone, then
    requests in any order; sometimes a message whose framing or JSON is broken."""
    if rng.random() < 0.8:
        commands = ["initialize", "launch", "setBreakpoints", "configurationDone"]
        commands = [c for c in commands if rng.random() < 0.9]
    else:
        commands = []
    commands += [rng.choice(DAP_COMMANDS) for _ in range(rng.randint(1, 8))]
    messages = []
    for seq, command in enumerate(commands, 1):
        message: Any = {"seq": seq, "type": "request", "command": command,
                        "arguments": _dap_arguments(rng, command, program)}
        if rng.random() < 0.03:
            message = rng.choice(({"seq": seq, "type": "request"}, {"type": "request",
                                  "command": 5}, {"seq": "x", "type": "request",
                                  "command": "threads"}, [1, 2], "text", None,
                                  {"type": "response", "command": "launch"}))
        body = json.dumps(message).encode()
        if rng.random() < 0.05:
            body = mutate_bytes(body, random_edits(rng, 3))
        header = b"Content-Length: %d\r\n\r\n" % len(body)
        if rng.random() < 0.03:
            header = rng.choice((b"Content-Length: -1\r\n\r\n", b"Content-Length: x\r\n\r\n",
                                 b"\r\n", b"Content-Type: json\r\n\r\n",
                                 b"Content-Length: 99999999999999999999\r\n\r\n",
                                 b"Content-Length: \xff\r\n\r\n",
                                 b"Content-Length: %d\r\n\r\n" % (len(body) + 7)))
        messages.append(header + body)
    return messages


def check_dap(messages: Sequence[bytes], directory: Path) -> str:
    """The messages through the DAP server: every request answered (``success: false``
    for a wrong one), no exception out of the server, no "internal error" response."""
    kit = _debugger()
    writer = io.BytesIO()
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        kit.serve(io.BytesIO(b"".join(messages)), writer, kit.loader)
    except Exception as exc:
        raise _unexpected("dap", list(messages), exc) from None
    finally:
        os.chdir(cwd)
    outcome = OK
    for reply in _unframe(writer.getvalue()):
        if "internal error" in json.dumps(reply):
            raise FuzzFailure("dap", list(messages), f"answered: {json.dumps(reply)[:1500]}",
                              "internal error response")
        if reply.get("success") is False or (reply.get("event") == "output" and
                                             reply.get("body", {}).get("category") == "stderr"):
            outcome = CLEAN
    return outcome


def _unframe(data: bytes) -> list[dict]:
    replies = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        replies.append(json.loads(rest[:length]))
        data = rest[length:]
    return replies


def _debugger() -> DebuggerKit:
    if DEBUGGER is None:
        raise CommandLineMissing("the debugger targets run under `revasm bench fuzz`, which "
                                 "hands the debugger over")
    return DEBUGGER


#: The commands the signals target interrupts, with the program each one runs.
SIGNAL_COMMANDS = (["run", "long.pal", "--max-steps", "400000000"],
                   ["run", "long.pal", "--max-steps", "400000000", "--json"],
                   ["check", "long.pal", "--max-steps", "400000000"],
                   ["batch", "long.pal", "--inputs", "long.csv", "--max-steps", "400000000"],
                   ["debug", "long.pal", "--commands", "go.txt", "--max-steps", "400000000"],
                   ["debug", "long.pal", "--commands", "go.txt", "--json",
                    "--max-steps", "400000000"])

def signal_workspace(directory: Path) -> None:
    """The signals target's files: fib.pal made to run for minutes (fib of 10^9)."""
    long = (EXAMPLES / "fib.pal").read_text().replace("data  18", "data  1000000000")
    (directory / "long.pal").write_text(long)
    (directory / "go.txt").write_text("continue\n")
    (directory / "long.csv").write_text("n\n1000000000\n1000000000\n")


#: ``python -m revasm`` as a terminal starts it: SIGINT raising KeyboardInterrupt.  A
#: campaign run in a shell's background job (nohup, ``&``) inherits SIGINT *ignored*, and
#: its children would too -- they ran on past every SIGINT until the 30 s limit killed
#: them, each a false "hang" (a handler, unlike "ignored", does not survive exec; no
#: ``preexec_fn``, which can deadlock a process that runs threads).
_TERMINAL_CTRL_C = ("import runpy, signal; "
                    "signal.signal(signal.SIGINT, signal.default_int_handler); "
                    "runpy.run_module('revasm', run_name='__main__', alter_sys=True)")


def check_signal(arguments: list[str], delay: float, directory: Path) -> str:
    """``revasm ARGS`` in a new process, SIGINT after ``delay`` seconds: exit 130 with
    "interrupted" (or a finished run), no traceback, no "internal error"."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", _TERMINAL_CTRL_C, *arguments],
                               cwd=directory, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise FuzzFailure("signals", (arguments, delay), "still running 30 s after SIGINT",
                          "hang") from None
    text = output.decode("utf-8", "replace")
    if "Traceback (most recent call last)" in text or "internal error" in text:
        raise FuzzFailure("signals", (arguments, delay), f"printed:\n{text[-1500:]}",
                          "traceback")
    if process.returncode == 130 and "interrupted" in text:
        return CLEAN
    raise FuzzFailure("signals", (arguments, delay), f"exit {process.returncode}, printed:\n"
                      f"{text[-800:]}", f"exit {process.returncode}")


# --- adversarial shapes: deep nesting, long sums, many statements ------------------------

def janus_adversarial(rng: random.Random) -> str:
    """A Janus program at a front end's limits: nesting, long expressions, many lines,
    huge literals, names that collide with generated ones."""
    kind = rng.randrange(5)
    depth = rng.choice((10, 50, 200, 400, 1000))
    if kind == 0:
        body = "".join(f"if x = {i} then\n" for i in range(depth)) + "x += 1\n" + \
            "".join(f"fi x = {depth - 1 - i}\n" for i in range(depth))
    elif kind == 1:
        body = "x += " + " + ".join("1" for _ in range(depth)) + "\n"
    elif kind == 2:
        body = "x += " + "(" * depth + "1" + ")" * depth + "\n"
    elif kind == 3:
        body = "".join(f"x += {rng.choice(('1', '4294967296', '99999999999999999999'))}\n"
                       for _ in range(depth))
    else:
        names = ("g", "g_top", "main_top", "top", "start", "finish", "x_1", "g__x")
        procs = "".join(f"procedure {n}(int y)\n    y += 1\n\n" for n in
                        rng.sample(names, rng.randint(2, len(names))))
        return procs + "procedure main()\n    int x\n    call g(x)\n"
    return f"procedure main()\n    int x\n{body}"


def python_adversarial(rng: random.Random) -> str:
    """An eDSL function at the front end's limits (the Janus shapes, in Python)."""
    kind = rng.randrange(3)
    depth = rng.choice((10, 50, 200, 400, 1000))
    if kind == 0:
        body = "".join("    " * (i + 1) + f"if x > {i}:\n" for i in range(depth)) + \
            "    " * (depth + 1) + "y += 1\n"
    elif kind == 1:
        body = "    y += " + " + ".join("x" for _ in range(depth)) + "\n"
    else:
        body = "    y += " + "(" * depth + "x" + ")" * depth + "\n"
    return ("from revasm.compiler import *\n\n\n@reversible\ndef f(y: Int, x: Int):\n"
            + body)


def pal_adversarial(rng: random.Random) -> str:
    """PAL at the assembler's limits: many instructions, long lines, huge literals."""
    count = rng.choice((100, 1000, 20000))
    line = rng.choice(("  addi $3 1\n", "  add $3 $4\n", "  addi $3 99999999999999\n",
                       "  nop\n", "x: addi $3 1\n"))
    return ";; pendulum pal file\n  start\n" + line * count + "  finish\n"


# --- shrinking a failure --------------------------------------------------------------------

def minimise(data: Any, fails: Callable[[Any], bool], budget: float = 10.0) -> Any:
    """A smaller input that still ``fails`` (delta debugging: drop chunks, halving their
    size), within ``budget`` seconds.  Works on str, bytes and lists."""
    deadline = time.perf_counter() + budget
    chunk = max(1, len(data) // 2)
    while chunk >= 1 and time.perf_counter() < deadline:
        at = 0
        while at < len(data) and time.perf_counter() < deadline:
            smaller = data[:at] + data[at + chunk:]
            if len(smaller) < len(data) and fails(smaller):
                data = smaller
            else:
                at += chunk
        chunk //= 2
    return data


# --- the inputs of each target ---------------------------------------------------------

_FUZZ_BIN = b""


def image_seeds() -> dict[str, bytes]:
    """A real image of each kind: bin, hex, sidecar."""
    from revasm.assembler import assemble_file, bin_bytes, hex_text, sidecar_dict

    global _FUZZ_BIN
    image = assemble_file(EXAMPLES / "fixed_point.pal")
    _FUZZ_BIN = bin_bytes(image)
    return {"bin": _FUZZ_BIN, "hex": hex_text(image).encode(),
            "sidecar": json.dumps(sidecar_dict(image), indent=1).encode()}


def batch_seeds() -> dict[str, list[bytes]]:
    """Real inputs files of every format: CSV, NPZ, Parquet, and a Zarr array's metadata."""
    import numpy as np

    csvs = [p.read_bytes() for p in (EXAMPLES / "ab.csv", EXAMPLES / "xs.csv",
                                     EXAMPLES / "lanes.csv")]
    csvs.append(b"x,$3,n\n0.5,0x10,-3\n1e-3,7,1_000\n")
    npzs = [(EXAMPLES / "xs.npz").read_bytes()]
    # name -> array: np.savez's keyword arguments
    files: list[dict[str, Any]] = [
        {"x": np.array([0.5, -1.0]), "n": np.array([1, 2], dtype=np.int8)},
        {"x": np.array([[1.0]])}, {"b": np.array([True, False])},
        {"s": np.array(["a"])}, {"z": np.array([1 + 2j])}]
    for arrays in files:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        npzs.append(buffer.getvalue())
    seeds = {".csv": csvs, ".npz": npzs}
    parquet = EXAMPLES / "xs.parquet"
    if _has("pyarrow") and parquet.exists():
        seeds[".parquet"] = [parquet.read_bytes()]
    if _has("zarr") and _ZARR_SEED.exists():
        seeds[".zarr"] = [_zarr_metadata(_ZARR_SEED).read_bytes()]
    return seeds


def _has(module: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


#: A Zarr group of two columns (made by :func:`make_zarr_seed`), whose first array's
#: metadata file the ``.zarr`` inputs mutate.
_ZARR_SEED = Path(tempfile.gettempdir()) / f"revasm-fuzz-zarr-seed-{os.getpid()}"


def make_zarr_seed(directory: Path) -> Path:
    """A Zarr group with columns ``x`` (reals) and ``n`` (ints) in ``directory``."""
    import numpy as np
    import zarr

    global _ZARR_SEED
    path = directory / "seed.zarr"
    if not path.exists():
        group = zarr.open_group(str(path), mode="w")
        group.create_array("x", data=np.array([0.5, -1.0, 2.0]))
        group.create_array("n", data=np.array([1, 2, 3], dtype=np.int32))
    _ZARR_SEED = path
    return path


def _zarr_metadata(store: Path) -> Path:
    for name in ("zarr.json", ".zarray"):
        if (store / "x" / name).exists():
            return store / "x" / name
    return store / "x" / "zarr.json"


class Targets:
    """Every target, ``name -> make an input from an rng``, and ``checks``, ``name -> check
    one input`` (so a failing input can be replayed and shrunk), sharing one scratch
    directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pal = pal_corpus()
        self.pal_vocab = vocabulary(self.pal)
        self.python = python_corpus()
        self.python_vocab = vocabulary(self.python)
        self.janus = janus_corpus()
        self.janus_vocab = vocabulary(self.janus) + list(JANUS_SPECIALS)
        self.images = image_seeds()
        if _has("zarr"):
            make_zarr_seed(directory)
        self.batch = batch_seeds()
        self.csv_vocab = vocabulary([b.decode() for b in self.batch[".csv"]])
        self.last: Any = None
        self.calls = 0
        self.workspace = directory / "cli"
        self.workspace.mkdir(exist_ok=True)
        cli_workspace(self.workspace)
        debug_workspace(directory)
        signal_workspace(directory)

    def assembler(self, rng: random.Random) -> str:
        if rng.random() < 0.002:
            return pal_adversarial(rng)
        return mutate_text(rng.choice(self.pal), random_edits(rng), self.pal_vocab)

    def image(self, rng: random.Random) -> tuple[str, bytes]:
        kind = rng.choice(("bin", "hex", "sidecar"))
        seed = self.images[kind]
        if kind == "bin" or rng.random() < 0.3:
            data = mutate_bytes(seed, random_edits(rng))
        else:
            data = mutate_text(seed.decode(), random_edits(rng), SPECIALS + (
                "null", "[]", "{}", '"x"', "-5", "true", '"fixed"', "99")).encode(
                "utf-8", "surrogatepass")
        return kind, data

    def batch_inputs(self, rng: random.Random) -> tuple[str, bytes]:
        suffix = rng.choice(tuple(self.batch))
        seed = rng.choice(self.batch[suffix])
        if suffix in (".csv", ".zarr") and rng.random() < 0.7:
            vocab = self.csv_vocab if suffix == ".csv" else list(SPECIALS) + [
                "null", "[]", "{}", '"<f8"', '"|b1"', '"<U1"', "-1", "0", "99999999999"]
            data = mutate_text(seed.decode(), random_edits(rng), vocab).encode(
                "utf-8", "surrogatepass")
        else:
            data = mutate_bytes(seed, random_edits(rng, 3))
        return suffix, data

    def frontend(self, rng: random.Random) -> str:
        if rng.random() < 0.01:
            return python_adversarial(rng)
        return mutate_text(rng.choice(self.python), random_edits(rng, 4), self.python_vocab)

    def janus_target(self, rng: random.Random) -> str:
        if rng.random() < 0.01:
            return janus_adversarial(rng)
        return mutate_text(rng.choice(self.janus), random_edits(rng, 4), self.janus_vocab)

    def cli(self, rng: random.Random) -> list[str]:
        self.calls += 1
        if self.calls % 200 == 0:  # outputs may have replaced the files: put them back
            cli_workspace(self.workspace)
        return random_arguments(rng)

    def debugger(self, rng: random.Random) -> tuple[str, list[str]]:
        return (rng.choice(DEBUG_PROGRAMS),
                random_commands(rng, _debugger().command_words))

    def dap(self, rng: random.Random) -> list[bytes]:
        return random_dap_messages(rng, rng.choice(DEBUG_PROGRAMS))

    def signals(self, rng: random.Random) -> tuple[list[str], float]:
        return rng.choice(SIGNAL_COMMANDS), round(rng.uniform(0.05, 2.5), 2)

    def by_name(self) -> dict[str, Callable[[random.Random], Any]]:
        return {"assembler": self.assembler, "image": self.image,
                "batch_inputs": self.batch_inputs, "frontend": self.frontend,
                "janus": self.janus_target, "cli": self.cli, "debugger": self.debugger,
                "dap": self.dap, "signals": self.signals}

    def checks(self) -> dict[str, Callable[[Any], str]]:
        d = self.directory
        return {"assembler": check_assembler,
                "image": lambda data: check_image(data[1], data[0], d),
                "batch_inputs": lambda data: check_batch_inputs(data[1], data[0], d),
                "frontend": check_frontend, "janus": check_janus, "cli": check_cli,
                "debugger": lambda data: check_debugger(data[0], data[1], d),
                "dap": lambda data: check_dap(data, d),
                "signals": lambda data: check_signal(data[0], data[1], d)}


#: Janus words the mutators insert besides the corpus's own tokens.
JANUS_SPECIALS = ("procedure", "call", "uncall", "from", "do", "loop", "until", "if",
                  "then", "else", "fi", "local", "delocal", "push", "pop", "stack", "empty",
                  "top", "size", "show", "printf", "<=>", "+=", "-=", "^=", "!", "&&", "||",
                  "%", "/", "*", "int", "main", "4294967296", "-2147483648", "2147483648")


def janus_corpus() -> list[str]:
    return _read(sorted((EXAMPLES / "janus").glob("*.ja")))


class _Timeout(BaseException):
    """An input that ran longer than the time limit (BaseException: no target catches it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


#: The targets that compile (on ``compiler.api.deep``'s thread): timed after, not interrupted.
COMPILING = frozenset({"frontend", "janus"})
#: Per-input time limit (seconds) by target; a longer input is a hang, an internal error.
LIMITS = {"signals": 60.0, "cli": 30.0, "dap": 10.0, "debugger": 10.0}
DEFAULT_LIMIT = 20.0


def _shrinkable(data: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The part of an input the minimiser shrinks, and how to put the input back."""
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], (bytes, str, list)):
        head = data[0]
        return data[1], lambda part: (head, part)
    if isinstance(data, (str, bytes, list)):
        return data, lambda part: part
    return None, lambda part: data


#: What the cli target runs before its clock starts: each command that can take the tile
#: engine, at both widths.  A tile interpreter is built on its first use, once per install
#: and mode (tens of seconds; ``docs/decisions.md``), and that build is no hang of whichever
#: input happens to come first (two full runs each counted one as a time-out).
_TILE_WARM_UP = [[command, "x1_plus_x1x2.pal", "--engine", "tile", "--width", width]
                 for width in ("32", "64") for command in ("run", "check", "grad", "hessian")]


def fuzz_target(name: str, inputs: int, seed: int = 0, stop_after: int = 20,
                limit: float | None = None, shrink: float = 10.0) -> dict:
    """Run one target ``inputs`` times: how many inputs were taken, refused with a clean
    error, or failed (an internal error: anything else raised, or longer than ``limit``
    seconds); the first failures, each with its input shrunk (``reproducer``)."""
    limit = LIMITS.get(name, DEFAULT_LIMIT) if limit is None else limit
    started = time.perf_counter()
    # The compiling targets run on the compiler's own thread (``compiler.api.deep``): an
    # alarm would leave it running on, orphaned, with the raised recursion limit; they are
    # timed when they return instead (a hang there is this campaign's hang too).
    timed = hasattr(signal, "setitimer") and threading.current_thread() is \
        threading.main_thread() and name not in COMPILING
    if timed:
        signal.signal(signal.SIGALRM, _alarm)
    failures: list[str] = []
    reproducers: list[dict] = []
    kinds: dict[str, int] = {}
    counts = {OK: 0, CLEAN: 0}
    failed = 0
    rng = random.Random(f"{name}:{seed}")
    cwd = os.getcwd()

    def attempt(data: Any) -> str | FuzzFailure:
        began = time.perf_counter()
        try:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, limit)
            outcome = check(data)
            if not timed and time.perf_counter() - began > limit:
                return FuzzFailure(name, data, f"longer than {limit} s", "timeout")
            return outcome
        except FuzzFailure as failure:
            return failure
        except _Timeout:
            return FuzzFailure(name, data, f"longer than {limit} s", "timeout")
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)

    with tempfile.TemporaryDirectory(prefix=f"revasm-fuzz-{name}-") as scratch:
        targets = Targets(Path(scratch))
        make = targets.by_name()[name]
        check = targets.checks()[name]
        if name == "cli":
            os.chdir(targets.workspace)
            for warm_up in _TILE_WARM_UP:  # (untimed, whatever each gives)
                try:
                    check(warm_up)
                except FuzzFailure:
                    pass
        try:
            for _ in range(inputs):
                data = make(rng)
                targets.last = data
                outcome = attempt(data)
                if isinstance(outcome, str):
                    counts[outcome] += 1
                    continue
                failed += 1
                kinds[outcome.kind] = kinds.get(outcome.kind, 0) + 1
                if len(failures) < stop_after:
                    failures.append(str(outcome).replace(scratch, "<scratch>"))
                if kinds[outcome.kind] == 1 and len(reproducers) < stop_after:
                    found = _reproducer(name, data, outcome, attempt, shrink)
                    found["detail"] = found["detail"].replace(scratch, "<scratch>")
                    reproducers.append(found)
        finally:
            os.chdir(cwd)
    return {"inputs": inputs, "successes": counts[OK], "clean_errors": counts[CLEAN],
            "internal_errors": failed, "failures": failed, "internal_error_kinds": kinds,
            "reproducers": reproducers, "first_failures": failures,
            "seconds": round(time.perf_counter() - started, 2)}


def _reproducer(name: str, data: Any, failure: FuzzFailure, attempt: Callable[[Any], Any],
                budget: float) -> dict:
    """The failing input ``data`` shrunk to what still fails the same way, JSON-ready."""
    part, rebuild = _shrinkable(data)
    if part is not None and name != "signals" and budget > 0:
        def fails(smaller: Any) -> bool:
            outcome = attempt(rebuild(smaller))
            return isinstance(outcome, FuzzFailure) and outcome.kind == failure.kind
        data = rebuild(minimise(part, fails, budget))
    shown = data
    if isinstance(data, bytes) or (isinstance(data, tuple) and isinstance(data[-1], bytes)):
        shown = repr(data)
    elif isinstance(data, list) and data and isinstance(data[0], bytes):
        shown = [m.decode("utf-8", "replace") for m in data]
    return {"kind": failure.kind, "input": shown, "detail": failure.detail[-1500:]}


#: Every target.  The parsers (and the CLI and debugger commands) get :data:`FULL_INPUTS`
#: inputs in a full run, the DAP server :data:`FULL_DAP` message sequences, and the
#: signals target :data:`FULL_SIGNALS` interrupted processes (each a new interpreter).
TARGETS = ("assembler", "image", "batch_inputs", "frontend", "janus", "cli", "debugger",
           "dap", "signals")
FULL_DAP = 10_000
FULL_SIGNALS = 300
#: Quick runs: :data:`QUICK_INPUTS` for the parsers, fewer for the slower targets.
QUICK_SLOW = 100
QUICK_SIGNALS = 3


def full_counts() -> dict[str, int]:
    counts = dict.fromkeys(TARGETS, FULL_INPUTS)
    counts.update(dap=FULL_DAP, signals=FULL_SIGNALS)
    return counts


def quick_counts() -> dict[str, int]:
    counts = dict.fromkeys(TARGETS, QUICK_INPUTS)
    counts.update(cli=QUICK_SLOW, debugger=QUICK_SLOW, dap=QUICK_SLOW, signals=QUICK_SIGNALS)
    return counts


def campaign(counts: dict[str, int], seed: int = 0) -> dict:
    """Each target of ``counts`` that many inputs; the surfaces' table and every target's
    outcome (the cli, debugger, dap and signals targets need the hand-over of
    :func:`revasm.cli.commands_bench.hand_over`, else they are "not available")."""
    targets: dict[str, dict] = {}
    for name, inputs in counts.items():
        needs = {"cli": COMMAND_LINE, "debugger": DEBUGGER, "dap": DEBUGGER}
        if name in needs and needs[name] is None:
            targets[name] = {"status": "not available",
                             "reason": f"the {name} target runs under `revasm bench fuzz`"}
            continue
        targets[name] = fuzz_target(name, inputs, seed)
    table = {name: {k: t[k] for k in ("inputs", "successes", "clean_errors",
                                      "internal_errors")}
             for name, t in targets.items() if "inputs" in t}
    return {"counts": counts, "surfaces": table,
            "internal_errors": sum(t["internal_errors"] for t in table.values()),
            "targets": targets}


def run(quick: bool) -> dict:
    """Every target: :func:`full_counts` inputs (:func:`quick_counts` with quick)."""
    outcome = campaign(quick_counts() if quick else full_counts())
    outcome["inputs_per_target"] = QUICK_INPUTS if quick else FULL_INPUTS
    return outcome


if __name__ == "__main__":  # one target: python -m revasm.bench.fuzz NAME [INPUTS] [OUT.json]
    import sys

    name = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else FULL_INPUTS
    outcome = {name: fuzz_target(name, count)}
    text = json.dumps(outcome, indent=2)
    if len(sys.argv) > 3:
        Path(sys.argv[3]).write_text(text + "\n")
    print(text)
