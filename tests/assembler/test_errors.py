"""Every kind of assembly error: the exact ``file:line:col: error: ...`` text and caret."""
from __future__ import annotations

import pytest

from revasm.assembler import AssemblyError, Diagnostic, assemble, assemble_file

HEADER = ";; pendulum pal file\n"


def diagnostics_of(source: str, **kwargs) -> str:
    with pytest.raises(AssemblyError) as info:
        assemble(source, "t.pal", **kwargs)
    return str(info.value)


# (what is wrong, the lines after the header, the exact report)
CASES = [
    ('unknown mnemonic suggests the closest',
     'start\naddd $1 $2\nfinish\n',
     """\
t.pal:3:1: error: unknown instruction 'addd'; did you mean ADD?
addd $1 $2
^"""),
    ('unknown word alone hints at a label',
     'start\nloop\nfinish\n',
     """\
t.pal:3:1: error: unknown instruction 'loop' (to define a label, write 'loop:')
loop
^"""),
    ('too many operands',
     'start\nadd $1 $2 $3\nfinish\n',
     """\
t.pal:3:11: error: add takes 2 operands (add $a $b), got 3
add $1 $2 $3
          ^"""),
    ('too few operands',
     'start\nbeq $1 $2\nfinish\n',
     """\
t.pal:3:10: error: beq takes 3 operands (beq $a $b off), got 2
beq $1 $2
         ^"""),
    ('register expected',
     'start\nadd $1 5\nfinish\n',
     """\
t.pal:3:8: error: expected a register $0..$31, got '5'
add $1 5
       ^"""),
    ('value expected',
     'start\naddi $1 $2\nfinish\n',
     """\
t.pal:3:9: error: expected a value, got the register $2
addi $1 $2
        ^"""),
    ('register out of range',
     'start\nadd $32 $1\nfinish\n',
     """\
t.pal:3:5: error: $32 is not a register (registers are $0..$31)
add $32 $1
    ^"""),
    ('undefined label suggests the closest',
     'start\nlooptop: bne $1 $0 lopbot\nloopbot: bne $1 $0 looptop\nfinish\n',
     """\
t.pal:3:20: error: undefined label or constant 'lopbot'; did you mean 'loopbot'?
looptop: bne $1 $0 lopbot
                   ^"""),
    ('duplicate label',
     'start\nx: add $1 $2\nx: add $1 $2\nfinish\n',
     """\
t.pal:4:1: error: label 'x' is already defined on line 3
x: add $1 $2
^"""),
    ('immediate out of range suggests LI',
     'start\naddi $1 70000\nfinish\n',
     """\
t.pal:3:9: error: immediate 70000 does not fit ADDI's signed 16-bit field (-32768..32767); load larger constants with the LI pseudo-instruction (LI $r 70000 adds 70000 to $r); a program for PendVM's 1997 parser (ROOPL++'s output) runs unchanged in PendVM-compatibility mode (.pendvm, or --pendvm)
addi $1 70000
        ^"""),
    ('fixed-point immediate out of range',
     'start\naddi $1 0.5\nfinish\n',
     """\
t.pal:3:9: error: immediate 0.5 (raw 32768 in Q16.16) does not fit ADDI's signed 16-bit field (-32768..32767); load larger constants with the LI pseudo-instruction (LI $r 0.5 adds 0.5 to $r)
addi $1 0.5
        ^"""),
    ('shift amount out of range',
     'start\nsllx $1 $2 32\nfinish\n',
     """\
t.pal:3:12: error: shift amount 32 is out of range 0..31 at word width 32
sllx $1 $2 32
           ^"""),
    ('ADDIS lane outside a 32-bit word',
     'start\naddis $1 1 2\nfinish\n',
     """\
t.pal:3:12: error: lane k=2 is out of range 1..1 at word width 32 (ADDIS adds imm << 16k)
addis $1 1 2
           ^"""),
    ('ADDIS lane 0',
     '.width 64\nstart\naddis $1 1 0\nfinish\n',
     """\
t.pal:4:12: error: lane k=0 is out of range 1..3 at word width 64 (ADDIS adds imm << 16k)
addis $1 1 0
           ^"""),
    ('branch offset out of range',
     'start\nbeq $1 $2 40000\nfinish\n',
     """\
t.pal:3:11: error: branch offset 39999 (from pc 1 to pc 40000) does not fit BEQ's signed 16-bit offset field (-32768..32767)
beq $1 $2 40000
          ^"""),
    ('branch outside the program',
     'start\nbra 9\nfinish\n',
     """\
t.pal:3:5: error: jump target pc 9 is outside the program (addresses 0..2)
bra 9
    ^"""),
    ('branch to a DATA cell',
     'start\nbra cell\nfinish\ncell: data 0\n',
     """\
t.pal:3:5: error: jump target 'cell' (pc 3) is a DATA cell (line 5), not an instruction
bra cell
    ^"""),
    ('branch to an instruction that does not catch it',
     'start\nbra done\nadd $1 $2\ndone: add $3 $4\nfinish\n',
     """\
t.pal:3:5: error: jump target 'done' (pc 3) holds ADD (line 5), which leaves BR unchanged, so the jump is not caught; land on a SWAPBR or on a branch back to pc 1
bra done
    ^"""),
    ('branch to a branch that does not come back',
     'start\na: bra b\nb: bra c\nc: bra b\nfinish\n',
     """\
t.pal:3:8: error: jump target 'b' (pc 2) holds BRA (line 4), which goes to pc 3, not back to pc 1, so BR stays non-zero; land on a SWAPBR or on a branch back to pc 1
a: bra b
       ^"""),
    ('ADD aliased',
     'start\nadd $3 $3\nfinish\n',
     """\
t.pal:3:8: error: operands a and b are both $3: ADD (a += b) needs distinct registers to be reversible
add $3 $3
       ^"""),
    ('XOR aliased',
     'start\nxor $3 $3\nfinish\n',
     """\
t.pal:3:8: error: operands a and b are both $3: XOR (a ^= b) needs distinct registers to be reversible
xor $3 $3
       ^"""),
    ('ANDX aliased',
     'start\nandx $3 $3 $4\nfinish\n',
     """\
t.pal:3:9: error: operands a and b are both $3: ANDX (a ^= b & c) needs distinct registers to be reversible
andx $3 $3 $4
        ^"""),
    ('EXCH aliased',
     'start\nexch $3 $3\nfinish\n',
     """\
t.pal:3:9: error: operands a and b are both $3: EXCH (swap a with MEM[b]) needs distinct registers to be reversible
exch $3 $3
        ^"""),
    ('ADDI writes $0',
     'start\naddi $0 1\nfinish\n',
     """\
t.pal:3:6: error: ADDI would write $0, which always reads zero
addi $0 1
     ^"""),
    ('SWAPBR writes $0',
     'start\nswapbr $0\nfinish\n',
     """\
t.pal:3:8: error: SWAPBR would write $0, which always reads zero
swapbr $0
       ^"""),
    ('LI writes $0',
     'start\nli $0 0x12345\nfinish\n',
     """\
t.pal:3:4: error: LI would write $0, which always reads zero
li $0 0x12345
   ^"""),
    ('DATA too wide',
     'start\nfinish\ndata 0x100000000\n',
     """\
t.pal:4:6: error: DATA value 0x100000000 = 4294967296 does not fit a 32-bit word (-2147483648..4294967295)
data 0x100000000
     ^"""),
    ('LI constant too wide',
     'start\nli $1 -2147483649\nfinish\n',
     """\
t.pal:3:7: error: LI value -2147483649 is out of range -2147483648..4294967295 at word width 32
li $1 -2147483649
      ^"""),
    ('SUBI immediate out of range',
     'start\nsubi $1 -32768\nfinish\n',
     """\
t.pal:3:9: error: SUBI value -32768 is out of range -32767..32768 at word width 32; load larger constants with the LI pseudo-instruction
subi $1 -32768
        ^"""),
    ('width not 32 or 64',
     '.width 16\nstart\nfinish\n',
     """\
t.pal:2:8: error: .width must be 32 or 64, not '16'
.width 16
       ^"""),
    ('conflicting widths',
     '.width 32\n.width 64\nstart\nfinish\n',
     """\
t.pal:3:8: error: .width 64 conflicts with .width 32 on line 2
.width 64
       ^"""),
    ('no entry point',
     'add $1 $2\nfinish\n',
     """\
t.pal:1:1: error: no entry point: the program has no START instruction and no .start directive
;; pendulum pal file
^"""),
    ('two STARTs without .start',
     'start\nstart\nfinish\n',
     """\
t.pal:3:1: error: a second START instruction (the first is on line 2); say which one is the entry with .start LABEL
start
^"""),
    ('.start on a DATA cell',
     '.start cell\nstart\nfinish\ncell: data 0\n',
     """\
t.pal:2:8: error: .start target 'cell' (pc 2) is a DATA cell (line 5), not an instruction
.start cell
       ^"""),
    ('unknown directive',
     '.strat main\nstart\nfinish\n',
     """\
t.pal:2:1: error: unknown directive '.strat'; did you mean .start?
.strat main
^"""),
    ('label on a directive',
     'x: .const N 1\nstart\nfinish\n',
     """\
t.pal:2:1: error: label 'x' cannot name a directive; put it on an instruction or DATA line
x: .const N 1
^"""),
    ('.const of a label',
     'start\n.const N here\nhere: finish\n',
     """\
t.pal:3:10: error: a constant's value must be a number or an earlier constant; 'here' is not
.const N here
         ^"""),
    ('declaration type',
     '.input x $1 float\nstart\nfinish\n',
     """\
t.pal:2:13: error: expected 'fixed' or 'int', got 'float'
.input x $1 float
            ^"""),
    ('declaration of $0',
     '.input x $0\nstart\nfinish\n',
     """\
t.pal:2:10: error: $0 always reads zero; it cannot hold a value
.input x $0
         ^"""),
    ('declaration of an instruction word',
     '.output y here\nstart\nhere: finish\n',
     """\
t.pal:2:11: error: 'here' (pc 1) holds an instruction (line 4), not a memory word
.output y here
          ^"""),
    ('name declared twice',
     '.input x $1\n.output x $2\nstart\nfinish\n',
     """\
t.pal:3:9: error: 'x' is already declared on line 2
.output x $2
        ^"""),
    ('PendVM octal literal with digit 9',
     'start\naddi $1 09\nfinish\n',
     """\
t.pal:3:9: error: '09' is not a number: a leading 0 makes an octal literal (as in C and PendVM), and octal digits are 0..7
addi $1 09
        ^"""),
    ('fixed-point literal as an integer',
     'start\nsllx $1 $2 1.5\nfinish\n',
     """\
t.pal:3:12: error: expected an integer, got the fixed-point literal 1.5
sllx $1 $2 1.5
           ^"""),
    ('invalid label',
     'start\n10: add $1 $2\nfinish\n',
     """\
t.pal:3:1: error: invalid label '10:': a label is a word that is not a number and does not start with '$', '-' or '+'
10: add $1 $2
^"""),
    ('malformed number',
     'start\naddi $1 12abc\nfinish\n',
     """\
t.pal:3:9: error: '12abc' is not a number
addi $1 12abc
        ^"""),
    ('a second .start',
     '.start a\n.start b\na: start\nb: finish\n',
     """\
t.pal:3:1: error: a second .start (the first is on line 2)
.start b
^"""),
    ('a label named like a constant',
     '.const N 1\nN: start\nfinish\n',
     """\
t.pal:3:1: error: 'N' is already a constant (line 2)
N: start
^"""),
    ("nothing after '='",
     '.input x $1 =\nstart\nfinish\n',
     """\
t.pal:2:14: error: expected one value after '=' (.input NAME LOC [fixed|int] [= VALUE] [in LO..HI])
.input x $1 =
             ^"""),
    ('declaration with an extra operand',
     '.input x $1 int 5\nstart\nfinish\n',
     """\
t.pal:2:17: error: .input takes NAME LOC, an optional type and an optional '= VALUE' (.input NAME LOC [fixed|int] [= VALUE] [in LO..HI])
.input x $1 int 5
                ^"""),
    ('default value too wide',
     '.input x $1 =0x1ffffffff\nstart\nfinish\n',
     """\
t.pal:2:14: error: default value of x: 0x1ffffffff does not fit Q16.16 (from -32768 to 32767.99998)
.input x $1 =0x1ffffffff
             ^"""),
    ('invalid constant name',
     '.const 1N 5\nstart\nfinish\n',
     """\
t.pal:2:8: error: invalid constant name '1N'
.const 1N 5
       ^"""),
    ('constant too wide',
     '.const BIG 0x100000000\nstart\nfinish\n',
     """\
t.pal:2:12: error: constant 0x100000000 = 4294967296 does not fit a 32-bit word (-2147483648..4294967295)
.const BIG 0x100000000
           ^"""),
    ('.width without a value',
     '.width\nstart\nfinish\n',
     """\
t.pal:2:7: error: .width takes 1 operand (.width 32|64), got 0
.width
      ^"""),
    ('.start outside the program',
     '.start 7\nstart\nfinish\n',
     """\
t.pal:2:8: error: .start target pc 7 is outside the program (addresses 0..1)
.start 7
       ^"""),
    ('negated label as a branch target',
     'start\nx: bra -x\nfinish\n',
     """\
t.pal:3:8: error: -x is not an address (only immediates and DATA values take -name)
x: bra -x
       ^"""),
    ('label after the instruction',
     'start\nadd $1 $2 x:\nfinish\n',
     """\
t.pal:3:11: error: unexpected label 'x:': labels come first on a line
add $1 $2 x:
          ^"""),
]


