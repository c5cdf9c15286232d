"""The -O2 passes one by one: small programs that pin what each removes and what it keeps.

Each pass has its module (docs/language.md, *Optimisation levels*): ``ir/unroll.py``,
``ir/inline_functions.py``, ``backend/pointers.py``, ``backend/immediates.py``,
``backend/hoisting.py`` and the held loop bounds and ``if`` conditions of
``backend/control_flow.py``.  Every case here also runs at -O0 and -O2 and compares the
words (the property over random programs is tests/compiler/test_levels.py).
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from revasm.compiler import compile_source
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.immediates import combine_immediates
from revasm.compiler.backend.pointers import affine, const_step, flat_address, written
from revasm.compiler.errors import SourcePos
from revasm.compiler.frontend.parse import parse_source
from revasm.compiler.ir import nodes as ir
from revasm.compiler.ir.inline_functions import gradient_neutral, inline_functions
from revasm.compiler.ir.unroll import MAX_TRIP, unroll_loops
from revasm.program_counts import count_program
from revasm.programs import ProgramFault, read_values, run_program

HEADER = ("from revasm.compiler import (ROT, Array, Fixed, Int, Loss, Out, ancilla, free,\n"
          "                              reversible, routine, sin)\n\nN = 6\n\n")
POS = SourcePos("t.py", 1, 1)


def _program(body: str, params: str = "out: Out, x: Array[Fixed, N], y: Array[Fixed, N]",
             extra: str = "", level: int = 2, **options):
    source = HEADER + extra + f"@reversible\ndef f({params}):\n" + body
    return compile_source(source, "f", "t.py", width=64, level=level, **options)


def _same_words(body: str, inputs: dict, **kwargs) -> tuple[int, int]:
    """Run at -O0 and -O2, assert the same words, return (steps at -O0, steps at -O2)."""
    steps = []
    values = []
    for level in (0, 2):
        program = _program(body, level=level, **kwargs)
        result = run_program(program, inputs, width=64, reverse_check=True)
        values.append(read_values(program, result.machine, exact=True))
        steps.append(result.steps)
    assert values[0] == values[1]
    return steps[0], steps[1]


XY = {"x": [0.5, -1.0, 2.0, 0.25, 1.5, -0.75], "y": [1.5, 2.0, -0.5, 4.0, 0.125, 1.0]}


def _functions(source: str) -> ir.Module:
    return parse_source(HEADER + source, "t.py")


def _statements(body: list[ir.Stmt]) -> list[ir.Stmt]:
    out = []
    for s in body:
        out.append(s)
        for attr in ("head", "body", "then", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                out += _statements(inner)
    return out


# --- ir/unroll.py ---------------------------------------------------------------------------

def test_a_small_constant_loop_becomes_its_body_with_constant_indices():
    module = _functions("@reversible\ndef f(x: Array[Fixed, N], y: Array[Fixed, N]):\n"
                        "    for i in range(1, 4):\n        x[i + 1] += y[i] * 0.5\n")
    body = unroll_loops(module).functions["f"].body
    assert not any(isinstance(s, ir.For) for s in _statements(body))
    indices = [(s.target.indices[0].value, s.expr.left.indices[0].value) for s in body]
    assert indices == [(2, 1), (3, 2), (4, 3)]


@pytest.mark.parametrize("loop", [
    "    for i in range(N):\n        out += i * 0.25\n",  # read outside an index
    f"    for i in range({MAX_TRIP + 1}):\n        x[0] += y[0] * 0.5\n",  # too long
    "    for i in range(n):\n        x[i] += y[i] * 0.5\n",  # variable bounds
    "    for i in range(3):\n        x[i + 4] += y[i] * 0.5\n",  # x[6]: outside, a fault
])
def test_loops_unrolling_would_change_stay_loops(loop):
    module = _functions("@reversible\ndef f(out: Out, x: Array[Fixed, N], y: Array[Fixed, N],"
                        " n: Int):\n" + loop)
    body = unroll_loops(module).functions["f"].body
    assert any(isinstance(s, ir.For) for s in body)


def test_unrolling_gives_the_loops_words_in_fewer_steps():
    plain, unrolled = _same_words("    for i in range(4):\n        out += x[i] * y[i]\n", XY)
    assert unrolled < plain / 2
    program = _program("    for i in range(4):\n        out += x[i] * y[i]\n")
    assert "bne" not in program.pal.split("f_f:")[1]  # no loop branch is left


# --- ir/inline_functions.py -----------------------------------------------------------------

CALLEE = """@reversible
def g(a: Fixed, b: Fixed, n: Int):
    with routine():
        t = ancilla(0.0)
        t += b
    for i in range(n):
        a += t * 0.25
    ~routine


