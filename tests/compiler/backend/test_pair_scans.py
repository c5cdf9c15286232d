"""The compiled pair scans (compiler/backend/pair_scans.py) drop exactly the pairs the
Python scans of peephole.py drop: on random straight-line code dense in inverse pairs,
with exchanges, labels and branches among it, and on a compiled program."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler.backend import lowering, pair_scans
from revasm.compiler.backend.code import Instr

from .test_peephole import dense_code

#: What may stand among the dense code: exchanges of a few registers through a few
#: addresses (with an inverse pair or an exchange pair between them), labels and branches.
EXTRAS = [Instr("EXCH", ("$4", "$8")), Instr("EXCH", ("$5", "$9")), Instr("EXCH", ("$4", "$9")),
          Instr("ADDI", ("$8", "1")), Instr("ADDI", ("$8", "-1")),
          Instr("ADD", ("$2", "$3"), label="top"), Instr("BRA", ("top",)),
          Instr("ADDI", ("$9", "top"))]


@st.composite
def mixed_code(draw: st.DrawFn) -> list[Instr]:
    code = draw(dense_code())
    for _ in range(draw(st.integers(0, 40))):
        code.insert(draw(st.integers(0, len(code))), draw(st.sampled_from(EXTRAS)))
    return code


@settings(max_examples=400, deadline=None)
@given(mixed_code())
def test_the_compiled_scans_drop_the_pairs_the_python_scans_drop(code):
    _scans_agree(code, lowering._pairs_cancelled, lowering._inverse_pairs_cancelled)


def _scans_agree(code: list[Instr], *scans) -> None:
    """Each lowering scan drops the same instructions compiled (from the first) as in
    Python (``compiled_from`` beyond any program)."""
    for scan in scans:
        assert scan(code, compiled_from=0) == scan(code, compiled_from=1 << 62), scan


@st.composite
def labelled_code(draw: st.DrawFn) -> list[Instr]:
    """Mixed code with a label on many of its lines (a compiled if's code has one on most
    of its branches): the compiled scans resume at the label nearest before a dropped
    pair, the Python ones WINDOW before it."""
    code = draw(mixed_code())
    for k in draw(st.lists(st.integers(0, len(code) - 1), max_size=len(code) // 4)):
        i = code[k]
        code[k] = Instr(i.mnemonic, i.operands, label=f"l{k}")
    return code


@settings(max_examples=400, deadline=None)
@given(labelled_code())
def test_the_compiled_scans_resume_at_a_label_and_drop_the_same_pairs(code):
    _scans_agree(code, lowering._pairs_cancelled, lowering._inverse_pairs_cancelled,
                 lowering._stack_pairs_cancelled)


def test_an_exchange_of_no_register_is_left_to_the_python_scans():
    code = [Instr("EXCH", ("$4", "label")), Instr("ADD", ("$2", "$3")),
            Instr("SUB", ("$2", "$3"))]
    assert pair_scans.pairs_cancelled(code, exchanges=True) is None
    assert lowering._pairs_cancelled(code, compiled_from=0) == code[:1]


def test_registers_the_codes_cannot_hold_are_left_to_the_python_scans():
    """A register beyond an int64 mask's bits, one spelled otherwise than ``$n`` (the
    Python exchange scan compares names: ``$03`` is not ``$3`` to it), an instruction too
    short for its fields."""
    exchanged = [Instr("EXCH", ("$3", "$1")), Instr("EXCH", ("$3", "$1"))]
    for odd in [Instr("EXCH", ("$4", "$63")), Instr("ADD", ("$70", "$3")),
                Instr("ADD", ("$03", "$5")), Instr("EXCH", ("$4",)), Instr("ADD", ())]:
        code = [Instr("ADD", ("$2", "$3")), *exchanged, odd, exchanged[0],
                Instr("SUB", ("$2", "$3"))]
        assert pair_scans.pairs_cancelled(code, exchanges=True) is None
        try:
            python = lowering._pairs_cancelled(code, compiled_from=1 << 62)
        except (ValueError, IndexError) as error:
            python = type(error)
        try:
            compiled = lowering._pairs_cancelled(code, compiled_from=0)
        except (ValueError, IndexError) as error:
            compiled = type(error)
        assert compiled == python


def test_a_program_compiles_to_the_same_pal_with_the_compiled_scans(monkeypatch):
    """A Janus program of array updates (the shape whose pairs are most of its code)."""
    from revasm.bench.compile_scale import janus_program
    from revasm.compiler.api import compile_janus_source

    text = janus_program("arrays", 300)
    python = compile_janus_source(text, "arrays.ja").pal
    calls = []

    def counted(code, exchanges, stack=False):
        calls.append((exchanges, stack))
        return scans(code, exchanges, stack)

    def counted_after(code, window, bounds):
        out = after(code, window, bounds)
        calls.append(("after the immediates", out is not None))
        return out
    scans, after = pair_scans.pairs_cancelled, pair_scans.combined_and_cancelled
    monkeypatch.setattr(pair_scans, "pairs_cancelled", counted)
    monkeypatch.setattr(pair_scans, "combined_and_cancelled", counted_after)
    monkeypatch.setattr(lowering, "COMPILED_FROM", 0)
    assert compile_janus_source(text, "arrays.ja").pal == python
    # both scans of the -O2 pipeline ran compiled, the first with the stack slots' scan,
    # the second on the immediates' numbering
    assert calls == [(True, True), ("after the immediates", True)]


def test_the_masked_mnemonics_are_those_the_peephole_has_masks_for():
    from revasm.compiler.backend.peephole import CANCELLABLE, register_masks
    from revasm.isa.table import INSTRUCTIONS

    for entry in INSTRUCTIONS:
        operands = tuple(f"${k + 1}" for k in range(len(entry.fields)))
        masked = register_masks(entry.mnemonic, operands) is not None
        assert masked == (entry.mnemonic in pair_scans._MASKED), entry.mnemonic
    assert CANCELLABLE <= pair_scans._MASKED


def test_warm_compiles_every_loop_a_long_program_uses():
    """``make install`` calls warm(): afterwards each loop has its machine code."""
    from revasm.compiler.backend import pair_scans

    pair_scans.warm()
    assert pair_scans._scan.signatures and pair_scans._combine.signatures
    # every call a long program makes has the types warm() compiled for: none compiles anew
    known = (list(pair_scans._scan.signatures), list(pair_scans._combine.signatures))
    code = [Instr("EXCH", ("$4", "$1")), Instr("ADDI", ("$1", "1")),
            Instr("ADDI", ("$1", "-1")), Instr("EXCH", ("$4", "$1"))]
    assert pair_scans.pairs_cancelled(code, exchanges=True, stack=True) == []
    pair_scans.pairs_cancelled(code, exchanges=True)
    pair_scans.pairs_cancelled(code, exchanges=False)
    pair_scans.immediates_combined(code, 256, (-(1 << 15), (1 << 15) - 1))
    pair_scans.combined_and_cancelled(code, 256, (-(1 << 15), (1 << 15) - 1))
    assert (pair_scans._scan.signatures, pair_scans._combine.signatures) == known
