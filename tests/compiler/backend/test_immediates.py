"""Immediates (``compiler/backend/immediates.py``): an ``addi`` too wide for ADDI's field is
written as ``li``, so a program with a large array assembles and runs (found by the fuzz
campaign's Janus target: ``int x[700008]`` gave "the compiled program does not assemble")."""
from __future__ import annotations

import pytest

from revasm.compiler.api import compile_janus_source
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.immediates import IMMEDIATE_RANGE, widened_immediates
from revasm.programs import run_program

LARGE = """procedure main()
    int x[40000]
    int y[3]
    local int i = 39999
        x[i] += 3
        y[2] += x[i]
    delocal int i = 39999
"""


def test_only_amounts_outside_the_field_become_li():
    low, high = IMMEDIATE_RANGE
    code = [Instr("ADDI", ("$2", str(value))) for value in (low, high, low - 1, high + 1)]
    code.append(Instr("ADDI", ("$3", "symbol")))
    assert [i.mnemonic for i in widened_immediates(code)] == ["ADDI", "ADDI", "LI", "LI", "ADDI"]
    assert [i.operands for i in widened_immediates(code)] == [i.operands for i in code]


@pytest.mark.parametrize("level", [0, 2])
def test_a_bounds_check_of_a_large_array_assembles_and_runs(level):
    program = compile_janus_source(LARGE, "large.ja", level=level)
    assert " li " in program.pal and "addi    $2 -40000" not in program.pal
    result = run_program(program, reverse_check=True)
    assert result.values["x"][39999] == 3 and result.values["y"] == [0, 0, 3]
