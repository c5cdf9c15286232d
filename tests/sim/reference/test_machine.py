"""Example programs on the reference machine, with the expected state written next to them."""
from __future__ import annotations

from fractions import Fraction

import pytest
from program_generators import ProgramBuilder

from revasm.assembler.image import DeclaredName
from revasm.machine import format_trace_line
from revasm.machine.faults import MachineFault
from revasm.sim.reference import Machine
from revasm.sim.reference.blocks import MAX_BLOCK

WIDTHS = pytest.mark.parametrize("width", [32, 64])


def fib(width: int = 32, n: int = 18):
    """PendVM's fib.pisa: $6 = fib(n), the bound loaded from a DATA cell with EXCH."""
    b = ProgramBuilder(width)
    b.op("START")
    b.op("ADDI", 2, 1)                     # b = 1 (a already zero)
    b.op("ADDI", 4, "n_value")             # $4 = address of the DATA cell
    b.op("EXCH", 5, 4)                     # $5 <-> mem[n_value]: $5 = n, cell = 0
    b.label("looptop").op("BNE", 3, 0, "loopbot")
    b.op("ADD", 2, 1)                      # b += a
    b.op("XOR", 1, 2).op("XOR", 2, 1).op("XOR", 1, 2)  # swap a, b
    b.op("ADDI", 3, 1)                     # pos++
    b.label("loopbot").op("BNE", 3, 5, "looptop")
    b.op("ADD", 6, 1)                      # copy fib(n) out
    b.op("EXCH", 5, 4)                     # restore the DATA cell
    b.op("ADDI", 4, "-n_value")
    b.op("FINISH")
    b.label("n_value").data(n)
    return b.build()


@WIDTHS
def test_fib_18_is_2584_and_running_backward_restores_everything(width):
    image = fib(width)
    machine = Machine(image)
    before = machine.snapshot()
    machine.run()
    assert machine.get_register(6) == 2584          # fib(18)
    assert machine.get_register(1) == 2584          # a = fib(18)
    assert machine.get_register(2) == 1597          # b = fib(17)
    assert machine.get_register(3) == 18            # pos
    assert machine.get_memory(image.symbols["n_value"]) == 18
    assert machine.steps == 4 + 18 * 7 + 4          # set-up, loop, tear-down
    assert machine.cycles == 6 * machine.steps      # 6 cycles each on the RTL core
    machine.run(-1)
    assert machine.snapshot() == before.turned()


def test_a_long_fib_loop_runs_forward_and_backward_on_the_fast_path():
    machine = Machine(fib(64, n=5000))
    machine.run()
    assert machine.steps == 8 + 5000 * 7
    machine.run(-1)
    assert machine.registers == [0] * 32


@WIDTHS
def test_exch_swaps_registers_with_data_cells(width):
    b = ProgramBuilder(width)
    b.op("START")
    b.op("ADDI", 1, "cells")       # $1 -> first cell
    b.op("EXCH", 2, 1)             # $2 = 11, cell0 = 0
    b.op("ADDI", 1, 1)
    b.op("EXCH", 2, 1)             # $2 = -22, cell1 = 11
    b.op("FINISH")
    b.label("cells").data(11).data(-22)
    image = b.build()
    machine = Machine(image)
    machine.run()
    cells = image.symbols["cells"]
    assert machine.get_register(2) == -22
    assert (machine.get_memory(cells), machine.get_memory(cells + 1)) == (0, 11)
    assert machine.memory[cells + 1] == 11 and machine.cycles == 6 * 6  # EXCH: 6 too
    machine.run(-1)
    assert (machine.get_memory(cells), machine.get_memory(cells + 1)) == (11, -22)
    assert machine.get_register(1) == 0 and machine.get_register(2) == 0


def portal_program(width: int = 32):
    """ROOPL's calling convention: call a procedure twice, then uncall it once."""
    b = ProgramBuilder(width)
    b.op("START")
    b.op("ADDI", 1, 5)
    b.label("call1").op("BRA", "add_one")      # $2 += $1
    b.label("call2").op("BRA", "add_one")      # $2 += $1
    b.label("uncall").op("RBRA", "add_one")    # $2 -= $1: the procedure run backward
    b.op("FINISH")
    b.label("add_one_top").op("BRA", "add_one_bot")
    b.label("add_one").op("SWAPBR", 30)        # the portal: BR <-> return offset
    b.op("NEG", 30)
    b.op("ADD", 2, 1)
    b.op("SHOW", 2)
    b.label("add_one_bot").op("BRA", "add_one_top")
    return b.build()


