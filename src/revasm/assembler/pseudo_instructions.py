"""Pseudo-instructions: assembly conveniences that expand to table instructions.

Each entry says its operands (kind and range) and how it expands; the
assembler checks and encodes the expansion like any other instruction, so
the usual checks (no write to ``$0``, ranges) apply to it.  ``sources`` maps
each field of the expanded instructions to the pseudo operand it came from,
so that an error points at the right column.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from revasm.isa.codec import BY_MNEMONIC
from revasm.isa.encoding import IMM16
from revasm.isa.fixed_point import WordFormat
from revasm.isa.pseudo import load_constant

Expansion = list[tuple[str, dict[str, int]]]


@dataclass(frozen=True)
class PseudoOperand:
    name: str
    kind: str  # "reg", "imm" (16-bit range given below) or "word" (any W-bit constant)
    #: (low, high) at a word width; None for registers.
    bounds: Callable[[int], tuple[int, int]] | None = None


@dataclass(frozen=True)
class PseudoInstruction:
    mnemonic: str
    operands: tuple[PseudoOperand, ...]
    expand: Callable[[dict[str, int], WordFormat], Expansion]
    sources: dict[str, str]
    doc: str
    origin: str = ""

    def syntax(self) -> str:
        return " ".join([self.mnemonic] + [f"${op.name}" if op.kind == "reg" else op.name
                                           for op in self.operands])


def _word_bounds(width: int) -> tuple[int, int]:
    return -(1 << (width - 1)), (1 << width) - 1


PSEUDO_INSTRUCTIONS: tuple[PseudoInstruction, ...] = (
    PseudoInstruction(
        "LI", (PseudoOperand("a", "reg"), PseudoOperand("value", "word", _word_bounds)),
        lambda ops, fmt: load_constant(ops["a"], ops["value"], fmt),
        sources={"a": "a", "imm": "value", "k": "value"},
        doc="a += value, for any W-bit value: ADDI, then ADDIS for each further "
            "non-zero 16-bit digit (1 to W/16 words)"),
    PseudoInstruction(
        "SUBI", (PseudoOperand("a", "reg"),
                 PseudoOperand("imm", "imm", lambda width: (-IMM16.high, -IMM16.low))),
        lambda ops, fmt: [("ADDI", {"a": ops["a"], "imm": -ops["imm"]})],
        sources={"a": "a", "imm": "imm"},
        doc="a -= imm: ADDI with the negated immediate",
        origin="ROOPL's PISA.hs"),
)

PSEUDO_BY_MNEMONIC = {p.mnemonic: p for p in PSEUDO_INSTRUCTIONS}
for _name in PSEUDO_BY_MNEMONIC:
    if _name in BY_MNEMONIC:
        raise AssertionError(f"pseudo-instruction {_name} shadows a table instruction")


def lookup_pseudo(mnemonic: str) -> PseudoInstruction | None:
    return PSEUDO_BY_MNEMONIC.get(mnemonic.upper())
