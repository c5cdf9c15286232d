"""The compiler's optimizations keep correctness: compiled ibesselj against the hand-written
J2 series (steps and value), guards the static proof drops vs. those it must keep, inlining,
the peephole and ``checks=False`` (docs/language.md, *Runtime checks*; docs/abi.md)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.assembler import assemble_file
from revasm.compiler import CompileError, compile_file, compile_source
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.peephole import cancel_inverse_pairs
from revasm.isa.fixed_point import WordFormat
from revasm.machine import MachineFault
from revasm.programs import ProgramFault
from revasm.programs import run_program as run
from revasm.sim.reference import Machine

ROOT = Path(__file__).resolve().parents[2]
NILANG = ROOT / "examples/nilang"
HEADER = "from revasm.compiler import *\n\n"


def _hand_written_j2(x: float) -> tuple[int, float]:
    """Steps and J2 of examples/bessel_j2.pal at W = 64."""
    image = assemble_file(ROOT / "examples/bessel_j2.pal", width=64)
    fmt = WordFormat(64)
    machine = Machine(image)
    machine.registers[1] = fmt.from_real(x) & fmt.mask
    machine.run(1)
    return machine.steps, fmt.to_real(machine.registers[2])


def _series_j2(x: float) -> float:
    """J2(x) = sum_k (-1)^k (x/2)^(2k+2) / (k! (k+2)!) in float64 (no scipy)."""
    return sum((-1) ** k * (x / 2) ** (2 * k + 2) / (math.factorial(k) * math.factorial(k + 2))
               for k in range(30))


@pytest.fixture(scope="module")
def ibesselj64():
    return compile_file(NILANG / "ibesselj.py", "ibesselj", width=64)


@pytest.mark.parametrize("x", [0.5, 1.0, 3.0])
def test_compiled_ibesselj_runs_within_1_5x_the_steps_of_the_hand_written_series(ibesselj64, x):
    # the default mode (checks on, inlining on) is the one the comparison uses
    hand_steps, hand_j2 = _hand_written_j2(x)
    result = run(ibesselj64, {"z": x}, width=64, reverse_check=True)
    # residuals[k] (k a while counter) keeps its bounds guard: 4-5 steps per access
    assert result.steps <= 1.5 * hand_steps + 6 * 2 * 12, (result.steps, hand_steps)
    unbounded = compile_file(NILANG / "ibesselj.py", "ibesselj", width=64,
                             checks={"alias", "ancilla", "branch", "range"})
    assert run(unbounded, {"z": x}, width=64).steps <= 1.5 * hand_steps
    assert abs(result.values["out"] - _series_j2(x)) < 1e-6
    assert abs(hand_j2 - _series_j2(x)) < 1e-6


def test_ibesselj_keeps_no_ancilla_guard_it_proves_and_checks_off_changes_nothing_else(
        ibesselj64):
    assert "must be zero here" not in ibesselj64.pal
    assert "leaves it zero" not in ibesselj64.pal
    unchecked = compile_file(NILANG / "ibesselj.py", "ibesselj", width=64, checks=False)
    assert "trap" not in unchecked.pal
    # every guard but the bounds of residuals[k] is proven away
    checked = compile_file(NILANG / "ibesselj.py", "ibesselj", width=64,
                           checks={"alias", "ancilla", "branch", "range"})
    for x in (0.5, 3.0):
        a = run(checked, {"z": x}, width=64)
        b = run(unchecked, {"z": x}, width=64, reverse_check=True)
        assert a.values == b.values and a.steps == b.steps


def test_inlining_gives_the_same_bits_with_fewer_steps():
    for width in (32, 64):
        inlined = compile_file(NILANG / "ibesselj.py", "ibesselj", width=width)
        called = compile_file(NILANG / "ibesselj.py", "ibesselj", width=width, inline=False)
        a = run(inlined, {"z": 2.2}, width=width, reverse_check=True)
        b = run(called, {"z": 2.2}, width=width, reverse_check=True)
        assert a.values == b.values
        assert "f_imul" not in inlined.pal and "f_imul" in called.pal
        assert a.steps < b.steps


def test_a_fault_in_an_inlined_function_is_reported_at_its_line():
    program = compile_source(HEADER + """@reversible
def g(y: Fixed, x: Fixed):
    y += 1.0 / x

@reversible
def f(y: Fixed, x: Fixed):
    g(y, x)
""", "f", "inl.py")
    assert "f_g" not in program.pal
    assert run(program, {"x": 2.0}).values["y"] == 0.5
    with pytest.raises(ProgramFault) as info:
        run(program, {"x": 0.0})
    assert (info.value.pos.file, info.value.pos.line) == ("inl.py", 5)


def test_an_int_passed_as_fixed_stays_a_call():
    # a portal moves the raw word; substituting would convert it, so no inlining
    program = compile_source(HEADER + """@reversible
def g(y: Fixed, x: Fixed):
    y += x