@pytest.mark.parametrize("body, expected", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_each_error_is_reported_at_its_column_with_the_line_and_a_caret(body, expected):
    assert diagnostics_of(HEADER + body) == expected


def test_a_file_without_the_pal_header_is_reported_at_1_1_and_still_checked():
    assert diagnostics_of("start\nadd $3 $3\nfinish\n") == """\
t.pal:1:1: error: expected the PAL header ';; pendulum pal file' at the start of line 1
start
^
t.pal:2:8: error: operands a and b are both $3: ADD (a += b) needs distinct registers to be reversible
add $3 $3
       ^"""


def test_all_errors_of_a_file_are_reported_in_one_pass_in_source_order():
    source = HEADER + "start\nadd $3 $3\naddi $1 70000\nbra nowhere\nfoo $1\nxor $0 $1\nfinish\n"
    with pytest.raises(AssemblyError) as info:
        assemble(source, "t.pal")
    found = [(d.line, d.column, d.message.split(":")[0].split(";")[0])
             for d in info.value.diagnostics]
    assert found == [
        (3, 8, "operands a and b are both $3"),
        (4, 9, "immediate 70000 does not fit ADDI's signed 16-bit field (-32768..32767)"),
        (5, 5, "undefined label or constant 'nowhere'"),
        (6, 1, "unknown instruction 'foo'"),
        (7, 5, "XOR would write $0, which always reads zero"),
    ]


def test_a_bad_line_keeps_its_address_so_later_labels_stay_right():
    source = HEADER + "start\nfoo $1\nbra there\nfoo\nthere: bra 2\nfinish\n"
    with pytest.raises(AssemblyError) as info:
        assemble(source, "t.pal")
    assert [d.line for d in info.value.diagnostics] == [3, 5]  # no error at the paired branches


def test_a_bad_width_directive_is_reported_even_when_the_caller_gives_the_width():
    """The caller's width overrides a good ``.width``; a bad one is still an error."""
    assert diagnostics_of(HEADER + ".width 48\nstart\nfinish\n", width=32) == """\
t.pal:2:8: error: .width must be 32 or 64, not '48'
.width 48
       ^"""


def test_the_caret_keeps_tabs_so_it_lines_up():
    report = diagnostics_of(HEADER + "start\n\tadd\t$3\t$3\nfinish\n")
    assert report.splitlines()[1:] == ["\tadd\t$3\t$3", "\t   \t  \t^"]


def test_a_missing_operand_is_reported_just_after_the_line():
    report = diagnostics_of(HEADER + "start\nadd $1   ; comment\nfinish\n")
    assert report.splitlines()[0] == "t.pal:3:7: error: add takes 2 operands (add $a $b), got 1"


def test_diagnostics_carry_their_parts():
    with pytest.raises(AssemblyError) as info:
        assemble(HEADER + "start\nadd $3 $3\nfinish\n", "t.pal")
    assert info.value.diagnostics == [Diagnostic(
        "t.pal", 3, 8,
        "operands a and b are both $3: ADD (a += b) needs distinct registers to be reversible",
        "add $3 $3")]
    assert info.value.diagnostics[0].severity == "error"


def test_a_file_that_is_not_utf8_is_an_assembly_error(tmp_path):
    path = tmp_path / "bin.pal"
    path.write_bytes(b";; pendulum pal file\nstart\n\xff\xfe\n")
    with pytest.raises(AssemblyError) as info:
        assemble_file(path)
    assert info.value.diagnostics[0].format().startswith(
        f"{path}:3:1: error: the file is not UTF-8")


def test_an_empty_file_lacks_the_header_and_an_entry():
    assert diagnostics_of("") == """\
t.pal:1:1: error: expected the PAL header ';; pendulum pal file' at the start of line 1

^
t.pal:1:1: error: no entry point: the program has no START instruction and no .start directive

^"""


def test_pendvm_programs_that_jump_onto_finish_assemble():
    # PendVM's tests/programs/mult_frank.pisa ends with `bra done` ... `done: finish`:
    # the machine halts there with BR = the jump's offset (docs/simulator.md).
    image = assemble(HEADER + "start\nbra done\nadd $1 $2\ndone:\nfinish\n", "t.pal")
    assert image.finish == 3


def test_a_file_that_is_not_pal_stops_after_max_errors():
    """A 21 MB waveform given as a program made two million errors (94 s, 3.4 GB, every one
    printed): the assembler now stops after MAX_ERRORS with one more saying why."""
    import time

    from revasm.assembler.diagnostics import MAX_ERRORS

    text = "".join(f"b{k:016b} !{k}\n" for k in range(200_000))
    started = time.process_time()
    with pytest.raises(AssemblyError) as raised:
        assemble(text, "wave.vcd")
    diagnostics = raised.value.diagnostics
    assert len(diagnostics) == MAX_ERRORS + 1
    assert "too many errors: stopped after 100 (is wave.vcd a PAL source file?)" \
        in diagnostics[-1].message
    assert time.process_time() - started < 20  # not a pass over every line's errors


def test_a_file_with_fewer_errors_than_the_cap_reports_every_one():
    text = "\n".join([";; pendulum pal file", "        start"] + ["        bogus $1"] * 30
                     + ["        finish"])
    with pytest.raises(AssemblyError) as raised:
        assemble(text, "thirty.pal")
    assert len(raised.value.diagnostics) == 30
    assert not any("too many" in d.message for d in raised.value.diagnostics)
