"""PAL programs in PendVM's dialect give the registers Frank's Appendix B defines.

Each case is a few lines of PAL and the registers (signed, 32-bit wraparound)
Frank's semantics leave.  Where PendVM departs from Frank (signed SLTIX, ORIX
with an immediate), the expected value follows Frank.
"""
from __future__ import annotations

import pytest
from pal_sources import FIB_PISA

from revasm.assembler import assemble
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import Machine


def run_pal(body: str, width: int = 32) -> Machine:
    source = ";; pendulum pal file\n        start\n" + body + "\n        finish\n"
    machine = Machine(assemble(source, "case.pal", width=width))
    machine.run(direction=1)
    return machine


def signed_registers(machine: Machine, width: int = 32) -> dict[int, int]:
    fmt = WordFormat(width)
    return {i: fmt.signed(w) for i, w in enumerate(machine.registers) if w}


CASES = {
    "ADD": ("addi $1 5\naddi $2 -7\nadd $1 $2", {1: -2, 2: -7}),
    "ADD wraps": ("xori $1 -1\nsrlx $2 $1 1\naddi $3 1\nadd $2 $3",
                  {1: -1, 2: -(1 << 31), 3: 1}),
    "SUB": ("addi $1 3\naddi $2 10\nsub $1 $2", {1: -7, 2: 10}),
    "SUB wraps": ("addi $2 1\nsub $1 $2\nsrlx $3 $1 1\nsub $3 $1", {1: -1, 2: 1, 3: -(1 << 31)}),
    "ADDI extremes": ("addi $1 32767\naddi $1 -32768", {1: -1}),
    "NEG": ("addi $1 5\nneg $1", {1: -5}),
    "NEG of the most negative word": ("addi $1 1\nrr $1 1\nneg $1", {1: -(1 << 31)}),
    "XOR": ("addi $1 12\naddi $2 10\nxor $1 $2", {1: 6, 2: 10}),
    "XORI sign-extends": ("xori $1 -1\nxori $2 0x7fff", {1: -1, 2: 0x7FFF}),
    "ANDX": ("addi $2 12\naddi $3 10\nandx $1 $2 $3", {1: 8, 2: 12, 3: 10}),
    "ANDIX": ("addi $2 0x7ff0\nandix $1 $2 0x0f0f", {1: 0x0F00, 2: 0x7FF0}),
    "ORX": ("addi $2 12\naddi $3 10\norx $1 $2 $3", {1: 14, 2: 12, 3: 10}),
    "ORIX takes an immediate": ("addi $2 12\norix $1 $2 3", {1: 15, 2: 12}),
    "NORX": ("addi $2 12\naddi $3 10\nnorx $1 $2 $3", {1: -15, 2: 12, 3: 10}),
    "SLTX signed": ("addi $2 -1\naddi $3 1\nsltx $1 $2 $3\nsltx $4 $3 $2",
                    {1: 1, 2: -1, 3: 1}),
    "SLTX equal is not less": ("addi $2 4\naddi $3 4\nsltx $1 $2 $3", {2: 4, 3: 4}),
    "SLTX xors into the target": ("addi $1 6\naddi $3 1\nsltx $1 $2 $3", {1: 7, 3: 1}),
    "SLTIX signed": ("addi $2 -5\nsltix $1 $2 3", {1: 1, 2: -5}),
    "SLLX": ("addi $2 3\nsllx $1 $2 4\nsllx $4 $2 31", {1: 48, 2: 3, 4: -(1 << 31)}),
    "SLLVX": ("addi $2 3\naddi $3 5\nsllvx $1 $2 $3", {1: 96, 2: 3, 3: 5}),
    "SLLVX uses the amount mod 32": ("addi $2 3\naddi $3 33\nsllvx $1 $2 $3",
                                     {1: 6, 2: 3, 3: 33}),
    "SRLX is logical": ("addi $2 -16\nsrlx $1 $2 4", {1: 0x0FFFFFFF, 2: -16}),
    "SRLVX": ("addi $2 -16\naddi $3 4\nsrlvx $1 $2 $3", {1: 0x0FFFFFFF, 2: -16, 3: 4}),
    "SRAX is arithmetic": ("addi $2 -16\nsrax $1 $2 2\naddi $3 16\nsrax $4 $3 2",
                           {1: -4, 2: -16, 3: 16, 4: 4}),
    "SRAVX": ("addi $2 -16\naddi $3 31\nsravx $1 $2 $3", {1: -1, 2: -16, 3: 31}),
    "RL": ("addi $1 0x7ff0\nrl $1 20", {1: 0xFF000007 - (1 << 32)}),
    "RL wraps the top bits around": ("xori $1 -2\nrl $1 1", {1: -3}),
    "RR": ("addi $1 1\nrr $1 1", {1: -(1 << 31)}),
    "RLV": ("addi $1 0x7ff0\naddi $2 20\nrlv $1 $2", {1: 0xFF000007 - (1 << 32), 2: 20}),
    "RRV": ("addi $1 3\naddi $2 1\nrrv $1 $2", {1: -(1 << 31) + 1, 2: 1}),
    "RL by zero": ("addi $1 9\nrl $1 0", {1: 9}),
    "EXCH": ("addi $2 cell\nexch $1 $2\naddi $3 44\nexch $3 $2\n        finish\ncell:   data 17",
             {1: 17, 2: None}),
    "EMIT moves the word out": ("addi $1 7\nemit $1", {}),
}