"""


def test_a_small_function_is_inlined_with_renamed_locals():
    module = _functions(CALLEE + "@reversible\ndef f(x: Array[Fixed, N], n: Int, t: Fixed):\n"
                        "    g(x[0], x[1], n)\n    g(x[2], t, n)\n")
    from revasm.compiler.frontend.checks import written_params
    body = inline_functions(module, written_params(module)).functions["f"].body
    assert not any(isinstance(s, ir.Call) for s in _statements(body))
    allocs = {s.name for s in _statements(body) if isinstance(s, ir.Alloc)}
    assert len(allocs) == 2 and "t" not in allocs  # one t per call, neither the caller's
    # the caller's t is not the callee's: the second call reads the caller's t
    updates = [s for s in _statements(body) if isinstance(s, ir.Update)]
    assert any(s.expr == ir.Var(POS, name="t") and s.target.name != "t" for s in updates)


@pytest.mark.parametrize("call", ["    g(x[0], x[1], 3)\n",  # a constant argument
                                  "    g(x[0], x[1], n)\n    r(x, n)\n"])  # recursion
def test_calls_that_stay_calls(call):
    recursive = ("@reversible\ndef r(x: Array[Fixed, N], n: Int):\n    if (n > 0, n > 0):\n"
                 "        x[0] += 0.5\n        n -= 1\n        r(x, n)\n        n += 1\n")
    source = CALLEE + recursive + "@reversible\ndef f(x: Array[Fixed, N], n: Int):\n" + call
    program = compile_source(HEADER + source, "f", "t.py", width=64)
    assert ("bra     f_g" in program.pal) == ("3)" in call)
    assert ("f_r" in program.pal) == ("r(x" in call)


def test_a_function_whose_ancilla_takes_a_product_stays_a_call():
    # the product's adjoint rounds the ancilla's gradient word, whose history a register
    # of the caller would not share with the portal's (docs/decisions.md)
    product = CALLEE.replace("t += b", "t += b * 0.5")
    module = _functions(product)
    assert not gradient_neutral(module.functions["g"])
    assert gradient_neutral(_functions(CALLEE).functions["g"])
    program = compile_source(HEADER + product + "@reversible\ndef f(x: Array[Fixed, N], "
                             "n: Int):\n    g(x[0], x[1], n)\n", "f", "t.py", width=64)
    assert "bra     f_g" in program.pal


def test_inlining_gives_the_calls_words():
    source = CALLEE + "@reversible\ndef f(out: Out, x: Array[Fixed, N], n: Int):\n" \
        "    g(x[0], x[1], n)\n    ~g(x[2], x[3], n)\n    out += x[0] * x[2]\n"
    words = []
    for level in (0, 2):
        program = compile_source(HEADER + source, "f", "t.py", width=64, level=level)
        result = run_program(program, {"x": XY["x"], "n": 3}, width=64, reverse_check=True)
        words.append(read_values(program, result.machine, exact=True))
        assert ("f_g:" in program.pal) == (level == 0)
    assert words[0] == words[1]


# --- backend/pointers.py --------------------------------------------------------------------

def test_affine_forms_keys_and_constant_steps():
    i, j = ir.Var(POS, name="i"), ir.Var(POS, name="j")
    two = ir.Const(POS, value=Fraction(2), is_int=True)
    assert affine(ir.BinOp(POS, op="-", left=ir.BinOp(POS, op="*", left=two, right=i),
                           right=j)) == {"i": 2, "j": -1}
    assert affine(ir.Index(POS, name="a", indices=(i,))) is None
    element = ir.Index(POS, name="z", indices=(j, ir.BinOp(POS, op="+", left=i, right=two)))
    assert flat_address(element, (3, 5)) == (("z", (("i", 1), ("j", 5))), 2)
    assert const_step(ir.Update(POS, target=i, op="-", expr=two)) == ("i", -2)
    assert const_step(ir.Update(POS, target=i, op="+", expr=j)) is None
    body = [ir.Update(POS, target=i, op="+", expr=two), ir.Update(POS, target=j, op="+",
                                                                 expr=i)]
    assert written(body) == ({"i"}, {"j"}, False)


WALK = "    for i in range(n):\n        x[i] += y[i] * 0.5\n        x[i + 1] -= y[i] * 0.25\n"


def test_a_loop_walks_its_arrays_through_pointers():
    program = _program(WALK, params="x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 5]")
    assert program.pal.count("pointer into x") >= 2 and "pointer into y" in program.pal
    inputs = {**XY, "n": 5}
    plain = _program(WALK, params="x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 5]",
                     level=0)
    words = [read_values(p, run_program(p, inputs, width=64, reverse_check=True).machine,
                         exact=True) for p in (plain, program)]
    assert words[0] == words[1]
    steps = [count_program(p, inputs).steps for p in (plain, program)]
    assert steps[1] < steps[0] / 2


def test_a_loop_with_a_call_keeps_its_pointers_in_registers_the_callee_never_names():
    """backend/callee_registers.py: the callee is lowered first, so the caller knows which
    registers survive the call; a call changes only what its callee's parameters change."""
    import re
    callee = "@reversible\ndef h(a: Fixed, n: Int):\n    for k in range(n):\n" \
             "        a += 0.5\n\n\n"
    body = "    for i in range(n):\n        x[i] += y[i] * 0.5\n        h(y[i], n)\n"
    params = "x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 5]"
    program = _program(body, params=params, extra=callee, inline=False)
    caller = program.pal.split("f_f:")[1]
    callee_code = program.pal.split("f_h:")[1].split("f_h.bot:")[0]
    pointers = {r for line in caller.splitlines() if "pointer into" in line
                for r in re.findall(r"\$\d+", line.split(";")[0])[:1]}
    assert pointers and not pointers & set(re.findall(r"\$\d+", callee_code))
    plain = _program(body, params=params, extra=callee, inline=False, level=0)
    inputs = {**XY, "n": 5}
    words = [read_values(p, run_program(p, inputs, width=64, reverse_check=True).machine,
                         exact=True) for p in (plain, program)]
    assert words[0] == words[1]


