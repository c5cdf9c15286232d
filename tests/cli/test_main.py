"""The command line's contract (docs/cli.md): outputs, JSON shape, exit codes, no tracebacks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL_EXAMPLES = sorted(EXAMPLES.glob("*.pal"))


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def run_json(*args: str) -> tuple[dict, int]:
    result = invoke("run", *args, "--json")
    return json.loads(result.stdout), result.exit_code


def test_fib_example_finishes_with_fib_18():
    out, code = run_json(EXAMPLES / "fib.pal")
    assert code == 0
    assert out["status"] == "finished"
    assert out["registers"]["$1"] == 2584
    assert out["named"] == {"n": 18, "fib": 2584}
    assert set(out) >= {"status", "steps", "cycles", "registers", "memory", "output", "named"}
    assert len(out["registers"]) == 32


@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("width", ["32", "64"])
def test_every_example_runs_to_finish(path, width):
    out, code = run_json(path, "--width", width)
    assert code == 0, out
    assert out["status"] == "finished"


@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=lambda p: p.name)
def test_check_random_50_restores_every_example(path):
    result = invoke("check", path, "--random", "50", "--seed", "7", "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == 0, summary
    assert summary["states"] == 51 and summary["restored"] == 51


@pytest.mark.parametrize("args, expected", [
    (("multiply.pal", "--set", "a=12", "--set", "b=34"), {"c": 408}),
    (("multiply.pal", "--set", "a=-3", "--set", "b=7"), {"c": -21}),
    (("nested_loops.pal", "--set", "n=3", "--set", "m=4"), {"count": 12, "sum": 12}),
    (("diamonds.pal", "--set", "x=4", "--set", "y=4"),
     {"nonneg": 1, "pos": 1, "nonzero": 1, "differs": 10}),
    (("diamonds.pal", "--set", "x=0"), {"nonneg": 1, "pos": 10, "nonzero": 10, "differs": 1}),
    (("procedure.pal", "--set", "x=-5"), {"y": -15}),
    (("exch_data.pal",), {"first": 33, "middle": 22, "c0": 0, "c1": 22, "c2": 11}),
])
def test_examples_compute_what_their_comments_say(args, expected):
    out, code = run_json(EXAMPLES / args[0], *args[1:])
    assert code == 0
    for name, value in expected.items():
        assert out["named"][name] == value, name


def test_fixed_point_example_matches_the_math():
    import math
    out, _ = run_json(EXAMPLES / "fixed_point.pal", "--set", "x=0.25", "--set", "theta=-1.0")
    assert out["named"]["z"] == pytest.approx(2.5 * math.sin(0.25), abs=4e-4)
    assert out["named"]["p"] == pytest.approx(math.cos(-1.0), abs=4e-4)
    assert out["named"]["q"] == pytest.approx(math.sin(-1.0), abs=4e-4)


def test_reverse_runs_backward_from_finish(tmp_path):
    forward, _ = run_json(EXAMPLES / "nested_loops.pal")
    sets = [f"--set={name}={value}" for name, value in forward["registers"].items()
            if name != "$0" and value]
    back, code = run_json(EXAMPLES / "nested_loops.pal", "--reverse", *sets)
    assert code == 0
    assert back["named"]["count"] == 0 and back["named"]["sum"] == 0
    # the declared defaults were loaded first, then overwritten by --set
    assert back["registers"]["$2"] == 5 and back["registers"]["$4"] == 7


def test_asm_writes_an_image_that_runs_and_disassembles(tmp_path):
    image = tmp_path / "fib.bin"
    result = invoke("asm", EXAMPLES / "fib.pal", "-o", image, "--listing")
    assert result.exit_code == 0
    assert image.exists() and (tmp_path / "fib.bin.json").exists()
    assert "addi" in result.stdout.lower()
    out, code = run_json(image)
    assert code == 0 and out["named"]["fib"] == 2584
    text = invoke("disasm", image).stdout
    source = tmp_path / "again.pal"
    source.write_text(text)
    again = tmp_path / "again.bin"
    assert invoke("asm", source, "-o", again).exit_code == 0
    assert again.read_bytes() == image.read_bytes()


def test_asm_hex_format(tmp_path):
    target = tmp_path / "fib.hex"
    assert invoke("asm", EXAMPLES / "fib.pal", "--format", "hex", "-o", target).exit_code == 0
    lines = [line for line in target.read_text().splitlines() if line and not line.startswith("/")]
    assert len(lines) >= 16


def test_malformed_source_reports_file_line_col_and_exits_1(tmp_path):
    bad = tmp_path / "bad.pal"
    bad.write_text(";; pendulum pal file\n  start\n  add $3 $3\n  frob $1\n  finish\n")
    result = invoke("run", bad)
    assert result.exit_code == 1
    assert f"{bad}:3:10: error:" in result.stderr
    assert f"{bad}:4:3: error: unknown instruction 'frob'" in result.stderr
    assert "Traceback" not in result.output


def test_a_fault_exits_1_with_json_naming_the_fault(tmp_path):
    broken = tmp_path / "broken.pal"
    broken.write_text(";; pendulum pal file\n.input x $1 int = 5\n        start\n"
                      "test:   beq  $1 $0 else\n        addi $1 -5\nout:    bra  join\n"
                      "else:   beq  $1 $0 test\njoin:   bne  $1 $0 out\n        finish\n")
    out, code = run_json(broken)
    assert code == 1
    assert out["status"] == "fault"
    assert out["fault"]["kind"] == "uncaught-jump"
    assert out["fault"]["pc"] == 5 and out["fault"]["line"] == 8
    assert "jump from line 6 (pc 3) landed on line 8 (pc 5)" in out["fault"]["message"]


def test_step_limit_is_a_fault():
    out, code = run_json(EXAMPLES / "fib.pal", "--max-steps", "10")
    assert code == 1 and out["fault"]["kind"] == "step-limit" and out["steps"] == 10


@pytest.mark.parametrize("args", [
    ("run", "no-such-file.pal"),
    ("run", EXAMPLES / "fib.pal", "--set", "nosuchname=3"),
    ("run", EXAMPLES / "fib.pal", "--set", "$3=abc"),
    ("run", EXAMPLES / "fib.pal", "--set", "$0=1"),
    ("run", EXAMPLES / "fib.pal", "--width", "16"),
    ("run", EXAMPLES),
    ("check", EXAMPLES / "fib.pal", "--random", "-1"),
    ("frobnicate",),
])
def test_bad_arguments_give_a_message_and_no_traceback(args):
    result = invoke(*args)
    assert result.exit_code in (1, 2)
    assert "Traceback" not in result.output
    assert result.output.strip()


def test_usage_errors_exit_2():
    assert invoke("run", EXAMPLES / "fib.pal", "--set", "$3=abc").exit_code == 2
    assert invoke("run").exit_code == 2


def test_every_subcommand_help_shows_an_example():
    for command in ("asm", "disasm", "run", "check"):
        result = invoke(command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.stdout and "revasm " + command in result.stdout


def test_check_help_teaches_input_domains():
    text = " ".join(invoke("check", "--help").stdout.split())
    assert "declared domain" in text and "in 1..20" in text and "Int[1, 20]" in text


def test_an_integer_value_for_a_fixed_point_name_is_its_real_and_raw_says_the_word():
    """The one value rule (machine/values.py): x=5 on a fixed name is 5.0, as batch reads
    it; the raw word only with raw:."""
    whole = invoke("run", EXAMPLES / "fixed_point.pal", "--set", "x=5", "--json")
    real = invoke("run", EXAMPLES / "fixed_point.pal", "--set", "x=5.0", "--json")
    raw = invoke("run", EXAMPLES / "fixed_point.pal", "--set", "x=raw:5", "--json")
    assert json.loads(whole.stdout)["registers"]["$1"] == 5 << 16
    assert json.loads(real.stdout)["registers"]["$1"] == 5 << 16
    assert json.loads(raw.stdout)["registers"]["$1"] == 5
    assert "note:" not in whole.stderr + real.stderr + raw.stderr


def test_a_memory_word_anywhere_in_the_address_space_can_be_set():
    result = invoke("run", EXAMPLES / "fib.pal", "--mem", "70000=1", "--mem", "0xffffffff=-2",
                    "--json")
    assert result.exit_code == 0, result.output
    memory = json.loads(result.stdout)["memory"]
    assert memory["70000"] == 1 and memory["4294967295"] == -2


@pytest.mark.parametrize("assignment, message", [
    ("0x100000000=1", "address 4294967296 is outside memory (0..4294967295)"),
    ("-1=1", "address -1 is outside memory"),
    ("3=1", "address 3 holds an instruction"),
])
def test_a_memory_word_outside_data_memory_is_a_usage_error(assignment: str, message: str):
    result = invoke("run", EXAMPLES / "fib.pal", "--mem", assignment)
    assert result.exit_code == 2
    assert message in result.output and "internal error" not in result.output


def test_compile_of_a_directory_says_it_needs_a_file():
    result = invoke("compile", EXAMPLES)
    assert result.exit_code == 1
    assert "is a directory: compile takes a Python source file" in result.output
