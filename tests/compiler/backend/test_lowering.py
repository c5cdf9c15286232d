"""Lowering: inverses, spilling, calls, the source map of runtime faults, the commands."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from nilang_examples import program_files

from revasm.cli.main import cli
from revasm.compiler import CompileError, compile_file, compile_source
from revasm.compiler.ir.inverse import invert_block
from revasm.programs import ProgramFault
from revasm.programs import run_program as run

ROOT = Path(__file__).resolve().parents[3]
NILANG = ROOT / "examples/nilang"
HEADER = "from revasm.compiler import *\n\n"


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("path", program_files(), ids=lambda p: p.stem)
def test_inverse_of_the_inverse_is_the_program(path):
    module = compile_file(path).module
    for f in module.functions.values():
        assert invert_block(invert_block(f.body)) == f.body
    # only a body of ^= updates and swaps is its own inverse (decide in sparse_dot.py)
    assert any(invert_block(f.body) != f.body for f in module.functions.values())


def test_emit_ir_prints_the_program_and_its_inverse():
    forward = invoke("compile", NILANG / "rfib.py", "--emit", "ir")
    backward = invoke("compile", NILANG / "rfib.py", "--emit", "ir", "--inverse")
    assert forward.exit_code == backward.exit_code == 0
    assert "out += 1" in forward.output and "def rfib(out: Int, n: Int):" in forward.output
    assert "out -= 1" in backward.output and "def ~rfib(out: Int, n: Int):" in backward.output
    assert "~rfib(out, n2)" in backward.output


def test_compile_then_run_on_the_command_line(tmp_path):
    out = tmp_path / "rfib.pal"
    assert invoke("compile", f"{NILANG / 'rfib.py'}:rfib", "-o", out).exit_code == 0
    source_map = json.loads(Path(str(out) + ".map.json").read_text())
    assert any(entry["line"] == 19 for entry in source_map.values())
    result = invoke("run", out, "--set", "n=10", "--json")
    assert json.loads(result.output)["named"]["out"] == 55


def test_compile_errors_exit_1_with_the_python_position(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(HEADER + "@reversible\ndef f(y: Fixed):\n    y = 1.0\n")
    result = invoke("compile", bad)
    assert result.exit_code == 1
    assert f"{bad}:5:5: error: assignment '=' overwrites a value" in result.output
    assert invoke("compile", tmp_path / "missing.py").exit_code == 1
    assert invoke("compile", f"{bad}:g").exit_code == 1
    assert invoke("compile", NILANG / "rfib.py", "--inverse").exit_code == 2


def _same_values(a, b):
    return all(a.values[k] == b.values[k] for k in a.values)


def test_spilled_variables_give_the_same_bits():
    for name, entry, registers, inputs in (
            ("ibesselj.py", "ibesselj", 4, {"z": 1.3}),
            ("rfib.py", "rfib", 3, {"n": 9}),
            ("qr.py", "qr", 4, {"A": [[1, 0.5, -0.25], [0.3, 2, 0.7], [-1.2, 0.4, 1.5]]})):
        plain = compile_file(NILANG / name, entry)
        spilled = compile_file(NILANG / name, entry, max_registers=registers)
        assert "load" in spilled.pal and spilled.pal != plain.pal
        a = run(plain, inputs, reverse_check=True)
        b = run(spilled, inputs, reverse_check=True)
        assert _same_values(a, b)
        assert b.steps > a.steps


IF_PROGRAM = HEADER + """@reversible
def f(y: Fixed, x: Fixed):
    if (x > 0, y > 0):
        y += x
    else:
        y -= 1.0