@WIDTHS
def test_calls_through_a_swapbr_portal_and_an_uncall_with_rbra(width):
    machine = Machine(portal_program(width))
    machine.run()
    assert machine.get_register(2) == 5              # 0 + 5 + 5 - 5
    assert machine.get_register(30) == 0             # the return offset is cleared
    assert machine.br == 0 and machine.direction == +1
    # SHOW logs in either direction; the uncall shows $2 before subtracting.
    assert machine.output == [5, 10, 10]
    machine.run(-1)
    assert machine.registers == [0] * 32
    assert machine.output == [5, 10, 10, 10, 10, 5]


def test_the_trace_shows_each_instruction_and_what_it_changed():
    lines = []
    machine = Machine(portal_program())
    machine.run(trace=lambda record: lines.append(format_trace_line(record)))
    assert len(lines) == machine.steps
    assert lines[2].split() == ["3", "pc", "2", "+", "BRA", "add_one", ";", "line", "3",
                                "BR:", "0", "->", "5"]
    assert "SWAPBR $30" in lines[3] and "$30: 0 -> 5" in lines[3] and "BR: 5 -> 0" in lines[3]
    assert "out 5" in lines[6]
    uncall = next(line for line in lines if "RBRA" in line)
    assert "DIR: +1 -> -1" in uncall


def test_trace_records_name_memory_words_that_changed():
    image = fib()
    records = []
    Machine(image).run(trace=records.append)
    exch = records[3]
    assert exch.text == "EXCH $5 $4"
    assert exch.registers == ((5, 0, 18),)
    assert exch.memory == ((image.symbols["n_value"], 18, 0),)
    assert str(exch) == format_trace_line(exch)


def test_single_steps_walk_the_same_path_as_a_run():
    image = fib(n=3)
    running, stepping = Machine(image), Machine(image)
    running.run()
    pcs = []
    while not stepping.halted:
        pcs.append(stepping.step().pc)
    assert stepping.snapshot() == running.snapshot()
    assert len(pcs) == running.steps and pcs[:6] == [0, 1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError):
        stepping.step()


def test_advance_steps_as_step_does_and_names_the_words_it_touched():
    """``advance`` (the co-simulation's step, rtl/verification/cosim.py) executes what
    ``step`` does, forward and backward, returns the memory words accessed with their old
    values, and returns a fault instead of raising it."""
    image = fib(n=3)
    advancing, stepping = Machine(image), Machine(image)
    for direction in (1, -1):
        advancing.begin(direction)
        stepping.begin(direction)
        while not stepping.halted:
            record = stepping.step()
            touched, fault = advancing.advance()
            assert fault is None and advancing.snapshot() == stepping.snapshot()
            changed = {(address, old) for address, old, _new in record.memory}
            assert changed <= set(touched)
            assert bool(touched) == record.text.startswith("EXCH")
        assert advancing.halted and advancing.steps == stepping.steps
    assert advancing.snapshot() == Machine(image).snapshot().turned()  # back at START
    with pytest.raises(RuntimeError):
        advancing.advance()
    b = ProgramBuilder(32)
    b.op("START").op("ADDI", 1, 3).op("BRA", "land").op("ADDI", 2, 1)
    b.label("land").op("ADDI", 2, 5).op("FINISH")  # lands without catching the jump
    machine = Machine(b.build())
    machine.begin(1)
    for _ in range(3):
        assert machine.advance()[1] is None
    _touched, fault = machine.advance()
    assert fault is not None and fault.kind == "uncaught-jump" and fault.pc == 4
    assert machine.steps == 4 and machine.get_register(2) == 5  # it completed


