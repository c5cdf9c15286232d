"""The instruction decoder, generated from the ISA table.

For every table entry the decoder matches ``word & fixed_mask == fixed_bits``,
where ``fixed_mask`` covers every bit that is not an operand field of the
entry's format (the opcode, the funct code of the register formats, and the
unused bits, which must be zero) and ``fixed_bits`` is the entry encoded with
all operands zero -- exactly the words :func:`revasm.isa.codec.decode` accepts.
Operand fields are cut out at the positions ``isa/encoding.py`` gives; the
legality rules (no write to ``$0``, ``distinct`` operands) come from each
entry's ``writes`` and ``distinct``.  No opcode is written here.
"""
from __future__ import annotations

from amaranth.hdl import Const, Module, Shape, Signal, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.codec import encode
from revasm.isa.encoding import FORMATS, WORD_BITS, Field
from revasm.isa.instruction import CONTROL_KINDS, Instruction
from revasm.isa.table import INSTRUCTIONS

#: Every operand field by name, in the widest variant (``off`` has three).
OPERAND_NAMES = ("a", "b", "c", "imm", "amt", "k", "off")


def fixed_mask(ins: Instruction) -> int:
    """The bits of the word that are not operands of ``ins``."""
    operand_bits = 0
    for f in ins.fields:
        operand_bits |= f.mask << f.lsb
    return ((1 << WORD_BITS) - 1) & ~operand_bits


def fixed_bits(ins: Instruction) -> int:
    """The entry's word with every operand zero."""
    return encode(ins, {f.name: 0 for f in ins.fields})


def field_variants(name: str) -> list[Field]:
    """The distinct bit positions a named operand has across the formats."""
    seen: list[Field] = []
    for fields in FORMATS.values():
        for f in fields:
            if f.name == name and f not in seen:
                seen.append(f)
    return seen


def field_width(name: str) -> int:
    return max(f.width for f in field_variants(name))


def field_shape(name: str) -> Shape:
    """The shape of an operand field: its widest variant, signed when the field is."""
    variants = field_variants(name)
    return signed(field_width(name)) if variants[0].signed else unsigned(field_width(name))


KIND_CODE = {kind: code for code, kind in enumerate(CONTROL_KINDS)}


class Decoder(wiring.Component):
    """Instruction word (and the memory cell's code flag) in; entry and operands out.

    ``onehot`` has one bit per table entry (``INSTRUCTIONS`` order) and
    ``index`` is the matching entry's position; ``valid``
    says the word decodes; ``legal`` that it also is a code cell and its
    operands are allowed; ``kind`` is the entry's control kind (index into
    ``CONTROL_KINDS``).
    """

    def __init__(self) -> None:
        n = len(INSTRUCTIONS)
        ports = {
            "word": In(WORD_BITS),
            "code": In(1),
            "onehot": Out(n),
            "valid": Out(1),
            "legal": Out(1),
            "kind": Out(range(len(CONTROL_KINDS))),
            "index": Out(range(n)),
        }
        for name in OPERAND_NAMES:
            ports[name] = Out(field_shape(name))
        super().__init__(ports)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        word = self.word
        # operand fields: each variant cut out; the entry's format picks one
        cut: dict[tuple[str, int, int], Signal] = {}
        for name in OPERAND_NAMES:
            for f in field_variants(name):
                raw = word[f.lsb:f.lsb + f.width]
                cut[(name, f.lsb, f.width)] = raw.as_signed() if f.signed else raw
        matches = []
        for i, ins in enumerate(INSTRUCTIONS):
            hit = (word & fixed_mask(ins)) == fixed_bits(ins)
            m.d.comb += self.onehot[i].eq(hit)
            matches.append(hit)
        m.d.comb += self.valid.eq(self.onehot.any())
        problem = Signal()
        for i, ins in enumerate(INSTRUCTIONS):
            with m.If(self.onehot[i]):
                m.d.comb += self.kind.eq(KIND_CODE[ins.kind])
                m.d.comb += self.index.eq(i)
                for f in ins.fields:
                    m.d.comb += getattr(self, f.name).eq(cut[(f.name, f.lsb, f.width)])
                bad = Const(0, 1)
                for name in ins.writes:
                    bad = bad | (cut[(name,) + _reg(name)] == 0)
                for first, second in ins.distinct:
                    bad = bad | (cut[(first,) + _reg(first)] == cut[(second,) + _reg(second)])
                m.d.comb += problem.eq(bad)
        m.d.comb += self.legal.eq(self.valid & self.code & ~problem)
        return m


def _reg(name: str) -> tuple[int, int]:
    (f,) = field_variants(name)
    return f.lsb, f.width