"""


def test_a_false_postcondition_after_then_faults_at_the_if_line():
    program = compile_source(IF_PROGRAM, "f", "branchy.py")
    assert run(program, {"x": 1.0, "y": 0.5}).values["y"] == 1.5
    with pytest.raises(ProgramFault) as info:
        run(program, {"x": 1.0, "y": -5.0})
    assert (info.value.pos.file, info.value.pos.line) == ("branchy.py", 5)
    assert "postcondition y > 0 of the if at line 5 is false after the then branch" \
        in str(info.value)
    assert info.value.fault.kind == "uncaught-jump"


def test_a_true_postcondition_after_else_faults_at_the_if_line():
    program = compile_source(IF_PROGRAM, "f", "branchy.py")
    assert run(program, {"x": -1.0, "y": 0.5}).values["y"] == -0.5
    with pytest.raises(ProgramFault) as info:
        run(program, {"x": -1.0, "y": 5.0})
    assert info.value.pos.line == 5
    assert "postcondition y > 0 of the if at line 5 is true after the else branch" \
        in str(info.value)


def test_a_loop_postcondition_true_on_entry_faults_at_the_while_line():
    program = compile_source(HEADER + """@reversible
def f(k: Int, n: Int):
    while (k < n, k > 0):
        k += 1
""", "f", "loop.py")
    assert run(program, {"k": 0, "n": 5}, reverse_check=True).values["k"] == 5
    with pytest.raises(ProgramFault) as info:
        run(program, {"k": 2, "n": 5})
    assert info.value.pos.line == 5
    assert "must be false on entry" in str(info.value)


def test_a_checked_free_of_a_wrong_value_faults_at_the_free_line():
    program = compile_source(HEADER + """@reversible
def f(y: Fixed, x: Fixed):
    t = ancilla(0.0)
    t += x
    y += t
    free(t, 1.0, checked=True)
""", "f", "anc.py")
    assert run(program, {"x": 1.0}).values["y"] == 1.0
    with pytest.raises(ProgramFault) as info:
        run(program, {"x": 2.0})
    assert info.value.pos.line == 8
    assert "ancilla t does not hold 1.0 when it is freed at line 8" in str(info.value)


def test_calls_uncalls_and_inverse_blocks():
    program = compile_source(HEADER + """@reversible
def g(y: Fixed, x: Fixed):
    y += 3.0 * x
    y += sin(x)

@reversible
def f(a: Fixed, b: Fixed, c: Fixed, x: Fixed):
    g(a, x)
    g(b, x)
    ~g(b, x)
    ~g(c, x)
    with inverse():
        g(b, x)
        a += 1.0
""", "f", "calls.py")
    r = run(program, {"x": 0.5}, reverse_check=True).values
    assert abs(r["a"] - (1.5 + math.sin(0.5) - 1.0)) < 1e-4
    assert abs(r["b"] + (1.5 + math.sin(0.5))) < 1e-4
    assert abs(r["c"] + (1.5 + math.sin(0.5))) < 1e-4


def test_for_loops_with_steps_and_variable_bounds_match_python():
    program = compile_source(HEADER + """@reversible
def f(s: Int, t: Int, u: Int, n: Int):
    for i in range(1, 11, 3):
        s += i
    for i in range(10, 0, -4):
        t += i
    for i in range(n):
        for j in range(i, n):
            u += j
