"""The -O2 passes added for lean programs (issue 39): each on small cases that pin what it
removes and what it must keep, and on programs that give -O0's words in fewer steps.

``backend/stack_slots.py`` (a push and a pass of one register through one stack slot),
``backend/guard_reuse.py`` (a bounds guard that the run's first and last already make),
``bitwise.compare_both_ways`` (an equality without a difference), the and/or chain's
registers, ``peephole.cancel_exchange_pairs`` (an element moved back and in again) and an
``if``'s condition guards hoisted out of its loop (``hoisting.py``).
"""
from __future__ import annotations

import pytest

from revasm.compiler import compile_source
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.stack_slots import cancel_stack_exchanges
from revasm.programs import ProgramFault, grad_program, read_values, run_program

HEADER = ("from revasm.compiler import (Array, Fixed, Int, Loss, Out, ancilla, free,\n"
          "                              reversible, routine, sin)\n\nN = 6\n\n")


def _i(text: str, label: str = "") -> Instr:
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


def _code(*lines: str) -> list[Instr]:
    return [_i(line) for line in lines]


def _texts(code: list[Instr]) -> list[str]:
    return [" ".join(i.text().split()) for i in code]


# --- stack_slots.py ---------------------------------------------------------------------

def test_a_push_and_a_pass_of_one_register_through_one_slot_cancel():
    code = _code("exch $12 $1", "addi $1 1", "exch $13 $1", "addi $1 1", "exch $2 $1",
                 "exch $12 $1", "addi $1 -1", "exch $13 $1", "addi $1 1", "bra f_g")
    # $13 is pushed at slot 1 and passed back from slot 1: both go; $12 is pushed at slot 0
    # and given the argument of slot 2: both stay
    assert _texts(cancel_stack_exchanges(code)) == [
        "exch $12 $1", "addi $1 1", "addi $1 1", "exch $2 $1", "exch $12 $1",
        "addi $1 -1", "addi $1 1", "bra f_g"]


@pytest.mark.parametrize("between", [
    "add $13 $5",        # the register is used
    "exch $7 $1",        # another register in the same slot
    "exch $7 $20",       # memory through another register (could be the slot)
    "add $1 $20",        # the stack pointer moved by a register
    "bne $5 $0 L1",      # a branch
])
def test_pushes_and_passes_stay_across_what_touches_the_register_or_the_slot(between):
    code = _code("exch $13 $1", between, "exch $13 $1")
    assert cancel_stack_exchanges(code) == code


def test_a_label_between_keeps_the_pair_and_another_slot_is_not_the_same():
    labelled = [_i("exch $13 $1"), _i("addi $1 1", label="L1"), _i("addi $1 -1"),
                _i("exch $13 $1")]
    assert cancel_stack_exchanges(labelled) == labelled
    moved = _code("exch $13 $1", "addi $1 1", "exch $13 $1")
    assert cancel_stack_exchanges(moved) == moved


CALLS = """
@reversible
def g(out: Fixed, x: Array[Fixed, N], y: Array[Fixed, N], i: Int):
    with routine():
        t = ancilla(0.0)
        t += x[i] * y[i]
    out += sin(t)
    ~routine


@reversible
def f(out: Loss, x: Array[Fixed, N], y: Array[Fixed, N]):
    for i in range(N):
        g(out, x, y, i)
"""
XY = {"x": [0.5, -1.0, 2.0, 0.25, 1.5, -0.75], "y": [1.5, 2.0, -0.5, 4.0, 0.125, 1.0]}


def _words(source: str, level: int, inputs: dict) -> tuple[tuple, int]:
    program = compile_source(HEADER + source, "f", "t.py", width=64, for_gradient=True,
                             level=level)
    result = run_program(program, inputs, width=64, reverse_check=True)
    gradient = grad_program(program, inputs)
    assert "call g" in program.pal  # a portal call at every level (g's ancilla is a product's)
    return ((read_values(program, result.machine, exact=True), gradient.exact.loss,
             dict(gradient.exact.gradient)), result.steps)


def test_calls_whose_arguments_sit_in_the_callees_registers_give_the_same_gradient_words():
    words0, steps0 = _words(CALLS, 0, XY)
    words2, steps2 = _words(CALLS, 2, XY)
    assert words2 == words0
    assert steps2 < steps0


# --- guard_reuse.py ---------------------------------------------------------------------

REUSE = """
@reversible
def f(out: Out, x: Array[Fixed, N], y: Array[Fixed, N], k: Int):
    with routine():
        a = ancilla(0.0)
        b = ancilla(0.0)
        a += x[k]
        b += y[k] * a
    out += x[k] + y[k]
    ~routine
"""


def _guards(pal: str, array: str) -> int:
    """How many bounds guards of ``array`` (each checks the index below 0 and above)."""
    return sum(1 for line in pal.splitlines() if f"bounds of {array}" in line
               and line.split()[1] == "bltz")


