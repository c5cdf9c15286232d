"""The compiled loop combining immediates (``pair_scans.immediates_combined``) leaves the code
``immediates.combine_immediates``'s Python loop leaves: on random code dense in ``addi`` of a
few registers, with whatever may stop or end a partner's search among it, and on a compiled
program."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler.backend import immediates, lowering, pair_scans
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.immediates import combine_immediates
from revasm.compiler.backend.peephole import cancel_inverse_pairs
from revasm.compiler.errors import SourcePos

REGISTERS = ("$3", "$4", "$0")
#: Amounts that cancel or add up; that leave ADDI's field summed (or alone); hex and
#: symbolic ones (a symbolic ``addi`` of a register ends its partner's search).
AMOUNTS = [["1", "-1", "2", "-3", "0"], ["30000", "-30000", "32767", "-32768", "40000"],
           ["0x10", "-0x10", "v_a.0", "$4"]]
#: What stands among them: a use of a register, a branch, a label, an exchange, data
#: instructions touching the registers or not (one names ``$3`` otherwise: not a use).
OTHERS = [Instr("EXCH", ("$4", "$3")), Instr("EXCH", ("$5", "$6")), Instr("ADD", ("$3", "$5")),
          Instr("ADD", ("$5", "$4")), Instr("ADDMUL", ("$6", "$4", "$7")),
          Instr("LI", ("$5", "7")), Instr("XORI", ("$0", "1")), Instr("ADD", ("$03", "$5")),
          Instr("BNE", ("$4", "$0", "L1")), Instr("BRA", ("top",)),
          Instr("ADD", ("$5", "$6"), label="L2"), Instr("ADDI", ("$3", "1"), label="L3")]
#: An instruction that uses none of the registers: a stretch of it as long as the window
#: (a partner right after it is out of reach) or one shorter (in reach).
FILLER = Instr("ADDMUL", ("$6", "$5", "$7"))


#: What else an ADDI carries (a merged one keeps its own: the fields must not mix up).
POSITIONS = [None, SourcePos("a.ja", 3, 5), SourcePos("a.ja", 4, 1)]


@st.composite
def addi(draw: st.DrawFn) -> Instr:
    amounts = draw(st.sampled_from(AMOUNTS))
    return Instr("ADDI", (draw(st.sampled_from(REGISTERS)), draw(st.sampled_from(amounts))),
                 draw(st.sampled_from(POSITIONS)), draw(st.sampled_from(["compute", "check"])),
                 draw(st.sampled_from(["", "a note"])), check=draw(st.sampled_from(["", "bounds"])))


@st.composite
def addi_code(draw: st.DrawFn) -> list[Instr]:
    """Mostly ``addi``, among them other instructions, fillers and stretches of them."""
    code: list[Instr] = []
    for piece in draw(st.lists(st.integers(0, 19), max_size=120)):
        if piece < 12:
            code.append(draw(addi()))
        elif piece < 15:
            code.append(FILLER)
        elif piece < 19:
            code.append(draw(st.sampled_from(OTHERS)))
        else:
            code += [FILLER] * draw(st.sampled_from([immediates.WINDOW - 1, immediates.WINDOW]))
    return code


def _compiled(code: list[Instr]) -> list[Instr] | None:
    return pair_scans.immediates_combined(code, immediates.WINDOW, immediates.IMMEDIATE_RANGE)


@settings(max_examples=300, deadline=None)
@given(addi_code())
def test_the_compiled_loop_combines_what_the_python_loop_combines(code):
    python = combine_immediates(code, compiled_from=1 << 62)
    assert _compiled(code) == python
    assert combine_immediates(code, compiled_from=0) == python


def test_code_the_codes_cannot_say_is_left_to_the_python_loop():
    """A register not spelled ``$n`` (``$03`` is not ``$3`` to the Python loop), an amount
    too wide for the codes, an ADDI of one operand (behind a label: never asked)."""
    for odd in [Instr("ADDI", ("$03", "1")), Instr("ADDI", ("$3", str(1 << 70))),
                Instr("ADDI", ("$3",), label="L4")]:
        code = [Instr("ADDI", ("$3", "2")), odd, Instr("ADDI", ("$3", "-2"))]
        assert _compiled(code) is None
        assert combine_immediates(code, compiled_from=0) == \
            combine_immediates(code, compiled_from=1 << 62)


def test_a_program_compiles_to_the_same_pal_with_the_compiled_loop(monkeypatch):
    """A Janus program of array updates (pointers moved to an element and back)."""
    from revasm.bench.compile_scale import janus_program
    from revasm.compiler.api import compile_janus_source

    text = janus_program("arrays", 300)
    monkeypatch.setattr(immediates, "COMPILED_FROM", 1 << 62)
    python = compile_janus_source(text, "arrays.ja")
    sizes = []

    def counted(code, *limits):
        sizes.append(len(code))
        return compiled(code, *limits)
    compiled = pair_scans.immediates_combined
    monkeypatch.setattr(pair_scans, "immediates_combined", counted)
    monkeypatch.setattr(immediates, "COMPILED_FROM", 0)
    program = compile_janus_source(text, "arrays.ja")
    assert program.pal == python.pal and program.lowered.lines == python.lowered.lines
    assert sizes and all(sizes)  # the compiled loop ran, on the code


@settings(max_examples=300, deadline=None)
@given(addi_code())
def test_combining_and_cancelling_on_one_numbering_leaves_what_the_two_passes_leave(code):
    """``lowering._combined_and_cancelled``'s compiled form: the inverse pairs cancelled
    right after the immediates are combined, with each merged ADDI's new spelling
    numbered, as the Python loops leave the code (the same instructions, each field)."""
    python = cancel_inverse_pairs(combine_immediates(code, compiled_from=1 << 62))
    assert lowering._combined_and_cancelled(code, compiled_from=0) == python
    fused = pair_scans.combined_and_cancelled(code, immediates.WINDOW,
                                              immediates.IMMEDIATE_RANGE)
    combined = _compiled(code)
    apart = None if combined is None else pair_scans.pairs_cancelled(combined, exchanges=False)
    assert fused == apart  # (None where either compiled pass leaves the code to Python)
    assert fused is None or fused == python


@settings(max_examples=100, deadline=None)
@given(addi_code())
def test_the_combined_code_is_numbered_as_its_own_spellings(code):
    """``_combined`` hands the inverse scan each kept instruction's spelling number and label
    flag: a merged ADDI numbered as its new spelling, as numbering the code afresh would.
    (No scan could tell a merged ADDI's old number apart -- the combining already took every
    ADDI of its register in reach -- so this holds the numbers themselves.)"""
    combined = pair_scans._combined(code, immediates.WINDOW, immediates.IMMEDIATE_RANGE)
    if combined is None:
        return
    out, spellings, numbers, flags = combined
    assert out == _compiled(code)
    _, labelled = pair_scans._Spellings().of(out)
    assert [spellings.keys[n] for n in numbers.tolist()] == \
        [(i.mnemonic, i.operands) if i.mnemonic in pair_scans._MASKED else pair_scans._STOP
         for i in out]
    assert flags.tolist() == labelled
