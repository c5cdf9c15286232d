"""The branch/control unit: PC, BR, DIR, the come-from check, START/FINISH and faults.

After every instruction (``isa/table.py``): if BR = 0 then PC += DIR, else
PC += BR * DIR, with BR and DIR as the instruction left them (the next-PC rule,
``revasm.machine.next_pc``; ``tests/machine/test_next_pc.py`` simulates this unit against
it, and its halting against ``halts``).  An instruction
entered with BR != 0 (reached by a jump) that leaves BR != 0 raises the
uncaught-jump fault at its own PC, its effects kept (the checked come-from
rule); START and FINISH are not checked: a jump onto FINISH forward halts with BR = the
jump's offset, and one that lands where it does not halt passes BR on (docs/simulator.md
"Jumps onto FINISH").  FINISH executed forward or START executed backward halts; a run
loaded where the last one halted, facing the other way, keeps BR (the way back from a
jump onto FINISH leads through the jump).  OV, the overflow
counter (one W-bit word, ``isa/table.py``), takes ``ov_step``'s event: +1, or -1 with
``ov_down``, mod 2^W; the host writes it while the core is idle (``ov_we``).
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.instruction import CONTROL_KINDS

from .params import FAULT_CODE, FAULT_NAMES, CoreParams


class ControlUnit(wiring.Component):
    """Holds the control state; ``commit`` applies one instruction's new BR and DIR."""

    def __init__(self, params: CoreParams) -> None:
        self.params = params
        pw, bw, w = params.pc_width, params.br_width, params.width
        super().__init__({
            "ov_step": In(1), "ov_event": In(1), "ov_down": In(1),
            "ov_we": In(1), "ov_wdata": In(w), "ov": Out(w), "ov_next": Out(w),
            "load": In(1), "load_pc": In(signed(pw)), "load_backward": In(1),
            "commit": In(1), "kind": In(range(len(CONTROL_KINDS))),
            "br_new": In(signed(bw)), "backward_new": In(1),
            "raise_fault": In(1), "fault_kind_in": In(range(len(FAULT_NAMES))),
            "pc": Out(signed(pw)), "br": Out(signed(bw)), "backward": Out(1),
            "next_pc": Out(signed(pw)), "uncaught": Out(1), "halt": Out(1),
            "halted": Out(1), "fault": Out(1), "fault_kind": Out(range(len(FAULT_NAMES))),
            "fault_pc": Out(signed(pw)),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        with m.If(self.ov_event):
            m.d.comb += self.ov_next.eq(self.ov + Mux(self.ov_down, -1, 1))
        with m.Else():
            m.d.comb += self.ov_next.eq(self.ov)
        with m.If(self.ov_we):
            m.d.sync += self.ov.eq(self.ov_wdata)
        with m.Elif(self.ov_step):
            m.d.sync += self.ov.eq(self.ov_next)
        step = Signal(signed(self.params.br_width + 1))
        with m.If(self.br_new == 0):
            m.d.comb += step.eq(1)
        with m.Else():
            m.d.comb += step.eq(self.br_new)
        # pc -+ step on one adder: pc + ~step + 1 or pc + step (an add and a subtract under an
        # If would be two adders and a multiplexer)
        back = self.backward_new
        m.d.comb += self.next_pc.eq(self.pc + Mux(back, ~step, step) + back)
        ends = (self.kind == CONTROL_KINDS.index("finish")) | \
            (self.kind == CONTROL_KINDS.index("start"))
        resumed = self.halted & (self.pc == self.load_pc) & (self.backward != self.load_backward)
        m.d.comb += [
            self.uncaught.eq((self.br != 0) & (self.br_new != 0) & ~ends),
            self.halt.eq(((self.kind == CONTROL_KINDS.index("finish")) & ~self.backward_new)
                         | ((self.kind == CONTROL_KINDS.index("start")) & self.backward_new)),
        ]
        # a fault stops the PC on the faulting instruction until the next run loads it, so
        # the fault's PC is the PC (no register of its own)
        m.d.comb += self.fault_pc.eq(self.pc)
        with m.If(self.load):
            m.d.sync += [self.pc.eq(self.load_pc), self.br.eq(Mux(resumed, self.br, 0)),
                         self.backward.eq(self.load_backward), self.halted.eq(0),
                         self.fault.eq(0), self.fault_kind.eq(0)]
        with m.Elif(self.raise_fault):
            m.d.sync += [self.fault.eq(1), self.fault_kind.eq(self.fault_kind_in)]
        with m.Elif(self.commit):
            m.d.sync += [self.br.eq(self.br_new), self.backward.eq(self.backward_new)]
            with m.If(self.uncaught):
                m.d.sync += [self.fault.eq(1), self.fault_kind.eq(FAULT_CODE["uncaught-jump"])]
            with m.Elif(self.halt):
                m.d.sync += self.halted.eq(1)
            with m.Else():
                m.d.sync += self.pc.eq(self.next_pc)
        return m
