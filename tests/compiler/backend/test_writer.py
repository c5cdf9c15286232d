"""The writer hands the assembler each instruction line's statement, skipping its lexer:
each must be exactly what the assembler would read in that line."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.assembler.diagnostics import DiagnosticLog
from revasm.assembler.parser import parse_line
from revasm.compiler import compile_file
from revasm.compiler.api import compile_janus_file
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.lowering import _Writer
from revasm.compiler.errors import SourcePos

EXAMPLES = Path(__file__).parents[3] / "examples"

_WORD = st.text(st.sampled_from("ab_.$0123456789-+:;, \t"), min_size=1, max_size=18)


def _as_read(number: int, text: str):
    log = DiagnosticLog("w.pal", [text] * number)
    return parse_line(number, text, log), log


def _check(writer: _Writer) -> int:
    """Every statement the writer knows equals the parser's; how many it knew."""
    known = 0
    for number, (text, statement) in enumerate(zip(writer.lines, writer.statements), 1):
        if statement is None:
            continue
        read, log = _as_read(number, text)
        assert not log.diagnostics, text
        assert statement == read, text
        known += 1
    return known


@settings(max_examples=400, deadline=None)
@given(label=st.one_of(st.just(""), _WORD), mnemonic=st.sampled_from(
           ["ADD", "ADDI", "XOR", "SWAPBR", "BRA", "BEQ", "BGEZ", "EXCH", "FINISH", "RROT",
            "mulfx"]),
       operands=st.lists(_WORD, max_size=3))
def test_a_written_line_is_read_as_the_writer_says(label, mnemonic, operands):
    """(A branch's text and tokens up to its label are kept: it is written twice, with two
    labels, and read back each time.)"""
    writer = _Writer()
    instructions = [Instr(mnemonic, tuple(operands), label=label)]
    if operands:
        instructions.append(Instr(mnemonic, (*operands[:-1], operands[-1] + "x"), label=label))
    for instr in instructions:
        writer.instr(instr)
    _check(writer)
    assert writer.lines == [f"{label + ':' if label else '':<14}{i.text():<28}".rstrip()
                            for i in instructions]  # the text as Instr.text() spells it


_NOTE = st.text(st.sampled_from("ab ;:\t"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(
    st.one_of(st.just(""), _WORD), st.sampled_from(["ADDI", "BEQ", "BRA", "SWAPBR"]),
    st.lists(_WORD, max_size=3), st.one_of(st.none(), st.integers(1, 3)), _NOTE,
    st.sampled_from(["compute", "check"])), min_size=1, max_size=5))
def test_a_line_is_spelled_in_its_columns_with_its_comment(lines):
    """Each line as the plain formula spells it: the label's column, the code's, then the
    comment (the file, the line and the note), with no white space at the end."""
    writer = _Writer()
    expected = []
    for label, mnemonic, operands, line, note, role in lines:
        pos = None if line is None else SourcePos("dir/f.ja", line, 1)
        instr = Instr(mnemonic, tuple(operands), pos, role, note, label)
        writer.instr(instr)
        comment = (f"; f.ja:{line}; {note}" if note else f"; f.ja:{line}") if pos else \
            (f"; {note}" if note else "")
        expected.append(f"{label + ':' if label else '':<14}{instr.text():<28}{comment}"
                        .rstrip())
    assert writer.lines == expected
    _check(writer)


def test_plain_instructions_are_known_and_odd_words_left_to_the_lexer():
    writer = _Writer()
    writer.instr(Instr("ADD", ("$1", "$2")))
    writer.instr(Instr("BRA", ("f_main.bot",), label="a_label_longer_than_the_column"))
    writer.instr(Instr("ADD", ("$1,", "$2")))  # a comma splits the word
    writer.instr(Instr("ADDI", ("$1", "3"), label="10"))  # a number is no label
    assert [s is not None for s in writer.statements] == [True, True, False, False]
    assert _check(writer) == 2


@pytest.mark.parametrize("source", ["nilang/dot.py", "nilang/rfib.py", "janus/factor.ja",
                                    "janus/fib_pair.ja"])
def test_compiled_examples_give_the_assembler_what_it_reads(source):
    path = EXAMPLES / source
    program = compile_janus_file(path) if path.suffix == ".ja" else compile_file(path)
    writer = _Writer()
    writer.lines = program.lowered.pal.splitlines()
    writer.statements = list(program.lowered.statements or [])
    assert len(writer.lines) == len(writer.statements)
    # the compiler writes only plain words: every instruction line is known, and each
    # array element's declaration and cell
    elements = sum(1 for line in writer.lines if line.startswith(".input") and
                   line.split(" ")[1].count(".") and not line.split(" ")[2].startswith("$"))
    cells = sum(1 for line in writer.lines if " data " in line)
    assert _check(writer) == len(program.lowered.lines) + elements + cells > 0


@settings(max_examples=300, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=6), label=_WORD, value=_WORD)
def test_a_declaration_and_a_data_cell_are_read_as_the_writer_says(words, label, value):
    writer = _Writer()
    writer.words(" ".join([".input", *words]))
    writer.data(label, value)
    _check(writer)
    assert writer.lines[1] == f"{label + ':':<12} data {value}"


def test_an_array_element_declaration_and_cell_are_known():
    writer = _Writer()
    writer.words(".input x.5 v_x.5 int = 0 in -3..3")
    writer.data("v_x.5", "0")
    writer.data("a_label_longer_than_the_column", "-7")
    writer.words(".input x.5  v_x.5 int")  # two spaces: left to the lexer
    writer.data("10", "0")  # a number is no label
    writer.data("v", "raw:5")  # a colon splits the word
    assert [s is not None for s in writer.statements] == [True, True, True, False, False,
                                                          False]
    assert _check(writer) == 3
