"""``backend/callee_registers.py``: a loop whose body calls a function keeps its bound in a
register the callee never names, and tests once per iteration (-O2); the words are -O0's."""
from __future__ import annotations

import re

from revasm.compiler import compile_source
from revasm.compiler.backend.callee_registers import (
    callee_first,
    named_registers,
    registers_with_callees,
)
from revasm.compiler.backend.code import Instr
from revasm.compiler.frontend.parse import parse_source
from revasm.programs import grad_program, read_values, run_program

HEADER = ("from revasm.compiler import (Array, Fixed, Int, Loss, ancilla, free, reversible,\n"
          "                              routine)\n\n"
          "K = 5\n\n")

# an ancilla that takes a product: the call stays a call (docs/language.md, inlining)
CALLEE = """@reversible
def term(m: Fixed, x: Array[Fixed, K], k: Int):
    with routine():
        c = ancilla(0.0)
        c += x[k] * x[k - 1]
    m += c * 0.5
    ~routine

"""

CALLER = """@reversible
def f(out: Loss, x: Array[Fixed, K], y: Array[Fixed, K]):
    for k in range(1, K):
        term(y[k], x, k)
    for k in range(K):
        out += y[k] * x[k]
"""

RECURSIVE = """@reversible
def down(x: Array[Fixed, K], n: Int):
    if (n > 0, n > 0):
        x[0] += 0.5
        n -= 1
        for k in range(9):  # more iterations than ir/unroll.py unrolls
            down(x, n)
        n += 1

@reversible
def f(out: Loss, x: Array[Fixed, K], y: Array[Fixed, K]):
    n = ancilla(2)
    for k in range(10):
        down(x, n)
    free(n, 2, checked=True)
    out += x[0] * y[1]
"""

INPUTS = {"x": [0.5, -1.0, 2.0, 0.25, 1.5], "y": [1.5, 2.0, -0.5, 4.0, 0.125]}


def _program(source: str, level: int):
    return compile_source(HEADER + source, "f", "t.py", width=64, level=level,
                          for_gradient=True)


def _function_code(pal: str, name: str) -> list[str]:
    lines = pal.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(f"f_{name}:"))
    end = next(k for k, line in enumerate(lines) if line.startswith(f"f_{name}.bot:"))
    return lines[start:end + 1]


def test_named_registers_are_every_register_an_instruction_names():
    code = [Instr("ADDI", ("$29", "5")), Instr("BNE", ("$20", "$29", "L1")),
            Instr("EXCH", ("$2", "$1")), Instr("LI", ("$3", "v_x.0"))]
    assert named_registers(code) == {29, 20, 2, 1, 3}


def test_callees_are_lowered_before_their_callers():
    module = parse_source(HEADER + CALLER + "\n" + CALLEE, "t.py")
    assert callee_first(module, {"f", "term"}) == ["term", "f"]
    known = {"term": frozenset({2, 12, 13, 14})}
    assert registers_with_callees(module, "term", known.get) == {2, 12, 13, 14}
    assert registers_with_callees(module, "f", known.get) is None  # f is not lowered yet


def test_a_loop_around_a_call_holds_its_stop_in_a_register_the_callee_leaves_alone():
    plain = _program(CALLEE + CALLER, 0)
    lean = _program(CALLEE + CALLER, 2)
    callee = named_registers(Instr("X", tuple(re.findall(r"\$\d+", line)))
                             for line in _function_code(lean.pal, "term"))
    caller = _function_code(lean.pal, "f")
    bottoms = [line for line in caller if "_bottom:" in line]
    assert bottoms, "the loop around the call tests once per iteration"
    # bottom: bne COUNTER BOUND top -- the bound's register, not the callee's
    held = {int(re.findall(r"\$(\d+)", line)[1]) for line in bottoms}
    assert held and not held & callee and 0 not in held
    assert not any("_test:" in line for line in caller[:caller.index(bottoms[0])])
    values = [read_values(p, run_program(p, INPUTS, width=64, reverse_check=True).machine,
                          exact=True) for p in (plain, lean)]
    assert values[0] == values[1]
    grads = [grad_program(p, INPUTS, width=64).exact for p in (plain, lean)]
    assert (grads[0].loss, grads[0].gradient) == (grads[1].loss, grads[1].gradient)
    steps = [run_program(p, INPUTS, width=64).steps for p in (plain, lean)]
    assert steps[1] < steps[0]


def test_a_loop_around_a_call_of_its_own_function_keeps_the_while_form():
    lean = _program(RECURSIVE, 2)
    # down's registers are not known while down is lowered: its loop tests three times
    assert any("_test:" in line for line in _function_code(lean.pal, "down"))
    # f's loop calls down, lowered before f: it holds its stop and tests once
    assert not any("_test:" in line for line in _function_code(lean.pal, "f"))
    assert any("_bottom:" in line for line in _function_code(lean.pal, "f"))
    plain = _program(RECURSIVE, 0)
    values = [read_values(p, run_program(p, INPUTS, width=64, reverse_check=True).machine,
                          exact=True) for p in (plain, lean)]
    assert values[0] == values[1]
    grads = [grad_program(p, INPUTS, width=64).exact for p in (plain, lean)]
    assert (grads[0].loss, grads[0].gradient) == (grads[1].loss, grads[1].gradient)
