"""The next-PC rule (``revasm.machine.next_pc``) and every place that applies it.

The rule's one definition is :func:`next_pc` (with :func:`previous_pc` and :func:`halts`).
Python code calls it; generated code writes :func:`next_pc_source` / :func:`halts_source`;
the RTL's control unit is hardware.  These tests prove each of them equal to the rule over
random (pc, br, dir) at both word widths, the extreme BRs included (SWAPBR can put any
W-bit word in BR), and that the engines report the PC the rule gives even where their
int64 PC wraps.
"""
from __future__ import annotations

import random
import re

import numba
import numpy as np
import pytest

from revasm.assembler import assemble, assemble_file
from revasm.machine.next_pc import (
    PC_REGISTER_BITS,
    halts,
    halts_source,
    next_pc,
    next_pc_source,
    pc_from_register,
    pc_register,
    previous_pc,
)
from revasm.sim.reference import Program
from revasm.sim.reference.blocks import block_source

WIDTHS = pytest.mark.parametrize("width", [32, 64])
KINDS = ("data", "branch", "rbra", "swapbr", "start", "finish")


def plain_rule(pc: int, br: int, direction: int) -> int:
    """The rule as docs/simulator.md writes it: if BR = 0 then PC += DIR else PC += BR·DIR."""
    if br == 0:
        return pc + direction
    return pc + br * direction


