"""Every data instruction of the table, run by the reference machine, is undone by its inverse."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_generators import (
    DATA_CELLS,
    DATA_INSTRUCTIONS,
    POINTERS,
    ProgramBuilder,
    draw_data_instruction,
    run_or_fault,
)

from revasm.isa import word_format
from revasm.sim.reference import Machine

SETTINGS = settings(max_examples=30, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def one_instruction(draw, ins):
    """START; the instruction; FINISH; DATA cells -- with every register random."""
    width = draw(st.sampled_from((32, 64)))
    fmt = word_format(width)
    mnemonic, operands = draw_data_instruction(draw, width, tuple(range(1, 32)),
                                               instructions=(ins,))
    builder = ProgramBuilder(width)
    builder.op("START").op(mnemonic, *operands).op("FINISH")
    base = builder.here()
    for _ in range(DATA_CELLS):
        builder.data(draw(st.integers(fmt.min_signed, fmt.max_signed)))
    registers = draw(st.lists(st.one_of(st.integers(-3 * fmt.one, 3 * fmt.one),
                                        st.integers(0, fmt.mask)),
                              min_size=31, max_size=31))
    registers = {r: v & fmt.mask for r, v in zip(range(1, 32), registers)}
    for pointer in POINTERS:
        registers[pointer] = base + draw(st.integers(0, DATA_CELLS - 1))
    return builder.build(), registers


@pytest.mark.parametrize("ins", DATA_INSTRUCTIONS, ids=lambda ins: ins.mnemonic)
@SETTINGS
@given(data=st.data())
def test_backward_template_undoes_forward_template_for_every_data_instruction(ins, data):
    image, registers = data.draw(one_instruction(ins))
    machine = Machine(image, memory_words=64)
    for register, value in registers.items():
        machine.set_register(register, value)
    if ins.mnemonic == "EMIT":
        machine.emitted.append(7)  # something already on the tape stays there
    before = machine.snapshot()
    fault = run_or_fault(machine, +1)
    if fault:  # a faulting instruction has no effect at all
        assert fault.pc == 1 and fault.step == 1
        assert machine.snapshot().registers == before.registers
        assert machine.snapshot().memory == before.memory
        return
    assert machine.steps == 3
    assert machine.registers[0] == 0
    machine.run(-1)
    assert machine.snapshot().turned() == before


@pytest.mark.parametrize("ins", DATA_INSTRUCTIONS, ids=lambda ins: ins.mnemonic)
@settings(max_examples=8, deadline=None, database=None)
@given(data=st.data())
def test_forward_template_undoes_backward_template_for_every_data_instruction(ins, data):
    """Run backward first (FINISH to START), then forward: also the identity."""
    image, registers = data.draw(one_instruction(ins))
    machine = Machine(image, memory_words=64)
    for register, value in registers.items():
        machine.set_register(register, value)
    machine.emitted.extend([5, 6])  # EMIT backward takes a word off the tape
    if ins.mnemonic == "EMIT":
        # EMIT is injective, not onto: forward always leaves its register zero,
        # so only states with a zero register are ones a backward EMIT can undo.
        machine.set_register(machine.program.cells[1].operands["a"], 0)
    machine.pc, machine.direction = image.finish, -1
    before = machine.snapshot()
    if run_or_fault(machine, -1):
        return
    machine.run(+1)
    assert machine.snapshot().turned() == before


def test_every_data_instruction_is_covered():
    kinds = {ins.kind for ins in DATA_INSTRUCTIONS}
    assert kinds == {"data"}
    assert len(DATA_INSTRUCTIONS) >= 50