@reversible
def f(y: Fixed, k: Int):
    g(y, k)
""", "f", "mixed.py")
    assert "bra     f_g" in program.pal


CHECKED = HEADER + """@reversible
def f(y: Fixed, x: Fixed):
    t = ancilla(0.0)
    t += x
    y += t
    free(t, 1.0, checked=True)
    u = ancilla(0.0)
    u += x
    y += u
    u -= x
    free(u, 0.0)
"""


def test_a_checked_free_keeps_both_guards_and_a_proven_free_has_none():
    pal = compile_source(CHECKED, "f", "anc.py").pal
    assert "ancilla t must be zero here" in pal and "free(t, ...) leaves it zero" in pal
    assert "ancilla u must be zero here" not in pal and "free(u, ...)" not in pal


def test_the_guard_of_an_unproven_free_faults_forward_and_backward():
    program = compile_source(CHECKED, "f", "anc.py")
    assert run(program, {"x": 1.0}, reverse_check=True).values["y"] == 2.0
    with pytest.raises(ProgramFault) as info:
        run(program, {"x": 2.0})
    assert info.value.pos.line == 8
    assert "ancilla t does not hold 1.0 when it is freed at line 8" in str(info.value)
    # backward from a final state where x no longer restores t: the allocation's guard
    machine = Machine(program.image)
    fmt = WordFormat(32)
    regs = program.lowered.layouts["f"].scalars
    machine.registers[regs["x"].register] = fmt.from_real(1.0)
    machine.run(1)
    machine.registers[regs["x"].register] = fmt.from_real(2.0)
    with pytest.raises(MachineFault) as fault:
        machine.run(-1)
    entry = program.source_of_pc(fault.value.landing_pc)
    assert entry.pos.line == 5 and "running backward" in entry.note


BRANCHES = HEADER + """@reversible
def f(y: Fixed, x: Fixed):
    t = ancilla(0.0)
    if x > 0:
        t += x
    else:
        t -= x
    y += t
    free(t, 0.0{checked})
"""


def test_updates_in_different_branches_are_not_an_inverse_pair():
    with pytest.raises(CompileError, match="not provably restored"):
        compile_source(BRANCHES.format(checked=""), "f", "br.py")
    program = compile_source(BRANCHES.format(checked=", checked=True"), "f", "br.py")
    assert "leaves it zero" in program.pal
    with pytest.raises(ProgramFault, match="does not hold 0.0 when it is freed"):
        run(program, {"x": 1.0})


def test_a_pair_across_a_free_and_reallocation_is_not_an_inverse_pair():
    source = HEADER + """@reversible
def f(y: Fixed):
    t = ancilla(0.0)
    x = ancilla(0.0)
    x += y
    t += x
    x -= y
    free(x, 0.0)
    x = ancilla(5.0)
    t -= x
    free(x, 5.0)
    free(t, 0.0{checked})
"""
    with pytest.raises(CompileError, match="'t' .* is not provably restored"):
        compile_source(source.format(checked=""), "f", "re.py")
    program = compile_source(source.format(checked=", checked=True"), "f", "re.py")
    with pytest.raises(ProgramFault, match="ancilla t does not hold 0.0"):
        run(program, {"y": 1.0})


def test_a_variable_allocation_value_keeps_its_guards():
    program = compile_source(HEADER + """@reversible
def f(y: Fixed, x: Fixed):
    t = ancilla(x)
    y += t
    free(t, x)
""", "f", "var.py")
    assert "ancilla t must be zero here" in program.pal
    assert run(program, {"x": 1.5}, reverse_check=True).values["y"] == 1.5


def test_without_checks_a_wrong_free_surfaces_as_unrestored_state():
    program = compile_source(CHECKED, "f", "anc.py", checks=False)
    assert "trap" not in program.pal
    result = run(program, {"x": 2.0})  # no fault at the free ...
    t = program.lowered.layouts["f"].scalars["t"].register
    assert int(result.machine.bank_word("R", t)[0]) != 0  # ... the ancilla is left holding 1.0


def _i(text: str, label: str = "") -> Instr:
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


def test_peephole_cancels_inverse_pairs_only_across_commuting_code():
    code = [_i("sllx $2 $14 32"), _i("add $24 $2"), _i("sllx $2 $14 32"),
            _i("li $24 2.0"), _i("sllx $2 $14 32"), _i("adddiv $21 $2 $24"),
            _i("sllx $2 $14 32")]
    kept = [i.text() for i in cancel_inverse_pairs(code)]
    assert kept == ["sllx    $2 $14 32", "add     $24 $2", "li      $24 2.0",
                    "adddiv  $21 $2 $24", "sllx    $2 $14 32"]
    # not across a write of what it reads, a label, or a branch; never a faulting one
    for blocked in ([_i("li $3 1.0"), _i("add $3 $4"), _i("li $3 -1.0")],
                    [_i("li $3 1.0"), _i("add $5 $4", label="L1"), _i("li $3 -1.0")],
                    [_i("li $3 1.0"), _i("bne $5 $0 L1"), _i("li $3 -1.0")],
                    [_i("adddiv $3 $4 $5"), _i("subdiv $3 $4 $5")]):
        assert cancel_inverse_pairs(blocked) == blocked


# --- random programs: the optimized lowering computes the plain lowering's bits ------------

_CALLEE = """@reversible
def g(y: Fixed, x: Fixed):
    y += sin(x) / 2.0
    y -= x / 4.0

