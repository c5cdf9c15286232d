"""``revasm.load`` (src/revasm/loading.py): a program file by its type, and the one width
rule every command and API call shares (docs/decisions.md, "One width default").

The program ``y += x`` with x = 0.1 shows the width in its value: 0.1 rounds to
6554 / 2**16 at W = 32 and to 429496730 / 2**32 at W = 64.
"""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import revasm
from revasm.assembler import AssemblyError, write_bin, write_hex, write_sidecar
from revasm.cli.commands_debug import open_session
from revasm.cli.main import cli
from revasm.compiler import CompileError
from revasm.isa.fixed_point import DEFAULT_WIDTH, WIDTHS, word_format
from revasm.loading import LoadError, file_kind, load_program, python_target

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SOURCE = ";; pendulum pal file\n{width}.input x $1 fixed = 0.1\n.loss y $2\n" \
         "        start\n        add $2 $1\n        finish\n"


def y_at(width: int) -> float:
    """y = x = 0.1 as the machine of this width holds it."""
    fmt = word_format(width)
    return fmt.to_real(fmt.from_real(Fraction("0.1")))


def program(tmp_path: Path, width: int | None = None) -> Path:
    path = tmp_path / f"y{width or ''}.pal"
    path.write_text(SOURCE.format(width=f".width {width}\n" if width else ""))
    return path


