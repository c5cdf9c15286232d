"""Disassembly: assemble ∘ disassemble ∘ assemble is the identity on images."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.assembler import DeclaredName, Image, assemble, disassemble, disassemble_word
from revasm.isa import INSTRUCTIONS, decode, encode, lookup
from revasm.isa.fixed_point import word_format

HEADER = ";; pendulum pal file\n"
WIDTHS = (32, 64)
FILLER = "add $1 $2\n"


def same_program(a: Image, b: Image) -> bool:
    return (a.width, a.words, a.is_code, a.entry, a.finish, a.names) == \
           (b.width, b.words, b.is_code, b.entry, b.finish, b.names)


def reassembles(image: Image) -> Image:
    again = assemble(disassemble(image), "dis.pal")
    assert same_program(again, image), disassemble(image)
    return again


@st.composite
def operands_of(draw, ins, width):
    """Field values the assembler accepts: no write to $0, distinct pairs differ."""
    ops: dict[str, int] = {}
    for name, kind, fld in zip(ins.operand_names, ins.operand_kinds, ins.fields):
        if kind == "reg":
            banned = {0} if name in ins.writes else set()
            for first, second in ins.distinct:
                other = second if name == first else first if name == second else None
                if other in ops:
                    banned.add(ops[other])
            ops[name] = draw(st.sampled_from([r for r in range(32) if r not in banned]))
        elif kind == "imm":
            ops[name] = draw(st.integers(fld.low, fld.high))
        elif kind == "amt":
            ops[name] = draw(st.integers(0, width - 1))
        elif kind == "k":
            ops[name] = draw(st.integers(1, width // 16 - 1))
    return ops


def spelled(ins, ops: dict[str, int], target: str, draw) -> str:
    """The instruction as a user might write it: any case, spaces or commas."""
    mnemonic = draw(st.sampled_from([ins.mnemonic, ins.mnemonic.lower(), ins.mnemonic.title()]))
    parts = []
    for name, kind in zip(ins.operand_names, ins.operand_kinds):
        parts.append(f"${ops[name]}" if kind == "reg" else target if kind == "off"
                     else str(ops[name]))
    separator = draw(st.sampled_from([" ", ", ", ","]))
    return f"{mnemonic} {separator.join(parts)}".rstrip()


@st.composite
def program_around(draw, ins, width):
    """A small valid program holding ``ins`` at the address ``src``."""
    ops = draw(operands_of(ins, width))
    filler = FILLER * draw(st.integers(0, 3))
    if ins.kind == "branch":
        text = spelled(ins, ops, "dst", draw)
        if draw(st.booleans()):
            body = f"start\nsrc: {text}\n{filler}dst: bra src\nfinish\n"
        else:
            body = f"start\ndst: bra src\n{filler}src: {text}\nfinish\n"
    elif ins.kind == "rbra":
        portal = draw(st.integers(1, 31))
        body = (f"start\nsrc: {spelled(ins, ops, 'dst', draw)}\n{filler}"
                f"dst: swapbr ${portal}\nfinish\n")
    elif ins.kind == "start":
        body = f"src: {spelled(ins, ops, '', draw)}\n{filler}finish\n"
    elif ins.kind == "finish":
        body = f"start\n{filler}src: {spelled(ins, ops, '', draw)}\n"
    else:
        body = f"start\n{filler}src: {spelled(ins, ops, '', draw)}\nfinish\n"
    return HEADER + body, ops


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda ins: ins.mnemonic)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_assemble_disassemble_assemble_is_the_identity_for_every_instruction(ins, width, data):
    source, ops = data.draw(program_around(ins, width))
    image = assemble(source, "t.pal", width=width)
    pc = image.symbols["src"]
    decoded, fields = decode(image.words[pc])
    assert decoded is ins
    assert {k: v for k, v in fields.items() if k != "off"} == ops
    reassembles(image)
    reassembles(replace(image, symbols={}))  # with synthesized labels


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda ins: ins.mnemonic)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_decode_undoes_encode_for_every_field_value(ins, data):
    ops = {fld.name: data.draw(st.integers(fld.low, fld.high)) for fld in ins.fields}
    assert decode(encode(ins, ops)) == (ins, ops)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 1000))
def test_disassemble_word_reads_any_word(word, pc):
    text = disassemble_word(word, pc)
    assert text.split()[0].isupper()


@st.composite
def straight_line_programs(draw):
    """START, a mix of data-kind instructions, LI, DATA and labels, FINISH, data."""
    width = draw(st.sampled_from(WIDTHS))
    fmt = word_format(width)
    plain = [ins for ins in INSTRUCTIONS if ins.kind == "data"]
    lines = ["start"]
    cells = []
    for index in range(draw(st.integers(0, 12))):
        label = f"l{index}: " if draw(st.booleans()) else ""
        choice = draw(st.integers(0, 2))
        if choice == 0:
            ins = draw(st.sampled_from(plain))
            lines.append(label + spelled(ins, draw(operands_of(ins, width)), "", draw))
        elif choice == 1:
            value = draw(st.integers(fmt.min_signed, fmt.mask))
            lines.append(f"{label}li ${draw(st.integers(1, 31))} {value}")
        else:
            value = draw(st.one_of(st.integers(fmt.min_signed, fmt.mask),
                                   st.sampled_from(["1.5", "-0.25", "cell0", "-cell0"])))
            cells.append(f"data {value}")
    lines.append("finish")
    cells = cells or ["data 0"]
    lines += [f"cell{i}: {cell}" for i, cell in enumerate(cells)]
    declarations = [".input x $1 fixed = 0.75", ".output y cell0 int", ".loss z $2"]
    return width, HEADER + "\n".join(declarations + lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(straight_line_programs())
def test_assemble_disassemble_assemble_is_the_identity_on_random_programs(case):
    width, source = case
    image = assemble(source, "t.pal", width=width)
    again = reassembles(image)
    assert again.symbols == image.symbols
    reassembles(replace(image, symbols={}))


def test_disassembly_is_pal_with_labels_from_the_symbols():
    image = assemble(HEADER + "start\nloop: bne $1 $0 done\naddi $1 -1\ndone: bne $1 $0 loop\n"
                     "finish\nvalue: data -7\n", "loop.pal")
    assert disassemble(image) == """\
