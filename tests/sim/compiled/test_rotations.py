"""The compiled engine's rotations: an angle's plan (tan(theta/2) and sin(theta), two CORDIC
runs) is computed once per instruction (``translate.ROTATIONS``; ROT's angle register is
neither of the two it rotates), and the runs stay bit for bit the reference's when other
instructions change the angles between rotations.

ROT's gradient-mode step rotates by one angle three times (the values, their overflow
test, the gradients); a program of rotations whose angle registers other instructions
keep changing is run on both engines, forward, backward, and in gradient and Hessian mode.
"""
from __future__ import annotations

import re

import hypothesis.strategies as st
import pytest
from program_generators import (
    DATA_INSTRUCTIONS,
    ProgramBuilder,
    ProgramCase,
    _finish,
    _initial_registers,
    _prologue,
    _prologue_values,
    draw_data_instruction,
    examples,
)

pytest.importorskip("numba")

from differential import check_batch
from sampling import SAMPLES, count

from revasm.sim.compiled.generate import kernel_source

#: Rotations, and instructions that change the registers they rotate by.
MIX = tuple(ins for ins in DATA_INSTRUCTIONS
            if ins.mnemonic in ("ROT", "IROT", "ADD", "SUB", "NEG", "ADDMUL", "XOR"))
#: Few registers, so that angles and rotated words keep trading places.
REGISTERS = (5, 6, 7, 8)


def rotation_image(width: int, *instructions: tuple[str, tuple[int, ...]]):
    builder = ProgramBuilder(width).op("START")
    for mnemonic, operands in instructions:
        builder.op(mnemonic, *operands)
    return builder.op("FINISH").build()


@pytest.mark.parametrize("width", [32, 64])
def test_a_rotation_plans_its_angle_once_per_instruction(width: int) -> None:
    image = rotation_image(width, ("ROT", (5, 6, 7)))
    value, gradient = kernel_source(image), kernel_source(image, gradient=True)
    plans = re.compile(r"\brotation_plan\(")
    rotations = re.compile(r"\b(?:ovf_)?i?rot_planned\(")
    # the kernel holds the forward and the backward step: one plan in each, for value
    # mode's rotation and overflow test, and gradient mode's rotations of the values and
    # the gradients and the overflow test
    assert len(plans.findall(value)) == 2 and len(rotations.findall(value)) == 4
    assert len(plans.findall(gradient)) == 2 and len(rotations.findall(gradient)) == 6


@st.composite
def rotation_programs(draw, width: int):
    """START, a prologue, 4-10 instructions of :data:`MIX` over :data:`REGISTERS`, FINISH."""
    builder = ProgramBuilder(width)
    _prologue(builder, width)
    count = draw(st.integers(4, 10))
    for _ in range(count):
        mnemonic, operands = draw_data_instruction(draw, width, REGISTERS, REGISTERS, MIX)
        builder.op(mnemonic, *operands)
    memory = _finish(builder, draw, width)
    image = builder.build()
    return ProgramCase(image, _initial_registers(draw, width), memory,
                       f"{count} rotations and updates, W={width}", _prologue_values(image))


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("derivative", ["gradient", "hessian"])
@pytest.mark.parametrize("sample", SAMPLES)
def test_rotation_programs_run_alike_on_the_compiled_engine_and_the_reference(
        sample: str, width: int, derivative: str) -> None:
    """One batch (a value kernel and a gradient or Hessian kernel): 6 programs in make test,
    12 in make test-long (the kernels' compile time grows with the batch)."""
    programs = count(sample, bounded=6, full=12)
    cases = examples(rotation_programs(width), programs, seed=width + len(derivative))
    report = check_batch(cases, seed=width, derivative=derivative)
    assert not report.failures, "\n".join(report.failures[:20])
    assert {"ROT", "IROT"} <= report.instructions
