"""Constants that do not fit the word are compile errors; whole powers are products.

A literal the target word cannot hold would wrap silently in an LI: the compiler
stops at the literal instead (file:line:col, the range, the wider width as a hint).
``x ** n`` for a whole ``n`` is a chain of products, right for a negative ``x``
(pow's exp/log would fault there), and ``x ** -n`` is its reciprocal.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler import CompileError, compile_source
from revasm.isa.fixed_point import WordFormat
from revasm.programs import run_program as run

HEADER = "from revasm.compiler import *\n\n"


def _compile(body: str, params: str, width: int = 32):
    source = HEADER + f"@reversible\ndef f({params}):\n    {body}\n"
    return compile_source(source, "f", "lit.py", width=width)


@pytest.mark.parametrize("width, body, params, shown, wider", [
    (32, "y += 123456789012345678901234", "y: Int", "does not fit a 32-bit Int", False),
    (32, "y += 2147483648", "y: Int", "does not fit a 32-bit Int", True),
    (64, "y += 2**70", "y: Int", "does not fit a 64-bit Int", False),
    (32, "y += 40000.0", "y: Fixed", "does not fit Q16.16", True),
    (32, "y += x * 40000", "y: Fixed, x: Fixed", "does not fit Q16.16", True),
    (64, "y ^= 2**64", "y: Int", "does not fit", False),
])
def test_a_literal_the_word_cannot_hold_is_an_error_at_the_literal(width, body, params, shown,
                                                                   wider):
    with pytest.raises(CompileError) as info:
        _compile(body, params, width)
    text = info.value.format()
    assert shown in text and "lit.py:5:" in text
    assert ("--width 64" in text) == wider  # offered only where W = 64 holds the literal


@pytest.mark.parametrize("width, body, params", [
    (32, "y += 2147483647", "y: Int"), (32, "y += -2147483648", "y: Int"),
    (32, "y ^= 4294967295", "y: Int"), (32, "y += 32767.5", "y: Fixed"),
    (64, "y += 40000.0", "y: Fixed"),
    # an Int times a constant beyond Q16.16 is shifts and adds (integer_arithmetic.py)
    (32, "y += i * 40000", "y: Int, i: Int")])
def test_literals_at_the_edges_of_the_range_compile(width, body, params):
    assert _compile(body, params, width).pal.count("\n") > 3


POWERS = HEADER + """\
@reversible
def f(x: Fixed, a: Fixed, b: Fixed, c: Fixed, d: Fixed):
    a += x ** 3
    b += x ** 4
    c += x ** -3
    d += x ** 0
"""


@settings(max_examples=30, deadline=None)
@given(raw=st.integers(-3 << 16, 3 << 16).filter(lambda r: abs(r) >= 1 << 14))
def test_whole_powers_of_any_sign_are_products(raw):
    fmt = WordFormat(32)
    x = raw / 65536
    program = compile_source(POWERS, "f", "powers.py", width=32)
    values = run(program, {"x": x}, reverse_check=True).values
    step = 1 / 65536
    assert values["a"] == pytest.approx(x ** 3, abs=8 * step * max(1, x * x))
    assert values["b"] == pytest.approx(x ** 4, abs=16 * step * max(1, abs(x) ** 3))
    assert values["c"] == pytest.approx(x ** -3, abs=64 * step * max(1, abs(x) ** -4))
    assert values["d"] == 1.0
    assert fmt.from_real(values["a"]) != 0 or abs(x ** 3) < step


def test_a_fractional_power_of_a_negative_base_still_faults():
    from revasm.programs import ProgramFault
    program = compile_source(HEADER + "@reversible\ndef f(x: Fixed, y: Fixed):\n"
                             "    y += x ** 2.5\n", "f", "frac.py")
    with pytest.raises(ProgramFault, match="pow of negative base"):
        run(program, {"x": -1.5})
    assert run(program, {"x": 2.25}).values["y"] == pytest.approx(2.25 ** 2.5, abs=1e-3)


def test_an_all_ones_mask_flips_every_bit_and_back():
    program = _compile("y ^= 4294967295", "y: Int", 32)
    assert run(program, {"y": 5}, reverse_check=True).values["y"] == ~5


@pytest.mark.parametrize("x", [-1.5, -0.75, 0.75, 2.0])
def test_whole_powers_of_a_negative_base_are_differentiable(x):
    import revasm
    program = compile_source(HEADER + "@reversible\ndef f(x: Fixed, y: Loss):\n"
                             "    y += x ** 3 + x ** -2\n", "f", "g.py", width=64,
                             for_gradient=True)
    result = revasm.grad_program(program, {"x": x})
    assert result.loss == pytest.approx(x ** 3 + x ** -2, abs=1e-8)
    assert result.gradient["x"] == pytest.approx(3 * x * x - 2 * x ** -3, abs=1e-8)