def test_emit_moves_words_onto_the_tape_and_backward_takes_them_back():
    b = ProgramBuilder().op("START").op("ADDI", 1, 7).op("EMIT", 1).op("ADDI", 1, 3)
    b.op("EMIT", 1).op("FINISH")
    machine = Machine(b.build())
    machine.run()
    assert machine.emitted == [7, 3] and machine.registers[1] == 0
    assert machine.snapshot().emitted == (7, 3)
    machine.run(-1)
    assert machine.emitted == [] and machine.registers == [0] * 32
    assert machine.output == [7, 3, 3, 7]


def test_a_straight_line_longer_than_a_block_runs_exactly():
    b = ProgramBuilder().op("START")
    for _ in range(3 * MAX_BLOCK + 5):
        b.op("ADDI", 1, 1)
    b.op("FINISH")
    machine = Machine(b.build(), max_steps=10_000)
    machine.run()
    assert machine.get_register(1) == 3 * MAX_BLOCK + 5
    assert machine.steps == 3 * MAX_BLOCK + 7
    machine.run(-1)
    assert machine.get_register(1) == 0


def test_only_the_blocks_a_run_enters_are_compiled():
    # a jump over 40 blocks' worth of code: none of it is generated or compiled (a
    # 289 000-instruction program had compiled whole -- 12 s and 4 GB -- before its first
    # step), and a fault in a block made late still names its PC
    b = ProgramBuilder().op("START").op("BRA", "over")
    for _ in range(40 * MAX_BLOCK):
        b.op("ADDI", 1, 1)
    b.label("over").op("BRA", 1)  # catches the jump (its offset is checked by the assembler)
    b.op("ADDI", 2, 7).op("ADDI", 4, 1).op("EXCH", 3, 4).op("FINISH")
    image = b.build()
    machine = Machine(image, memory_words=4)
    with pytest.raises(MachineFault) as fault:  # EXCH at an address that holds code
        machine.run()
    assert fault.value.kind == "memory-address" and fault.value.pc == 40 * MAX_BLOCK + 5
    compiled = machine.program.blocks(1, machine._bound_names)
    entered = set(compiled.codes)
    assert entered and all(pc < 2 or pc > 40 * MAX_BLOCK for pc in entered)
    assert machine.pc == 40 * MAX_BLOCK + 5 and machine.get_register(2) == 7


@WIDTHS
def test_values_can_be_set_and_read_as_integers_reals_and_declared_names(width):
    image = ProgramBuilder(width).op("START").op("ADDMUL", 3, 1, 2).op("FINISH").data(0).build()
    image.names["x"] = DeclaredName("x", "input", register=1)
    image.names["y"] = DeclaredName("y", "input", register=2)
    image.names["n"] = DeclaredName("n", "input", address=3, fixed=False)
    image.names["product"] = DeclaredName("product", "output", register=3)
    machine = Machine(image)
    machine.set("x", 1.5)
    machine.set("y", "-2.25")
    machine.set("n", -7)
    machine.run()
    assert machine.get("product") == -3.375
    assert machine.get("product", exact=True) == Fraction(-27, 8)
    assert machine.get("n") == -7 and machine.get_memory(3, signed=False) == (-7) % 2**width
    assert machine.get_register_real(1) == 1.5
    machine.set_register_real(4, Fraction(1, 4))
    assert machine.get_register(4) == 1 << (width // 2 - 2)
    machine.set_register(5, -1)
    assert machine.registers[5] == 2**width - 1 and machine.get_register(5) == -1
    with pytest.raises(ValueError):
        machine.set_register(0, 1)
    with pytest.raises(ValueError):
        machine.set_memory(1, 0)      # a code cell
    with pytest.raises(KeyError):
        machine.get("nope")


def test_memory_is_the_image_then_zeros():
    image = fib()
    machine = Machine(image, memory_words=100)
    assert len(machine.memory) == 100
    assert machine.memory[:len(image)] == image.words
    assert machine.memory[len(image):] == [0] * (100 - len(image))
    short = Machine(image, memory_words=4)  # the dense words always hold the image
    assert short.memory_words == len(image) and short.memory == image.words


def test_snapshots_are_immutable_values():
    machine = Machine(fib())
    first, second = machine.snapshot(), machine.snapshot()
    assert first == second and hash(first) == hash(second)
    machine.run()
    assert machine.snapshot() != first
    assert first.differences(machine.snapshot())
