"""Each fault kind of the reference machine: where it stops, what it says, what state it leaves.

Every example runs twice: on the fast path (generated blocks) and traced
(single steps); both must report the same fault at the same PC and step.
"""
from __future__ import annotations

import pytest
from program_generators import ProgramBuilder

from revasm.assembler.image import Image
from revasm.isa import BY_ENCODING, encode, lookup
from revasm.machine import FAULT_KINDS, MachineFault
from revasm.sim.reference import Machine

PATHS = pytest.mark.parametrize("traced", [False, True], ids=["blocks", "single-steps"])


def fault_of(machine: Machine, traced: bool, direction: int = +1) -> MachineFault:
    records = []
    with pytest.raises(MachineFault) as info:
        machine.run(direction, trace=records.append if traced else None)
    fault = info.value
    assert fault.step == machine.steps
    assert fault.pc == machine.pc
    if traced:
        assert len(records) == machine.steps
    return fault


@PATHS
def test_a_jump_onto_a_data_instruction_faults_naming_landing_and_source(traced):
    b = ProgramBuilder()
    b.op("START")                       # line 1, pc 0
    b.op("BRA", "target")               # line 2, pc 1
    b.op("ADDI", 2, 7)                  # line 3, pc 2 (jumped over)
    b.label("target").op("ADDI", 1, 1)  # line 4, pc 3: cannot clear BR
    b.op("FINISH")
    machine = Machine(b.build())
    fault = fault_of(machine, traced)
    assert fault.kind == "uncaught-jump"
    assert fault.message == ("jump from line 2 (pc 1) landed on line 4 (pc 3), which does "
                             "not catch it: BR is still 2 after the landing instruction")
    assert (fault.landing_pc, fault.jump_source_pc, fault.jump_source_line) == (3, 1, 2)
    assert (fault.pc, fault.line, fault.br, fault.direction, fault.step) == (3, 4, 2, 1, 3)
    # The landing instruction's effects stay; the jumped-over one never ran.
    assert machine.get_register(1) == 1 and machine.get_register(2) == 0


def diamond_breaking_its_postcondition() -> Image:
    """if $1 == 0 ... else ..., whose then-arm makes $1 zero: the join's BNE cannot catch."""
    b = ProgramBuilder()
    b.op("START")                                   # pc 0
    b.op("ADDI", 1, 5)                              # pc 1: $1 = 5, so the then-arm runs
    b.label("if").op("BEQ", 1, 0, "else")           # pc 2
    b.op("ADDI", 1, -5)                             # pc 3: breaks "$1 != 0"
    b.label("then_end").op("BRA", "join")           # pc 4
    b.label("else").op("BEQ", 1, 0, "if")           # pc 5
    b.label("join").op("BNE", 1, 0, "then_end")     # pc 6: the postcondition $1 != 0
    b.op("FINISH")
    return b.build()


@PATHS
def test_a_diamond_whose_arm_breaks_its_postcondition_faults_at_the_join(traced):
    machine = Machine(diamond_breaking_its_postcondition())
    fault = fault_of(machine, traced)
    assert fault.kind == "uncaught-jump"
    assert (fault.landing_pc, fault.jump_source_pc) == (6, 4)
    assert "jump from line 5 (pc 4) landed on line 7 (pc 6)" in fault.message
    assert fault.br == 2


@PATHS
def test_a_diamond_that_keeps_its_postcondition_runs_both_ways(traced):
    b = ProgramBuilder()
    b.op("START").op("ADDI", 1, 5)
    b.label("if").op("BEQ", 1, 0, "else")
    b.op("ADDI", 2, 3)
    b.label("then_end").op("BRA", "join")
    b.label("else").op("BEQ", 1, 0, "if")
    b.op("ADDI", 2, 4)
    b.label("join").op("BNE", 1, 0, "then_end")
    b.op("FINISH")
    machine = Machine(b.build())
    records = []
    machine.run(+1, trace=records.append if traced else None)
    assert machine.get_register(2) == 3
    machine.run(-1, trace=records.append if traced else None)
    assert machine.registers == [0] * 32


def test_an_undecodable_word_is_an_illegal_instruction():
    unused = next(op for op in range(64) if all(key[0] != op for key in BY_ENCODING))
    image = ProgramBuilder().op("START").op("FINISH").build()
    image.words[1] = unused << 26
    fault = fault_of(Machine(image), traced=False)
    assert fault.kind == "illegal-instruction"
    assert fault.pc == 1 and "is not an instruction" in fault.message


