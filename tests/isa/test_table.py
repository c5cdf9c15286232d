"""The ISA table is consistent, and everything derived from it agrees with it."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.isa import INSTRUCTIONS, IllegalInstruction, WordFormat, decode, encode, lookup
from revasm.isa.docs import render
from revasm.isa.instruction import CONTROL_KINDS
from revasm.isa.pseudo import load_constant

ROOT = Path(__file__).resolve().parents[2]


def test_docs_isa_md_is_generated_from_the_table():
    on_disk = (ROOT / "docs" / "isa.md").read_text()
    assert on_disk == render(), "docs/isa.md is stale: run `make docs`"


def test_every_pisa_instruction_pendvm_accepts_is_in_the_table():
    pendvm = ("ADD ADDI ANDX ANDIX BEQ BGEZ BGTZ BLEZ BLTZ BNE BRA EXCH NORX NEG ORX ORIX RL "
              "RLV RR RRV SLLX SLLVX SLTX SLTIX SRAX SRAVX SRLX SRLVX SUB XOR XORI SWAPBR RBRA "
              "OUT OUTPUT SHOW EMIT START FINISH").split()
    missing = [name for name in pendvm if lookup(name) is None]
    assert missing == []


def test_lookup_is_case_insensitive_like_pal():
    assert lookup("addi") is lookup("ADDI") is lookup("AddI")


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda i: i.mnemonic)
def test_inverse_partners_name_each_other_and_swap_their_semantics(ins):
    partner = lookup(ins.inverse)
    assert partner.inverse == ins.mnemonic
    if partner is not ins and "OV[0]" not in ins.forward:
        assert ins.backward == partner.forward
        assert ins.forward == partner.backward


_COUNTING = [ins for ins in INSTRUCTIONS if "OV[0]" in ins.forward]


def _execute(template, operands, registers, fmt):
    from revasm.isa.vocabulary import vocabulary

    namespace = dict(vocabulary(fmt), overflow=lambda flag: flag)
    namespace.update(R=list(registers), OV=[0])
    exec(template.format(**operands), namespace)  # the table's own text
    return namespace["R"], fmt.signed(namespace["OV"][0])


@settings(max_examples=300)
@given(st.sampled_from(_COUNTING), st.sampled_from([32, 64]), st.data())
def test_counting_partners_move_the_same_words_and_count_events_oppositely(ins, width, data):
    """ADDMUL backward moves the words SUBMUL forward moves; it takes back ADDMUL's event,
    SUBMUL counts its own: forward adds 1, backward takes 1 away, never anything else."""
    fmt = WordFormat(width)
    word = st.one_of(st.integers(0, fmt.mask),
                     st.sampled_from([0, 1, fmt.one, fmt.mask, fmt.sign_bit, fmt.sign_bit - 1,
                                      fmt.from_real(180) & fmt.mask]))
    registers = [0] + data.draw(st.lists(word, min_size=3, max_size=3))
    operands = {"a": 1, "b": 2, "c": 3}
    partner = lookup(ins.inverse)
    try:
        back, undone = _execute(ins.backward, operands, registers, fmt)
        their, counted = _execute(partner.forward, operands, registers, fmt)
        forward, events = _execute(ins.forward, operands, back, fmt)
    except ArithmeticError:  # a division by zero, a log of x <= 0: faults, not events
        return
    assert back == their
    assert forward == registers  # forward undoes backward, OV included
    assert undone == -events and events in (0, 1) and counted in (0, 1)


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda i: i.mnemonic)
def test_entry_names_only_its_own_operands(ins):
    names = set(ins.operand_names)
    assert set(ins.writes) <= names
    assert all(a in names and b in names for a, b in ins.distinct)
    assert ins.kind in CONTROL_KINDS
    assert (ins.kind == "branch") == bool(ins.condition)
    # Every register an instruction writes must differ from every register its
    # update reads, or the update could not be undone.
    for written in ins.writes:
        for other in ins.operand_names:
            if other != written and other in ("a", "b", "c") and other not in ins.writes:
                assert (written, other) in ins.distinct or (other, written) in ins.distinct \
                    or ins.kind == "swapbr" or f"R[{{{other}}}]" not in ins.forward, \
                    (ins.mnemonic, written, other)


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda i: i.mnemonic)
def test_templates_compile_for_every_entry(ins):
    values = {name: 1 for name in ins.operand_names}
    for template in (ins.forward, ins.backward):
        compile(template.format(**values), ins.mnemonic, "exec")


def _operand_values(ins):
    return st.fixed_dictionaries({
        f.name: st.integers(f.low, f.high) for f in ins.fields
    })


@settings(max_examples=400)
@given(st.sampled_from(INSTRUCTIONS).flatmap(
    lambda ins: st.tuples(st.just(ins), _operand_values(ins))))
def test_decode_inverts_encode_for_every_entry(case):
    ins, operands = case
    word = encode(ins, operands)
    assert 0 <= word < 1 << 32
    assert decode(word) == (ins, operands)


@pytest.mark.parametrize("word", [0x00000000, 0xFC000000, 0x04000001])
def test_decode_rejects_words_no_entry_matches(word):
    # opcode 0 and 0x3f are unassigned; ADD with a non-zero funct is not ADD.
    with pytest.raises(IllegalInstruction):
        decode(word)


@settings(max_examples=500)
@given(st.sampled_from([32, 64]).flatmap(
    lambda w: st.tuples(st.just(w), st.integers(-(1 << (w - 1)), (1 << w) - 1))))
def test_load_constant_adds_exactly_the_constant(case):
    width, value = case
    fmt = WordFormat(width)
    steps = load_constant(7, value, fmt)
    total = 0
    for mnemonic, operands in steps:
        assert operands["a"] == 7
        assert -(1 << 15) <= operands["imm"] < (1 << 15)
        shift = 16 * operands.get("k", 0)
        assert shift < width
        total += operands["imm"] << shift
        encode(lookup(mnemonic), operands)  # every step is encodable
    assert total % (1 << width) == value % (1 << width)
    assert len(steps) <= width // 16
