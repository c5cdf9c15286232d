"""Where the W-bit address space lives in the core's physical memory.

The machine's memory is the whole address space [0, 2^W) (docs/simulator.md); the core
has ``memory_words`` physical words.  Two windows of the address space are mapped:

- the low window [0, memory_words - stack_words): the image and its data, cell = address;
- the stack window [2^W - stack_words, 2^W): the top of the address space, where a
  downward stack from address 0 (compiler-generated PAL) puts its first push, held by the
  top ``stack_words`` cells.

In both windows the physical cell is the address's low bits (``address mod memory_words``:
2^W - memory_words is a multiple of memory_words), so the translation is wiring; only the
check "is the address in a window" costs logic.  Every other address faults
(``memory-address``) with the address on the host port ``fault_addr``.
"""
from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Const, Value


def below(value: Value, bound: int) -> Value:
    """An Amaranth expression: 1 when the unsigned ``value`` is less than ``bound``; a test
    of its high bits when ``bound`` is a power of two (a comparator against a constant is
    a carry chain of a logic cell per bit on an iCE40, with nothing else in those cells)."""
    if bound <= 0:
        return Const(0, 1)
    if bound & (bound - 1):
        return value < bound
    k = bound.bit_length() - 1
    return Const(1, 1) if k >= len(value) else ~value[k:].any()


def in_top(value: Value, count: int) -> Value:
    """An Amaranth expression: 1 when the unsigned ``value`` is one of the top ``count``
    values of its width (a test of its high bits when ``count`` is a power of two)."""
    if count <= 0:
        return Const(0, 1)
    if count & (count - 1):
        return value >= (1 << len(value)) - count
    k = count.bit_length() - 1
    return Const(1, 1) if k >= len(value) else value[k:].all()


@dataclass(frozen=True)
class MemoryMap:
    """The two windows of a core with ``memory_words`` cells, the top ``stack_words`` of
    them holding the top of the W-bit address space."""

    width: int
    memory_words: int
    stack_words: int

    @property
    def low_words(self) -> int:
        """The size of the low window [0, low_words)."""
        return self.memory_words - self.stack_words

    @property
    def stack_base(self) -> int:
        """The first address of the stack window."""
        return (1 << self.width) - self.stack_words

    def cell(self, address: int) -> int | None:
        """The physical cell holding ``address`` (a W-bit word), None outside the windows."""
        if address < self.low_words or address >= self.stack_base:
            return address % self.memory_words
        return None

    def cells(self) -> list[tuple[int, int]]:
        """Every (cell, address) pair, in cell order."""
        return [(cell, self.stack_base + cell - self.low_words if cell >= self.low_words
                 else cell) for cell in range(self.memory_words)]

    def holds(self, address: Value) -> Value:
        """An Amaranth expression: 1 when the W-bit ``address`` lies in a window."""
        inside = below(address, self.low_words)
        if self.stack_words:
            inside = inside | in_top(address, self.stack_words)
        return inside

    def describe(self) -> str:
        """The windows in words, for fault messages and docs."""
        low = f"0..{self.low_words - 1}"
        if not self.stack_words:
            return low
        return f"{low} and {self.stack_base}..{(1 << self.width) - 1}"

    def outside(self, address: int) -> str | None:
        """The memory-address fault's message for an address outside the windows, else
        None (the reference's check, ``Machine.memory_map``)."""
        if self.cell(address) is not None:
            return None
        return (f"address {address} is outside the RTL core's memory map ({self.describe()}: "
                f"{self.memory_words} physical words, the top {self.stack_words} of them "
                "the stack window)")
