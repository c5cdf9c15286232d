"""The PAL language: every construct assembles to the words and addresses PendVM gives."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pal_sources import FIB_PISA

from revasm.assembler import AssemblyError, DeclaredName, assemble, assemble_file
from revasm.isa import Q16_16, Q32_32, decode, encode, lookup
from revasm.isa.fixed_point import DEFAULT_WIDTH

HEADER = ";; pendulum pal file\n"


def pal(body: str, **kwargs):
    return assemble(HEADER + body, "t.pal", **kwargs)


def word(text: str, **operands) -> int:
    return encode(lookup(text), operands)


def listing(image) -> list[str]:
    """Each word as (mnemonic, operands) for compact expectations."""
    out = []
    for w, code in zip(image.words, image.is_code):
        if code:
            ins, ops = decode(w)
            out.append((ins.mnemonic, ops))
        else:
            out.append(("DATA", w))
    return out




def test_fib_pisa_assembles_with_pendvm_addresses():
    image = assemble(FIB_PISA, "fib.pisa")
    assert image.symbols == {"looptop": 4, "loopbot": 10, "n_value": 15}
    assert image.entry == 0 and image.finish == 14
    assert len(image) == 16 and image.is_code == [True] * 15 + [False]
    ops = listing(image)
    assert ops[2] == ("ADDI", {"a": 4, "imm": 15})
    assert ops[13] == ("ADDI", {"a": 4, "imm": -15})
    assert ops[4] == ("BNE", {"a": 3, "b": 0, "off": 6})       # loopbot - looptop
    assert ops[10] == ("BNE", {"a": 3, "b": 5, "off": -6})
    assert ops[15] == ("DATA", 18)


# The shape of ROOPL's output (PISA.hs): labels padded to column 26, upper-case
# mnemonics, DATA cells first, a `top: BRA start` / `start: BRA top` pair
# around them, methods as `l_m_top: BRA l_m_bot` ... `l_m: SWAPBR` ...
# `l_m_bot: BRA l_m_top`, calls as `BRA l_m`, and labels named like mnemonics.
ROOPL_STYLE = """\
;; pendulum pal file
top:                     BRA    start
l_r_result:              DATA   0
l_Program_vt:            DATA   l_run_0
l_run_0_top:             BRA    l_run_0_bot
                         ADDI   $1 -1
                         EXCH   $2 $1
                         ADDI   $1 1
l_run_0:                 SWAPBR $2
                         NEG    $2
                         ADDI   $1 -1
                         EXCH   $2 $1
                         ADDI   $1 1
l_test_1:                BEQ    $4 $0 l_test_false_3
                         XORI   $4 1
                         XORI   $5 7
                         XORI   $4 1
l_assert_true_2:         BRA    l_assert_4
l_test_false_3:          BRA    l_test_1
l_assert_4:              BNE    $4 $0 l_assert_true_2
l_run_0_bot:             BRA    l_run_0_top
start:                   BRA    top
                         START
                         ADDI   $1 27
                         XORI   $3 l_Program_vt
                         BRA    l_run_0
                         XORI   $3 l_Program_vt
                         ADDI   $1 -27
