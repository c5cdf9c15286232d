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


class FuzzFailure(AssertionError):
    """An input that got something other than the target's documented error."""

    def __init__(self, target: str, data: Any, detail: str) -> None:
        super().__init__(f"{target}: {detail}\ninput: {data!r}"[:4000])
        self.target = target
        self.data = data
        self.detail = detail


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
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
    return FuzzFailure(target, data, f"{type(exc).__name__}: {exc}\n{tb}")


def check_assembler(text: str) -> None:
    """``assemble`` gives an image or an ``AssemblyError`` with positions inside the text."""
    from revasm.assembler import AssemblyError, assemble

    try:
        assemble(text, "fuzz.pal")
    except AssemblyError as exc:
        lines = max(1, len(re.split(r"\r\n|\r|\n", text)))
        for d in exc.diagnostics:
            if d.file != "fuzz.pal" or not 1 <= d.line <= lines or d.column < 1:
                raise FuzzFailure("assembler", text, f"diagnostic outside the text: "
                                  f"{d.format()}") from None
    except RecursionError as exc:  # pragma: no cover - reported as a failure
        raise _unexpected("assembler", text, exc) from None
    except Exception as exc:
        raise _unexpected("assembler", text, exc) from None


def check_image(data: bytes, kind: str, directory: Path) -> None:
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
        pass
    except Exception as exc:
        raise _unexpected(f"image ({kind})", data, exc) from None


def check_batch_inputs(data: bytes, suffix: str, directory: Path) -> None:
    """Bytes as a ``.csv`` or ``.npz`` inputs file: columns or a ``BatchInputError``."""
    from revasm.batching.inputs import BatchInputError, read_columns, to_words
    from revasm.isa.fixed_point import WIDTHS, word_format

    path = directory / f"fuzz{suffix}"
    path.write_bytes(data)
    try:
        columns = read_columns(str(path))
        for values in columns.values():
            for width in WIDTHS:
                for fixed in (None, True, False):
                    try:
                        to_words(values, word_format(width), fixed=fixed, name="c")
                    except BatchInputError:
                        pass
    except BatchInputError:
        pass
    except Exception as exc:
        raise _unexpected(f"batch inputs ({suffix})", data, exc) from None


def check_frontend(text: str) -> None:
    """``compile_source`` gives a program or a ``CompileError`` at a position in the text."""
    from revasm.compiler import CompileError, compile_source

    try:
        compile_source(text, filename="fuzz.py")
    except CompileError as exc:
        if exc.pos.file != "fuzz.py" or exc.pos.line < 1 or exc.pos.column < 1:
            raise FuzzFailure("frontend", text, f"error outside the text: {exc}") from None
    except Exception as exc:
        raise _unexpected("frontend", text, exc) from None


#: The files the CLI target's argument lists name (made by :func:`cli_workspace`).
CLI_FILES = ("fib.pal", "multiply.pal", "fixed_point.pal", "x1_plus_x1x2.pal", "bad.pal",
             "broken.pal", "fib.bin", "fib.hex", "nosidecar.bin", "junk.bin", "junk.hex",
             "ab.csv", "xs.csv", "xs.npz", "junk.npz", "nan.csv", "rfib.py", "dot.py",
             "cr.pal", "cr.py", "latin1.pal", "empty.pal", "dir", "missing.pal", "model.json")
CLI_COMMANDS = ("asm", "disasm", "run", "check", "report", "compile", "grad-expr", "grad",
                "hessian", "batch")


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
              "out.hex", "out.npz", "out.pal", "out.html", "out.json")
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
    options = [p for p in command.params if isinstance(p, click.Option)]

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


def check_cli(arguments: list[str], runner: Any = None) -> None:
    """``revasm ARGS`` in the working directory (see :func:`cli_workspace`): exit 0, 1 or 2,
    and no traceback or "internal error" in what it prints."""
    from click.testing import CliRunner

    result = (runner or CliRunner()).invoke(_command_line(), arguments, catch_exceptions=True)
    output = result.output
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise _unexpected("cli", arguments, exc)
    if result.exit_code not in (0, 1, 2):
        raise FuzzFailure("cli", arguments, f"exit code {result.exit_code}\n{output[-2000:]}")
    if "internal error" in output or "Traceback (most recent call last)" in output:
        raise FuzzFailure("cli", arguments, f"printed:\n{output[-2000:]}")


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
    return {".csv": csvs, ".npz": npzs}