""", "f", "loops.py")
    r = run(program, {"n": 5}, reverse_check=True).values
    assert r["s"] == sum(range(1, 11, 3))
    assert r["t"] == sum(range(10, 0, -4))
    assert r["u"] == sum(j for i in range(5) for j in range(i, 5))


_FUNCS = ["sin", "cos", "tanh", "atan", "exp"]


@st.composite
def _programs(draw):
    names = ["a", "b", "c", "d"]
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        target = draw(st.sampled_from(names))
        others = [n for n in names if n != target]
        x, y = draw(st.sampled_from(others)), draw(st.sampled_from(others))
        op = draw(st.sampled_from(["+", "-"]))
        kind = draw(st.integers(0, 3))
        if kind == 0:
            expr = f"{x} * {y}"
        elif kind == 1:
            expr = f"{draw(st.sampled_from(_FUNCS))}({x})"
        elif kind == 2:
            expr = f"{x} - 2.5 * {y}"
        else:
            expr = f"{x} / 4.0"
        lines.append(f"    {target} {op}= {expr}")
    return HEADER + "@reversible\ndef f(a: Fixed, b: Fixed, c: Fixed, d: Fixed):\n" + \
        "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None)
@given(_programs(), st.lists(st.floats(-1, 1), min_size=4, max_size=4))
def test_random_programs_restore_the_machine_and_their_inverse_undoes_them(source, values):
    inputs = dict(zip("abcd", values))
    program = compile_source(source, "f", "random.py")
    forward = run(program, inputs, reverse_check=True)
    inverse = compile_source(source.replace("def f(", "def g(") + source[len(HEADER):] +
                             "\n@reversible\ndef h(a: Fixed, b: Fixed, c: Fixed, d: Fixed):\n"
                             "    f(a, b, c, d)\n    ~g(a, b, c, d)\n", "h", "random2.py")
    back = run(inverse, inputs).values
    assert back == run(compile_source(HEADER + "@reversible\ndef z(a: Fixed, b: Fixed, "
                                      "c: Fixed, d: Fixed):\n    pass\n", "z", "z.py"),
                       inputs).values
    assert set(forward.values) == set("abcd")


@pytest.mark.parametrize("expression, point", [
    ("sq(x / y) * sin(x)", {"x": 0.3, "y": 0.5}),
    ("x + y - x * y + -x", {"x": 0.7, "y": -1.2}),
    ("sqrt(x) * exp(y) - log(x)", {"x": 1.5, "y": 0.25}),
    ("cos(x) + tan(y) / sinh(x)", {"x": 0.4, "y": 0.3}),
    ("cosh(x) * tanh(y) + pow(x, y)", {"x": 1.2, "y": 0.8}),
    ("x ** 2 + x ** 3", {"x": 0.9}),
])
def test_grad_expr_agrees_with_float64(expression, point):
    at = ",".join(f"{k}={v}" for k, v in point.items())
    result = invoke("grad-expr", expression, "--at", at, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert abs(data["value"] - data["reference"]["value"]) < 1e-7
    for name in point:
        assert abs(data["gradient"][name] - data["reference"]["gradient"][name]) < 1e-5


def test_grad_expr_errors():
    unknown = invoke("grad-expr", "sinn(x)", "--at", "x=1")
    assert unknown.exit_code == 1 and "<expression>:1:1: error: unknown function 'sinn'" \
        in unknown.output
    assert invoke("grad-expr", "x + y", "--at", "x=1").exit_code == 1
    undefined = invoke("grad-expr", "x + log(x - 2)", "--at", "x=1")
    assert undefined.exit_code == 1
    assert "<expression>:1:5: runtime error: log of non-positive value" in undefined.output
    assert invoke("grad-expr", "x", "--at", "x").exit_code == 2


def test_compile_error_for_too_deep_expressions_names_the_line():
    deep = "sin(" * 12 + "x" + ")" * 12
    with pytest.raises(CompileError) as info:
        compile_source(HEADER + f"@reversible\ndef f(y: Fixed, x: Fixed):\n    y += {deep}\n",
                       "f", "deep.py")
    assert info.value.pos.line == 5 and "temporary registers" in info.value.message


@st.composite
def _structured(draw, depth=0):
    """Updates of a, b, c (reading the others, d and loop counters), ifs on d, for loops."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 4 if depth < 2 else 2))
        pad = "    " * (depth + 1)
        if kind <= 2:
            target = draw(st.sampled_from("abc"))
            x = draw(st.sampled_from([n for n in "abcd" if n != target]))
            y = draw(st.sampled_from([n for n in "abcd" if n != target]))
            op = draw(st.sampled_from("+-"))
            # bounded or mildly linear terms: values stay far inside the format
            expr = draw(st.sampled_from([f"sin({x}) * cos({y})", f"tanh({x})",
                                         f"0.25 * {x} - {y} / 8.0", f"atan({x} * {y})"]))
            lines.append(f"{pad}{target} {op}= {expr}")
        elif kind == 3:
            cmp = draw(st.sampled_from(["d > 0", "d < 0.25", "d == 0", "not (d > 0.5)"]))
            then = draw(_structured(depth + 1))
            orelse = draw(_structured(depth + 1))
            lines += [f"{pad}if {cmp}:", then, f"{pad}else:", orelse]
        else:
            n = draw(st.integers(0, 3))
            var = f"i{depth}"
            body = draw(_structured(depth + 1))
            lines += [f"{pad}for {var} in range({n}):", body,
                      f"{pad}    c += {var} * 0.125"]
    return "\n".join(lines)