finish:                  FINISH
"""


def test_roopl_style_output_assembles_with_pendvm_addresses():
    image = assemble(ROOPL_STYLE, "example.pal")
    assert image.symbols["top"] == 0
    assert image.symbols["l_r_result"] == 1
    assert image.symbols["l_Program_vt"] == 2
    assert image.symbols["l_run_0"] == 7
    assert image.symbols["l_run_0_bot"] == 19
    assert image.symbols["start"] == 20 and image.symbols["finish"] == 27
    assert image.entry == 21  # the START instruction, just after `start: BRA top`
    assert image.finish == 27
    assert image.words[2] == 7  # DATA l_run_0: the method's address
    assert image.is_code[1:3] == [False, False]
    ops = listing(image)
    assert ops[0] == ("BRA", {"off": 20}) and ops[20] == ("BRA", {"off": -20})
    assert ops[23] == ("XORI", {"a": 3, "imm": 2})
    assert ops[24] == ("BRA", {"off": 7 - 24})
    assert ops[12] == ("BEQ", {"a": 4, "b": 0, "off": 5})


def test_mnemonics_are_case_insensitive():
    a = pal("start\nADD $1 $2\nfinish\n")
    b = pal("START\nadd $1 $2\nFiNiSh\n")
    assert a.words == b.words


def test_labels_are_case_sensitive():
    image = pal("start\nLoop: bra loop\nloop: bra Loop\nfinish\n")
    assert image.symbols == {"Loop": 1, "loop": 2}


def test_a_label_alone_names_the_next_address_and_several_labels_may_share_it():
    image = pal("start\nfirst:\nsecond:\nthird: fourth: add $1 $2\nfinish\nend:\n")
    assert image.symbols == {"first": 1, "second": 1, "third": 1, "fourth": 1, "end": 3}


def test_a_label_needs_no_space_before_the_instruction():
    assert pal("start\nhere:add $1 $2\nfinish\n").symbols == {"here": 1}


def test_labels_are_any_word_ending_in_a_colon_as_in_pendvm():
    # PendVM's loader takes any word whose last character is ':' as a label.
    image = pal("start\n.L3: addi $1 1st\n1st: addi $2 -loop-top\nloop-top: "
                "addi $3 .L3\nfinish\n")
    assert image.symbols == {".L3": 1, "1st": 2, "loop-top": 3}
    assert [op[1]["imm"] for op in listing(image)[1:4]] == [2, -3, 1]


def test_registers_directives_and_the_header_as_pendvm_reads_them():
    # `$05` is register 5 (atoi), `.START` any case, text after the 20-character header
    image = pal(".START go\ngo: start\naddi $05 7\nfinish\n")
    assert image.entry == 0 and listing(image)[1] == ("ADDI", {"a": 5, "imm": 7})
    assert assemble(";; pendulum pal file, by hand\nstart\nfinish\n").entry == 0


def test_comments_blank_lines_and_commas_take_no_address():
    image = pal("\n; a comment\nstart ; entry\n\n  add $1, $2 ; comma\n  andx $1,$2,$3\nfinish\n")
    assert listing(image)[1:3] == [("ADD", {"a": 1, "b": 2}),
                                   ("ANDX", {"a": 1, "b": 2, "c": 3})]


@pytest.mark.parametrize("text, expected", [
    ("42", 42), ("-42", -42), ("+7", 7), ("0x7fff", 0x7FFF), ("-0x10", -16), ("0X1F", 31),
    ("010", 8),  # C's strtol, as PendVM: a leading zero is octal
    ("0o17", 15), ("0b101", 5), ("0", 0),
    ("1.5", None), ("0.25", 0x4000), ("-0.25", -0x4000), ("3.", None), (".5", None),
    ("0.0000152587890625", 1), ("-0.5", -0x8000), ("1e-3", 66), ("-25e-3", -1638),
])
def test_immediate_literals(text, expected):
    if expected is None:
        with pytest.raises(AssemblyError):
            pal(f"start\naddi $1 {text}\nfinish\n")
        return
    assert listing(pal(f"start\naddi $1 {text}\nfinish\n"))[1] == ("ADDI",
                                                                 {"a": 1, "imm": expected})


def test_a_label_as_an_immediate_is_its_address_and_minus_label_its_negation():
    ops = listing(pal("start\naddi $1 cell\naddi $1 -cell\nfinish\ncell: data 9\n"))
    assert ops[1][1]["imm"] == 4 and ops[2][1]["imm"] == -4


def test_named_constants_with_const_and_equ():
    image = pal(".const N 100\n.equ M -N\n.const HALF 0.25\nstart\naddi $1 N\naddi $1 M\n"
                "xori $2 HALF\nfinish\n")
    assert [op[1]["imm"] for op in listing(image)[1:4]] == [100, -100, 0x4000]


def test_fixed_point_literals_follow_the_word_format():
    assert pal("start\nfinish\ndata 1.5\n").words[2] == 0x18000
    assert pal(".width 64\nstart\nfinish\ndata 1.5\n").words[2] == 0x1_8000_0000
    assert pal("start\nfinish\ndata -1.0\n").words[2] == 0xFFFF0000
    # exact, from the decimal text: 0.1 rounds to the nearest 2**-16
    assert pal("start\nfinish\ndata 0.1\n").words[2] == Q16_16.from_real("0.1") == 6554
    assert pal("start\nfinish\ndata 1.5e-3\n").words[2] == round(0.0015 * 65536)


def test_data_cells_in_any_case_hold_the_w_bit_word():
    image = pal("start\nfinish\nDATA -1\ndata 0xffffffff\nData 2147483647\ndata lbl\n"
                "lbl: data -lbl\n")
    assert image.words[2:] == [0xFFFFFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 6, (-6) & 0xFFFFFFFF]
    assert image.is_code == [True, True] + [False] * 5


def test_64_bit_data_cells():
    image = pal("start\nfinish\ndata -1\ndata 0x123456789abcdef0\n", width=64)
    assert image.words[2:] == [2**64 - 1, 0x123456789ABCDEF0]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([Q16_16, Q32_32]).flatmap(
    lambda fmt: st.tuples(st.just(fmt), st.integers(fmt.min_signed, fmt.mask))))
def test_li_adds_any_w_bit_constant(case):
    fmt, value = case
    image = pal(f"start\nhere: li $7 {value}\nfinish\n", width=fmt.width)
    total = 0
    for w in image.words[1:-1]:
        ins, ops = decode(w)
        assert ops["a"] == 7
        total += ops["imm"] << (16 * ops.get("k", 0))
    assert total % (1 << fmt.width) == value % (1 << fmt.width)
    assert image.symbols["here"] == 1
    assert len(image.words) - 2 <= fmt.width // 16


def test_li_takes_fixed_point_literals_and_labels_and_a_label_names_its_first_word():
    image = pal("start\nx: li $1 2.5\ny: li $2 far\nfinish\nfar: data 0\n")
    assert image.symbols == {"x": 1, "y": 3, "far": 5}
    assert listing(image)[1:4] == [("ADDI", {"a": 1, "imm": -0x8000}),
                                   ("ADDIS", {"a": 1, "imm": 3, "k": 1}),
                                   ("ADDI", {"a": 2, "imm": 5})]


def test_li_of_a_label_beyond_the_16_bit_range_grows_to_two_words():
    filler = "add $1 $2\n" * 33000
    image = pal(f"start\nli $3 end\n{filler}finish\nend: data 0\n")
    assert image.symbols["end"] == 33004  # start, 2 words of LI, 33000 adds, finish
    ins, ops = decode(image.words[1])
    ins2, ops2 = decode(image.words[2])
    assert (ops["imm"] + (ops2["imm"] << 16)) == 33004


def test_li_of_zero_still_takes_one_word():
    assert listing(pal("start\nli $1 0\nfinish\n"))[1] == ("ADDI", {"a": 1, "imm": 0})


def test_subi_is_addi_with_the_negated_immediate():
    ops = listing(pal("start\nsubi $1 5\nSUBI $1 -32767\nsubi $2 32768\nfinish\n"))
    assert ops[1:4] == [("ADDI", {"a": 1, "imm": -5}), ("ADDI", {"a": 1, "imm": 32767}),
                        ("ADDI", {"a": 2, "imm": -32768})]


def test_shift_amounts_and_lanes_follow_the_width():
    assert listing(pal("start\nsllx $1 $2 31\nfinish\n"))[1][1]["amt"] == 31
    assert listing(pal("start\nsllx $1 $2 63\nfinish\n", width=64))[1][1]["amt"] == 63
    assert listing(pal("start\naddis $1 7 3\nfinish\n", width=64))[1][1]["k"] == 3


def test_branch_targets_are_labels_or_absolute_addresses_encoded_relative():
    image = pal("start\naddi $1 11\nbra 4\naddi $2 99\nbra 2\naddi $3 22\nfinish\n")
    assert listing(image)[2] == ("BRA", {"off": 2}) and listing(image)[4] == ("BRA", {"off": -2})


def test_branches_may_land_on_swapbr_and_rbra_on_a_portal():
    image = pal("start\nbra f\nrbra f\nfinish\nf_top: bra f_bot\nf: swapbr $31\nneg $31\n"
                "f_bot: bra f_top\n")
    assert listing(image)[1] == ("BRA", {"off": 4}) and listing(image)[2] == ("RBRA", {"off": 3})


def test_declarations_name_registers_and_memory_words():
    image = pal(".input x $1\n.input n cell int = 5\n.output y $2 fixed\n.loss l $3 = -0.5\n"
                ".name scratch 100 int\nstart\nfinish\ncell: data 0\n")
    assert image.names == {
        "x": DeclaredName("x", "input", register=1, fixed=True),
        "n": DeclaredName("n", "input", address=2, fixed=False, default=5),
        "y": DeclaredName("y", "output", register=2, fixed=True),
        "l": DeclaredName("l", "loss", register=3, fixed=True, default=0xFFFF8000),
        "scratch": DeclaredName("scratch", "name", address=100, fixed=False),
    }


def test_width_comes_from_the_caller_else_the_directive_and_defaults_to_32():
    assert pal("start\nfinish\n").width == 32 == DEFAULT_WIDTH
    assert pal(".width 64\nstart\nfinish\n").width == 64
    assert pal("start\nfinish\n", width=64).width == 64
    assert pal(".width 64\nstart\nfinish\n", width=64).width == 64
    # the caller's width overrides the file's: the words follow it
    image = pal(".width 64\nstart\nfinish\ndata 1.5\n", width=32)
    assert image.width == 32 and image.words[2] == 0x1_8000
    assert pal(".width 32\nstart\nfinish\n", width=64).width == 64


def test_entry_is_the_start_instruction_or_the_start_directive():
    assert pal("add $1 $2\nstart\nfinish\n").entry == 1
    image = pal(".start main\nfinish\nmain: add $1 $2\n")
    assert image.entry == 1 and image.finish == 0
    assert pal(".start 1\nstart\nadd $1 $2\nfinish\n").entry == 1


def test_finish_is_none_without_a_finish_instruction():
    assert pal("start\nadd $1 $2\n").finish is None


def test_every_address_maps_to_its_source_line_and_column():
    image = pal("start\n  loop:   li $1 0x12345\nfinish\n")
    assert image.locations[1].line == 3 and image.locations[2].line == 3
    assert image.locations[1].column == 11
    assert image.locations[1].text == "  loop:   li $1 0x12345"
    assert image.locations[3].file == "t.pal"
    assert image.describe(3) == "pc 3 (t.pal:4: finish)"


def test_assemble_file_reads_the_file_and_names_it(tmp_path):
    path = tmp_path / "prog.pal"
    path.write_text(FIB_PISA)
    image = assemble_file(path)
    assert image.source_file == str(path) and image.locations[0].file == str(path)
    path.write_text(HEADER + ".width 64\nstart\nfinish\n")
    assert assemble_file(path).width == 64


def test_windows_line_ends_and_a_byte_order_mark_are_accepted():
    image = assemble("\ufeff" + HEADER.replace("\n", "\r\n") + "start\r\nfinish\r\n")
    assert image.words == [word("START"), word("FINISH")]


@pytest.mark.parametrize("path", sorted(__import__("pathlib").Path(__file__).resolve().parents[2]
                                         .joinpath("examples").glob("*.pal")),
                         ids=lambda p: p.name)
def test_every_example_assembles(path):
    image = assemble_file(path)
    assert image.entry is not None and len(image) > 0


def test_the_example_in_the_language_docs_assembles():
    import re
    from pathlib import Path
    docs = Path(__file__).resolve().parents[2] / "docs" / "assembly.md"
    block = re.search(r"```\n(;; pendulum pal file.*?)```", docs.read_text(), re.S).group(1)
    image = assemble(block, "doc.pal")
    assert image.symbols == {"top": 4, "bottom": 10, "n_cell": 15}
    assert image.names["n"].address == 15 and not image.names["fib"].fixed


def test_a_repeated_line_encodes_as_its_first_and_each_error_is_reported():
    # _encode encodes each spelling of an instruction without an offset once; the
    # copies must be the same words and fields, and a line with errors never counts
    image = pal("START\nADD $1 $2\nXORI $3 7\nADD $1 $2\nXORI $3 7\nFINISH\n")
    assert image.words[1] == image.words[3] == word("ADD", a=1, b=2)
    assert image.words[2] == image.words[4] == word("XORI", a=3, imm=7)
    with pytest.raises(AssemblyError) as caught:
        pal("START\nADDI $1 99999999\nADDI $1 99999999\nFINISH\n")
    assert [d.line for d in caught.value.diagnostics] == [3, 4]


def test_repeated_wide_immediates_each_keep_their_word():
    image = assemble(HEADER + "START\nXORI $1 3735943886\nXORI $1 3735943886\nFINISH\n",
                     "w.pal", pendvm=True)
    assert image.immediates == {1: 3735943886 - 2**32, 2: 3735943886 - 2**32}
    assert image.words[1] == image.words[2]
