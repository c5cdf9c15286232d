"""The co-processor core: the units wired together and the instruction sequencer.

One instruction at a time (no pipeline): FETCH (memory read at PC), DECODE
(latch the word and its code flag), REGS (decode, check legality, read the
three operand registers), EXEC (the ALU evaluates the entry's template; start
the multiply/divide or function unit; read memory for EXCH), WAIT (until the
unit is done; check the memory cell; commit: write register A, memory, tape,
BR/DIR/PC; report on the retire port), WRITEB (second register write of SWAP
and ROT), NEXT.  Faults stop the core with the PC of the instruction.  The cycles of
this sequence, unit calls and micro-programs included, are ``isa/timing/schedule.py``'s
(``STATES``, ``FIRST_COMMIT``): every simulator counts them, and the lockstep
co-simulation checks the count at every retired instruction.

In gradient mode a step with gradient statements also runs its micro-program
on the gradient unit (GRAD): backward before the value step (then REGS reads
the registers again), forward after it (BR/DIR/PC and the retire report wait
for the program's end).
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .alu import UNIT_FUNCTION, UNIT_MULDIV, Alu
from .control import ControlUnit
from .decoder import Decoder
from .function_unit import FunctionUnit
from .gradient_unit import TEMP_BASE, GradientUnit
from .host import host_signature, retire_signature
from .memory import DataMemory, Tape
from .memory_map import below
from .muldiv import MulDiv
from .params import FAULT_CODE, CoreParams
from .regfile import RegisterFile


class Core(wiring.Component):
    """The whole co-processor for one :class:`CoreParams`.

    ``function_unit=False`` builds the core without the function unit (its
    requests then fault as ``unimplemented``), for synthesis reports that give
    the function unit separately; that core multiplies and divides on
    :class:`MulDiv`. With the function unit, ``fmul``/``fdiv`` run on the
    function unit's multiplier and divider (its ``arith`` input), and there is
    no separate multiply/divide unit.
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

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        w = p.width
        host, retire = self.host, self.retire
        m.submodules.decoder = dec = Decoder()
        m.submodules.alu = alu = Alu(w, p.br_width)
        m.submodules.regfile = rf = RegisterFile(w)
        m.submodules.memory = mem = DataMemory(w, p.memory_words, self.memory_init)
        m.submodules.tape = tape = Tape(w, p.tape_words)
        m.submodules.control = ctl = ControlUnit(p)
        md = fu = None
        if self.function_unit:
            m.submodules.function_unit = fu = FunctionUnit(w)
        else:
            m.submodules.muldiv = md = MulDiv(w)
        grad = p.gradient
        if grad:
            # G has two read ports: the micro-programs read G only through the x and y
            # operands (the z operand is R[c] alone), and GSAVE reads G[c] a cycle after
            # G[a] and G[b] -- a 32-word bank in block RAM costs a copy per port
            m.submodules.gradient_unit = gu = GradientUnit(w, p.memory_map)
            # G's block RAM holds the gradient unit's temporaries above the 32 registers
            m.submodules.gregfile = grf = RegisterFile(w, read_ports=2, zero_register=False,
                                                       words=TEMP_BASE + gu.rom.temps)
            m.submodules.gmemory = gmem = DataMemory(w, p.memory_words, code_flag=False)
            if any(source == "G" for source, _ in gu.rom.slots["z"]):  # pragma: no cover
                raise ValueError("a micro-program reads G through its z operand, which "
                                 "the two-port gradient register file cannot serve")
            grad_on = Signal()
            grad_done = Signal()  # the step's micro-program has run (it precedes the value step)
            m.d.comb += [
                gu.index.eq(dec.index), gu.backward.eq(ctl.backward),
                gu.na.eq(dec.a), gu.nb.eq(dec.b), gu.nc.eq(dec.c),
                gu.r_x.eq(rf.rdata_a), gu.r_y.eq(rf.rdata_b), gu.r_z.eq(rf.rdata_c),
                gu.g_x.eq(grf.rdata_a), gu.g_y.eq(grf.rdata_b), gu.g_z.eq(0),
                gu.mem_code.eq(mem.rdata[w]), gu.gm_rdata.eq(gmem.rdata),
                grf.raddr_a.eq(dec.a), grf.raddr_b.eq(dec.b),
                self.host.greg_rdata.eq(grf.rdata_a), self.host.gmem_rdata.eq(gmem.rdata),
            ]
            program_after = Signal()  # the micro-program follows the value step
            m.d.comb += program_after.eq(grad_on & gu.has_program & gu.value_first)
            # A faulting step has no effect (isa/step_order.py): the words a fault in the
            # step's second part must put back -- forward, what the value step wrote
            # (R[a], R[b], OV); backward, the gradients of a, b, c the adjoint may have
            # changed -- and the fault to raise once they are back.
            saved_a, saved_b, saved_c = (Signal(w, name=f"saved_{x}") for x in ("a", "b", "c"))
            # OV is put back by undoing the step's count: its event and direction
            saved_event, saved_down = Signal(), Signal()
            saved_wa, saved_wb, saving_g = Signal(), Signal(), Signal()
            undo_kind = Signal.like(ctl.fault_kind_in)

        else:
            program_after = 0
        ir = Signal(32)
        ir_code = Signal()
        mem_bad = Signal()  # EXCH address outside the memory map's windows
        fault_addr = Signal(w)  # the address of a memory-address fault
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
            tape.wdata.eq(alu.out_data),
        ]
        # the multi-cycle units serve the ALU, or the gradient unit while it runs
        in_grad = Signal()
        unit_sel = Signal.like(alu.unit)
        unit_op = Signal.like(alu.unit_op)
        unit_x, unit_y, unit_z = Signal(w), Signal(w), Signal(w)
        m.d.comb += [unit_sel.eq(alu.unit), unit_op.eq(alu.unit_op), unit_x.eq(alu.unit_x),
                     unit_y.eq(alu.unit_y), unit_z.eq(alu.unit_z)]
        if grad:
            with m.If(in_grad):
                m.d.comb += [unit_sel.eq(gu.unit), unit_op.eq(gu.unit_op), unit_x.eq(gu.unit_x),
                             unit_y.eq(gu.unit_y), unit_z.eq(gu.unit_z)]
        if md is not None:
            m.d.comb += [md.op.eq(unit_op), md.x.eq(unit_x), md.y.eq(unit_y)]
        unit_done = Signal()
        unit_fault = Signal()
        unit_kind = Signal.like(ctl.fault_kind_in)
        unit_r0, unit_r1 = Signal(w), Signal(w)
        unit_ovf = Signal()
        if fu is not None:  # fmul/fdiv and the functions: the function unit
            # its results are read only when a call of it is done, so they need no gating
            m.d.comb += [unit_r0.eq(fu.r0), unit_r1.eq(fu.r1), unit_ovf.eq(fu.overflow)]
            with m.If((unit_sel == UNIT_FUNCTION) | (unit_sel == UNIT_MULDIV)):
                m.d.comb += [unit_done.eq(fu.done), unit_fault.eq(fu.fault),
                             unit_kind.eq(fu.fault_kind)]
            with m.Else():
                m.d.comb += unit_done.eq(1)
        elif md is not None:  # fmul/fdiv on the multiply/divide unit; functions fault
            m.d.comb += [unit_r0.eq(md.result), unit_ovf.eq(md.overflow)]  # as above
            with m.If(unit_sel == UNIT_MULDIV):
                m.d.comb += [unit_done.eq(md.done), unit_fault.eq(md.fault),
                             unit_kind.eq(FAULT_CODE["divide-by-zero"])]
            with m.Elif(unit_sel == UNIT_FUNCTION):
                m.d.comb += [unit_done.eq(1), unit_fault.eq(1),
                             unit_kind.eq(FAULT_CODE["unimplemented"])]
            with m.Else():
                m.d.comb += unit_done.eq(1)
        if fu is not None:
            m.d.comb += [fu.op.eq(unit_op), fu.x.eq(unit_x), fu.y.eq(unit_y), fu.z.eq(unit_z),
                         fu.arith.eq(unit_sel == UNIT_MULDIV)]
        if grad:
            m.d.comb += [gu.unit_done.eq(unit_done), gu.unit_fault.eq(unit_fault),
                         gu.unit_fault_kind.eq(unit_kind), gu.unit_r0.eq(unit_r0),
                         gu.unit_r1.eq(unit_r1)]
        # the value step's unit results (value templates make at most one call): a unit
        # holds its results until its next call is done, so the last call's are read from
        # it, and only earlier calls' would need registers
        phase = Signal(range(alu.max_calls + 1))
        last = alu.max_calls - 1
        results = [(Signal(w, name=f"res{k}_0"), Signal(w, name=f"res{k}_1"))
                   if k < last else (unit_r0, unit_r1) for k in range(alu.max_calls)]
        overflows = [Signal(name=f"ovf{k}") if k < last else unit_ovf
                     for k in range(alu.max_calls)]
        m.d.comb += alu.phase.eq(phase)
        for k, (r0, r1) in enumerate(results):
            m.d.comb += [getattr(alu, f"res{k}_0").eq(r0), getattr(alu, f"res{k}_1").eq(r1),
                         getattr(alu, f"ovf{k}").eq(overflows[k])]
        # the overflow count: the value step's event, applied when it commits its writes
        m.d.comb += [ctl.ov_event.eq(alu.ov_en & alu.ov_event), ctl.ov_down.eq(alu.ov_down),
                     ctl.ov_wdata.eq(host.reg_wdata)]

        def start_unit(request: Value | int = 1) -> None:
            if md is not None:
                m.d.comb += md.start.eq(request & (unit_sel == UNIT_MULDIV))
            if fu is not None:
                m.d.comb += fu.start.eq(request & ((unit_sel == UNIT_FUNCTION)
                                                   | (unit_sel == UNIT_MULDIV)))

        # host view
        m.d.comb += [
            host.halted.eq(ctl.halted), host.fault.eq(ctl.fault),
            host.fault_kind.eq(ctl.fault_kind), host.fault_pc.eq(ctl.fault_pc),
            host.pc.eq(ctl.pc), host.br.eq(ctl.br), host.dir_backward.eq(ctl.backward),
            host.tape_count.eq(tape.count), host.mem_rdata.eq(mem.rdata),
            host.reg_rdata.eq(rf.rdata_a), host.ov.eq(ctl.ov), host.fault_addr.eq(fault_addr),
        ]
        m.d.sync += retire.valid.eq(0)

        def fault(kind: str) -> None:
            m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(FAULT_CODE[kind])]
            m.next = "IDLE"

        def value_fault(kind: Value | int) -> None:
            """A fault of the value step (``kind``: its code); in gradient mode after the
            adjoint has run (backward), the adjoint's writes are undone first (states
            UNDO_G*)."""
            if grad:
                with m.If(grad_on & grad_done):
                    m.d.sync += undo_kind.eq(kind)
                    m.next = "UNDO_GC"
                with m.Else():
                    m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(kind)]
                    m.next = "IDLE"
            else:
                m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(kind)]
                m.next = "IDLE"

        in_memory = Signal()
        m.d.comb += in_memory.eq(~ctl.pc[-1] & below(ctl.pc.as_unsigned(), p.memory_map.low_words))

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += [
                    mem.raddr.eq(host.mem_addr), mem.waddr.eq(host.mem_addr),
                    mem.wdata.eq(host.mem_wdata | (host.mem_code << w)), mem.we.eq(host.mem_we),
                    rf.raddr_a.eq(host.reg_addr), rf.waddr.eq(host.reg_addr),
                    rf.wdata.eq(host.reg_wdata), rf.we.eq(host.reg_we),
                    ctl.ov_we.eq(host.ov_we),
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
                if grad:
                    m.d.sync += grad_done.eq(0)
                m.next = "REGS"
            with m.State("REGS"):
                m.d.comb += host.busy.eq(1)
                with m.If(~dec.legal):
                    fault("illegal-instruction")
                if grad:
                    with m.Elif(grad_on & gu.unsupported):
                        fault("unimplemented")
                    with m.Elif(grad_on & gu.has_program & ~gu.value_first & ~grad_done):
                        m.next = "GSAVE"  # the adjoint runs before the value step
                with m.Else():
                    m.next = "EXEC"
            with m.State("EXEC"):
                m.d.comb += [host.busy.eq(1), mem.raddr.eq(alu.mem_addr)]
                start_unit()
                # the physical cell is the address's low bits (rtl/hardware/memory_map.py)
                m.d.sync += [mem_bad.eq(alu.mem_use & ~p.memory_map.holds(alu.mem_addr)),
                             fault_addr.eq(alu.mem_addr)]
                m.next = "WAIT"
            with m.State("WAIT"):
                m.d.comb += [host.busy.eq(1), mem.raddr.eq(alu.mem_addr)]
                with m.If(alu.mem_use & (mem_bad | mem.rdata[w])):
                    value_fault(FAULT_CODE["memory-address"])
                with m.Elif(phase < alu.ncalls):  # a unit call outstanding
                    with m.If(~unit_done):
                        pass
                    with m.Elif(unit_fault):
                        value_fault(unit_kind)
                    with m.Else():
                        with m.Switch(phase):
                            for k, (r0, r1) in enumerate(results[:last]):
                                with m.Case(k):
                                    m.d.sync += [r0.eq(unit_r0), r1.eq(unit_r1),
                                                 overflows[k].eq(unit_ovf)]
                        m.d.sync += phase.eq(phase + 1)
                with m.Elif(alu.pop & tape.empty):
                    value_fault(FAULT_CODE["tape-empty"])
                with m.Elif(alu.push & tape.full):
                    value_fault(FAULT_CODE["tape-full"])
                with m.Else():
                    m.d.comb += [
                        rf.waddr.eq(dec.a), rf.wdata.eq(alu.wa_data), rf.we.eq(alu.wa_en),
                        mem.waddr.eq(alu.mem_addr), mem.wdata.eq(alu.mem_wdata),
                        mem.we.eq(alu.mem_we),
                        tape.push.eq(alu.push), tape.pop.eq(alu.pop),
                        ctl.ov_step.eq(1),
                    ]
                    m.d.sync += [
                        wb_addr.eq(dec.b), wb_data.eq(alu.wb_data),
                        retire.pc.eq(ctl.pc), retire.insn.eq(ir),
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
                        retire.ov.eq(ctl.ov_next),
                    ]
                    if grad:
                        # a micro-program after the value step (forward): BR/DIR/PC and the
                        # retire report wait for its end (the entry is a data entry, so its
                        # BR and DIR do not depend on the registers it writes); the words
                        # it overwrites are kept in case the micro-program faults
                        m.d.sync += [saved_a.eq(rf.rdata_a), saved_b.eq(rf.rdata_b),
                                     saved_event.eq(ctl.ov_event),
                                     saved_down.eq(ctl.ov_down), saved_wa.eq(alu.wa_en),
                                     saved_wb.eq(alu.wb_en)]
                        with m.If(~program_after):
                            m.d.comb += ctl.commit.eq(1)
                            m.d.sync += retire.valid.eq(1)
                        with m.If(alu.wb_en):
                            m.next = "WRITEB"
                        with m.Elif(program_after):
                            m.d.comb += gu.start.eq(1)
                            m.next = "GRAD"
                        with m.Else():
                            m.next = "NEXT"
                    else:
                        m.d.comb += ctl.commit.eq(1)
                        m.d.sync += retire.valid.eq(1)
                        with m.If(alu.wb_en):
                            m.next = "WRITEB"
                        with m.Else():
                            m.next = "NEXT"
            with m.State("WRITEB"):
                m.d.comb += [host.busy.eq(1), rf.waddr.eq(wb_addr), rf.wdata.eq(wb_data),
                             rf.we.eq(1)]
                if grad:
                    with m.If(program_after):
                        m.d.comb += gu.start.eq(1)
                        m.next = "GRAD"
                    with m.Else():
                        m.next = "NEXT"
                else:
                    m.next = "NEXT"
            if grad:
                # G of a, b and c, put back if the value step faults after the adjoint:
                # G[a] and G[b] from REGS' addresses now, G[c] in GRAD's first cycle
                with m.State("GSAVE"):
                    m.d.comb += [host.busy.eq(1), grf.raddr_b.eq(dec.c), gu.start.eq(1)]
                    m.d.sync += [saved_a.eq(grf.rdata_a), saved_b.eq(grf.rdata_b),
                                 saving_g.eq(1)]
                    m.next = "GRAD"
                with m.State("GRAD"):  # the gradient unit runs the step's micro-program
                    m.d.comb += [
                        host.busy.eq(1), in_grad.eq(1),
                        rf.raddr_a.eq(gu.raddr_x), rf.raddr_b.eq(gu.raddr_y),
                        rf.raddr_c.eq(gu.raddr_z),
                        grf.raddr_a.eq(gu.raddr_x), grf.raddr_b.eq(gu.raddr_y),
                        grf.waddr.eq(gu.g_waddr), grf.wdata.eq(gu.g_wdata), grf.we.eq(gu.g_we),
                        mem.raddr.eq(gu.mem_raddr), gmem.raddr.eq(gu.mem_raddr),
                        gmem.waddr.eq(gu.gm_waddr), gmem.wdata.eq(gu.gm_wdata),
                        gmem.we.eq(gu.gm_we),
                    ]
                    start_unit(gu.unit_start)
                    with m.If(saving_g):  # port b still shows G at GSAVE's address c
                        m.d.sync += [saved_c.eq(grf.rdata_b), saving_g.eq(0)]
                    with m.If(gu.done):
                        with m.If(gu.fault & program_after):  # the value step has written
                            m.d.sync += [undo_kind.eq(gu.fault_kind),
                                         fault_addr.eq(gu.fault_addr)]
                            m.next = "UNDO_A"
                        with m.Elif(gu.fault):  # (its checks come before its writes)
                            m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(gu.fault_kind)]
                            m.d.sync += fault_addr.eq(gu.fault_addr)
                            m.next = "IDLE"
                        with m.Elif(program_after):  # the value step has run: commit
                            m.d.comb += ctl.commit.eq(1)
                            m.d.sync += retire.valid.eq(1)
                            m.next = "NEXT"
                        with m.Else():  # now the value step (REGS reads its registers)
                            m.d.sync += grad_done.eq(1)
                            m.next = "REGS"
                # forward: the micro-program faulted after the value step; put R[a], OV
                # and R[b] back, then fault
                with m.State("UNDO_A"):
                    m.d.comb += [host.busy.eq(1), rf.waddr.eq(dec.a), rf.wdata.eq(saved_a),
                                 rf.we.eq(saved_wa), ctl.ov_step.eq(1),
                                 ctl.ov_event.eq(saved_event), ctl.ov_down.eq(~saved_down)]
                    m.next = "UNDO_B"
                with m.State("UNDO_B"):
                    m.d.comb += [host.busy.eq(1), rf.waddr.eq(wb_addr), rf.wdata.eq(saved_b),
                                 rf.we.eq(saved_wb), ctl.raise_fault.eq(1),
                                 ctl.fault_kind_in.eq(undo_kind)]
                    m.next = "IDLE"
                # backward: the value step faulted after the adjoint; put G of c, b, a back
                for state, reg, word, following in (("UNDO_GC", dec.c, saved_c, "UNDO_GB"),
                                                    ("UNDO_GB", dec.b, saved_b, "UNDO_GA"),
                                                    ("UNDO_GA", dec.a, saved_a, None)):
                    with m.State(state):
                        m.d.comb += [host.busy.eq(1), grf.waddr.eq(reg), grf.wdata.eq(word),
                                     grf.we.eq(1)]
                        if following is None:
                            m.d.comb += [ctl.raise_fault.eq(1), ctl.fault_kind_in.eq(undo_kind)]
                            m.next = "IDLE"
                        else:
                            m.next = following
            with m.State("NEXT"):
                m.d.comb += host.busy.eq(1)
                with m.If(ctl.fault | ctl.halted):
                    m.next = "IDLE"
                with m.Else():
                    m.next = "FETCH"
        return m
