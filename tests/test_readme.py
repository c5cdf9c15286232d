"""The front door never lies: README.md's commands print exactly what README shows.

How README is read (a doctest for the shell):

* Only fenced blocks count.  In a block, a line ``$ revasm ...`` is a command; the
  lines after it, up to the next ``$`` line or the end of the block, are its output
  exactly as a terminal shows it (standard output and standard error interleaved in
  the order they are written).  Blank lines at the end of an output only separate it
  from the next command and are dropped.  A ``# comment`` after a command is not an
  argument (the shell's rule; :func:`shlex.split` with ``comments=True``).
* Each block runs in a fresh temporary directory holding a copy of ``examples/``, so
  commands read ``examples/...`` as from the repository root, and a file one command
  writes (``-o fib.bin``) is there for the next command of the same block.
* Lines are compared exactly, except for trailing whitespace and two elisions:
    - a line that is just ``...`` (indented or not) matches any run of lines, none
      included;
    - ``{...}`` inside a line makes the line a JSON pattern: the actual line must be
      JSON, ``{...}`` matches any one JSON value, and everything else must be equal
      (objects: the same keys in the same order).
* The exit code is 0 unless :data:`EXIT_CODES` says otherwise; no output may hold a
  traceback.
* A command that cannot be checked here is listed in :data:`UNCHECKED` with the reason.
  Every command-like line of README's non-Python fenced blocks (``$ ...``, or a line
  starting ``revasm``/``make``) is either checked or listed there.

The file also holds the front door's other promises: every file the docs and the
``--help`` examples read ships under ``examples/``; ``run`` of a missing file and
``compile`` of a PAL file say what is wrong with the documented exit code; ``grad-expr
--help`` lists the functions the expression reader accepts; ``rtl synth`` warns that
it takes minutes and shows its stages on standard error.
"""
from __future__ import annotations

import ast
import difflib
import json
import re
import shlex
import shutil
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Commands README shows but this test does not run, and why.
UNCHECKED = {
    "make demo": "creates .venv and runs the whole demo, RTL included (minutes)",
    "make test": "runs the whole suite, this test included",
    "revasm rtl sim examples/fib.pal --verilator":
        "builds a Verilator model (about a minute) and prints wall-clock times",
    "revasm rtl synth --width 32 --grad --part all --target ice40-hx8k":
        "yosys and nextpnr take minutes; the cell counts and fmax depend on the tool versions",
    "revasm bench --quick": "a minute or more, and prints timings that vary from run to run",
}

#: Commands whose documented exit code is not 0 (docs/cli.md, "Exit codes": 1 bad input or fault).
EXIT_CODES = {
    "revasm run examples/errors/bad.pal": 1,
    "revasm run examples/errors/broken.pal": 1,
}

_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_ANY = "\u0000any JSON value\u0000"


# -- reading README ------------------------------------------------------------------------

def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number of the opening fence, info string, lines) of every fenced block."""
    blocks, current, start, info = [], None, 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        fence = _FENCE.match(line)
        if fence and current is None:
            current, start, info = [], number, fence.group(2)
        elif fence:
            blocks.append((start, info, current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def key(command: str) -> str:
    """A command as its words, comments dropped: the name UNCHECKED and EXIT_CODES use."""
    return " ".join(shlex.split(command, comments=True))


def shell_blocks(text: str) -> list[tuple[int, list[tuple[str, list[str]]]]]:
    """Every block with ``$`` commands: (line, [(command, expected output lines)])."""
    found = []
    for start, info, lines in fenced_blocks(text):
        if info == "python":
            continue
        commands: list[tuple[str, list[str]]] = []
        for line in lines:
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
        for _, output in commands:
            while output and not output[-1].strip():
                output.pop()
        if commands:
            found.append((start, commands))
    return found


def command_lines(text: str) -> list[str]:
    """Every command-like line of README's non-Python blocks, as a key."""
    found = []
    for _, info, lines in fenced_blocks(text):
        if info == "python":
            continue
        if any(line.startswith("$ ") for line in lines):  # the other lines are output
            found += [key(line[2:]) for line in lines if line.startswith("$ ")]
        else:
            found += [key(line) for line in lines if re.match(r"(revasm|make)\s", line)]
    return found


# -- comparing -----------------------------------------------------------------------------

