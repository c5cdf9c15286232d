"""The register file: 32 W-bit registers, three synchronous read ports, one write port.

Synchronous reads map to iCE40 block RAM (one copy per read port) instead of
a thousand flip-flops.  ``$0`` is never written (the decoder refuses such
instructions and the host interface ignores writes to it), so it reads zero.
The gradient bank G is a second instance.
"""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

REGISTERS = 32


class RegisterFile(wiring.Component):
    """Read data appears the cycle after its address; a write lands at the clock edge."""

    def __init__(self, width: int) -> None:
        self.width = width
        super().__init__({
            "raddr_a": In(5), "raddr_b": In(5), "raddr_c": In(5),
            "rdata_a": Out(width), "rdata_b": Out(width), "rdata_c": Out(width),
            "waddr": In(5), "wdata": In(width), "we": In(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.bank = bank = Memory(shape=self.width, depth=REGISTERS, init=[])
        write = bank.write_port()
        m.d.comb += [write.addr.eq(self.waddr), write.data.eq(self.wdata),
                     write.en.eq(self.we & (self.waddr != 0))]
        for name in ("a", "b", "c"):
            port = bank.read_port()
            m.d.comb += [port.addr.eq(getattr(self, f"raddr_{name}")),
                         getattr(self, f"rdata_{name}").eq(port.data)]
        return m