@PATHS
def test_running_into_a_data_cell_is_an_illegal_instruction(traced):
    b = ProgramBuilder().op("START").op("ADDI", 1, 1).data(42).op("FINISH")
    machine = Machine(b.build())
    fault = fault_of(machine, traced)
    assert fault.kind == "illegal-instruction"
    assert (fault.pc, fault.step) == (2, 2)
    assert fault.message == "line 3 (pc 2) holds a DATA cell, not an instruction"


@PATHS
def test_running_off_the_end_of_the_program_is_an_illegal_instruction(traced):
    b = ProgramBuilder().op("START").op("ADDI", 1, 1)
    fault = fault_of(Machine(b.build()), traced)
    assert fault.kind == "illegal-instruction"
    assert fault.pc == 2 and "outside the program" in fault.message


@PATHS
def test_a_jump_out_of_the_program_is_an_illegal_instruction_naming_the_jump(traced):
    b = ProgramBuilder().op("START").op("BRA", 40).op("FINISH")
    fault = fault_of(Machine(b.build()), traced)
    assert fault.kind == "illegal-instruction"
    assert fault.pc == 40 and fault.jump_source_pc == 1
    assert "reached by the jump from line 2 (pc 1)" in fault.message


@pytest.mark.parametrize("mnemonic, operands, why", [
    ("ADD", (3, 3), "must be different registers"),
    ("ADDI", (0, 5), "$0"),
    ("SWAP", (4, 0), "$0"),
])
def test_operands_the_table_forbids_are_illegal_instructions(mnemonic, operands, why):
    image = ProgramBuilder().op("START").op("FINISH").build()
    ins = lookup(mnemonic)
    image.words[1] = encode(ins, dict(zip(ins.operand_names, operands)))
    image.words.append(encode(lookup("FINISH"), {}))
    image.is_code.append(True)
    fault = fault_of(Machine(image), traced=False)
    assert fault.kind == "illegal-instruction" and why in fault.message


@PATHS
@pytest.mark.parametrize("address", [70_000, -3, 65_535, 1 << 31])
def test_exch_reaches_every_address_of_the_word(traced, address):
    # memory is the whole address space: -3 is the word 0xfffffffd, near the top
    b = ProgramBuilder().op("START").op("ADDI", 1, 9).op("EXCH", 1, 2).op("FINISH")
    machine = Machine(b.build())
    machine.set_register(2, address)
    if traced:
        while not machine.halted:
            machine.step()
    else:
        machine.run()
    assert machine.get_register(1) == 0
    assert machine.get_memory(address & 0xFFFFFFFF) == 9
    assert machine.snapshot().word(address & 0xFFFFFFFF) == 9


@PATHS
@pytest.mark.parametrize("address, why", [
    (1, "address 1 holds an instruction (line 2 (pc 1)), not data"),
])
def test_exch_with_a_bad_address_is_a_memory_address_fault(traced, address, why):
    b = ProgramBuilder().op("START").op("ADDI", 1, 9).op("EXCH", 1, 2).op("FINISH")
    machine = Machine(b.build())
    machine.set_register(2, address)
    fault = fault_of(machine, traced)
    assert fault.kind == "memory-address"
    assert (fault.pc, fault.step) == (2, 2)
    assert fault.message == f"EXCH $1 $2 at line 3 (pc 2): {why}"
    assert machine.get_register(1) == 9  # EXCH did nothing


@PATHS
def test_division_by_zero_faults_with_exact_pc_and_step_and_no_effect(traced):
    b = ProgramBuilder().op("START")
    for _ in range(5):
        b.op("ADDI", 1, 1)
    b.op("ADDDIV", 4, 1, 3)   # pc 6: $3 = 0
    b.op("ADDI", 1, 1).op("FINISH")
    machine = Machine(b.build())
    fault = fault_of(machine, traced)
    assert fault.kind == "divide-by-zero"
    assert (fault.pc, fault.line, fault.step, fault.br, fault.direction) == (6, 7, 6, 0, 1)
    assert machine.get_register(1) == 5 and machine.get_register(4) == 0
    assert machine.cycles == 6 * 6  # the six completed: START and five ADDI; ADDDIV none
    assert fault.message.startswith("ADDDIV $4 $1 $3 at line 7 (pc 6): division by zero")


@PATHS
def test_a_function_outside_its_domain_is_a_domain_error(traced):
    b = ProgramBuilder().op("START").op("ADDI", 2, -1).op("ADDLOG", 1, 2).op("FINISH")
    fault = fault_of(Machine(b.build()), traced)
    assert fault.kind == "domain-error"
    assert fault.pc == 2 and "log" in fault.message


