"""run_program's reverse check compares the whole machine, the high memory words included.

A machine whose backward run left a word behind above the dense memory (where a downward
stack from address 0 lives) must fail the check: the engine is wrapped so that its backward
run writes one such word, the injected fault the check exists to catch.
"""
from __future__ import annotations

import pytest

import revasm.programs as programs
from revasm.compiler import compile_source
from revasm.sim.engine import write_place

SOURCE = "from revasm.compiler import *\n\n@reversible\ndef f(y: Int):\n    y += 5\n"


def _leaving_a_word_at(monkeypatch: pytest.MonkeyPatch, address: int) -> None:
    """Make every backward run leave 7 at ``address``."""
    real_load = programs.load

    def load(*args, **kwargs):
        machine = real_load(*args, **kwargs)
        real_run = machine.run

        def run(direction: int = 1, **options):
            real_run(direction, **options)
            if direction == -1:
                write_place(machine, None, address, 7)
        machine.run = run
        return machine
    monkeypatch.setattr(programs, "load", load)


@pytest.mark.parametrize("engine", ["reference", "vector"])
def test_a_word_left_at_the_top_of_memory_fails_the_reverse_check(monkeypatch, engine):
    program = compile_source(SOURCE, "f", "top.py")
    assert programs.run_program(program, {"y": 1}, reverse_check=True,
                                engine=engine).values == {"y": 6}
    _leaving_a_word_at(monkeypatch, 2**32 - 1)
    with pytest.raises(AssertionError, match="did not restore.*memory differs at 4294967295"):
        programs.run_program(program, {"y": 1}, reverse_check=True, engine=engine)


def test_a_word_left_in_the_dense_memory_fails_the_reverse_check_too(monkeypatch):
    program = compile_source(SOURCE, "f", "low.py")
    _leaving_a_word_at(monkeypatch, len(program.image))
    with pytest.raises(AssertionError, match="did not restore.*memory differs"):
        programs.run_program(program, {"y": 1}, reverse_check=True, engine="reference")