def test_a_loop_around_a_call_of_its_own_function_keeps_no_pointer():
    recursive = ("@reversible\ndef f(x: Array[Fixed, N], y: Array[Fixed, N], n: Int):\n"
                 "    if (n > 0, n > 0):\n        n -= 1\n"
                 "        for i in range(N - 1):\n            x[i] += y[i] * 0.5\n"
                 "            f(x, y, n)\n        n += 1\n")
    program = compile_source(HEADER + recursive, "f", "t.py", width=64)
    assert "pointer into" not in program.pal.split("f_f:")[1]


def test_a_counter_stepped_by_a_constant_steps_its_pointer():
    body = ("    k = ancilla(0)\n    for i in range(n):\n        x[k] += y[i] * 0.5\n"
            "        k += 1\n    free(k, n, checked=True)\n    out += x[0] * y[0]\n")
    program = _program(body, params="out: Out, x: Array[Fixed, N], y: Array[Fixed, N], "
                                    "n: Int[0, 5]")
    steps = [line for line in program.pal.splitlines() if "pointer into x" in line]
    assert any("addi" in line for line in steps)  # k += 1 moves the pointer too
    _same_words(body, {**XY, "n": 4},
                params="out: Out, x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 5]")


# --- backend/immediates.py ------------------------------------------------------------------