def _json_matches(pattern, value) -> bool:
    if pattern == _ANY:
        return True
    if isinstance(pattern, dict):
        return (isinstance(value, dict) and list(pattern) == list(value)
                and all(_json_matches(pattern[k], value[k]) for k in pattern))
    if isinstance(pattern, list):
        return (isinstance(value, list) and len(pattern) == len(value)
                and all(_json_matches(p, v) for p, v in zip(pattern, value)))
    return type(pattern) is type(value) and pattern == value


def line_matches(expected: str, actual: str) -> bool:
    if "{...}" in expected:
        try:
            pattern = json.loads(expected.replace("{...}", json.dumps(_ANY)))
            value = json.loads(actual)
        except ValueError:
            return False
        return _json_matches(pattern, value)
    return expected.rstrip() == actual.rstrip()


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """README's lines against the program's, with ``...`` lines matching any run of lines."""

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and line_matches(expected[i], actual[j]) and match(i + 1, j + 1)

    return match(0, 0)


def test_the_comparison_rules():
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "  ...", "b"], ["a", "b"])
    assert not output_matches(["a", "...", "d"], ["a", "b"])
    assert not output_matches(["a"], ["a", "b"])
    assert output_matches(['{"r": {...}, "n": 1}'], ['{"r": {"$1": 2}, "n": 1}'])
    assert not output_matches(['{"r": {...}, "n": 1}'], ['{"r": {"$1": 2}, "n": 2}'])
    assert not output_matches(['{"r": {...}}'], ['{"r": 1, "n": 2}'])
    assert not output_matches(['{"n": 1}'], ['{"n": 1.0}'])


# -- running README ------------------------------------------------------------------------

BLOCKS = shell_blocks(README.read_text())


def test_readme_has_commands_to_check():
    assert sum(len(commands) for _, commands in BLOCKS) >= 15


def test_every_readme_command_is_checked_or_listed_as_unchecked():
    checked = {key(command) for _, commands in BLOCKS for command, _ in commands} - set(UNCHECKED)
    for command in command_lines(README.read_text()):
        assert command in checked or command in UNCHECKED, \
            f"{command!r}: show it as `$ {command}` with its output, or list it in UNCHECKED"
    stale = set(UNCHECKED) - set(command_lines(README.read_text()))
    assert not stale, f"UNCHECKED names commands README no longer shows: {stale}"
    assert not set(EXIT_CODES) - checked, "EXIT_CODES names commands README does not show"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"README.md:{b[0]}")
def test_readme_block_prints_what_readme_shows(block, tmp_path, monkeypatch):
    _, commands = block
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for command, expected in commands:
        name = key(command)
        if name in UNCHECKED:
            continue
        words = shlex.split(command, comments=True)
        assert words[0] == "revasm", command
        result = runner.invoke(cli, words[1:], prog_name="revasm")
        actual = result.output.splitlines()
        assert "Traceback" not in result.output, result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"$ {command} raised {result.exception!r}")
        assert result.exit_code == EXIT_CODES.get(name, 0), \
            f"$ {command}: exit code {result.exit_code}\n{result.output}"
        assert output_matches(expected, actual), (
            f"$ {command}: README shows something else (- README, + the program):\n"
            + "\n".join(difflib.unified_diff(expected, actual, lineterm="")))
    left = sorted(path.name for path in tmp_path.iterdir() if path.name != "examples")
    unignored = [name for name in left if not ignored_at_root(name)]
    assert not unignored, f"README's commands leave files .gitignore does not cover: {unignored}"


# -- the front door: README's commands from a new shell, and a clean checkout after them ---

