"""``backend/induction.py`` (-O2): registers a straight-line loop steps alike merged.

What it removes (the dead ``k`` step, the counter's step with the counter moved onto a
pointer in the branches), what it must keep (a loop with a branch in its body, a register
the body reads, an ordered test, a bound the body touches), and programs that give -O0's
words in fewer steps.
"""
from __future__ import annotations

import pytest

from revasm.compiler import compile_source
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.induction import merge_inductions
from revasm.programs import ProgramFault, grad_program, read_values, run_program


def _i(text: str) -> Instr:
    label = ""
    if ":" in text:
        label, text = (part.strip() for part in text.split(":", 1))
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


def _code(*lines: str) -> list[Instr]:
    return [_i(line) for line in lines]


def _texts(code: list[Instr]) -> list[str]:
    return [(f"{i.label}: " if i.label else "") + " ".join(i.text().split()) for i in code]


def _loop(*body: str, top: str = "bne $19 $24 B", bottom: str = "bne $19 $25 T") -> list[str]:
    return ["E: beq $19 $25 S", f"T: {top}", *body, f"B: {bottom}", "S: beq $19 $24 E"]


def test_a_dead_step_and_the_counter_go_onto_the_pointer():
    code = _code("addi $5 1", *_loop("exch $2 $26", "add $12 $2", "exch $2 $26",
                                     "addi $17 1", "addi $26 -1", "addi $19 -1"),
                 "addi $5 -1")
    assert _texts(merge_inductions(code)) == [
        "addi $5 1",
        "add $17 $19",                       # k - (-i): tied to the counter (steps -1)
        "add $25 $26", "sub $25 $19", "add $24 $26", "sub $24 $19", "sub $19 $26",
        "E: beq $26 $25 S", "T: bne $26 $24 B",
        "exch $2 $26", "add $12 $2", "exch $2 $26", "addi $26 -1",
        "B: bne $26 $25 T", "S: beq $26 $24 E",
        "add $19 $26", "add $24 $19", "sub $24 $26", "add $25 $19", "sub $25 $26",
        "sub $17 $19",
        "addi $5 -1"]


def test_a_loop_without_its_skip_pair_is_merged_too():
    code = _code("T: bne $19 $24 B", "exch $2 $20", "addi $17 1", "addi $20 1",
                 "addi $19 1", "B: bne $19 $25 T")
    out = _texts(merge_inductions(code))
    assert "addi $17 1" not in out and "addi $19 1" not in out
    assert "addi $20 1" in out and "exch $2 $20" in out


@pytest.mark.parametrize("body", [
    ("exch $2 $20", "add $12 $17", "addi $17 1", "addi $20 1"),   # k is read
    ("exch $2 $20", "addi $17 1", "addi $17 1", "addi $20 1"),    # k stepped twice
    ("add $12 $20", "addi $17 1", "addi $20 1"),                  # $20 read as a value
    ("exch $2 $20", "addi $17 1", "addi $20 2"),                  # stepped unalike
])
def test_what_must_stay_a_step_of_its_own(body):
    code = _code(*_loop(*body, "exch $3 $19"))  # the counter read: no counter merge
    out = _texts(merge_inductions(code))
    assert "addi $17 1" in out and "exch $3 $19" in out


def test_a_loop_with_a_branch_in_its_body_is_left_alone():
    code = _code(*_loop("exch $2 $20", "G: bltz $2 Trap", "addi $17 1", "addi $20 1",
                        "addi $19 1"))
    assert merge_inductions(code) == code


def test_an_ordered_test_or_a_touched_bound_keeps_the_counter():
    ordered = _code(*_loop("exch $2 $20", "addi $20 1", "addi $19 1",
                           bottom="bgtz $19 T"))
    assert "addi $19 1" in _texts(merge_inductions(ordered))
    touched = _code(*_loop("exch $2 $20", "add $25 $2", "addi $20 1", "addi $19 1"))
    assert "addi $19 1" in _texts(merge_inductions(touched))


SOURCE = """from revasm.compiler import ROT, Array, Fixed, Int, Loss, ancilla, free, reversible

N = 7
M = 21


@reversible
def f(out: Loss, x: Array[Fixed, N], theta: Array[Fixed, M], w: Array[Fixed, N], n: Int):
    k = ancilla(0)
    for j in range(n):
        for i in range(N - 2, j - 1, -1):
            ROT(x[i], x[i + 1], theta[k])
            k += 1
    free(k, (N - 1) * n - n * (n - 1) // 2, checked=True)
    for i in range(N):
        out += w[i] * x[i]
"""


@pytest.mark.parametrize("n", [0, 1, 4, 6])
def test_a_givens_network_gives_the_same_words_in_fewer_steps(n):
    inputs = {"x": [0.1 * (i + 1) for i in range(7)], "theta": [0.05 * t for t in range(21)],
              "w": [1.0 - 0.1 * i for i in range(7)], "n": n}
    words, steps = {}, {}
    for level in (0, 2):
        program = compile_source(SOURCE, "f", "givens.py", width=64, for_gradient=True,
                                 level=level)
        run = run_program(program, inputs, width=64, reverse_check=True)
        gradient = grad_program(program, inputs)
        words[level] = (read_values(program, run.machine, exact=True), gradient.exact.loss,
                        dict(gradient.exact.gradient))
        steps[level] = run.steps
    assert words[2] == words[0]
    plain = compile_source(SOURCE, "f", "givens.py", width=64, for_gradient=True, level=2)
    text = plain.lowered.pal
    assert "a register stepped alike" in text
    assert steps[2] < steps[0]


# --- control_flow.empty_range_guard: a direction the ranges prove (-O2) ------------------

NESTED = """from revasm.compiler import Array, Int, reversible

N = 6


@reversible
def f(s: Int, x: Array[Int, N], n: Int):
    for j in range(N):
        for i in range(N - 2, j - 1, -1):
            s += x[i]
    for j in range(N):
        for i in range(j, n):
            s += x[j]
"""
WRONG_WAY = "runs the wrong way"


def test_a_direction_the_ranges_prove_has_no_guard_and_another_keeps_it():
    notes = {level: [line for line in compile_source(NESTED, "f", "nested.py", level=level)
                     .lowered.pal.splitlines() if WRONG_WAY in line and "_guard:" in line]
             for level in (0, 2)}
    # -O0 guards both inner loops; -O2 only range(j, n), whose n is not known
    assert [line.split(";")[1].strip() for line in notes[0]] == ["nested.py:9",
                                                                  "nested.py:12"]
    assert [line.split(";")[1].strip() for line in notes[2]] == ["nested.py:12"]


@pytest.mark.parametrize("n", [6, 3])
def test_the_proven_loops_give_the_same_words_and_the_unproven_one_still_faults(n):
    values = {}
    for level in (0, 2):
        program = compile_source(NESTED, "f", "nested.py", level=level)
        inputs = {"x": [1, 2, 3, 4, 5, 6], "n": n}
        if n < 6:  # range(j, n) runs the wrong way once j > n
            with pytest.raises(ProgramFault, match=WRONG_WAY):
                run_program(program, inputs)
            continue
        values[level] = read_values(program, run_program(program, inputs,
                                                         reverse_check=True).machine,
                                    exact=True)
    assert values.get(2) == values.get(0)
