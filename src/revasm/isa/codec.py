"""Encode and decode 32-bit instruction words, derived from the table."""
from __future__ import annotations

from .encoding import FORMATS, FUNCT, FUNCT_FORMATS, OPCODE, fields_overlap
from .instruction import Instruction
from .table import INSTRUCTIONS


class IllegalInstruction(ValueError):
    """A word that no table entry matches."""


def _build_indexes() -> tuple[dict[str, Instruction], dict[tuple[int, int], Instruction]]:
    by_name: dict[str, Instruction] = {}
    by_code: dict[tuple[int, int], Instruction] = {}
    for ins in INSTRUCTIONS:
        for name in (ins.mnemonic, *ins.aliases):
            if name in by_name:
                raise AssertionError(f"mnemonic {name} declared twice")
            by_name[name] = ins
        key = (ins.opcode, ins.funct if ins.fmt in FUNCT_FORMATS else 0)
        if key in by_code:
            raise AssertionError(f"{ins.mnemonic} and {by_code[key].mnemonic} share an encoding")
        if fields_overlap(FORMATS[ins.fmt]):
            raise AssertionError(f"format {ins.fmt} has overlapping fields")
        if ins.funct and ins.fmt not in FUNCT_FORMATS:
            raise AssertionError(f"{ins.mnemonic}: format {ins.fmt} has no funct field")
        by_code[key] = ins
    for ins in INSTRUCTIONS:
        if ins.inverse not in by_name:
            raise AssertionError(f"{ins.mnemonic}: inverse {ins.inverse} is not an instruction")
    return by_name, by_code


BY_MNEMONIC, BY_ENCODING = _build_indexes()

#: Opcodes that select a family by funct (several entries share the opcode).
_FUNCT_OPCODES = frozenset(op for op, funct in BY_ENCODING if funct) | frozenset(
    ins.opcode for ins in INSTRUCTIONS
    if sum(1 for other in INSTRUCTIONS if other.opcode == ins.opcode) > 1)


def lookup(mnemonic: str) -> Instruction | None:
    """The entry for a mnemonic or alias, case-insensitive (PAL is)."""
    return BY_MNEMONIC.get(mnemonic.upper())


def encode(ins: Instruction, operands: dict[str, int]) -> int:
    """The instruction word; ``operands`` maps field names to field values."""
    word = OPCODE.insert(ins.opcode)
    if ins.fmt in FUNCT_FORMATS:
        word |= FUNCT.insert(ins.funct)
    for field in ins.fields:
        word |= field.insert(operands[field.name])
    return word


def decode(word: int) -> tuple[Instruction, dict[str, int]]:
    """The entry and field values of an instruction word; raises IllegalInstruction."""
    opcode = OPCODE.extract(word)
    funct = FUNCT.extract(word) if opcode in _FUNCT_OPCODES else 0
    ins = BY_ENCODING.get((opcode, funct))
    if ins is None:
        raise IllegalInstruction(f"no instruction has opcode {opcode:#04x}"
                                 + (f" funct {funct}" if opcode in _FUNCT_OPCODES else ""))
    operands = {field.name: field.extract(word) for field in ins.fields}
    if encode(ins, operands) != word & 0xFFFFFFFF:
        raise IllegalInstruction(f"{ins.mnemonic} word {word:#010x} has non-zero unused bits")
    return ins, operands
