"""The peephole's inverse pairs (compiler/backend/peephole.py): one scan leaves nothing that
a second would cancel, on random straight-line code dense in pairs."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler.backend import peephole
from revasm.compiler.backend.code import Instr

REGISTERS = ("$2", "$3", "$4", "$5")


@st.composite
def instructions(draw: st.DrawFn) -> Instr:
    kind = draw(st.sampled_from(["ADD", "SUB", "XOR", "SWAP", "ADDMUL", "ADDI", "XORI",
                                 "LI", "NEG", "SLLX"]))
    if kind in ("ADDI", "XORI", "LI"):
        return Instr(kind, (draw(st.sampled_from(REGISTERS)),
                            str(draw(st.sampled_from([1, -1, 2, 5])))))
    if kind == "NEG":
        return Instr(kind, (draw(st.sampled_from(REGISTERS)),))
    if kind == "SLLX":
        a, b = draw(st.permutations(REGISTERS))[:2]
        return Instr(kind, (a, b, str(draw(st.sampled_from([1, 32])))))
    count = 3 if kind == "ADDMUL" else 2
    return Instr(kind, tuple(draw(st.permutations(REGISTERS))[:count]))


@st.composite
def dense_code(draw: st.DrawFn) -> list[Instr]:
    """Instructions with many of their inverses inserted anywhere (before or after)."""
    code: list[Instr] = []
    for instr in draw(st.lists(instructions(), min_size=1, max_size=140)):
        code.append(instr)
        inverse = peephole._inverse(instr)
        if inverse is not None and draw(st.booleans()):
            code.insert(draw(st.integers(0, len(code))), Instr(*inverse))
    return code


@settings(max_examples=300, deadline=None)
@given(dense_code())
def test_one_scan_leaves_no_inverse_pair_to_cancel(code):
    once = peephole.cancel_inverse_pairs(code)
    chain = peephole.Chain(list(once))
    assert not peephole._drop_pairs(chain, peephole._partner)
    assert len(once) <= len(code) and (len(code) - len(once)) % 2 == 0