def _i(text: str, label: str = "") -> Instr:
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


def test_two_addis_of_a_register_combine_across_code_that_does_not_use_it():
    code = [_i("addi $3 -2"), _i("exch $4 $5"), _i("addmul $6 $4 $7"), _i("addi $3 3")]
    assert combine_immediates(code) == code[1:3] + [_i("addi $3 1")]
    assert combine_immediates([_i("addi $3 2"), _i("add $4 $5"), _i("addi $3 -2")]) == \
        [_i("add $4 $5")]


@pytest.mark.parametrize("between", [_i("exch $4 $3"), _i("add $3 $5"),
                                     _i("bne $4 $0 L1"), _i("add $4 $5", label="L2")])
def test_addis_do_not_combine_across_a_use_a_branch_or_a_label(between):
    code = [_i("addi $3 -2"), between, _i("addi $3 3")]
    assert combine_immediates(code) == code


def test_a_pointer_step_meets_its_inverse_across_a_long_stretch_that_leaves_it_alone():
    """A routine's computing half moves a pointer back, its uncomputing half forward
    again, a long body between (the GMM's main_term: 51 instructions): they cancel."""
    body = [_i("addmul $6 $4 $7") for _ in range(120)]
    assert combine_immediates([_i("addi $3 -1"), *body, _i("addi $3 1")]) == body
    used = [*body[:60], _i("exch $2 $3"), *body[60:]]
    code = [_i("addi $3 -1"), *used, _i("addi $3 1")]
    assert combine_immediates(code) == code


def test_a_sum_outside_the_immediate_field_stays_two_addis():
    code = [_i("addi $3 30000"), _i("addi $3 30000")]
    assert combine_immediates(code) == code


# --- held loop bounds and if conditions (backend/control_flow.py) ---------------------------

def test_a_loops_bound_is_computed_once_not_every_iteration():
    body = "    for i in range(N - 2, j - 1, -1):\n        x[i] += y[i] * 0.5\n"
    params = "x: Array[Fixed, N], y: Array[Fixed, N], j: Int[0, 4]"
    per_iteration = []
    for level in (1, 2):
        program = _program(body, params=params, level=level)
        control = [count_program(program, {**XY, "j": j}).by_role.get("control", 0)
                   for j in (0, 3)]
        per_iteration.append((control[0] - control[1]) / 3)
    # -O1 computes j - 1 (and the start) for each test; -O2 tests registers
    assert per_iteration[1] <= per_iteration[0] - 3
    _same_words(body, {**XY, "j": 1}, params=params)


def test_a_loop_down_to_zero_tests_its_counters_sign_instead_of_holding_minus_one():
    # range(K - 1, -1, -1) is what ~routine makes of range(K): i != -1 is i >= 0, so only
    # the start takes a register (10 iterations: more than ir/unroll.py unrolls)
    down = "    for i in range(9, -1, -1):\n        x[1] += y[2] * 0.5\n"
    up = "    for i in range(0, 10):\n        x[1] += y[2] * 0.5\n"
    params = "x: Array[Fixed, N], y: Array[Fixed, N]"
    lines = _program(down, params=params).pal.splitlines()
    bottoms = [line for line in lines if "_bottom:" in line]
    assert len(bottoms) == 1 and bottoms[0].split()[1] == "bgez"
    steps = [_same_words(body, XY, params=params)[1] for body in (down, up)]
    # counting up from zero needs no register for its start; counting down needs none
    # for its stop: the same loop control but the counter's start (addi 9)
    assert steps[0] <= steps[1] + 1