def cases(width: int, count: int = 400, seed: int = 0, pcs: int = 1 << 16
          ) -> list[tuple[int, int, int]]:
    """(pc, br, dir): random PCs of a program, BRs over every W-bit signed word and near
    its ends and 0, both directions."""
    rng = random.Random(seed * 100 + width)
    top = 1 << (width - 1)
    edges = [0, 1, -1, 2, -2, top - 1, -top, -top + 1, top - 2, top // 2, -top // 2]
    out = []
    for i in range(count):
        br = edges[i % len(edges)] if i < 4 * len(edges) else rng.randrange(-top, top)
        out.append((rng.randrange(pcs), br, rng.choice((1, -1))))
    return out


# --- the definition ----------------------------------------------------------------------

@WIDTHS
def test_next_pc_is_the_rule_and_previous_pc_undoes_it(width):
    for pc, br, direction in cases(width):
        moved = next_pc(pc, br, direction)
        assert moved == plain_rule(pc, br, direction), (pc, br, direction)
        assert previous_pc(moved, br, direction) == pc
    assert next_pc(5, 0, -1) == 4 and next_pc(5, 3, -1) == 2 and next_pc(5, -3, 1) == 2


def test_halts_on_finish_forward_and_start_backward_only():
    assert {(kind, d) for kind in KINDS for d in (1, -1) if halts(kind, d)} == {
        ("finish", 1), ("start", -1)}
    directions = np.array([1, -1, -1, 1])
    assert halts("finish", directions).tolist() == [True, False, False, True]
    assert halts("start", directions).tolist() == [False, True, True, False]


@WIDTHS
def test_next_pc_on_int64_arrays_wraps_and_the_register_reading_undoes_it(width):
    pcs, brs, directions = (np.array(column, dtype=np.int64)
                            for column in zip(*cases(width)))
    with np.errstate(over="ignore"):
        moved = next_pc(pcs, brs, directions)
    assert moved.dtype == np.int64
    for pc, br, direction, held in zip(pcs.tolist(), brs.tolist(), directions.tolist(),
                                       moved.tolist()):
        exact = next_pc(pc, br, direction)
        assert held == pc_register(exact)
        assert pc_from_register(held, br, direction, 1 << 16) == exact


def test_a_pc_register_reading_keeps_a_pc_no_move_explains():
    half = 1 << (PC_REGISTER_BITS - 1)
    assert pc_register(half) == -half and pc_register(-half - 1) == half - 1
    assert pc_register(12) == 12
    # inside the program, or put there by the host: the register's own value
    for held, br, direction in ((3, 0, 1), (3, -half, 1), (3, -half, -1), (-5, 0, 1),
                                (40, 0, 1), (2, 7, -1)):
        assert pc_from_register(held, br, direction, 10) == held
    # running off either end of the program moves by DIR: no wrap
    assert pc_from_register(-1, 0, -1, 10) == -1 and pc_from_register(10, 0, 1, 10) == 10


# --- generated code: the text is derived from the rule and evaluates to it ---------------

def _python(text: str, **names):
    return eval(text, {}, names)  # the rule's own text


@WIDTHS
def test_the_generated_python_text_is_the_rule(width):
    for pc, br, direction in cases(width):
        exact = next_pc(pc, br, direction)
        assert _python(next_pc_source("pc", "BR", "DIR"), pc=pc, BR=br, DIR=direction) == exact
        # generated for one direction (the reference's blocks): DIR is a constant
        assert _python(next_pc_source(str(pc), "BR", direction), BR=br) == exact
    for kind in KINDS:
        for direction in (1, -1):
            text = halts_source("d", "finish", "start")
            assert bool(_python(text, d=direction, finish=kind == "finish",
                                start=kind == "start")) == halts(kind, direction)
    with pytest.raises(ValueError):
        next_pc_source("pc", "br", 2)


@WIDTHS
def test_the_generated_numba_text_is_the_rule_in_int64(width):
    """As the compiled kernels run it: int64 locals, the block's PC a constant ``I(pc)``."""
    kernel = numba.njit(eval(  # the rule's own text
        f"lambda pc, br, d: {next_pc_source('pc', 'br', 'd')}"))
    constant = numba.njit(eval(
        f"lambda pc, br, d: {next_pc_source('I(pc)', 'br', 'd')}", {"I": np.int64}))
    halting = numba.njit(eval(
        f"lambda d, flags: bool({halts_source('d', 'flags & 4', 'flags & 2')})"))
    for pc, br, direction in cases(width):
        exact = next_pc(pc, br, direction)
        for compiled in (kernel, constant):
            held = int(compiled(np.int64(pc), np.int64(br), np.int64(direction)))
            assert held == pc_register(exact), (pc, br, direction)
            assert pc_from_register(held, br, direction, 1 << 16) == exact
    for kind, flags in (("data", 0), ("start", 2), ("finish", 4)):
        for direction in (1, -1):
            assert halting(np.int64(direction), np.int64(flags)) == halts(kind, direction)


def test_the_reference_blocks_write_the_derived_text():
    cells = Program.of(assemble_file("examples/procedure.pal")).cells
    kinds = set()
    for direction in (1, -1):
        source = block_source(cells, direction, frozenset())
        returns = re.findall(r"return \((\d+) ([-+]) \(BR or 1\)( \* DIR)?, BR, DIR", source)
        assert returns, source
        for pc, sign, by_dir in returns:
            expected = next_pc_source(pc, "BR", "DIR" if by_dir else direction)
            assert f"{pc} {sign} (BR or 1){by_dir}" == expected
            kinds.add(bool(by_dir))
        # every exit that moves the PC by BR is one of them
        assert len(re.findall(r"return \([^,]*BR", source)) == len(returns)
    assert kinds == {False, True}  # both forms: a block's own direction, and after RBRA


@pytest.mark.parametrize("kernel", ["program", "interpreter"])
def test_the_compiled_kernels_write_the_derived_text(kernel):
    from revasm.sim.compiled.generate import kernel_source
    from revasm.sim.compiled.interpreter import FINISH_FLAG, START_FLAG, interpreter_source

    image = assemble_file("examples/procedure.pal")
    source = (kernel_source(image) if kernel == "program"
              else interpreter_source(image.width))
    moves = [line.strip() for line in source.splitlines()
             if re.match(r"\s*pc\s*[-+]?=", line) and "br" in line]
    assert moves
    for line in moves:
        target = re.fullmatch(r"pc = (pc|I\(\d+\)|\d+) .*", line)
        assert target, line
        assert line == f"pc = {next_pc_source(target.group(1), 'br', 'd')}"
    assert "br * d" not in source
    if kernel == "program":
        expected = halts_source("d", "FINISHES[pc]", "STARTS[pc]")
    else:
        expected = halts_source("d", f"flags & {FINISH_FLAG}", f"flags & {START_FLAG}")
    halting = [line.strip() for line in source.splitlines() if "d > 0 and" in line]
    assert halting == [f"if {expected}:"]


# --- the RTL's control unit --------------------------------------------------------------

@WIDTHS
def test_the_rtl_control_unit_moves_the_pc_by_the_rule(width):
    pytest.importorskip("amaranth")
    from amaranth.sim import Simulator

    from revasm.isa.instruction import CONTROL_KINDS
    from revasm.rtl.hardware.control import ControlUnit
    from revasm.rtl.hardware.params import CoreParams

    params = CoreParams(width=width)
    dut = ControlUnit(params)
    # BR is a (W + 2)-bit register: every BR a run can hold (cases() adds the W-bit words)
    wide = 1 << (params.br_width - 1)
    checks = cases(width, count=150, seed=1, pcs=params.memory_words)
    checks += [(pc, br, d) for pc in (0, params.memory_words - 1) for br in (wide - 1, -wide)
               for d in (1, -1)]
    seen: list[tuple[int, int]] = []
    halting: list[tuple[str, int, bool]] = []

    async def testbench(ctx) -> None:
        for pc, br, direction in checks:
            ctx.set(dut.load, 1)
            ctx.set(dut.load_pc, pc)
            await ctx.tick()
            ctx.set(dut.load, 0)
            ctx.set(dut.br_new, br)
            ctx.set(dut.backward_new, int(direction < 0))
            seen.append((ctx.get(dut.pc), ctx.get(dut.next_pc)))
        for index, kind in enumerate(CONTROL_KINDS):
            for direction in (1, -1):
                ctx.set(dut.kind, index)
                ctx.set(dut.backward_new, int(direction < 0))
                halting.append((kind, direction, bool(ctx.get(dut.halt))))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    assert [pc for pc, _ in seen] == [pc for pc, _, _ in checks]
    assert [moved for _, moved in seen] == [next_pc(*case) for case in checks]
    assert {"start", "finish"} <= set(CONTROL_KINDS)
    assert all(halted == halts(kind, direction) for kind, direction, halted in halting)


# --- the engines: a jump anywhere in [-2^(W-1), 2^(W-1)) ---------------------------------

_SWAPBR = ";; pendulum pal file\n.width {width}\n        start\n        swapbr $5\n        finish\n"


def _engines():
    from revasm.sim.compiled.machine import CompiledLanes
    from revasm.sim.engines import load

    return {"vector": lambda image: load(image, 1, engine_name="vector"),
            "compiled program": lambda image: CompiledLanes(image, 1, kernel="program"),
            "compiled interpreter": lambda image: CompiledLanes(image, 1, kernel="interpreter")}


@WIDTHS
def test_every_engine_reports_the_pc_the_rule_gives_for_any_jump(width):
    """SWAPBR puts a word in BR, which jumps from pc 1 (forward) or back from it; far outside
    the program the engines' int64 PC wraps at W = 64, yet each reports the rule's PC, the
    jump's source and the reference's message and state."""
    from revasm.sim.engines import load

    image = assemble(_SWAPBR.format(width=width))
    top = 1 << (width - 1)
    engines = _engines()
    for br in (top - 1, -top, -top + 1, top // 2 + 3, -7, 7):
        for direction in (1, -1):
            runs = {}
            for name, make in [("reference", lambda i: load(i, 1, engine_name="reference")),
                               *engines.items()]:
                machine = make(image)
                machine.set_bank_word("R", 5, br % (1 << width))
                machine.run(direction)
                fault = machine.fault(0)
                assert fault is not None and fault.kind == "illegal-instruction", name
                runs[name] = (fault.pc, fault.jump_source_pc, fault.message,
                              machine.snapshot(0))
            assert runs["reference"][:2] == (next_pc(1, br, direction), 1)
            for name, run in runs.items():
                assert run == runs["reference"], (name, br, direction)
