"""Parameters of the co-processor and the fault codes its status port reports."""
from __future__ import annotations

from dataclasses import dataclass

from revasm.isa import fixed_point
from revasm.isa.fixed_point import DEFAULT_WIDTH, WIDTHS, WordFormat, widths_text
from revasm.machine import FAULT_KINDS

from .memory_map import MemoryMap

#: Fault codes of the status port, 0 = no fault.  The machine's kinds first
#: (same names), then the RTL's own: a bounded EMIT tape that is full, and a
#: function the function unit does not implement yet.
FAULT_NAMES: tuple[str, ...] = ("none", *FAULT_KINDS, "tape-full", "unimplemented")
FAULT_CODE: dict[str, int] = {name: code for code, name in enumerate(FAULT_NAMES)}


@dataclass(frozen=True)
class CoreParams:
    """What a core is built for.

    ``width``: the word width W (32 or 64).  ``memory_words``: the depth of the
    unified program/data memory (the image at the bottom).  ``tape_words``: the
    depth of the EMIT tape.  ``stack_words``: how many of the top cells hold the top of
    the address space, the stack window (default half the memory, so the default core's
    low window is the 1024 words the core had before the window; 0: none; see
    ``rtl/hardware/memory_map.py``).  ``gradient``: the gradient bank -- a shadow register
    file G and a shadow memory GM, and the gradient-mode steps of the table
    (``isa/adjoint.py``) for every entry, run as micro-programs by the gradient
    unit (``rtl/hardware/gradient_unit.py``).
    """

    width: int = DEFAULT_WIDTH
    memory_words: int = 2048
    tape_words: int = 64
    gradient: bool = False
    stack_words: int | None = None

    def __post_init__(self) -> None:
        if self.width not in WIDTHS:
            raise ValueError(f"word width must be {widths_text()}, not {self.width}")
        if self.memory_words < 2 or self.memory_words & (self.memory_words - 1):
            raise ValueError(f"memory_words must be a power of two >= 2, not {self.memory_words}")
        if self.tape_words < 2 or self.tape_words & (self.tape_words - 1):
            raise ValueError(f"tape_words must be a power of two >= 2, not {self.tape_words}")
        stack_words = self.memory_words // 2 if self.stack_words is None else self.stack_words
        object.__setattr__(self, "stack_words", stack_words)
        if not 0 <= stack_words < self.memory_words:
            raise ValueError(f"stack_words must be in 0..{self.memory_words - 1} (fewer than "
                             f"memory_words), not {self.stack_words}")

    @property
    def memory_map(self) -> MemoryMap:
        """The windows of the address space the physical memory holds."""
        return MemoryMap(self.width, self.memory_words, int(self.stack_words or 0))

    @property
    def br_width(self) -> int:
        """BR is a signed integer; W + 2 bits hold every value a valid program reaches."""
        return self.width + 2

    @property
    def pc_width(self) -> int:
        return self.width + 3

    @property
    def address_bits(self) -> int:
        return (self.memory_words - 1).bit_length()


class ProofFormat(WordFormat):
    """A word format of any even width >= 4: bounded proofs at a reduced width.

    Not a machine format (machines are W = 32 or 64, :class:`WordFormat`); the proofs
    state the width they ran at."""

    def __post_init__(self) -> None:
        if self.width < 4 or self.width % 2:
            raise ValueError(f"a proof's word width must be even and >= 4, not {self.width}")


def word_format(width: int) -> WordFormat:
    """The machine's format at W = 32/64, a :class:`ProofFormat` at any other width."""
    return fixed_point.word_format(width) if width in fixed_point.WIDTHS else ProofFormat(width)