@pytest.mark.parametrize("condition", ["y[i] > 0.0", "y[i] > x[i]", "y[i] > 0.5"])
def test_an_if_on_a_condition_computes_it_once_per_path(condition):
    body = (f"    for i in range(n):\n        if {condition}:\n"
            "            out += y[i] * 0.5\n        else:\n            out -= 0.25\n")
    params = "out: Out, x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 6]"
    steps = [count_program(_program(body, params=params, level=level), {**XY, "n": 6}).steps
             for level in (1, 2)]
    assert steps[1] < 0.8 * steps[0]
    held = _program(body, params=params).pal.splitlines()
    # the test, the landing and the join branch on one variable register: the condition
    tested = {line.split()[2] for line in held
              if any(f"_{kind}:" in line.split()[0] for kind in ("if", "else", "join"))}
    assert len(tested) == 1 and int(tested.pop()[1:]) >= 12
    _same_words(body, {**XY, "n": 6}, params=params)


# --- backend/hoisting.py --------------------------------------------------------------------

GIVENS = ("    k = ancilla(0)\n    for i in range(n):\n"
          "        ROT(x[i], x[i + 1], t[k])\n        k += 1\n    free(k, n, checked=True)\n")
GIVENS_PARAMS = "x: Array[Fixed, 7], t: Array[Fixed, M], n: Int"


def _givens(level: int, m: int = 6):
    return compile_source(HEADER + f"M = {m}\n\n@reversible\ndef f({GIVENS_PARAMS}):\n"
                          + GIVENS, "f", "t.py", width=64, level=level)


def test_a_loops_bounds_guard_runs_once_not_every_iteration():
    inputs = {"x": [0.5] * 7, "t": [0.25] * 6}
    checks = {}
    for level in (1, 2):
        checks[level] = [count_program(_givens(level), {**inputs, "n": n}).by_role.get(
            "check", 0) for n in (2, 6)]
    assert checks[1][1] - checks[1][0] >= 4 * 4  # every iteration checks k, at -O1
    assert checks[2][1] - checks[2][0] < 4 * 4  # not at -O2 (the loop's control only)


@pytest.mark.parametrize("level", [1, 2])
def test_a_hoisted_guard_faults_at_the_same_line_with_the_same_message(level):
    with pytest.raises(ProgramFault) as info:
        run_program(_givens(level, m=4), {"x": [0.5] * 7, "t": [0.25] * 4, "n": 6})
    assert info.value.pos.line == HEADER.count("\n") + 7  # the ROT line
    assert info.value.check == "bounds" and "t[k]" in str(info.value)


def test_an_empty_loop_checks_nothing():
    program = _givens(2, m=4)
    result = run_program(program, {"x": [0.5] * 7, "t": [0.25] * 4, "n": 0},
                         reverse_check=True)
    assert result.values["n"] == 0


# --- counted loops that test once per iteration (backend/control_flow.py) -------------------

@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_counted_loop_tests_once_per_iteration_and_skips_an_empty_range(n):
    body = "    for i in range(n):\n        x[i] += y[i] * 0.5\n"
    params = "x: Array[Fixed, N], y: Array[Fixed, N], n: Int[0, 5]"
    branches = {}
    for level in (1, 2):
        program = _program(body, params=params, level=level)
        counts = [count_program(program, {**XY, "n": m}) for m in (2, 4)]
        # branches and the counter's step per iteration (control and the paired checks)
        branches[level] = sum(counts[1].by_role.get(role, 0) - counts[0].by_role.get(role, 0)
                              for role in ("control", "check")) / 2
    assert branches[2] < branches[1]
    assert branches[2] == 3  # the branch at the top, the one at the bottom, the counter
    _same_words(body, {**XY, "n": n}, params=params)


def test_a_constant_empty_range_runs_no_iteration():
    body = "    for i in range(3, 3):\n        x[0] += y[0] * 0.5\n    out += x[0] * y[1]\n"
    _same_words(body, XY)