@pytest.mark.parametrize("name", CASES)
def test_pisa_instruction_gives_franks_registers(name):
    body, expected = CASES[name]
    if "finish" in body:  # the case brings its own data after FINISH
        head, data = body.split("        finish\n")
        machine = Machine(assemble(";; pendulum pal file\n        start\n" + head
                                   + "\n        finish\n" + data, "case.pal"))
        machine.run(direction=1)
    else:
        machine = run_pal(body)
    got = signed_registers(machine)
    for reg, value in expected.items():
        if value is None:
            assert reg in got
        else:
            assert got.get(reg, 0) == value, f"${reg}"
    assert set(got) == set(expected)


def test_exch_swaps_the_data_cell():
    source = (";; pendulum pal file\n        start\n        addi $2 cell\n        exch $1 $2\n"
              "        finish\ncell:   data 17\n")
    image = assemble(source, "exch.pal")
    machine = Machine(image)
    machine.run(direction=1)
    assert machine.registers[1] == 17
    assert machine.memory[image.symbols["cell"]] == 0


def test_show_out_output_and_emit_write_the_output_in_order():
    machine = run_pal("addi $1 3\nshow $1\nout $1\noutput $1\naddi $2 -4\nemit $2")
    assert [WordFormat(32).signed(w) for w in machine.output] == [3, 3, 3, -4]
    assert machine.registers[2] == 0


BRANCHES = [
    # (branch, operands, value of $1, taken?)
    ("beq", "$1 $2", 4, True), ("beq", "$1 $2", 5, False),
    ("bne", "$1 $2", 5, True), ("bne", "$1 $2", 4, False),
    ("bgez", "$1", 0, True), ("bgez", "$1", 3, True), ("bgez", "$1", -1, False),
    ("bgtz", "$1", 1, True), ("bgtz", "$1", 0, False), ("bgtz", "$1", -7, False),
    ("blez", "$1", 0, True), ("blez", "$1", -2, True), ("blez", "$1", 1, False),
    ("bltz", "$1", -1, True), ("bltz", "$1", 0, False), ("bltz", "$1", 9, False),
]


@pytest.mark.parametrize("branch, operands, value, taken", BRANCHES)
def test_conditional_branch_is_taken_exactly_when_franks_condition_holds(branch, operands,
                                                                          value, taken):
    # $2 = 4; a diamond on the branch: the taken side adds 10 to $3, the other 1.
    # The join catches the `out` jump exactly when the branch was not taken, so
    # it tests the opposite condition, as a compiler would write it.
    opposite = {"beq": "bne", "bne": "beq", "bgez": "bltz", "bltz": "bgez",
                "bgtz": "blez", "blez": "bgtz"}[branch]
    body = (f"addi $1 {value}\naddi $2 4\n"
            f"test:   {branch} {operands} yes\n        addi $3 1\nout:    bra join\n"
            f"yes:    {branch} {operands} test\n        addi $3 10\n"
            f"join:   {opposite} {operands} out")
    machine = run_pal(body)
    assert WordFormat(32).signed(machine.registers[3]) == (10 if taken else 1)


def test_bra_and_rbra_call_and_uncall_through_a_swapbr_portal():
    body = ("addi $1 7\n        bra f\n        rbra f\n        bra f\n        bra f\n"
            "        finish\nf_top:  bra f_bot\nf:      swapbr $31\n        neg $31\n"
            "        add $2 $1\nf_bot:  bra f_top")
    head, tail = body.split("        finish\n")
    machine = Machine(assemble(";; pendulum pal file\n        start\n" + head
                               + "        finish\n" + tail, "call.pal"))
    machine.run(direction=1)
    assert machine.registers[2] == 14  # call, uncall, call, call
    assert machine.registers[31] == 0 and machine.br == 0 and machine.direction == 1


@pytest.mark.parametrize("width", [32, 64])
def test_pendvm_fib_program_assembles_unchanged_and_gives_2584(width):
    image = assemble(FIB_PISA, "fib.pisa", width=width)  # PendVM's own program
    assert image.symbols["n_value"] == 15 and image.entry == 0
    machine = Machine(image)
    machine.run(direction=1)
    assert machine.registers[6] == 2584 and machine.registers[1] == 2584
    assert machine.registers[4] == 0 and machine.registers[5] == 0
    assert machine.memory[15] == 18
