"""Snapshots: the machine's architectural state as one immutable, comparable value."""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Snapshot:
    """Registers, memory, BR, DIR, PC, the EMIT tape and OV at one moment.

    Two snapshots are equal exactly when the machines they were taken from
    would behave identically from then on (given the same program), so
    ``before == after`` states "forward then backward is the identity".  The
    SHOW/EMIT *log* (``Machine.output``) is deliberately not part of it: it is
    a printer, not state.
    """

    registers: tuple[int, ...]
    memory: tuple[int, ...]
    br: int
    direction: int
    pc: int
    emitted: tuple[int, ...]
    #: the overflow counter OV, read signed (``isa/table.py``)
    overflows: int = 0
    #: the non-zero words above ``memory`` (the dense low words), as (address, word)
    #: pairs in address order: memory is the whole address space [0, 2^W)
    high_memory: tuple[tuple[int, int], ...] = ()

    def words(self):
        """Every (address, word) of memory: the dense low words, then the non-zero words
        above them."""
        yield from enumerate(self.memory)
        yield from self.high_memory

    def word(self, address: int) -> int:
        """The memory word at ``address`` (any W-bit address)."""
        if address < len(self.memory):
            return self.memory[address]
        return dict(self.high_memory).get(address, 0)

    def turned(self) -> Snapshot:
        """The same state facing the other way (DIR negated)."""
        return replace(self, direction=-self.direction)

    def differences(self, other: Snapshot) -> list[str]:
        """What differs from ``other``, in words (for test and ``check`` messages)."""
        out = []
        for i, (mine, theirs) in enumerate(zip(self.registers, other.registers)):
            if mine != theirs:
                out.append(f"${i}: {mine} != {theirs}")
        changed = [a for a, (x, y) in enumerate(zip(self.memory, other.memory)) if x != y]
        if changed:
            out.append("memory differs at " + ", ".join(map(str, changed[:8]))
                       + (" ..." if len(changed) > 8 else ""))
        high, other_high = dict(self.high_memory), dict(other.high_memory)
        changed = sorted(a for a in high.keys() | other_high.keys()
                         if high.get(a, 0) != other_high.get(a, 0))
        if changed:
            out.append("memory differs at " + ", ".join(map(str, changed[:8]))
                       + (" ..." if len(changed) > 8 else ""))
        if len(self.memory) != len(other.memory):
            out.append(f"memory sizes {len(self.memory)} != {len(other.memory)}")
        for name in ("br", "direction", "pc", "emitted", "overflows"):
            if getattr(self, name) != getattr(other, name):
                out.append(f"{name}: {getattr(self, name)} != {getattr(other, name)}")
        return out
