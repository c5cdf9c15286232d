"""Data memory (the unified program/data memory) and the EMIT tape.

Memory words are W + 1 bits wide: bit W is the code flag of the image (the
hex image format's tag digit), so EXCH can refuse code cells and the fetch
can refuse DATA cells, as the reference does.  The gradient shadow of memory
(gradient mode) is the same component without the flag.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory, ReadPort, WritePort
from amaranth.lib.wiring import In, Out

#: The attribute of a memory whose read ports never read in a cycle its write port writes
#: (:func:`exclusive_ports`).  ``rtl/synthesis/synth.py`` tells yosys so: a read colliding with the
#: write would return the old word, which an iCE40 block RAM does not promise, and yosys
#: would otherwise emulate it with a register per data bit, a multiplexer and an address
#: comparator at every read port (about 480 logic cells of the W = 32 co-processor).
COLLISION_FREE = "revasm_collision_free"


def exclusive_memory(**kwargs: object) -> Memory:
    """A :class:`Memory` whose ports :func:`exclusive_ports` makes."""
    return Memory(attrs={COLLISION_FREE: 1}, **kwargs)


def exclusive_ports(m: Module, memory: Memory, reads: int = 1
                    ) -> tuple[WritePort, list[ReadPort]]:
    """One write port and ``reads`` read ports that do not read while it writes: in a cycle
    that writes, a read port keeps the word it read before.  No read and write of one cell
    can then meet in a cycle, whatever the addresses."""
    if memory.attrs.get(COLLISION_FREE) != 1:
        raise ValueError("exclusive ports belong to a memory made by exclusive_memory()")
    write = memory.write_port()
    reads_ = [memory.read_port() for _ in range(reads)]
    for port in reads_:
        m.d.comb += port.en.eq(~write.en)
    return write, reads_


class DataMemory(wiring.Component):
    """``depth`` words of W + 1 bits; one synchronous read port, one write port (a cycle
    that writes does not read: ``rdata`` keeps its word)."""

    def __init__(self, width: int, depth: int, init: list[int] | None = None,
                 code_flag: bool = True) -> None:
        self.width = width
        self.depth = depth
        self.bits = width + 1 if code_flag else width
        self._init = list(init or [])
        abits = (depth - 1).bit_length()
        super().__init__({
            "raddr": In(abits), "rdata": Out(self.bits),
            "waddr": In(abits), "wdata": In(self.bits), "we": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.cells = cells = exclusive_memory(shape=self.bits, depth=self.depth,
                                                      init=self._init)
        write, (read,) = exclusive_ports(m, cells)
        m.d.comb += [read.addr.eq(self.raddr), self.rdata.eq(read.data),
                     write.addr.eq(self.waddr), write.data.eq(self.wdata), write.en.eq(self.we)]
        return m


class Tape(wiring.Component):
    """The EMIT tape: a stack of ``depth`` W-bit words.

    ``top`` is the last word pushed (valid one cycle after the stack changes);
    ``push`` and ``pop`` act at the clock edge; ``empty``/``full`` guard them.
    """

    def __init__(self, width: int, depth: int) -> None:
        self.width = width
        self.depth = depth
        super().__init__({
            "push": In(1), "pop": In(1), "wdata": In(width), "clear": In(1),
            "top": Out(width), "count": Out(range(depth + 1)),
            "empty": Out(1), "full": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.words = words = exclusive_memory(shape=self.width, depth=self.depth,
                                                      init=[])
        write, (read,) = exclusive_ports(m, words)
        top_index = Signal(range(self.depth))
        m.d.comb += [top_index.eq(self.count - 1), read.addr.eq(top_index),
                     self.top.eq(read.data),
                     write.addr.eq(self.count), write.data.eq(self.wdata),
                     write.en.eq(self.push & ~self.full),
                     self.empty.eq(self.count == 0), self.full.eq(self.count == self.depth)]
        with m.If(self.clear):
            m.d.sync += self.count.eq(0)
        with m.Elif(self.push & ~self.full):
            m.d.sync += self.count.eq(self.count + 1)
        with m.Elif(self.pop & ~self.empty):
            m.d.sync += self.count.eq(self.count - 1)
        return m
