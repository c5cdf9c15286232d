"""PendVM-compatibility mode (``.pendvm`` / ``--pendvm``, docs/assembly.md "PendVM variants").

PendVM's 1997 parser, which ROOPL++'s output targets, takes an immediate as the 32-bit word
``strtol`` gives (ROOPL++'s ``test/ArrayUsageExample.pal`` has ``XORI $8 3735943886``).  In
the mode such a program assembles unchanged, at PendVM's addresses, and runs alike on every
engine, forward and backward; outside it the immediate is refused with a message naming the
mode; the formats of 32-bit instruction words (``asm -o x.bin``/``.hex``, the RTL) refuse it.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from revasm.assembler import AssemblyError, assemble, bin_bytes, disassemble, hex_text
from revasm.assembler.image import NotEncodable, encoding_problem
from revasm.cli.main import cli
from revasm.isa.codec import decode
from revasm.isa.fixed_point import WordFormat
from revasm.loading import LoadError, load
from revasm.sim.engines import available
from revasm.sim.engines import load as load_engine

#: Our own program in the shape ROOPL++'s code generator emits (written for this test, its
#: values worked out by hand from PendVM's semantics): a jump over the globals' DATA cells,
#: a procedure between ``_top``/``_bot`` portals entered with BRA and left through SWAPBR,
#: ``start: BRA top`` before START, and immediates PendVM's 1997 parser takes whole.
ROOPLPP_STYLE = """\
;; pendulum pal file
top:                     BRA    start
l_r_marker:              DATA   0
l_tag_top:               BRA    l_tag_bot
l_tag:                   SWAPBR $2
                         NEG    $2
                         XORI   $8 3735943886
                         ADDI   $7 l_r_marker
                         EXCH   $8 $7
                         ADDI   $7 -l_r_marker
                         ADDI   $9 2147483647
                         ADDI   $10 -100000
l_tag_bot:               BRA    l_tag_top
start:                   BRA    top
                         START
                         XORI   $11 4294967295
                         BRA    l_tag
                         ANDIX  $12 $11 0x7FFF0000
                         SLTIX  $13 $12 0x7FFF0001
                         SLTIX  $14 $10 -99999
