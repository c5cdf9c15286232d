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
    chain = peephole.Chain(list(once)).with_masks()
    assert not peephole._drop_pairs(chain, peephole._partner)
    assert len(once) <= len(code) and (len(code) - len(once)) % 2 == 0


def _drop_pairs_asking_again(chain, partner) -> bool:
    """The scan as it was before answers were kept: every instruction asked again after
    each pair near it -- the reference the kept answers must reproduce exactly."""
    dropped = False
    k = chain.first
    while k != chain.end:
        j, _last = partner(chain, k)
        if j is None:
            k = chain.next[k]
            continue
        resume = chain.back(k, peephole.WINDOW)
        chain.drop(j)
        chain.drop(k)
        dropped = True
        k = chain.first if resume == k else resume
    return dropped


@settings(max_examples=300, deadline=None)
@given(dense_code(), st.sampled_from(["inverse", "exchange"]))
def test_kept_answers_drop_exactly_the_pairs_asking_again_drops(code, kind):
    if kind == "exchange":  # exchanges of a few registers through a few addresses
        code = [Instr("EXCH", (f"${4 + k % 3}", f"${8 + k % 2}")) if k % 3 == 0 else instr
                for k, instr in enumerate(code)]
    partner = peephole._partner if kind == "inverse" else peephole._exchange_partner
    kept, again = peephole.Chain(list(code)).with_masks(), peephole.Chain(list(code)).with_masks()
    peephole._drop_pairs(kept, partner)
    _drop_pairs_asking_again(again, partner)
    assert kept.live() == again.live()