;; pendulum pal file
;; disassembled by revasm from loop.pal
                START                            ; pc 0
loop:           BNE $1 $0 done                   ; pc 1
                ADDI $1 -1                       ; pc 2
done:           BNE $1 $0 loop                   ; pc 3
                FINISH                           ; pc 4
value:          DATA -7                          ; pc 5
"""


def test_branch_targets_without_a_name_get_synthesized_labels():
    image = assemble(HEADER + "start\nbra 3\nadd $1 $2\nbra 1\nfinish\n")
    text = disassemble(replace(image, symbols={"L3": 4}))  # a user label may take the name
    assert "L1:             BRA L3_" in text and "L3_:            BRA L1" in text
    assert "L3:             FINISH" in text


def test_directives_restore_width_entry_and_declared_names():
    image = assemble(HEADER + ".width 64\n.input x $1 fixed = 0.5\n.output n cell int\n"
                     ".start main\nfinish\nmain: add $2 $1\ncell: data 0\n")
    text = disassemble(image)
    assert ".width 64\n.start main\n.input x $1 fixed = 0.5\n.output n cell int\n" in text
    assert image.names["x"] == DeclaredName("x", "input", register=1, default=1 << 31)
    reassembles(image)


def test_a_code_word_that_is_not_an_instruction_becomes_data():
    image = Image(width=32, words=[encode(lookup("START"), {}), 0xFFFFFFFF], is_code=[True, True],
                  entry=0)
    text = disassemble(image)
    assert "DATA -1" in text and "not an instruction, kept as data" in text
    assert assemble(text).words == image.words


def test_disassemble_word_gives_absolute_targets_or_names():
    word = encode(lookup("BEQ"), {"a": 1, "b": 2, "off": -3})
    assert disassemble_word(word, 10) == "BEQ $1 $2 7"
    assert disassemble_word(word, 10, {7: "top"}) == "BEQ $1 $2 top"
    assert disassemble_word(encode(lookup("ADDIS"), {"a": 3, "imm": -2, "k": 1}), 0) == \
        "ADDIS $3 -2 1"
    assert disassemble_word(0xFC000000, 0).startswith("DATA 0xfc000000  ; not an instruction")