@settings(max_examples=40, deadline=None)
@given(_structured(), st.lists(st.sampled_from([-0.75, -0.5, 0.0, 0.25, 0.5, 1.0]),
                               min_size=4, max_size=4))
def test_compiled_programs_compute_what_python_computes(body, values):
    source = "def f(a: Fixed, b: Fixed, c: Fixed, d: Fixed):\n" + body + "\n"
    # the eDSL is Python: the same function run on floats is the reference
    namespace = {"sin": math.sin, "cos": math.cos, "tanh": math.tanh, "atan": math.atan,
                 "Fixed": float}
    exec(source.replace("def f(", "def reference(") +  # generated source
         "    return a, b, c, d\n", namespace)
    expected = namespace["reference"](*values)
    program = compile_source(HEADER + "@reversible\n" + source, "f", "structured.py", width=64)
    got = run(program, dict(zip("abcd", values)), width=64, reverse_check=True).values
    for name, want in zip("abcd", expected):
        assert abs(got[name] - want) <= 1e-6 * (1 + abs(want)), (source, name, got, expected)


def test_a_range_running_the_wrong_way_faults_at_the_for_line():
    program = compile_source(HEADER + """@reversible
def f(s: Int, a: Int, b: Int):
    for i in range(a, b):
        s += i
""", "f", "wrong.py")
    assert run(program, {"a": 2, "b": 5}, reverse_check=True).values["s"] == 2 + 3 + 4
    assert run(program, {"a": 5, "b": 5}, reverse_check=True).values["s"] == 0
    with pytest.raises(ProgramFault) as info:
        run(program, {"a": 5, "b": 2})
    assert info.value.pos.line == 5
    assert "runs the wrong way: its end b is below its start a" in str(info.value)


def test_a_condition_whose_parts_read_one_array_reads_every_element():
    # the single-pass condition held a[i] in a register while the second part read it
    # again from memory, as zero (found by the Janus differential tests)
    program = compile_source(HEADER + """@reversible
def f(n: Out[Int], a: Array[Int, 3], i: Int):
    if a[i] > 5 or a[i] < -5:
        n += 1
""", "f", "parts.py")
    for values, expected in (([9, 0, 0], 1), ([0, 0, 0], 0), ([-7, 0, 0], 1), ([3, 0, 0], 0)):
        assert run(program, {"a": values, "i": 0}, reverse_check=True).values["n"] == expected


def test_int_words_multiply_divide_and_take_remainders_by_floor():
    program = compile_source(HEADER + """@reversible
def f(p: Out[Int], q: Out[Int], m: Out[Int], a: Int, b: Int):
    p += a * b
    q += a // b
    m += a % b
""", "f", "ints.py")
    for a, b in ((-7, 2), (7, -2), (2 ** 31 - 1, 3), (-2 ** 31, -1), (40000, 70000)):
        values = run(program, {"a": a, "b": b}, reverse_check=True).values
        product = (a * b + 2 ** 31) % 2 ** 32 - 2 ** 31
        quotient = (a // b + 2 ** 31) % 2 ** 32 - 2 ** 31
        assert (values["p"], values["q"], values["m"]) == (product, quotient, a % b)
    with pytest.raises(ProgramFault) as info:
        run(program, {"a": 1, "b": 0})
    assert info.value.pos.line == 6