def as_json(*args: object) -> dict:
    result = CliRunner().invoke(cli, [*map(str, args), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_widths_and_their_default_live_in_one_place():
    assert WIDTHS == (32, 64) and DEFAULT_WIDTH == 32
    assert revasm.WIDTHS is WIDTHS and revasm.DEFAULT_WIDTH == DEFAULT_WIDTH
    assert word_format(32) is word_format(32) and word_format(64).frac_bits == 32
    with pytest.raises(ValueError, match="32 or 64"):
        word_format(48)
    assert y_at(32) != y_at(64)


@pytest.mark.parametrize("declared", [None, 64, 32])
def test_a_file_means_one_width_under_every_command_and_the_api(tmp_path, declared):
    """run, grad, hessian, batch, batch --grad, report, report --grad, debug (the DAP's
    session too), debug --grad and the API: the same width and the same y for one file."""
    path = program(tmp_path, declared)
    width = declared or DEFAULT_WIDTH
    y = y_at(width)
    assert as_json("run", path)["named"]["y"] == y
    graded = as_json("grad", path)
    assert (graded["width"], graded["loss"]) == (width, y)
    assert as_json("hessian", path)["width"] == width
    inputs = tmp_path / "xs.csv"
    inputs.write_text("x\n0.1\n")
    assert as_json("batch", path, "--inputs", inputs)["named"]["y"] == [y]
    assert as_json("batch", path, "--inputs", inputs, "--grad")["loss"] == [y]
    for extra in ((), ("--grad",)):
        report = as_json("report", path, *extra)
        assert (report["width"], report["outputs"]["y"]) == (width, y)
    for grad in (False, True):
        assert open_session(str(path), grad=grad).image.width == width
    image = revasm.load(path)
    assert image.width == width == revasm.assemble_file(path).width
    assert revasm.grad(image).loss == Fraction(word_format(width).from_real(Fraction("0.1")),
                                               1 << (width // 2))
    assert revasm.run(image).named["y"] == y


@pytest.mark.parametrize("declared", [None, 32, 64])
@pytest.mark.parametrize("given", WIDTHS)
def test_the_width_given_overrides_the_files(tmp_path, declared, given):
    path = program(tmp_path, declared)
    assert revasm.load(path, given).width == given
    assert as_json("grad", path, "--width", given)["width"] == given
    assert as_json("run", path, "--width", given)["named"]["y"] == y_at(given)


def test_the_gradient_examples_declare_the_width_their_documented_digits_need():
    """bessel_j2 and apex document gradients to more digits than Q16.16 holds."""
    for name in ("bessel_j2.pal", "apex.pal"):
        assert revasm.load(EXAMPLES / name).width == 64
    j2 = as_json("run", EXAMPLES / "bessel_j2.pal")["named"]["j2"]
    assert j2 == as_json("grad", EXAMPLES / "bessel_j2.pal")["loss"] == 0.11490348470397294
    assert as_json("grad", EXAMPLES / "bessel_j2.pal", "--width", "32")["loss"] == \
        0.114898681640625


def test_images_load_by_type_with_their_sidecar_and_keep_their_width(tmp_path):
    source = revasm.load(program(tmp_path, 64))
    for suffix, write in ((".bin", write_bin), (".hex", write_hex)):
        path = tmp_path / f"y{suffix}"
        write(source, path)
        write_sidecar(source, tmp_path / f"y{suffix}.json")
        assert file_kind(path) == {".bin": "image", ".hex": "hex"}[suffix]
        image = revasm.load(path)
        assert (image.width, image.words, image.entry) == (64, source.words, source.entry)
        assert revasm.run(image).named["y"] == y_at(64)
        assert revasm.load(path, 64).width == 64
        with pytest.raises(LoadError, match="assembled for W = 64, not 32"):
            revasm.load(path, 32)
    (tmp_path / "junk.bin").write_bytes(b"not an image")
    with pytest.raises(LoadError, match="not a revasm image"):
        revasm.load(tmp_path / "junk.bin")


def test_janus_and_python_sources_are_compiled():
    janus = revasm.load(EXAMPLES / "janus" / "fib_pair.ja")
    assert janus.width == 32 and file_kind(EXAMPLES / "janus" / "fib_pair.ja") == "janus"
    with pytest.raises(LoadError, match="Janus programs run at W = 32"):
        revasm.load(EXAMPLES / "janus" / "fib_pair.ja", 64)
    target = f"{EXAMPLES / 'nilang' / 'rfib.py'}:rfib"
    assert python_target(target) == (str(EXAMPLES / "nilang" / "rfib.py"), "rfib")
    loaded = load_program(target)
    assert loaded.program is not None and loaded.image is loaded.program.image
    assert loaded.image.width == DEFAULT_WIDTH
    assert revasm.load(target, 64).width == 64
    assert revasm.run(loaded.image, {"n": 10}).named["out"] == 55
    assert load_program(EXAMPLES / "fib.pal").program is None


def test_what_cannot_load_says_why(tmp_path):
    with pytest.raises(LoadError, match="no such file") as info:
        revasm.load(tmp_path / "none.pal")
    assert info.value.path == str(tmp_path / "none.pal")
    with pytest.raises(LoadError, match="no such file"):
        revasm.load(f"{tmp_path / 'none.py'}:f")
    with pytest.raises(LoadError, match="is a directory"):
        revasm.load(tmp_path)
    bad = tmp_path / "bad.pal"
    bad.write_text(";; pendulum pal file\nstart\nfoo $1\nfinish\n")
    with pytest.raises(AssemblyError):
        revasm.load(bad)
    broken = tmp_path / "broken.py"
    broken.write_text("from revasm.compiler import reversible, Int\n\n@reversible\n"
                      "def f(x: Int):\n    x += y\n")
    with pytest.raises(CompileError):
        revasm.load(f"{broken}:f")


def test_every_command_loads_python_and_reports_a_bad_one_as_a_compile_error(tmp_path):
    out = as_json("run", f"{EXAMPLES / 'nilang' / 'rfib.py'}:rfib", "--set", "n=10")
    assert out["named"]["out"] == 55
    broken = tmp_path / "broken.py"
    broken.write_text("from revasm.compiler import reversible, Int\n\n@reversible\n"
                      "def f(x: Int):\n    x += y\n")
    result = CliRunner().invoke(cli, ["run", f"{broken}:f", "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["file"], error["line"]) == ("compile", str(broken), 5)


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
        else:
            found[prefix + name] = command
    return found


def test_every_width_option_comes_from_the_one_factory():
    """One ``--width`` (cli/options.py): the widths of WIDTHS, an int for the command;
    a command with a program file takes the file's width unless given."""
    from revasm.cli import options

    widths = {name: next(p for p in command.params if p.name == "width")
              for name, command in _commands(cli).items()
              if any(p.name == "width" for p in command.params)}
    files = {"run", "check", "grad", "hessian", "batch", "report", "debug", "asm", "rtl sim"}
    assert files | {"compile", "grad-expr", "rtl verilog", "rtl formal", "rtl synth"} == \
        set(widths)
    for name, option in widths.items():
        assert isinstance(option.type, click.Choice)
        assert list(option.type.choices) == [str(w) for w in WIDTHS], name
        assert option.callback is options.width_value, name
        expected = None if name in files else "64" if name == "grad-expr" else "32"
        assert option.default == expected, name