def test_a_runs_guards_are_made_at_its_first_and_last_access_only():
    plain = compile_source(HEADER + REUSE, "f", "t.py", width=64, level=0).pal
    lean = compile_source(HEADER + REUSE, "f", "t.py", width=64, level=2).pal
    # -O0: x[k] at a, at out, in the uncomputed a; y[k] at b, at out, in the uncomputed b
    assert _guards(plain, "x") + _guards(plain, "y") == 6
    # -O2: the first (a += x[k]) and the last (the uncomputed a -= x[k]); one guard of
    # k against N serves both arrays
    assert _guards(lean, "x") + _guards(lean, "y") == 2


WRITTEN = """
@reversible
def f(out: Out, x: Array[Fixed, N], y: Array[Fixed, N], k: Int):
    out += x[k]
    out += y[k]
    out += x[k]
    k += 1
    out += x[k]
    out += y[k]
    out += x[k]
    k -= 1
"""


def test_a_write_of_the_index_ends_the_run():
    plain = compile_source(HEADER + WRITTEN, "f", "t.py", width=64, level=0).pal
    lean = compile_source(HEADER + WRITTEN, "f", "t.py", width=64, level=2).pal
    assert _guards(plain, "x") + _guards(plain, "y") == 6
    # two runs of three (k changes between them): each keeps its first and last guard
    assert _guards(lean, "x") + _guards(lean, "y") == 4
    for k in (2, 4):
        words = [read_values(p, run_program(p, {**XY, "k": k}, width=64,
                                            reverse_check=True).machine, exact=True)
                 for p in (compile_source(HEADER + WRITTEN, "f", "t.py", width=64, level=level)
                           for level in (0, 2))]
        assert words[0] == words[1]
    for level in (0, 2):  # k = 5: the second run's first access is the bad one
        program = compile_source(HEADER + WRITTEN, "f", "t.py", width=64, level=level)
        with pytest.raises(ProgramFault, match="line 13"):
            run_program(program, {**XY, "k": 5}, width=64)


@pytest.mark.parametrize(("k", "level"), [(6, 0), (6, 2), (-1, 0), (-1, 2)])
def test_a_bad_index_faults_at_the_first_access_with_the_same_message(k, level):
    program = compile_source(HEADER + REUSE, "f", "t.py", width=64, level=level)
    with pytest.raises(ProgramFault) as fault:
        run_program(program, {**XY, "k": k}, width=64)
    assert "index k of x[k] at line 12 is" in str(fault.value)


def test_reused_guards_give_the_same_words_in_fewer_steps():
    steps = []
    for level in (0, 2):
        program = compile_source(HEADER + REUSE, "f", "t.py", width=64, level=level)
        result = run_program(program, {**XY, "k": 3}, width=64, reverse_check=True)
        steps.append((read_values(program, result.machine, exact=True), result.steps))
    assert steps[1][0] == steps[0][0]
    assert steps[1][1] < steps[0][1]


# --- conditions: both-ways comparisons, the and/or chain, exchange pairs ------------------

def test_an_equality_is_two_set_less_thans_not_a_difference():
    source = """
@reversible
def f(out: Out, a: Int, b: Int):
    out ^= (a == b) and (a != 3)
"""
    plain = compile_source(HEADER + source, "f", "t.py", width=64, level=0).pal
    lean = compile_source(HEADER + source, "f", "t.py", width=64, level=2).pal
    assert "sub " in plain  # -O0: a - b, its sign tests, and the difference cleared
    assert "sub " not in lean
    for a, b in ((2, 2), (3, 3), (1, 2), (-5, 7), (7, -5)):
        outs = []
        for level in (0, 2):
            program = compile_source(HEADER + source.replace("out: Out", "out: Int"), "f",
                                     "t.py", width=64, level=level)
            result = run_program(program, {"a": a, "b": b}, width=64, reverse_check=True)
            outs.append(read_values(program, result.machine, exact=True))
        assert outs[0] == outs[1]
        assert outs[0]["out"] == int(a == b and a != 3)


def test_an_element_moved_back_and_in_again_stays_in_its_register():
    from revasm.compiler.backend.peephole import cancel_exchange_pairs
    code = _code("exch $5 $14", "sltx $2 $5 $6", "exch $5 $14", "andx $3 $2 $4",
                 "exch $5 $14", "sltx $2 $5 $6", "exch $5 $14")
    assert _texts(cancel_exchange_pairs(code)) == [
        "exch $5 $14", "sltx $2 $5 $6", "andx $3 $2 $4", "sltx $2 $5 $6", "exch $5 $14"]


