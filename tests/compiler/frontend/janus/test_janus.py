"""Janus programs on the machine: the examples, the integer rule, run-time faults, the CLI.

Every example compiles, runs on the reference machine to the store the interpreter
computes (and that is written next to it here), and runs backward to its initial store;
``revasm check`` and ``revasm report`` (energy) take the .ja file itself.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from janus_programs import machine_inputs

import revasm
from revasm.cli.main import cli
from revasm.compiler import CompileError
from revasm.compiler.api import compile_janus_file, compile_janus_source
from revasm.compiler.frontend.janus import check_program, parse_janus, parse_janus_file
from revasm.compiler.frontend.janus.interpreter import JanusFault, initial_store, run
from revasm.compiler.frontend.janus.store import janus_store
from revasm.compiler.frontend.janus.words import MAX_INT, MIN_INT
from revasm.machine import fault_json

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "janus"
#: What each example computes (main's variables after a forward run).
EXPECTED = {
    "fib_pair": {"n": 12, "a": 144, "b": 233},
    "factor": {"num": 1, "fact": [0, 2, 2, 2, 3, 3, 5, 7] + [0] * 8, "k": 7, "d": 2},
    "perm_to_code": {"x": [5, 2, 5, 0, 1, 2, 0, 0]},
    "rle": {"text": [0] * 14, "arc": [4, 3, 9, 2, 1, 1, 7, 4, 3, 2, 0, 0, 0, 0], "i": 12,
            "j": 10},
    "sort": {"x": [0] * 9, "rank": [8, 1, 5, 4, 7, 0, 3, 6, 2],
             "sorted": [-5, -4, 0, 3, 9, 15, 15, 26, 31]},
    "isqrt": {"num": 2024, "root": 44, "rem": 88},
    "physics": {"x": -610, "v": 324, "t": 20, "steps": 20},
    "stack_reverse": {"a": [6, 5, 4, 3, 2, 1], "s": []},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_computes_its_store_forward_and_returns_backward(name):
    path = EXAMPLES / f"{name}.ja"
    program = check_program(parse_janus_file(path))
    assert run(program) == EXPECTED[name]
    compiled = compile_janus_file(path)
    forward = revasm.run(compiled.image, engine="reference")
    assert forward.status == "finished" and forward.overflows == 0
    assert janus_store(forward.named) == EXPECTED[name]
    back = revasm.run(compiled.image, machine_inputs(EXPECTED[name]), reverse=True,
                      engine="reference")
    assert janus_store(back.named) == initial_store(program)
    assert run(program, EXPECTED[name], backward=True) == initial_store(program)


def test_every_example_file_is_tested():
    assert {p.stem for p in EXAMPLES.glob("*.ja")} == set(EXPECTED)


@pytest.mark.parametrize("name", ["fib_pair", "rle", "stack_reverse"])
def test_revasm_check_and_report_take_a_janus_file(name):
    runner = CliRunner()
    path = str(EXAMPLES / f"{name}.ja")
    checked = json.loads(runner.invoke(cli, ["check", path, "--json"]).stdout)
    assert checked["restored"] == checked["states"] == 1 and not checked["failures"]
    report = json.loads(runner.invoke(cli, ["report", path, "--json"]).stdout)
    assert report["restored"] is True
    energy = {model["name"]: model["total_J"] for model in report["energy"]}
    assert energy["cmos45"] > 0


def test_run_json_shows_mains_variables_by_their_janus_names():
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "sort.ja"), "--json"])
    named = json.loads(result.stdout)["named"]
    assert named == EXPECTED["sort"]
    stack = CliRunner().invoke(cli, ["run", str(EXAMPLES / "stack_reverse.ja"), "--json"])
    assert json.loads(stack.stdout)["named"] == EXPECTED["stack_reverse"]


def test_compile_writes_pal_and_ir_and_refuses_another_width(tmp_path):
    runner = CliRunner()
    source = str(EXAMPLES / "fib_pair.ja")
    out = tmp_path / "fib.pal"
    assert runner.invoke(cli, ["compile", source, "-o", str(out)]).exit_code == 0
    ran = json.loads(runner.invoke(cli, ["run", str(out), "--json"]).stdout)
    assert (ran["named"]["a"], ran["named"]["b"]) == (144, 233)
    ir = runner.invoke(cli, ["compile", source, "--emit", "ir"]).stdout
    assert "def fib(a: Int, b: Int, n: Int):" in ir and "if (n == 0, a == 0):" in ir
    assert runner.invoke(cli, ["compile", source, "--width", "64"]).exit_code == 2
    assert runner.invoke(cli, ["run", source, "--width", "64"]).exit_code == 1


ARITHMETIC = """procedure main()
    int a
    int b
    int p
    int q
    int m
    p += a * b
    q += a / b
    m += a % b
