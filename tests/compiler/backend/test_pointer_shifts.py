"""``pointers._shifted_term`` (-O2): a pointer's strided term put in by one shift.

A pointer starts from zero, so its first term of stride 2^s (or 2^s + 1) is ``sllx P v s``
(and one ``add P v``) instead of 2^s additions; a stride of another form keeps them.  The
words are -O0's, values and gradients.
"""
from __future__ import annotations

import pytest

from revasm.compiler import compile_source
from revasm.programs import grad_program, read_values, run_program

SOURCE = """from revasm.compiler import Array, Fixed, Int, Loss, reversible

W = {width}


@reversible
def term(m: Fixed, x: Array[Fixed, 4, W], i: Int):
    m += x[i, 0] * x[i, 1]
    m += x[i, 1] * x[i, 0]
    m += x[i, 1]


@reversible
def f(out: Loss, x: Array[Fixed, 4, W]):
    for i in range(4):
        term(out, x, i)
"""


def _setup(width: int) -> list[list[str]]:
    """The callee's code between its portal and its first load: the pointer's setup."""
    pal = compile_source(SOURCE.format(width=width), "f", "shifts.py", level=2,
                         inline=False).lowered.pal
    body = pal.split("f_term:", 1)[1].splitlines()[2:]
    lines = [line.split(";")[0].split() for line in body]
    return lines[:next(n for n, line in enumerate(lines) if line[0] == "exch")]


@pytest.mark.parametrize("width, shape", [
    (2, [("sllx", "1"), ("add",)]),             # 2 i + base
    (4, [("sllx", "2"), ("add",)]),             # 4 i + base
    (3, [("sllx", "1"), ("add",), ("add",)]),   # 2 i + i + base
])
def test_a_stride_of_two_to_a_power_or_one_more_is_shifted_in(width, shape):
    setup = _setup(width)
    assert [tuple(line[:1] + line[3:]) for line in setup] == shape
    pointer, index = setup[0][1], setup[0][2]
    assert all(line[1] == pointer for line in setup)
    if width == 3:
        assert setup[1][2] == index  # the + 1 adds the index itself


def test_another_stride_keeps_its_multiplication():
    assert not any(line[0] == "sllx" for line in _setup(6))
    assert any(line[0] == "addmul" for line in _setup(6))


@pytest.mark.parametrize("width", [2, 3, 6])
def test_the_words_are_the_plain_lowerings(width):
    inputs = {"x": [[0.25 * (r + 1) - 0.1 * c for c in range(width)] for r in range(4)]}
    words = {}
    for level in (0, 2):
        program = compile_source(SOURCE.format(width=width), "f", "shifts.py", width=64,
                                 for_gradient=True, level=level, inline=False)
        run = run_program(program, inputs, width=64, reverse_check=True)
        gradient = grad_program(program, inputs)
        words[level] = (read_values(program, run.machine, exact=True), gradient.exact.loss,
                        dict(gradient.exact.gradient))
    assert words[2] == words[0]
