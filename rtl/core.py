"""The co-processor core: the units wired together and the instruction sequencer.

One instruction at a time (no pipeline): FETCH (memory read at PC), DECODE
(latch the word and its code flag), REGS (decode, check legality, read the
three operand registers), EXEC (the ALU evaluates the entry's template; start
the multiply/divide or function unit; read memory for EXCH), WAIT (until the
unit is done; check the memory cell; commit: write register A, memory, tape,
BR/DIR/PC; report on the retire port), WRITEB (second register write of SWAP
and ROT), NEXT.  Faults stop the core with the PC of the instruction.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .alu import UNIT_FUNCTION, UNIT_MULDIV, Alu
from .control import ControlUnit
from .decoder import Decoder
from .function_unit import FunctionUnit
from .host import host_signature, retire_signature
from .memory import DataMemory, Tape
from .muldiv import MulDiv
from .params import FAULT_CODE, CoreParams
from .regfile import RegisterFile


class Core(wiring.Component):
    """The whole co-processor for one :class:`CoreParams`.

    ``function_unit=False`` builds the core without the function unit (its
    requests then fault as ``unimplemented``), for synthesis reports that give
    the function unit separately.
    """

    def __init__(self, params: CoreParams | None = None, *, memory_init: list[int] | None = None,
                 function_unit: bool = True) -> None:
        self.params = params or CoreParams()
        self.memory_init = memory_init
        self.function_unit = function_unit
        super().__init__({
            "host": In(host_signature(self.params)),
            "retire": Out(retire_signature(self.params)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        w = p.width
        host, retire = self.host, self.retire
        m.submodules.decoder = dec = Decoder()
        m.submodules.alu = alu = Alu(w, p.br_width, p.gradient)
        m.submodules.regfile = rf = RegisterFile(w)
        m.submodules.memory = mem = DataMemory(w, p.memory_words, self.memory_init)
        m.submodules.tape = tape = Tape(w, p.tape_words)
        m.submodules.control = ctl = ControlUnit(p)
        m.submodules.muldiv = md = MulDiv(w)
        fu = None
        if self.function_unit:
            m.submodules.function_unit = fu = FunctionUnit(w)
        grad = p.gradient
        if grad:
            m.submodules.gregfile = grf = RegisterFile(w)
            m.submodules.gmemory = gmem = DataMemory(w, p.memory_words, code_flag=False)
            grad_on = Signal()
            gwb = Signal(w)
            gwb_en = Signal()
            gwc = Signal(w)
            gwc_en = Signal()
            wb_en = Signal()
            c_addr = Signal(5)
            m.d.comb += [
                alu.grad.eq(grad_on), alu.na.eq(dec.a), alu.nb.eq(dec.b), alu.nc.eq(dec.c),
                alu.ga.eq(grf.rdata_a), alu.gb.eq(grf.rdata_b),
                alu.gc.eq(grf.rdata_c), alu.gmem_rdata.eq(gmem.rdata),
                grf.raddr_a.eq(dec.a), grf.raddr_b.eq(dec.b), grf.raddr_c.eq(dec.c),
                self.host.greg_rdata.eq(grf.rdata_a), self.host.gmem_rdata.eq(gmem.rdata),
            ]

        ir = Signal(32)
        ir_code = Signal()
        mem_bad = Signal()  # EXCH address outside memory
        wb_addr = Signal(5)
        wb_data = Signal(w)

        # decoder and ALU read the latched word and the register ports
        m.d.comb += [dec.word.eq(ir), dec.code.eq(ir_code)]
        m.d.comb += [
            alu.index.eq(dec.index), alu.backward.eq(ctl.backward),
            alu.ra.eq(rf.rdata_a), alu.rb.eq(rf.rdata_b), alu.rc.eq(rf.rdata_c),
            alu.imm.eq(dec.imm), alu.amt.eq(dec.amt), alu.k.eq(dec.k), alu.off.eq(dec.off),
            alu.br.eq(ctl.br), alu.mem_rdata.eq(mem.rdata[:w]), alu.tape_top.eq(tape.top),
            rf.raddr_a.eq(dec.a), rf.raddr_b.eq(dec.b), rf.raddr_c.eq(dec.c),
            ctl.kind.eq(dec.kind), ctl.br_new.eq(alu.br_out), ctl.backward_new.eq(alu.backward_out),
            md.op.eq(alu.unit_op), md.x.eq(alu.unit_x), md.y.eq(alu.unit_y),
            tape.wdata.eq(alu.out_data),
        ]
        unit_done = Signal()
        unit_fault = Signal()
        unit_kind = Signal.like(ctl.fault_kind_in)
        unit_r0, unit_r1 = Signal(w), Signal(w)
        with m.If(alu.unit == UNIT_MULDIV):
            m.d.comb += [unit_r0.eq(md.result), unit_done.eq(md.done),
                         unit_fault.eq(md.fault), unit_kind.eq(FAULT_CODE["divide-by-zero"])]
        with m.Elif(alu.unit == UNIT_FUNCTION):
            if fu is not None:
                m.d.comb += [fu.op.eq(alu.unit_op), fu.x.eq(alu.unit_x), fu.y.eq(alu.unit_y),
                             fu.z.eq(alu.unit_z), unit_r0.eq(fu.r0), unit_r1.eq(fu.r1),
                             unit_done.eq(fu.done), unit_fault.eq(fu.fault),
                             unit_kind.eq(fu.fault_kind)]
            else:
                m.d.comb += [unit_done.eq(1), unit_fault.eq(1),
                             unit_kind.eq(FAULT_CODE["unimplemented"])]
        with m.Else():
            m.d.comb += unit_done.eq(1)
        # unit results, one pair per call of the step (a gradient-mode step makes several)
        phase = Signal(range(alu.max_calls + 1))
        results = [(Signal(w, name=f"res{k}_0"), Signal(w, name=f"res{k}_1"))
                   for k in range(alu.max_calls)]
        m.d.comb += alu.phase.eq(phase)
        for k, (r0, r1) in enumerate(results):
            m.d.comb += [getattr(alu, f"res{k}_0").eq(r0), getattr(alu, f"res{k}_1").eq(r1)]

        def start_unit() -> None:
            m.d.comb += md.start.eq(alu.unit == UNIT_MULDIV)
            if fu is not None:
                m.d.comb += fu.start.eq(alu.unit == UNIT_FUNCTION)

        # host view
        m.d.comb += [
            host.halted.eq(ctl.halted), host.fault.eq(ctl.fault),
            host.fault_kind.eq(ctl.fault_kind), host.fault_pc.eq(ctl.fault_pc),
            host.pc.eq(ctl.pc), host.br.eq(ctl.br), host.dir_backward.eq(ctl.backward),
            host.tape_count.eq(tape.count), host.mem_rdata.eq(mem.rdata),
            host.reg_rdata.eq(rf.rdata_a),
        ]
        m.d.sync += retire.valid.eq(0)

        def fault(kind: str) -> None:
            m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(FAULT_CODE[kind])]
            m.next = "IDLE"

        in_memory = Signal()
        m.d.comb += in_memory.eq((ctl.pc >= 0) & (ctl.pc < p.memory_words))

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [
                    mem.raddr.eq(host.mem_addr), mem.waddr.eq(host.mem_addr),
                    mem.wdata.eq(host.mem_wdata | (host.mem_code << w)), mem.we.eq(host.mem_we),
                    rf.raddr_a.eq(host.reg_addr), rf.waddr.eq(host.reg_addr),
                    rf.wdata.eq(host.reg_wdata), rf.we.eq(host.reg_we),
                ]
                if grad:
                    m.d.comb += [
                        gmem.raddr.eq(host.mem_addr), gmem.waddr.eq(host.mem_addr),
                        gmem.wdata.eq(host.mem_wdata), gmem.we.eq(host.gmem_we),
                        grf.raddr_a.eq(host.reg_addr), grf.waddr.eq(host.reg_addr),
                        grf.wdata.eq(host.reg_wdata), grf.we.eq(host.greg_we),
                    ]
                with m.If(host.run):
                    m.d.comb += [ctl.load.eq(1), ctl.load_pc.eq(host.start_pc),
                                 ctl.load_backward.eq(host.backward)]
                    if grad:
                        m.d.sync += grad_on.eq(host.grad)
                    m.next = "FETCH"
            with m.State("FETCH"):
                m.d.comb += host.busy.eq(1)
                with m.If(in_memory):
                    m.d.comb += mem.raddr.eq(ctl.pc)
                    m.next = "DECODE"
                with m.Else():
                    fault("illegal-instruction")
            with m.State("DECODE"):
                m.d.comb += host.busy.eq(1)
                m.d.sync += [ir.eq(mem.rdata[:32]), ir_code.eq(mem.rdata[w]), phase.eq(0)]
                m.next = "REGS"
            with m.State("REGS"):
                m.d.comb += host.busy.eq(1)
                with m.If(dec.legal):
                    m.next = "EXEC"
                with m.Else():
                    fault("illegal-instruction")
            with m.State("EXEC"):
                m.d.comb += [host.busy.eq(1), mem.raddr.eq(alu.mem_addr)]
                if grad:
                    m.d.comb += gmem.raddr.eq(alu.mem_addr)
                start_unit()
                m.d.sync += mem_bad.eq(alu.mem_use & (alu.mem_addr >= p.memory_words))
                m.next = "WAIT"
            with m.State("ISSUE"):  # the next unit call of a multi-call step
                m.d.comb += [host.busy.eq(1), mem.raddr.eq(alu.mem_addr)]
                if grad:
                    m.d.comb += gmem.raddr.eq(alu.mem_addr)
                start_unit()
                m.next = "WAIT"
            with m.State("WAIT"):
                m.d.comb += [host.busy.eq(1), mem.raddr.eq(alu.mem_addr)]
                if grad:
                    m.d.comb += gmem.raddr.eq(alu.mem_addr)
                    unsupported = grad_on & alu.grad_unsupported
                else:
                    unsupported = 0
                with m.If(unsupported):
                    fault("unimplemented")
                with m.Elif(alu.mem_use & (mem_bad | mem.rdata[w])):
                    fault("memory-address")
                with m.Elif(phase < alu.ncalls):  # a unit call outstanding
                    with m.If(~unit_done):
                        pass
                    with m.Elif(unit_fault):
                        m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(unit_kind)]
                        m.next = "IDLE"
                    with m.Else():
                        with m.Switch(phase):
                            for k, (r0, r1) in enumerate(results):
                                with m.Case(k):
                                    m.d.sync += [r0.eq(unit_r0), r1.eq(unit_r1)]
                        m.d.sync += phase.eq(phase + 1)
                        with m.If(phase + 1 < alu.ncalls):
                            m.next = "ISSUE"
                with m.Elif(alu.pop & tape.empty):
                    fault("tape-empty")
                with m.Elif(alu.push & tape.full):
                    fault("tape-full")
                with m.Else():
                    m.d.comb += [
                        rf.waddr.eq(dec.a), rf.wdata.eq(alu.wa_data), rf.we.eq(alu.wa_en),
                        mem.waddr.eq(alu.mem_addr), mem.wdata.eq(alu.mem_wdata),
                        mem.we.eq(alu.mem_we),
                        tape.push.eq(alu.push), tape.pop.eq(alu.pop),
                        ctl.commit.eq(1),
                    ]
                    m.d.sync += [
                        wb_addr.eq(dec.b), wb_data.eq(alu.wb_data),
                        retire.valid.eq(1), retire.pc.eq(ctl.pc), retire.insn.eq(ir),
                        retire.backward_in.eq(ctl.backward), retire.br.eq(alu.br_out),
                        retire.backward.eq(alu.backward_out),
                        retire.wa_en.eq(alu.wa_en), retire.wa_addr.eq(dec.a),
                        retire.wa_data.eq(alu.wa_data),
                        retire.wb_en.eq(alu.wb_en), retire.wb_addr.eq(dec.b),
                        retire.wb_data.eq(alu.wb_data),
                        retire.mem_en.eq(alu.mem_we), retire.mem_addr.eq(alu.mem_addr),
                        retire.mem_data.eq(alu.mem_wdata),
                        retire.out_en.eq(alu.show | alu.push | alu.pop),
                        retire.out_data.eq(alu.out_data),
                        retire.push.eq(alu.push), retire.pop.eq(alu.pop),
                    ]
                    if grad:
                        m.d.comb += [
                            grf.waddr.eq(dec.a), grf.wdata.eq(alu.gwa_data), grf.we.eq(alu.gwa_en),
                            gmem.waddr.eq(alu.mem_addr), gmem.wdata.eq(alu.gm_wdata),
                            gmem.we.eq(alu.gm_we),
                        ]
                        m.d.sync += [gwb.eq(alu.gwb_data), gwb_en.eq(alu.gwb_en),
                                     gwc.eq(alu.gwc_data), gwc_en.eq(alu.gwc_en),
                                     wb_en.eq(alu.wb_en), c_addr.eq(dec.c)]
                        m.next = "WRITEB"
                    else:
                        with m.If(alu.wb_en):
                            m.next = "WRITEB"
                        with m.Else():
                            m.next = "NEXT"
            with m.State("WRITEB"):
                m.d.comb += [host.busy.eq(1), rf.waddr.eq(wb_addr), rf.wdata.eq(wb_data),
                             rf.we.eq(1 if not grad else wb_en)]
                if grad:
                    m.d.comb += [grf.waddr.eq(wb_addr), grf.wdata.eq(gwb), grf.we.eq(gwb_en)]
                    m.next = "WRITEC"
                else:
                    m.next = "NEXT"
            if grad:
                with m.State("WRITEC"):
                    m.d.comb += [host.busy.eq(1), grf.waddr.eq(c_addr), grf.wdata.eq(gwc),
                                 grf.we.eq(gwc_en)]
                    m.next = "NEXT"
            with m.State("NEXT"):
                m.d.comb += host.busy.eq(1)
                with m.If(ctl.fault | ctl.halted):
                    m.next = "IDLE"
                with m.Else():
                    m.next = "FETCH"
        return m