@PATHS
def test_a_fault_running_backward_says_so(traced):
    b = ProgramBuilder().op("START").op("SUBSQRT", 1, 2).op("FINISH")
    machine = Machine(b.build())
    machine.set_register(2, -5)
    machine.pc = machine.image.finish
    fault = fault_of(machine, traced, direction=-1)
    assert fault.kind == "domain-error" and fault.direction == -1
    assert "SUBSQRT $1 $2 running backward at line 2 (pc 1)" in fault.message


@PATHS
def test_the_step_limit_stops_the_machine_exactly(traced):
    b = ProgramBuilder().op("START").op("ADDI", 2, 30_000)
    b.label("top").op("BNE", 1, 0, "bottom")
    b.op("ADDI", 3, 2).op("ADDI", 1, 1)
    b.label("bottom").op("BNE", 1, 2, "top")
    b.op("FINISH")
    machine = Machine(b.build(), max_steps=1001)
    fault = fault_of(machine, traced)
    assert fault.kind == "step-limit"
    assert fault.step == machine.steps == 1001
    # 2 set-up steps, then 4 per iteration: 999 = 4 * 249 + 3.
    assert machine.get_register(1) == 250 and machine.pc == 5
    assert "did not halt within 1001 steps" in fault.message


@PATHS
def test_emit_backward_with_an_empty_tape_is_a_tape_empty_fault(traced):
    b = ProgramBuilder().op("START").op("EMIT", 1).op("FINISH")
    machine = Machine(b.build())
    fault = fault_of(machine, traced, direction=-1)
    assert fault.kind == "tape-empty" and fault.pc == 1
    assert "EMIT $1 running backward" in fault.message


def test_a_backward_run_without_finish_is_a_no_finish_fault():
    image = ProgramBuilder().op("START").op("ADDI", 1, 1).build()
    with pytest.raises(MachineFault) as info:
        Machine(image).run(-1)
    assert info.value.kind == "no-finish"


@PATHS
@pytest.mark.parametrize("width", [32, 64])
def test_a_strict_machine_faults_at_the_first_overflow_event_with_no_effect(traced, width):
    """50000 * 50000 does not fit Q16.16 or Q32.32: counted, or (strict) a fault there."""
    b = ProgramBuilder(width=width).op("START")
    b.op("ADDMUL", 3, 1, 2)    # pc 1: 2.5e9 does not fit
    b.op("ADDEXP", 4, 5)       # pc 2: exp(22) saturates
    b.op("FINISH")
    counting = Machine(b.build())
    strict = Machine(b.build())
    strict.strict = True
    for machine in (counting, strict):
        machine.set_register_real(1, 50000 if width == 64 else 100)
        machine.set_register_real(2, 50000 if width == 64 else 400)
        machine.set_register_real(5, 22)
    counting.run(1, trace=(lambda record: None) if traced else None)
    assert counting.overflows == 2
    counting.run(-1, trace=(lambda record: None) if traced else None)
    assert counting.overflows == 0 and counting.get_register(3) == 0
    fault = fault_of(strict, traced)
    assert fault.kind == "overflow"
    assert (fault.pc, fault.line, fault.step) == (1, 2, 1)
    assert strict.get_register(3) == 0 and strict.overflows == 0
    assert fault.message.startswith("ADDMUL $3 $1 $2 at line 2 (pc 1): the exact result does "
                                    "not fit the word (Q")


def test_every_fault_kind_has_a_test_here():
    tested = {"uncaught-jump", "illegal-instruction", "memory-address", "divide-by-zero",
              "domain-error", "step-limit", "tape-empty", "no-finish", "overflow"}
    assert tested == set(FAULT_KINDS)


def test_the_fault_report_names_pc_line_br_dir_and_registers():
    machine = Machine(diamond_breaking_its_postcondition())
    with pytest.raises(MachineFault) as info:
        machine.run()
    report = str(info.value).splitlines()
    assert report[0].startswith("machine fault (uncaught-jump): jump from line 5 (pc 4)")
    assert report[1] == "  at pc 6, <generated>:7: join: BNE $1 $0 then_end"
    assert report[2] == "  BR = 2, DIR = +1, after 6 steps"
    assert report[3] == "  registers: all zero"


def test_the_register_dump_shows_signed_values():
    b = ProgramBuilder().op("START").op("ADDI", 5, -4).op("ADDDIV", 1, 5, 0).op("FINISH")
    with pytest.raises(MachineFault) as info:
        Machine(b.build()).run()
    assert "registers: $5=-4" in str(info.value)
    assert info.value.signed_registers() == {5: -4}