"""
_CONDITIONS = ["d > 0.1 and n < 2", "not (d < -0.2) or n == 0", "abs(d) > 0.3",
               "d > 0.5 or d < -0.5 and n != 1", "n >= 2"]


@st.composite
def _optimizable(draw, depth=0, counter=None):
    """Ancillas in routines, calls and uncalls of an inlinable function, ifs on compound
    conditions, while loops with a compound condition, for loops over Int ranges."""
    counter = counter if counter is not None else [0]
    pad = "    " * (depth + 1)
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 5 if depth < 2 else 2))
        target = draw(st.sampled_from("abc"))
        x = draw(st.sampled_from([v for v in "abcd" if v != target]))
        y = draw(st.sampled_from([v for v in "abcd" if v != target]))
        if kind == 0:
            expr = draw(st.sampled_from([f"sin({x}) * cos({y})", f"{x} / 4.0",
                                         f"0.25 * {x} - {y} / 8.0", f"{x} * 0.0625 * n"]))
            lines.append(f"{pad}{target} {draw(st.sampled_from('+-'))}= {expr}")
        elif kind == 1:
            counter[0] += 1
            t = f"t{counter[0]}"
            lines += [f"{pad}with routine():", f"{pad}    {t} = ancilla(0.0)",
                      f"{pad}    {t} += atan({x}) * 0.5", f"{pad}{target} += {t} * {y}",
                      f"{pad}~routine"]
        elif kind == 2:
            lines.append(f"{pad}{draw(st.sampled_from(['', '~']))}g({target}, {x})")
        elif kind == 3:
            lines += [f"{pad}if {draw(st.sampled_from(_CONDITIONS))}:",
                      draw(_optimizable(depth + 1, counter)), f"{pad}else:",
                      draw(_optimizable(depth + 1, counter))]
        elif kind == 4:
            counter[0] += 1
            k = f"k{counter[0]}"
            lines += [f"{pad}{k} = ancilla(0)",
                      f"{pad}while (({k} < n) and (abs(d) < 10.0), {k} != 0):",
                      f"{pad}    {k} += 1", draw(_optimizable(depth + 1, counter)),
                      f"{pad}free({k}, n, checked=True)"]
        else:
            counter[0] += 1
            i = f"i{counter[0]}"
            lines += [f"{pad}for {i} in range(n):", draw(_optimizable(depth + 1, counter)),
                      f"{pad}    {target} += {i} * 0.125"]
    return "\n".join(lines)


@settings(max_examples=30, deadline=None)
@given(_optimizable(), st.lists(st.sampled_from([-0.75, -0.25, 0.0, 0.5, 1.0]), min_size=4,
                                max_size=4), st.integers(0, 3), st.sampled_from([32, 64]))
def test_optimized_programs_give_the_plain_lowerings_bits(body, values, n, width):
    source = HEADER + _CALLEE + "@reversible\ndef f(a: Fixed, b: Fixed, c: Fixed, d: Fixed, " \
        "n: Int):\n" + body + "\n"
    inputs = {**dict(zip("abcd", values)), "n": n}
    results = []
    for options in ({}, {"checks": False}, {"level": 1}, {"level": 0, "inline": False}):
        program = compile_source(source, "f", "opt.py", width=width, **options)
        results.append(run(program, inputs, width=width, reverse_check=True))
    # (not fewer steps in every case: a loop that runs zero times still pays for the
    # constants its function loads once)
    assert all(r.values == results[0].values for r in results), source


def test_a_loop_with_its_own_ancilla_still_cancels_against_its_inverse():
    # the ancilla t is the loop body's own: its allocation does not block the pair
    # (for loop, ~routine's inverted for loop), so s is proven and keeps no guard
    program = compile_source(HEADER + """@reversible
def f(y: Fixed, x: Fixed, n: Int):
    s = ancilla(0.0)
    with routine():
        for i in range(n):
            with routine():
                t = ancilla(0.0)
                t += sin(x)
            s += t * x
            ~routine
    y += s
    ~routine
    free(s, 0.0)
""", "f", "loop.py")
    assert "leaves it zero" not in program.pal and "must be zero" not in program.pal
    result = run(program, {"x": 0.5, "n": 3}, reverse_check=True)
    assert abs(result.values["y"] - 3 * math.sin(0.5) * 0.5) < 1e-3