class Targets:
    """The five targets, each ``name -> (make input from rng, check input)``, sharing one
    scratch directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pal = pal_corpus()
        self.pal_vocab = vocabulary(self.pal)
        self.python = python_corpus()
        self.python_vocab = vocabulary(self.python)
        self.images = image_seeds()
        self.batch = batch_seeds()
        self.csv_vocab = vocabulary([b.decode() for b in self.batch[".csv"]])
        self.last: Any = None
        self.calls = 0
        self.workspace = directory / "cli"
        self.workspace.mkdir(exist_ok=True)
        cli_workspace(self.workspace)

    def assembler(self, rng: random.Random) -> None:
        self.last = mutate_text(rng.choice(self.pal), random_edits(rng), self.pal_vocab)
        check_assembler(self.last)

    def image(self, rng: random.Random) -> None:
        kind = rng.choice(("bin", "hex", "sidecar"))
        seed = self.images[kind]
        if kind == "bin" or rng.random() < 0.3:
            data = mutate_bytes(seed, random_edits(rng))
        else:
            data = mutate_text(seed.decode(), random_edits(rng), SPECIALS + (
                "null", "[]", "{}", '"x"', "-5", "true", '"fixed"', "99")).encode(
                "utf-8", "surrogatepass")
        self.last = (kind, data)
        check_image(data, kind, self.directory)

    def batch_inputs(self, rng: random.Random) -> None:
        suffix = rng.choice((".csv", ".npz"))
        seed = rng.choice(self.batch[suffix])
        if suffix == ".csv" and rng.random() < 0.7:
            data = mutate_text(seed.decode(), random_edits(rng), self.csv_vocab).encode(
                "utf-8", "surrogatepass")
        else:
            data = mutate_bytes(seed, random_edits(rng, 3))
        self.last = (suffix, data)
        check_batch_inputs(data, suffix, self.directory)

    def frontend(self, rng: random.Random) -> None:
        self.last = mutate_text(rng.choice(self.python), random_edits(rng, 4),
                                self.python_vocab)
        check_frontend(self.last)

    def cli(self, rng: random.Random) -> None:
        self.calls += 1
        if self.calls % 200 == 0:  # outputs may have replaced the files: put them back
            cli_workspace(self.workspace)
        self.last = random_arguments(rng)
        check_cli(self.last)

    def by_name(self) -> dict[str, Callable[[random.Random], None]]:
        return {"assembler": self.assembler, "image": self.image,
                "batch_inputs": self.batch_inputs, "frontend": self.frontend, "cli": self.cli}


class _Timeout(BaseException):
    """An input that ran longer than the time limit (BaseException: no target catches it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def fuzz_target(name: str, inputs: int, seed: int = 0, stop_after: int = 20,
                limit: float = 20.0) -> dict:
    """Run one target ``inputs`` times; its counts and the first failures found.  An input
    that takes longer than ``limit`` seconds is a failure too (a hang is a bug)."""
    started = time.perf_counter()
    timed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if timed:
        signal.signal(signal.SIGALRM, _alarm)
    failures: list[str] = []
    failed = 0
    rng = random.Random(f"{name}:{seed}")
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix=f"revasm-fuzz-{name}-") as scratch:
        targets = Targets(Path(scratch))
        target = targets.by_name()[name]
        if name == "cli":
            os.chdir(targets.workspace)
        try:
            for _ in range(inputs):
                try:
                    if timed:
                        signal.setitimer(signal.ITIMER_REAL, limit)
                    target(rng)
                except FuzzFailure as failure:
                    failed += 1
                    if len(failures) < stop_after:
                        failures.append(str(failure))
                except _Timeout:
                    failed += 1
                    if len(failures) < stop_after:
                        failures.append(f"{name}: longer than {limit} s\ninput: "
                                        f"{targets.last!r}"[:4000])
                finally:
                    if timed:
                        signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            os.chdir(cwd)
    return {"inputs": inputs, "failures": failed, "first_failures": failures,
            "seconds": round(time.perf_counter() - started, 2)}


TARGETS = ("assembler", "image", "batch_inputs", "frontend", "cli")


def run(quick: bool) -> dict:
    """Every target, :data:`FULL_INPUTS` inputs each (:data:`QUICK_INPUTS` with quick)."""
    inputs = QUICK_INPUTS if quick else FULL_INPUTS
    targets: dict[str, dict] = {}
    for name in TARGETS:
        if name == "cli" and COMMAND_LINE is None:
            targets[name] = {"status": "not available",
                             "reason": "the cli target runs under `revasm bench fuzz`"}
            continue
        targets[name] = fuzz_target(name, inputs)
    return {"inputs_per_target": inputs, "targets": targets}


if __name__ == "__main__":  # one target: python -m revasm.bench.fuzz NAME [INPUTS] [OUT.json]
    import sys

    name = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else FULL_INPUTS
    outcome = {name: fuzz_target(name, count)}
    text = json.dumps(outcome, indent=2)
    if len(sys.argv) > 3:
        Path(sys.argv[3]).write_text(text + "\n")
    print(text)
