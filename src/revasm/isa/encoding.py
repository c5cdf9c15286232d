"""Instruction-word formats: which bits of the fixed 32-bit word hold which operand.

Every instruction word carries a 6-bit major opcode in bits 31..26.  A format
names the remaining fields; register-only formats leave bits 10..0 for a
``funct`` code that selects one member of an instruction family (e.g. the
function-accumulate instructions).  The assembler, the disassembler and the
RTL decoder all read these tables; nothing else knows a bit position.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

OPCODE_LSB = 26
OPCODE_WIDTH = 6
FUNCT_LSB = 0
FUNCT_WIDTH = 11
WORD_BITS = 32


@dataclass(frozen=True)
class Field:
    """A bit field of the instruction word: ``width`` bits from bit ``lsb`` up."""

    name: str
    lsb: int
    width: int
    signed: bool = False

    # (worked out once a field: the assembler inserts a field ~10^6 times in a long program)
    @cached_property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @cached_property
    def low(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @cached_property
    def high(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    def insert(self, value: int) -> int:
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.name}={value} does not fit {self.width} bits")
        return (value & self.mask) << self.lsb

    def extract(self, word: int) -> int:
        raw = (word >> self.lsb) & self.mask
        if self.signed and raw >> (self.width - 1):
            raw -= 1 << self.width
        return raw


REG_A = Field("a", 21, 5)
REG_B = Field("b", 16, 5)
REG_C = Field("c", 11, 5)
IMM16 = Field("imm", 0, 16, signed=True)
AMOUNT = Field("amt", 0, 6)
SHIFT16 = Field("k", 16, 2)
OFF16 = Field("off", 0, 16, signed=True)
OFF21 = Field("off", 0, 21, signed=True)
OFF26 = Field("off", 0, 26, signed=True)
OPCODE = Field("opcode", OPCODE_LSB, OPCODE_WIDTH)
FUNCT = Field("funct", FUNCT_LSB, FUNCT_WIDTH)

#: format name -> operand fields, in assembly order.  Formats whose fields
#: leave bits 10..0 free carry a funct code there.
FORMATS: dict[str, tuple[Field, ...]] = {
    "N": (),
    "R": (REG_A,),
    "RR": (REG_A, REG_B),
    "RRR": (REG_A, REG_B, REG_C),
    "RI": (REG_A, IMM16),
    "RIK": (REG_A, IMM16, SHIFT16),
    "RRI": (REG_A, REG_B, IMM16),
    "RA": (REG_A, AMOUNT),
    "RRA": (REG_A, REG_B, AMOUNT),
    "RO": (REG_A, OFF21),
    "RRO": (REG_A, REG_B, OFF16),
    "O": (OFF26,),
}

FUNCT_FORMATS = frozenset({"N", "R", "RR", "RRR"})


def fields_overlap(fields: tuple[Field, ...]) -> bool:
    """True when two fields (or a field and the opcode) share a bit."""
    used = OPCODE.mask << OPCODE.lsb
    for field in fields:
        bits = field.mask << field.lsb
        if used & bits:
            return True
        used |= bits
    return False