def ignored_at_root(name: str) -> bool:
    """Whether .gitignore covers a file or folder ``name`` in the repository root (its
    patterns as fnmatch patterns: ``/x`` anchored at the root, ``x/`` a folder or file)."""
    from fnmatch import fnmatch

    for line in (ROOT / ".gitignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith(("#", "!")):
            continue
        pattern = pattern.strip("/")
        if "/" not in pattern and fnmatch(name, pattern):
            return True
    return False


def test_the_gitignore_rule_reader():
    assert ignored_at_root(".venv") and ignored_at_root("out") and ignored_at_root("x.egg-info")
    assert not ignored_at_root("README.md") and not ignored_at_root("examples")


def test_readme_and_make_demo_say_how_to_reach_the_installed_revasm():
    """`make demo` installs revasm into .venv; a new shell has no revasm on its PATH, so
    README (before its first command) and the demo's last lines say how to get it."""
    text = README.read_text()
    first_command = text.index("$ revasm")
    for way in ("source .venv/bin/activate", ".venv/bin/revasm"):
        assert way in text[:first_command], way
    makefile = (ROOT / "Makefile").read_text()
    demo = makefile[makefile.index("\ndemo:"):]
    demo = demo[:demo.index("\n\n")]
    assert "$(VENV)/bin/activate" in demo and "$(BIN)/revasm" in demo
    assert 'revasm = "revasm.launch:main"' in (ROOT / "pyproject.toml").read_text()


# -- the files the docs use ship under examples/ -------------------------------------------

#: Options whose value is a file the command writes, not one it reads.
_OUTPUT_OPTIONS = {"-o", "--output", "--html", "--vcd", "--results"}
_FILE = re.compile(r"^[\w./-]+\.(pal|py|csv|npz|json|bin|hex|parquet|zarr)(:\w+)?$")


def _help_examples() -> list[tuple[str, str]]:
    """The example command lines of every ``--help`` text (cli/*.py docstrings)."""
    found = []
    for path in sorted((ROOT / "src" / "revasm" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
                for line in ast.get_docstring(node).splitlines():
                    if line.strip().startswith("revasm "):
                        found.append((f"cli/{path.name}:{node.name}", line.strip()))
    return found


def _doc_commands() -> list[tuple[str, str]]:
    """The command lines of README.md and docs/*.md: fenced and inline."""
    found = []
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for _, info, lines in fenced_blocks(text):
            if info != "python":
                found += [(path.name, re.sub(r"^\$ ", "", line)) for line in lines
                          if re.match(r"(\$ )?revasm ", line)]
        found += [(path.name, code) for code in re.findall(r"`(revasm [^`]+)`", text)]
    return found


def files_read(commands: list[str]) -> list[str]:
    """The files these command lines read, in order, less those an earlier one wrote."""
    written: set[str] = set()
    read = []
    for command in commands:
        try:
            words = shlex.split(command, comments=True)
        except ValueError:
            continue
        for i, word in enumerate(words):
            if not _FILE.match(word) or "..." in word:
                continue
            path = word.split(":")[0]
            if i and words[i - 1] in _OUTPUT_OPTIONS:
                written.update({path, path + ".json", path + ".map.json"})
            elif path not in written and not path.isupper() and not path.startswith(
                    ("FILE", "OUT", "SRC", "IMAGE")):
                read.append(path)
    return read


def test_the_docs_read_only_files_that_ship():
    by_document: dict[str, list[str]] = {}
    for document, command in _doc_commands():
        by_document.setdefault(document, []).append(command)
    missing = [f"{document}: {path}" for document, commands in by_document.items()
               for path in files_read(commands) if not (ROOT / path).exists()]
    assert not missing, "the docs use files that are not in the repository " \
                        "(ship them under examples/ and name them so):\n" + "\n".join(missing)


def test_the_help_examples_read_only_files_that_ship():
    missing = [f"{where}: {path}" for where, command in _help_examples()
               for path in files_read([command]) if not (ROOT / path).exists()]
    assert not missing, "--help examples use files that are not in the repository:\n" \
                        + "\n".join(missing)


def test_the_input_files_ship_under_examples():
    for name in ("errors/bad.pal", "errors/broken.pal", "xs.csv", "xs.npz", "ab.csv",
                 "lanes.csv", "my_process.json"):
        assert (ROOT / "examples" / name).is_file(), name


# -- wrong inputs at the front door --------------------------------------------------------

def _invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), prog_name="revasm")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def test_run_of_a_missing_file_is_one_clear_line_and_exit_1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _invoke("run", "missing.pal")
    assert result.exit_code == 1
    assert result.output == "missing.pal: error: no such file\n"


def test_compile_of_a_pal_file_says_it_takes_python_and_what_to_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = _invoke("compile", "examples/fib.pal")
    assert result.exit_code == 2  # the wrong kind of argument: a usage error
    message = " ".join(result.output.split())
    assert "examples/fib.pal is PAL assembly, not Python" in message
    assert "SRC.py[:FUNC]" in message
    assert "revasm run examples/fib.pal" in message
    assert "revasm asm examples/fib.pal" in message


def test_compile_of_an_image_says_it_takes_python(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _invoke("asm", str(ROOT / "examples" / "fib.pal"), "-o", "fib.bin").exit_code == 0
    result = _invoke("compile", "fib.bin")
    assert result.exit_code == 2
    assert "fib.bin is an assembled image, not Python" in " ".join(result.output.split())


def test_compile_of_a_missing_file_is_exit_1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _invoke("compile", "missing.py:f")
    assert result.exit_code == 1
    assert result.output == "missing.py: error: no such file\n"


# -- grad-expr --help: the functions from the table the reader uses -------------------------

def test_grad_expr_help_lists_every_function_it_accepts():
    from revasm.compiler.expression import FUNCTIONS

    text = " ".join(_invoke("grad-expr", "--help").output.split())
    text = text[text.index("Accepted:"):text.index("Example:")]
    listed = re.findall(r"\b(\w+)\((?:[xyz](?:, )?)+\)", text)
    assert listed == list(FUNCTIONS), text
    for name, arity in FUNCTIONS.items():
        assert f"{name}({', '.join('xyz'[:arity])})" in text
    for operator in ("+ - * / **", "unary -", "pi", " e"):
        assert operator in text


def test_grad_expr_accepts_the_functions_its_help_lists():
    from revasm.compiler.expression import FUNCTIONS, expression_program

    for name, arity in FUNCTIONS.items():
        args = ", ".join(("x", "y", "z")[:arity])
        source, variables = expression_program(f"{name}({args}) + x")
        assert variables[:arity] == ["x", "y", "z"][:arity]


# -- rtl synth says it takes minutes and shows its stages ----------------------------------

def test_rtl_synth_warns_and_shows_progress_on_stderr(monkeypatch):
    import revasm.rtl.synthesis.synth as synth_module

    def fake_synthesize(part, params, target, place=True, progress=None, **options):
        for stage in synth_module.STAGES:
            progress(stage, "fake")
        return synth_module.SynthResult(part, params.width, params.gradient, target, 1, 2, 0,
                                        0, 0, {}, 12.5, 0.1)

    monkeypatch.setattr(synth_module, "synthesize", fake_synthesize)
    result = CliRunner().invoke(cli, ["rtl", "synth", "--json"], prog_name="revasm")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)  # exactly one JSON object on stdout
    assert [r["part"] for r in payload["results"]] == ["core", "function-unit"]
    lines = result.stderr.splitlines()
    assert "takes minutes" in lines[0]
    for stage in synth_module.STAGES:
        assert any(f"core: {stage}" in line for line in lines), stage
        assert any(f"function-unit: {stage}" in line for line in lines), stage
    assert any("[2/2] function-unit: done" in line for line in lines)


# -- README's Python examples --------------------------------------------------------------
#
# Each ```python block runs as a script (a .py file: the compiler reads the source of a
# @reversible function) in a directory holding a copy of examples/.  Its standard output
# must be exactly the comment lines ("# " + text) that directly follow a line calling
# print(), in order; the other comments are prose.

def python_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    found = []
    for start, info, lines in fenced_blocks(text):
        if info != "python":
            continue
        expected, after_print = [], False
        for line in lines:
            if after_print and line.startswith("# "):
                expected.append(line[2:])
                continue
            after_print = line.lstrip().startswith("print(")
        found.append((start, "\n".join(lines) + "\n", expected))
    return found


@pytest.mark.parametrize("block", python_blocks(README.read_text()),
                         ids=lambda b: f"README.md:{b[0]}")
def test_readme_python_block_prints_what_readme_shows(block, tmp_path):
    import subprocess
    import sys

    _, source, expected = block
    assert expected, "a Python example shows what it prints"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "example.py").write_text(source)
    proc = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == expected, proc.stdout


def test_the_console_entry_point_never_prints_a_traceback(tmp_path):
    import subprocess
    import sys

    revasm = Path(sys.executable).with_name("revasm")
    if not revasm.exists():
        pytest.skip("the revasm console script is not installed next to this Python")
    for args, code in ((["run", "missing.pal"], 1),
                       (["compile", str(ROOT / "examples/fib.pal")], 2),
                       (["run", str(ROOT / "examples/errors/broken.pal")], 1)):
        proc = subprocess.run([str(revasm), *args], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == code, (args, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
