"""The register file: 32 W-bit registers, two or three synchronous read ports, one write port.

Synchronous reads map to iCE40 block RAM (one copy per read port: two SB_RAM40_4K at
W = 32) instead of a thousand flip-flops.  ``$0`` is never written (the decoder refuses
such instructions and the host interface ignores writes to it), so it reads zero.
The gradient bank G is a second instance with two read ports: the gradient unit reads G
through its x and y operands only, and the core reads G of an instruction's three
registers over two cycles (``rtl/hardware/core.py``, state GSAVE).  G[0] is an ordinary word
(``zero_register=False``): ``ADD $3 $0`` adds G[3] into it on the way back, as every
engine does (docs/gradient.md), and the host reads it like any other.  G's block RAM
(256 words) also holds the gradient unit's temporaries, in ``words`` beyond the 32.
"""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .memory import exclusive_memory, exclusive_ports

REGISTERS = 32


class RegisterFile(wiring.Component):
    """Read data appears the cycle after its address; a write lands at the clock edge, and
    a cycle that writes does not read (the ports keep their words)."""

    def __init__(self, width: int, read_ports: int = 3, zero_register: bool = True,
                 words: int = REGISTERS) -> None:
        if read_ports not in (2, 3):
            raise ValueError(f"a register file has 2 or 3 read ports, not {read_ports}")
        self.width = width
        self.zero_register = zero_register
        self.words = words
        self.ports = "abc"[:read_ports]
        abits = (words - 1).bit_length()
        super().__init__({
            **{f"raddr_{name}": In(abits) for name in self.ports},
            **{f"rdata_{name}": Out(width) for name in self.ports},
            "waddr": In(abits), "wdata": In(width), "we": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.bank = bank = exclusive_memory(shape=self.width, depth=self.words, init=[])
        write, reads = exclusive_ports(m, bank, len(self.ports))
        m.d.comb += [write.addr.eq(self.waddr), write.data.eq(self.wdata),
                     write.en.eq(self.we & ((self.waddr != 0) if self.zero_register else 1))]
        for name, port in zip(self.ports, reads):
            m.d.comb += [port.addr.eq(getattr(self, f"raddr_{name}")),
                         getattr(self, f"rdata_{name}").eq(port.data)]
        return m