finish:                  FINISH
"""

#: pc -> the whole immediate (signed 32-bit) of each instruction whose immediate is wide.
#: (``XORI $11 4294967295`` at pc 14 is PendVM's word 0xFFFFFFFF, -1: it fits the field.)
WIDE = {5: -559023410, 9: 2147483647, 10: -100000, 16: 0x7FFF0000, 17: 0x7FFF0001, 18: -99999}
#: The registers after the forward run, signed (all others 0): worked out by hand.  The
#: SLTIX comparisons come out the same signed (revasm) and unsigned (PendVM).
EXPECTED_REGISTERS = {11: -1, 9: 2147483647, 10: -100000, 12: 0x7FFF0000, 13: 1, 14: 1}
#: 0xDEADFACE, stored by the procedure through EXCH.
EXPECTED_MARKER = 0xDEADFACE - (1 << 32)
QUICK_ENGINES = [name for name in ("reference", "vector", "compiled") if name in available()]


def pendvm_image():
    return assemble(ROOPLPP_STYLE, "rooplpp.pal", pendvm=True)


def test_the_mode_keeps_pendvm_s_addresses_and_the_whole_immediates():
    image = pendvm_image()
    # PendVM's addresses: one per instruction or DATA line, labels where PendVM puts them.
    assert len(image) == 20
    assert image.symbols == {"top": 0, "l_r_marker": 1, "l_tag_top": 2, "l_tag": 3,
                             "l_tag_bot": 11, "start": 12, "finish": 19}
    assert image.entry == 13 and image.finish == 19
    assert image.immediates == WIDE
    # The word holds the immediate's low 16 bits (0xDEADFACE -> 0xFACE).
    ins, operands = decode(image.words[5])
    assert ins.mnemonic == "XORI" and operands == {"a": 8, "imm": 0xFACE - (1 << 16)}
    # 4294967295 is PendVM's word 0xFFFFFFFF = -1, which the field holds: no entry.
    assert decode(image.words[14])[1] == {"a": 11, "imm": -1}


def test_the_directive_and_the_option_are_the_same_mode():
    with_directive = assemble(ROOPLPP_STYLE.replace("top:", ".pendvm\ntop:", 1), "x.pal")
    with_option = pendvm_image()
    assert with_directive.words == with_option.words
    assert with_directive.immediates == with_option.immediates
    assert with_directive.symbols == with_option.symbols


@pytest.mark.parametrize("engine", QUICK_ENGINES)
def test_every_engine_runs_it_to_the_expected_words_and_back(engine):
    image = pendvm_image()
    fmt = WordFormat(image.width)
    machine = load_engine(image, 1, engine_name=engine, max_steps=10_000)
    before = machine.snapshot(0)
    machine.run(1)
    assert machine.fault(0) is None, str(machine.fault(0))
    after = machine.snapshot(0)
    registers = {n: fmt.signed(word) for n, word in enumerate(after.registers) if word}
    assert registers == EXPECTED_REGISTERS
    assert fmt.signed(int(machine.bank_word("MEM", image.symbols["l_r_marker"])[0])) == \
        EXPECTED_MARKER
    assert after.pc == image.finish
    reference = load_engine(image, 1, engine_name="reference", max_steps=10_000)
    reference.run(1)
    assert after == reference.snapshot(0)  # bit for bit: registers, memory, BR, PC, steps
    machine.run(-1)  # backward from FINISH: the initial state exactly
    assert machine.fault(0) is None, str(machine.fault(0))
    restored = machine.snapshot(0)
    assert restored.registers == before.registers and restored.memory == before.memory


def test_outside_the_mode_the_wide_immediate_is_refused_naming_the_mode():
    with pytest.raises(AssemblyError) as caught:
        assemble(ROOPLPP_STYLE, "rooplpp.pal")
    messages = [d.message for d in caught.value.diagnostics]
    assert len(messages) == len(WIDE) + 1  # and 4294967295, which only the mode reduces
    first = caught.value.diagnostics[0]
    assert (first.line, first.column) == (7, 36)  # the XORI's immediate
    assert "3735943886 does not fit XORI's signed 16-bit field" in first.message
    assert "PendVM-compatibility mode (.pendvm, or --pendvm)" in first.message


def test_the_mode_takes_no_more_than_pendvm_s_word_and_only_at_w_32():
    too_wide = ";; pendulum pal file\n.pendvm\nSTART\nXORI $1 4294967296\nFINISH\n"
    with pytest.raises(AssemblyError, match="does not fit PendVM's 32-bit word"):
        assemble(too_wide, "x.pal")
    with pytest.raises(AssemblyError, match="at PendVM's word width W = 32 only"):
        assemble(ROOPLPP_STYLE, "x.pal", 64, pendvm=True)
    # ORIX (PendVM reads a register there) and ADDIS are not PendVM's IMM instructions.
    orix = ";; pendulum pal file\n.pendvm\nSTART\nORIX $1 $2 70000\nFINISH\n"
    with pytest.raises(AssemblyError, match="ORIX's signed 16-bit field") as caught:
        assemble(orix, "x.pal")
    assert "PendVM-compatibility" not in caught.value.diagnostics[0].message


def test_the_directive_takes_no_operand():
    with pytest.raises(AssemblyError, match=r"\.pendvm takes 0 operands"):
        assemble(";; pendulum pal file\n.pendvm on\nSTART\nFINISH\n", "x.pal")


def test_binary_formats_refuse_what_their_words_cannot_hold():
    image = pendvm_image()
    for write in (bin_bytes, hex_text):
        with pytest.raises(NotEncodable, match=r"pc 5 \(rooplpp.pal:7: XORI +\$8 3735943886\)"
                                               r" has the immediate -559023410 \(0xdeadface\)"):
            write(image)
    problem = encoding_problem(image, "the RTL core", "run it on an engine")
    assert problem is not None and problem.startswith("the RTL core holds 32-bit instruction")
    assert problem.endswith("in memory only; run it on an engine")
    # A program without wide immediates is unchanged by the mode and writes as before.
    plain = assemble(";; pendulum pal file\nSTART\nXORI $1 5\nFINISH\n", "p.pal", pendvm=True)
    assert plain.immediates == {} and encoding_problem(plain, "x", "y") is None
    assert bin_bytes(plain)


def test_disassembly_keeps_the_mode_and_the_whole_immediate():
    image = pendvm_image()
    text = disassemble(image)
    assert ".pendvm" in text.splitlines()[:4]
    assert "XORI $8 -559023410" in text
    again = assemble(text, "again.pal")
    assert again.words == image.words and again.immediates == image.immediates


def test_load_takes_the_mode_for_pal_source_only(tmp_path):
    source = tmp_path / "rooplpp.pal"
    source.write_text(ROOPLPP_STYLE)
    assert load(source, pendvm=True).immediates == WIDE
    plain = tmp_path / "plain.pal"
    plain.write_text(";; pendulum pal file\nSTART\nFINISH\n")
    image = tmp_path / "plain.bin"
    image.write_bytes(bin_bytes(load(plain)))
    with pytest.raises(LoadError, match="a way of reading PAL source, and this is a .bin"):
        load(image, pendvm=True)


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_cli_runs_it_with_pendvm_and_refuses_it_without(tmp_path):
    source = tmp_path / "rooplpp.pal"
    source.write_text(ROOPLPP_STYLE)
    refused = invoke("run", source)
    assert refused.exit_code == 1
    assert "PendVM-compatibility mode (.pendvm, or --pendvm)" in refused.output
    for engine in QUICK_ENGINES:
        ran = invoke("run", source, "--pendvm", "--engine", engine, "--json")
        assert ran.exit_code == 0, ran.output
        result = json.loads(ran.stdout)
        assert result["status"] == "finished" and result["steps"] == 19
        registers = {int(name[1:]): word for name, word in result["registers"].items() if word}
        assert registers == EXPECTED_REGISTERS
        assert result["memory"] == {"1": EXPECTED_MARKER}


def test_cli_asm_refuses_to_write_an_image_and_writes_nothing(tmp_path):
    source = tmp_path / "rooplpp.pal"
    source.write_text(ROOPLPP_STYLE)
    for fmt in ("bin", "hex"):
        target = tmp_path / f"out.{fmt}"
        result = invoke("asm", source, "--pendvm", "--format", fmt, "-o", target)
        assert result.exit_code == 1
        assert f"cannot write {target}: a .{fmt} image holds 32-bit instruction words" in \
            result.output
        assert "PendVM-compatibility mode (.pendvm or --pendvm)" in result.output
        assert not target.exists() and not target.with_name(target.name + ".json").exists()
    as_json = invoke("asm", source, "--pendvm", "-o", tmp_path / "j.bin", "--json")
    error = json.loads(as_json.stdout)["error"]
    assert error["line"] == 7 and error["file"].endswith("rooplpp.pal")


def test_the_rtl_and_its_waveforms_refuse_it_naming_the_mode(tmp_path):
    from revasm.rtl_sim import RtlSimError, rtl_sim
    with pytest.raises(RtlSimError, match=r"the RTL core holds 32-bit instruction words.*"
                                          r"PendVM-compatibility mode"):
        rtl_sim(pendvm_image())
    source = tmp_path / "rooplpp.pal"
    source.write_text(ROOPLPP_STYLE)
    vcd = tmp_path / "run.vcd"
    result = invoke("run", source, "--pendvm", "--vcd", vcd)
    assert result.exit_code == 1 and not vcd.exists()
    assert "--vcd writes the RTL core's signals; the core holds 32-bit" in result.output
    assert result.output.rstrip().endswith("run without --vcd")


def test_cli_disasm_takes_the_option_too(tmp_path):
    source = tmp_path / "rooplpp.pal"
    source.write_text(ROOPLPP_STYLE)
    assert invoke("disasm", source).exit_code == 1
    shown = invoke("disasm", source, "--pendvm")
    assert shown.exit_code == 0
    assert ".pendvm" in shown.stdout and "XORI $8 -559023410" in shown.stdout
