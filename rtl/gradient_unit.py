"""The gradient unit: runs an entry's gradient micro-program (:mod:`revasm.rtl.microcode`).

One shared datapath for every entry: three operands (each a register port of
R or G addressed by the entry's ``a``, ``b`` or ``c``, the gradient word GM,
the constants, the unit results U0/U1 or a temporary), one adder/subtractor
(and ``fsign``), the multi-cycle units through the core, and one write per
micro-operation into G, GM or a temporary.  The micro-programs of all entries
sit in one ROM generated from the table at elaboration time (identical
programs stored once); ``(index, backward)`` selects the first word.

Timing per micro-operation: READ (the ports' addresses), EXEC (compute and
write; start a unit; latch an address), then WAIT for a unit or CHECK the
address (outside memory or a code cell: ``memory-address``).  A write lands
at the end of EXEC, so the next READ sees it: every micro-operation reads the
banks as the previous ones left them, as the Python template does.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.table import INSTRUCTIONS

from .microcode import OPS, REGS, MicroOp, Operand, Step, TemplateError, step, temporaries
from .params import FAULT_CODE, FAULT_NAMES
from .semantics import FUNCTION_OPS, MULDIV_OPS, UNIT_OF

_SLOTS = ("x", "y", "z")


def _name(o: Operand) -> str:
    return f"T{o.reg}" if o.source == "T" else o.source


class MicroRom:
    """All programs, their start words and the field layout of a ROM word."""

    def __init__(self) -> None:
        self.steps: dict[tuple[int, bool], Step | None] = {}
        for index in range(len(INSTRUCTIONS)):
            for backward in (False, True):
                try:
                    self.steps[(index, backward)] = step(index, backward)
                except TemplateError:
                    self.steps[(index, backward)] = None  # faults as unimplemented
        programs: list[tuple[MicroOp, ...]] = []
        self.start: dict[tuple[int, bool], int] = {}
        words: list[MicroOp] = []
        lasts: list[bool] = []
        for key, s in self.steps.items():
            if s is None or not s.ops:
                continue
            if s.ops not in programs:
                programs.append(s.ops)
                self.start[s.ops] = len(words)
                words.extend(s.ops)
                lasts.extend([False] * (len(s.ops) - 1) + [True])
        self.words, self.lasts = words, lasts
        self.temps = max((temporaries(p) for p in programs), default=0)
        # per slot, the sources some program uses (the operand mux has only those)
        self.sources = {slot: sorted({_name(getattr(op, slot)) for op in words if
                                      getattr(op, slot) in op.reads()} | {"ZERO"})
                        for slot in _SLOTS}
        self.dests = ["NONE"] + sorted({_name(op.dst) for op in words if op.dst is not None})
        self.units = sorted({op.unit for op in words if op.unit}, key=_unit_key)
        self.fields = [("op", len(OPS)), ("xsrc", len(self.sources["x"])), ("xreg", 3),
                       ("ysrc", len(self.sources["y"])), ("yreg", 3),
                       ("zsrc", len(self.sources["z"])), ("zreg", 3),
                       ("dst", len(self.dests)), ("dreg", 3), ("call", len(self.units) + 1),
                       ("last", 2)]

    def program_start(self, key: tuple[int, bool]) -> int | None:
        s = self.steps[key]
        return None if s is None or not s.ops else self.start[s.ops]

    def bits(self, name: str) -> int:
        return max(1, (dict(self.fields)[name] - 1).bit_length())

    def encode(self, k: int) -> int:
        op = self.words[k]
        values = {"op": OPS.index(op.op), "last": int(self.lasts[k]),
                  "dst": self.dests.index(_name(op.dst)) if op.dst is not None else 0,
                  "dreg": REGS.index(op.dst.reg) if op.dst is not None
                  and op.dst.source == "G" else 0,
                  "call": self.units.index(op.unit) + 1 if op.unit else 0}
        for slot in _SLOTS:
            o = getattr(op, slot)
            values[f"{slot}src"] = self.sources[slot].index(_name(o)) if o in op.reads() \
                else self.sources[slot].index("ZERO")
            values[f"{slot}reg"] = REGS.index(o.reg) if o.source in ("R", "G") else 0
        word, pos = 0, 0
        for name, _ in self.fields:
            word |= values[name] << pos
            pos += self.bits(name)
        return word

    def width(self) -> int:
        return sum(self.bits(name) for name, _ in self.fields)


def _unit_key(name: str) -> tuple[int, int]:
    ops = MULDIV_OPS if UNIT_OF[name] == 1 else FUNCTION_OPS
    return (UNIT_OF[name], ops.index(name))


class GradientUnit(wiring.Component):
    """``start`` (with ``index``, ``backward``, ``na``/``nb``/``nc`` steady) runs the
    entry's micro-program; ``done`` pulses at its end, with ``fault``/``fault_kind``
    when a unit faulted or the address check failed.  ``has_program``,
    ``value_first`` and ``unsupported`` describe the step of ``(index, backward)``."""

    def __init__(self, width: int, memory_words: int) -> None:
        self.width = width
        self.memory_words = memory_words
        self.rom = MicroRom()
        abits = (memory_words - 1).bit_length()
        w = width
        super().__init__({
            "start": In(1), "index": In(range(len(INSTRUCTIONS))), "backward": In(1),
            "na": In(5), "nb": In(5), "nc": In(5),
            "has_program": Out(1), "value_first": Out(1), "unsupported": Out(1),
            "busy": Out(1), "done": Out(1), "fault": Out(1),
            "fault_kind": Out(range(len(FAULT_NAMES))),
            # register ports (R and G share the address of a port)
            "raddr_x": Out(5), "raddr_y": Out(5), "raddr_z": Out(5),
            "r_x": In(w), "r_y": In(w), "r_z": In(w), "g_x": In(w), "g_y": In(w), "g_z": In(w),
            "g_waddr": Out(5), "g_wdata": Out(w), "g_we": Out(1),
            # memory: the address check reads MEM's code flag; GM is read and written
            "mem_raddr": Out(abits), "mem_code": In(1), "gm_rdata": In(w),
            "gm_waddr": Out(abits), "gm_wdata": Out(w), "gm_we": Out(1),
            # the multi-cycle units (1 = multiply/divide, 2 = function unit)
            "unit_start": Out(1), "unit": Out(range(3)),
            "unit_op": Out(range(max(len(FUNCTION_OPS), len(MULDIV_OPS)))),
            "unit_x": Out(w), "unit_y": Out(w), "unit_z": Out(w),
            "unit_done": In(1), "unit_fault": In(1),
            "unit_fault_kind": In(range(len(FAULT_NAMES))),
            "unit_r0": In(w), "unit_r1": In(w),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        w = self.width
        rom = self.rom
        abits = (self.memory_words - 1).bit_length()

        # which program: (index, backward) -> first ROM word
        first = Signal(range(max(1, len(rom.words))))
        with m.Switch(Cat(self.backward, self.index)):
            for (index, backward), s in rom.steps.items():
                with m.Case((index << 1) | int(backward)):
                    if s is None:
                        m.d.comb += self.unsupported.eq(1)
                    elif s.ops:
                        m.d.comb += [self.has_program.eq(1), self.value_first.eq(s.value_first),
                                     first.eq(rom.program_start((index, backward)))]

        # the ROM word at upc
        upc = Signal(range(max(1, len(rom.words))))
        uop = Signal(rom.width())
        with m.Switch(upc):
            for k in range(len(rom.words)):
                with m.Case(k):
                    m.d.comb += uop.eq(rom.encode(k))
        f, pos = {}, 0
        for name, _ in rom.fields:
            f[name] = uop[pos:pos + rom.bits(name)]
            pos += rom.bits(name)

        def reg_number(sel):
            return Mux(sel == 0, self.na, Mux(sel == 1, self.nb, self.nc))

        m.d.comb += [self.raddr_x.eq(reg_number(f["xreg"])), self.raddr_y.eq(reg_number(f["yreg"])),
                     self.raddr_z.eq(reg_number(f["zreg"]))]

        temps = [Signal(w, name=f"t{k}") for k in range(rom.temps)]
        u0, u1 = Signal(w), Signal(w)
        maddr = Signal(abits)
        mbad = Signal()
        ports = {"x": (self.r_x, self.g_x), "y": (self.r_y, self.g_y), "z": (self.r_z, self.g_z)}
        operands = {}
        for slot in _SLOTS:
            r, g = ports[slot]
            table = {"ZERO": Const(0, w), "ONE": Const(1 << (w // 2), w), "R": r, "G": g,
                     "GM": self.gm_rdata, "U0": u0, "U1": u1,
                     **{f"T{k}": t for k, t in enumerate(temps)}}
            value = Signal(w, name=f"opnd_{slot}")
            with m.Switch(f[f"{slot}src"]):
                for code, name in enumerate(rom.sources[slot]):
                    with m.Case(code):
                        m.d.comb += value.eq(table[name])
            operands[slot] = value
        x, y, z = operands["x"], operands["y"], operands["z"]

        # the ALU: x + y, x - y, fsign(x)
        result = Signal(w)
        one = 1 << (w // 2)
        with m.Switch(f["op"]):
            with m.Case(OPS.index("ADD")):
                m.d.comb += result.eq(x + y)
            with m.Case(OPS.index("SUB")):
                m.d.comb += result.eq(x - y)
            with m.Case(OPS.index("SIGN")):
                m.d.comb += result.eq(Mux(x == 0, 0, Mux(x[w - 1], (-one) & ((1 << w) - 1), one)))

        # unit requests
        with m.Switch(f["call"]):
            for code, name in enumerate(rom.units, start=1):
                with m.Case(code):
                    ops = MULDIV_OPS if UNIT_OF[name] == 1 else FUNCTION_OPS
                    m.d.comb += [self.unit.eq(UNIT_OF[name]), self.unit_op.eq(ops.index(name))]
        m.d.comb += [self.unit_x.eq(x), self.unit_y.eq(y), self.unit_z.eq(z),
                     self.g_waddr.eq(reg_number(f["dreg"])), self.g_wdata.eq(result),
                     self.gm_waddr.eq(maddr), self.gm_wdata.eq(result),
                     self.mem_raddr.eq(maddr)]

        def advance() -> None:
            with m.If(f["last"]):
                m.d.comb += self.done.eq(1)
                m.next = "IDLE"
            with m.Else():
                m.d.sync += upc.eq(upc + 1)
                m.next = "READ"

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += upc.eq(first)
                    m.next = "READ"
            with m.State("READ"):
                m.d.comb += self.busy.eq(1)
                m.next = "EXEC"
            with m.State("EXEC"):
                m.d.comb += self.busy.eq(1)
                with m.Switch(f["op"]):
                    with m.Case(OPS.index("CALL")):
                        m.d.comb += self.unit_start.eq(1)
                        m.next = "WAIT"
                    with m.Case(OPS.index("ADDR")):
                        m.d.sync += [maddr.eq(x[:abits]), mbad.eq(x >= self.memory_words)]
                        m.d.comb += self.mem_raddr.eq(x[:abits])
                        m.next = "CHECK"
                    with m.Default():
                        with m.Switch(f["dst"]):
                            for code, name in enumerate(rom.dests):
                                with m.Case(code):
                                    if name == "G":
                                        m.d.comb += self.g_we.eq(1)
                                    elif name == "GM":
                                        m.d.comb += self.gm_we.eq(1)
                                    elif name.startswith("T"):
                                        m.d.sync += temps[int(name[1:])].eq(result)
                        advance()
            with m.State("WAIT"):
                m.d.comb += self.busy.eq(1)
                with m.If(self.unit_done):
                    with m.If(self.unit_fault):
                        m.d.comb += [self.done.eq(1), self.fault.eq(1),
                                     self.fault_kind.eq(self.unit_fault_kind)]
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [u0.eq(self.unit_r0), u1.eq(self.unit_r1)]
                        advance()
            with m.State("CHECK"):
                m.d.comb += self.busy.eq(1)
                with m.If(mbad | self.mem_code):
                    m.d.comb += [self.done.eq(1), self.fault.eq(1),
                                 self.fault_kind.eq(FAULT_CODE["memory-address"])]
                    m.next = "IDLE"
                with m.Else():
                    advance()
        return m
