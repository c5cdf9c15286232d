"""The gradient unit: runs an entry's gradient micro-program (``isa/timing/microcode.py``).

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
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from revasm.isa.table import INSTRUCTIONS
from revasm.isa.timing.microcode import (
    OPS,
    REGS,
    MicrocodeError,
    MicroOp,
    Operand,
    Step,
    step,
    temporaries,
)

from .memory_map import MemoryMap
from .params import FAULT_CODE, FAULT_NAMES
from .regfile import REGISTERS
from .semantics import FUNCTION_OPS, MULDIV_OPS, UNIT_OF

_SLOTS = ("x", "y", "z")
#: G's word holding temporary 0: the temporaries live in G's block RAM (256 words, 32 of
#: them the registers), not in flip-flops with a multiplexer input each
TEMP_BASE = REGISTERS


def _key(o: Operand) -> tuple[str, str]:
    """An operand or destination as the ROM knows it (the register only where it counts)."""
    return (o.source, o.reg if o.source in ("R", "G", "T") else "")


class MicroRom:
    """All programs (identical ones stored once), where each starts and ends, and the
    layout of a ROM word: the operation (a unit call names its unit and operation),
    the operand of each slot and the destination, each a code into the list of the
    choices some program uses -- so the word is as narrow as the table allows."""

    def __init__(self) -> None:
        self.steps: dict[tuple[int, bool], Step | None] = {}
        for index, ins in enumerate(INSTRUCTIONS):
            for backward in (False, True):
                try:
                    s = step(index, backward)
                except MicrocodeError:
                    s = None  # faults as unimplemented
                if s is not None and s.ops and ins.kind != "data":
                    s = None  # the core commits BR/DIR of a data entry after the program
                self.steps[(index, backward)] = s
        programs: list[tuple[MicroOp, ...]] = []
        self.start: dict[tuple[MicroOp, ...], int] = {}
        words: list[MicroOp] = []
        for s in self.steps.values():
            if s is not None and s.ops and s.ops not in self.start:
                programs.append(s.ops)
                self.start[s.ops] = len(words)
                words.extend(s.ops)
        self.words = words
        self.temps = max((temporaries(p) for p in programs), default=0)
        self.kinds = sorted({op.op if op.op != "CALL" else f"CALL {op.unit}" for op in words},
                            key=_kind_key)
        self.slots = {slot: sorted({_key(getattr(op, slot)) for op in words
                                    if op.used(slot)}) or [("ZERO", "")]
                      for slot in _SLOTS}
        self.dests = sorted({_key(op.dst) for op in words if op.dst is not None}) or [("T", "0")]
        self.fields = [("kind", len(self.kinds)), ("x", len(self.slots["x"])),
                       ("y", len(self.slots["y"])), ("z", len(self.slots["z"])),
                       ("dst", len(self.dests))]

    def span(self, key: tuple[int, bool]) -> tuple[int, int] | None:
        """The first and last ROM word of the program of ``(index, backward)``."""
        s = self.steps[key]
        if s is None or not s.ops:
            return None
        return self.start[s.ops], self.start[s.ops] + len(s.ops) - 1

    def bits(self, name: str) -> int:
        return (dict(self.fields)[name] - 1).bit_length()

    def encode(self, k: int) -> int:
        op = self.words[k]
        values = {"kind": self.kinds.index(op.op if op.op != "CALL" else f"CALL {op.unit}"),
                  "dst": self.dests.index(_key(op.dst)) if op.dst is not None else 0}
        for slot in _SLOTS:
            o = getattr(op, slot)
            values[slot] = self.slots[slot].index(_key(o)) if op.used(slot) else 0
        word, pos = 0, 0
        for name, _ in self.fields:
            word |= values[name] << pos
            pos += self.bits(name)
        return word

    def width(self) -> int:
        return max(1, sum(self.bits(name) for name, _ in self.fields))


def _kind_key(kind: str) -> tuple[int, int]:
    if kind.startswith("CALL "):
        return _unit_key(kind[5:])
    return (0, OPS.index(kind))


def _unit_key(name: str) -> tuple[int, int]:
    ops = MULDIV_OPS if UNIT_OF[name] == 1 else FUNCTION_OPS
    return (UNIT_OF[name], ops.index(name))


class GradientUnit(wiring.Component):
    """``start`` (with ``index``, ``backward``, ``na``/``nb``/``nc`` steady) runs the
    entry's micro-program; ``done`` pulses at its end, with ``fault``/``fault_kind``
    when a unit faulted or the address check failed (``fault_addr``: the address outside
    ``memory_map``'s windows or on a code cell).  ``has_program``,
    ``value_first`` and ``unsupported`` describe the step of ``(index, backward)``."""

    def __init__(self, width: int, memory_map: MemoryMap) -> None:
        self.width = width
        self.memory_map = memory_map
        self.rom = MicroRom()
        if self.rom.temps > 4:  # pragma: no cover - a temporary's number is two bits
            raise ValueError(f"the micro-programs need {self.rom.temps} temporaries, not <= 4")
        abits = (memory_map.memory_words - 1).bit_length()
        w = width
        super().__init__({
            "start": In(1), "index": In(range(len(INSTRUCTIONS))), "backward": In(1),
            "na": In(5), "nb": In(5), "nc": In(5),
            "has_program": Out(1), "value_first": Out(1), "unsupported": Out(1),
            "busy": Out(1), "done": Out(1), "fault": Out(1),
            "fault_kind": Out(range(len(FAULT_NAMES))), "fault_addr": Out(w),
            # register ports (R and G share the address of a port); the temporaries are
            # G's words TEMP_BASE, TEMP_BASE + 1, ... (read through the x and y ports)
            "raddr_x": Out(6), "raddr_y": Out(6), "raddr_z": Out(5),
            "r_x": In(w), "r_y": In(w), "r_z": In(w), "g_x": In(w), "g_y": In(w), "g_z": In(w),
            "g_waddr": Out(6), "g_wdata": Out(w), "g_we": Out(1),
            # memory: the address check reads MEM's code flag; GM is read and written
            "mem_raddr": Out(abits), "mem_code": In(1), "gm_rdata": In(w),
            "gm_waddr": Out(abits), "gm_wdata": Out(w), "gm_we": Out(1),
            # the multi-cycle units (1 = multiply/divide, 2 = function unit)
            "unit_start": Out(1), "unit": Out(range(3)),
            "unit_op": Out(range(max(len(FUNCTION_OPS), len(MULDIV_OPS)))),
            "unit_x": Out(w), "unit_y": Out(w), "unit_z": Out(w),
            "unit_done": In(1), "unit_fault": In(1),
            "unit_fault_kind": In(range(len(FAULT_NAMES))),
            # the last call's results, held by the unit until its next call is done
            "unit_r0": In(w), "unit_r1": In(w),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w = self.width
        rom = self.rom
        abits = (self.memory_map.memory_words - 1).bit_length()

        # which program: (index, backward) -> its first and last ROM word
        depth = max(2, len(rom.words))
        first, last = Signal(range(depth)), Signal(range(depth))
        with m.Switch(Cat(self.backward, self.index)):
            for (index, backward), s in rom.steps.items():
                with m.Case((index << 1) | int(backward)):
                    if s is None:
                        m.d.comb += self.unsupported.eq(1)
                    elif (span := rom.span((index, backward))) is not None:  # s.ops
                        start, end = span
                        m.d.comb += [self.has_program.eq(1), self.value_first.eq(s.value_first),
                                     first.eq(start), last.eq(end)]

        # the ROM word at upc: a synchronous ROM (block RAM on an iCE40) addressed by
        # the next upc, so that its word is there in the cycle upc holds its address
        upc, end = Signal(range(depth)), Signal(range(depth))
        upc_next = Signal.like(upc)
        m.d.comb += upc_next.eq(upc)
        m.d.sync += upc.eq(upc_next)
        m.submodules.rom = rom_mem = Memory(shape=rom.width(), depth=depth,
                                           init=[rom.encode(k) for k in range(len(rom.words))])
        rom_read = rom_mem.read_port()
        m.d.comb += rom_read.addr.eq(upc_next)
        f, pos = {}, 0
        for name, _ in rom.fields:
            n = rom.bits(name)
            f[name] = rom_read.data[pos:pos + n] if n else Const(0, 1)
            pos += n

        def reg_number(sel):
            return Mux(sel == 0, self.na, Mux(sel == 1, self.nb, self.nc))

        # the unit holds a call's results until its next call is done
        u0, u1 = self.unit_r0, self.unit_r1
        maddr = Signal(abits)
        mbad = Signal()
        ports = {"x": (self.r_x, self.g_x), "y": (self.r_y, self.g_y), "z": (self.r_z, self.g_z)}
        operands = {}
        for slot, raddr in zip(_SLOTS, (self.raddr_x, self.raddr_y, self.raddr_z)):
            r, g = ports[slot]
            data = {"ZERO": Const(0, w), "ONE": Const(1 << (w // 2), w), "R": r, "G": g,
                    "GM": self.gm_rdata, "U0": u0, "U1": u1}
            value = Signal(w, name=f"opnd_{slot}")
            reg = Signal(2, name=f"reg_{slot}")
            temp = Signal(name=f"temp_{slot}")  # a temporary: G's word TEMP_BASE + reg
            with m.Switch(f[slot]):
                for code, (source, which) in enumerate(rom.slots[slot]):
                    with m.Case(code):
                        if source == "T":
                            m.d.comb += [value.eq(g), temp.eq(1), reg.eq(int(which))]
                        else:
                            m.d.comb += value.eq(data[source])
                        if source in ("R", "G"):
                            m.d.comb += reg.eq(REGS.index(which))
            m.d.comb += raddr.eq(Mux(temp, TEMP_BASE + reg, reg_number(reg)))
            operands[slot] = value
        x, y, z = operands["x"], operands["y"], operands["z"]

        # the operation: x + y, x - y, fsign(x), a unit call, an address
        kind = {name: Signal(name=f"is_{name.lower()}") for name in OPS}
        with m.Switch(f["kind"]):
            for code, name in enumerate(rom.kinds):
                with m.Case(code):
                    if name.startswith("CALL "):
                        unit = name[5:]
                        ops = MULDIV_OPS if UNIT_OF[unit] == 1 else FUNCTION_OPS
                        m.d.comb += [kind["CALL"].eq(1), self.unit.eq(UNIT_OF[unit]),
                                     self.unit_op.eq(ops.index(unit))]
                    else:
                        m.d.comb += kind[name].eq(1)
        result = Signal(w)
        one = 1 << (w // 2)
        sum_ = Signal(w)
        m.d.comb += sum_.eq(x + Mux(kind["SUB"], ~y, y) + kind["SUB"])
        m.d.comb += result.eq(Mux(kind["SIGN"],
                                  Mux(x == 0, 0, Mux(x[w - 1], (-one) & ((1 << w) - 1), one)),
                                  sum_))
        dst_reg = Signal(2)
        dst_temp = Signal()
        with m.Switch(f["dst"]):
            for code, (source, which) in enumerate(rom.dests):
                with m.Case(code):
                    if source == "G":
                        m.d.comb += dst_reg.eq(REGS.index(which))
                    elif source == "T":
                        m.d.comb += [dst_reg.eq(int(which)), dst_temp.eq(1)]
        m.d.comb += [self.unit_x.eq(x), self.unit_y.eq(y), self.unit_z.eq(z),
                     self.g_waddr.eq(Mux(dst_temp, TEMP_BASE + dst_reg, reg_number(dst_reg))),
                     self.g_wdata.eq(result),
                     self.gm_waddr.eq(maddr), self.gm_wdata.eq(result),
                     self.mem_raddr.eq(maddr)]

        def advance() -> None:
            with m.If(upc == end):
                m.d.comb += self.done.eq(1)
                m.next = "IDLE"
            with m.Else():
                m.d.comb += upc_next.eq(upc + 1)
                m.next = "READ"

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.comb += upc_next.eq(first)
                    m.d.sync += end.eq(last)
                    m.next = "READ"
            with m.State("READ"):
                m.d.comb += self.busy.eq(1)
                m.next = "EXEC"
            with m.State("EXEC"):
                m.d.comb += self.busy.eq(1)
                with m.If(kind["CALL"]):
                    m.d.comb += self.unit_start.eq(1)
                    m.next = "WAIT"
                with m.Elif(kind["ADDR"]):
                    m.d.sync += [maddr.eq(x[:abits]), mbad.eq(~self.memory_map.holds(x)),
                                 self.fault_addr.eq(x)]
                    m.d.comb += self.mem_raddr.eq(x[:abits])
                    m.next = "CHECK"
                with m.Else():
                    with m.Switch(f["dst"]):
                        for code, (source, _which) in enumerate(rom.dests):
                            with m.Case(code):
                                if source == "GM":
                                    m.d.comb += self.gm_we.eq(1)
                                else:  # G or a temporary (G's words above the registers)
                                    m.d.comb += self.g_we.eq(1)
                    advance()
            with m.State("WAIT"):
                m.d.comb += self.busy.eq(1)
                with m.If(self.unit_done):
                    with m.If(self.unit_fault):
                        m.d.comb += [self.done.eq(1), self.fault.eq(1),
                                     self.fault_kind.eq(self.unit_fault_kind)]
                        m.next = "IDLE"
                    with m.Else():
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