"""
EDGES = [1, -1, 2, -7, 7, 65536, -65535, 123456789, MAX_INT, MIN_INT]


def test_integer_words_wrap_and_divide_by_floor_on_both_engines():
    compiled = compile_janus_source(ARITHMETIC, "arith.ja")
    program = check_program(parse_janus(ARITHMETIC, "arith.ja"))
    for a in EDGES + [0]:
        for b in EDGES:
            store = {"a": a, "b": b, "p": 0, "q": 0, "m": 0}
            expected = run(program, store)
            got = revasm.run(compiled.image, store, engine="reference")
            assert janus_store(got.named) == expected, (a, b)
            assert (expected["q"] * b + expected["m"] - a) % 2 ** 32 == 0  # a = q b + m
            assert expected["m"] == 0 or (expected["m"] > 0) == (b > 0)  # m has b's sign
    # the worked cases of docs/janus.md
    check = run(program, {"a": MIN_INT, "b": -1, "p": 0, "q": 0, "m": 0})
    assert (check["p"], check["q"], check["m"]) == (MIN_INT, MIN_INT, 0)
    check = run(program, {"a": -7, "b": 2, "p": 0, "q": 0, "m": 0})
    assert (check["p"], check["q"], check["m"]) == (-14, -4, 1)


FAULTS = {
    "if assertion": "    if x = 0 then\n        x += 1\n    fi x = 0\n",
    "loop entry": "    from x = 0 loop\n        y += 1\n    until y = 3\n",
    "delocal value": "    local int t = 1\n        x += t\n    delocal int t = 2\n",
    "assert": "    assert x = 1\n",
    "pop into non-zero": "    x += 1\n    pop(x, s)\n",
    "pop from empty": "    pop(x, s)\n",
    "division by zero": "    y += 5 / x\n",
    "index out of range": "    x += 9\n    y += a[x]\n",
    "element from itself": "    a[x] += a[y] + 1\n",
}


@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_a_run_time_failure_faults_on_the_interpreter_and_on_the_machine(kind):
    source = "procedure main()\n    int x\n    int y\n    int a[4]\n    stack s\n" + \
        FAULTS[kind]
    program = check_program(parse_janus(source, "fault.ja"))
    with pytest.raises(JanusFault) as info:
        run(program)
    assert info.value.pos.line >= 6
    result = revasm.run(compile_janus_source(source, "fault.ja").image, engine="reference")
    assert result.status == "fault"
    fault = fault_json(result.fault)  # at the Janus line the interpreter names, not the PAL's
    assert (fault["file"], fault["line"]) == ("fault.ja", info.value.pos.line), fault
    assert fault["source"] == source.splitlines()[fault["line"] - 1].strip()
    assert "__" not in fault["message"] and "{$" not in fault["message"], fault["message"]


def test_uncall_runs_a_procedure_backward():
    source = ("procedure step(int x, int v)\n    v -= x / 4\n    x += v\n\n"
              "procedure main()\n    int x = 1000\n    int v\n"
              "    call step(x, v)\n    call step(x, v)\n    uncall step(x, v)\n")
    program = check_program(parse_janus(source, "u.ja"))
    once = check_program(parse_janus(source.replace("    uncall step(x, v)\n", "")
                                     .replace("    call step(x, v)\n", "", 1), "u.ja"))
    assert run(program) == run(once) == {"x": 750, "v": -250}
    got = revasm.run(compile_janus_source(source, "u.ja").image, engine="reference")
    assert janus_store(got.named) == {"x": 750, "v": -250}


def test_a_program_too_large_for_branch_offsets_is_a_compile_error_at_the_branch():
    # 100 products of two words in one branch: ~35000 instructions for a two-register
    # branch (16-bit offset) to jump over (`x > 0` would be BLEZ: 21 bits reach it)
    body = "".join("        z += x * y\n" for _ in range(100))
    source = f"procedure main()\n    int x = 5\n    int y = 3\n    int z\n" \
        f"    if x != y then\n{body}    fi x != y\n"
    with pytest.raises(CompileError) as info:
        compile_janus_source(source, "big.ja")
    assert (info.value.pos.line, info.value.pos.column) == (5, 5)
    assert "too large" in info.value.message and "procedures" in info.value.hint


def test_the_docs_table_has_each_examples_instructions_and_steps():
    docs = (Path(__file__).resolve().parents[4] / "docs" / "janus.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)\.ja` \| [^|]+ \| (\d+ \| \d+) \|$", docs, re.M))
    assert set(rows) == set(EXPECTED)
    for name, shown in rows.items():
        compiled = compile_janus_file(EXAMPLES / f"{name}.ja")
        steps = revasm.run(compiled.image, engine="reference").steps
        assert shown == f"{sum(compiled.image.is_code)} | {steps}", name


def test_a_failed_delocal_reads_in_janus_terms_with_its_check_kind(tmp_path):
    """The first line and the JSON name the .ja line and the Janus statement; the PAL
    detail line names the check (it read "machine fault (uncaught-jump)")."""
    path = tmp_path / "t.ja"
    path.write_text("procedure main()\n    int x = 3\n    int y\n    local int t = x\n"
                    "        y += t\n    delocal int t = 4\n")
    text = CliRunner().invoke(cli, ["run", str(path)])
    assert text.exit_code == 1
    assert f"{path}:6:13: runtime error: delocal int t = 4: t does not hold 4 here" \
        in text.stderr
    assert "ancilla check at pc" in text.stderr and "uncaught-jump" not in text.stderr
    fault = json.loads(CliRunner().invoke(cli, ["run", str(path), "--json"]).stdout)["fault"]
    assert (fault["file"], fault["line"], fault["check"]) == (str(path), 6, "ancilla")


def test_a_pop_from_an_empty_stack_shows_the_stack_empty_not_a_wrapped_slice():
    program = compile_janus_source("procedure main()\n    int x\n    stack s\n    pop(x, s)\n",
                                   "p.ja")
    result = revasm.run(program.image, engine="reference")
    assert result.status == "fault" and result.named["s"] == []