@pytest.mark.parametrize("between", ["add $5 $2", "addi $14 1", "exch $7 $20", "bne $2 $0 L1"])
def test_exchange_pairs_stay_across_what_touches_the_register_the_address_or_memory(between):
    from revasm.compiler.backend.peephole import cancel_exchange_pairs
    code = _code("exch $5 $14", "sltx $2 $5 $6", "exch $5 $14", between, "exch $5 $14",
                 "exch $5 $14")
    kept = cancel_exchange_pairs(code)
    assert _texts(kept)[:4] == ["exch $5 $14", "sltx $2 $5 $6", "exch $5 $14", between]


def test_an_exchange_pair_not_made_before_stays():
    from revasm.compiler.backend.peephole import cancel_exchange_pairs
    code = _code("exch $5 $14", "sltx $2 $5 $6", "exch $5 $14")  # a load, a store
    assert cancel_exchange_pairs(code) == code


IF_IN_LOOP = """
@reversible
def f(out: Out, x: Array[Fixed, N], flags: Array[Int, N], m: Int):
    for i in range(m):
        if flags[i]:
            out += x[i]
"""


def test_an_ifs_condition_guards_are_hoisted_out_of_its_loop():
    def guards(level: int) -> int:
        pal = compile_source(HEADER + IF_IN_LOOP, "f", "t.py", width=64, level=level).pal
        return _guards(pal, "flags")
    # -O0: the test's guard and the assertion's after the join; -O2: one, at the entry
    assert guards(0) == 2 and guards(2) == 1
    inputs = {"x": XY["x"], "flags": [1, 0, 1, 1, 0, 1]}
    words = []
    for level in (0, 2):
        program = compile_source(HEADER + IF_IN_LOOP, "f", "t.py", width=64, level=level)
        result = run_program(program, {**inputs, "m": 6}, width=64, reverse_check=True)
        words.append(read_values(program, result.machine, exact=True))
        with pytest.raises(ProgramFault, match="flags"):
            run_program(program, {**inputs, "m": 7}, width=64)
    assert words[0] == words[1]


# --- pointers.py: a pointer per constant offset in a loop ----------------------------------

NEIGHBOURS = """
@reversible
def f(out: Out, x: Array[Fixed, N], y: Array[Fixed, N], m: Int):
    for i in range(m):
        y[i] += x[i] * x[i + 1]
"""


def test_a_loop_reading_two_offsets_of_an_array_keeps_a_pointer_at_each():
    lean = compile_source(HEADER + NEIGHBOURS, "f", "t.py", width=64, level=2).pal
    body = lean[lean.index("_top:"):lean.index("_bottom:")]
    # no pointer moved to x[i + 1] and back around the access: it has its own
    assert "addi" not in "\n".join(line for line in body.splitlines() if "x[i + 1]" in line)
    assert "at +1" in lean  # the second pointer's setup
    words = []
    for level in (0, 2):
        program = compile_source(HEADER + NEIGHBOURS, "f", "t.py", width=64, level=level)
        result = run_program(program, {**XY, "m": 5}, width=64, reverse_check=True)
        words.append((read_values(program, result.machine, exact=True), result.steps))
    assert words[0][0] == words[1][0] and words[1][1] < words[0][1]


CONSTANT_ELEMENTS = """
@reversible
def f(out: Out, x: Array[Fixed, N], y: Array[Fixed, N]):
    with routine():
        a = ancilla(0.0)
        b = ancilla(0.0)
        a += x[3] * y[1]
        b += x[3] * a
        a += x[3] * y[2]
    out += b + x[3]
    ~routine
"""


def test_a_constant_element_read_often_gets_a_pointer_outside_loops():
    lean = compile_source(HEADER + CONSTANT_ELEMENTS, "f", "t.py", width=64, level=2).pal
    assert "pointer into x, at +3" in lean
    # no move of x's base register to x[3] and back: the pointer is there already
    assert "addi    $13 3" not in lean
    words = []
    for level in (0, 2):
        program = compile_source(HEADER + CONSTANT_ELEMENTS, "f", "t.py", width=64,
                                 level=level, for_gradient=True)
        gradient = grad_program(program, XY)
        words.append((gradient.exact.loss, dict(gradient.exact.gradient)))
    assert words[0] == words[1]


def test_an_ifs_element_condition_is_moved_into_a_register_once():
    lean = compile_source(HEADER + IF_IN_LOOP, "f", "t.py", width=64, level=2).pal
    loads = [line for line in lean.splitlines() if "load flags[i]" in line]
    # in before the test, out after the join; no bit computed from it and cleared again
    assert len(loads) == 2 and all(line.split()[0] == "exch" for line in loads)
    flag_in_register = IF_IN_LOOP.replace("flags: Array[Int, N], m: Int", "flag: Int, m: Int"
                                          ).replace("if flags[i]:", "if flag:")
    pal = compile_source(HEADER + flag_in_register, "f", "t.py", width=64, level=2).pal
    assert not any(line.split()[0] == "xor" for line in pal.splitlines()
                   if line.strip() and not line.startswith((";", ".")) and
                   len(line.split()) > 1 and "t.py:10" in line)
