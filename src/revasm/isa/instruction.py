"""The record that describes one instruction completely (see ``isa/table.py``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .encoding import FORMATS, Field
from .inverse_rules import invert

#: Operand kinds and what the assembler accepts for each.
OPERAND_KINDS = {
    "reg": "a register $0..$31",
    "imm": "a signed 16-bit immediate: integer, fixed-point literal, label or named constant",
    "amt": "a shift/rotate amount 0..W-1",
    "k": "a 16-bit lane 1..3 of the word (bits 16k..16k+15)",
    "off": "a branch target: label or absolute address (encoded PC-relative)",
}

#: Control kinds: how an instruction acts on PC, BR and DIR.  Every engine
#: implements exactly these five; ``data`` instructions never touch BR or DIR.
CONTROL_KINDS = ("data", "branch", "rbra", "swapbr", "start", "finish")


@dataclass(frozen=True)
class Instruction:
    """One instruction: syntax, encoding, semantics in both directions, adjoint, energy class.

    ``forward`` is the effect when the machine runs forward (DIR = +1) and
    ``backward`` the effect when it runs backward (DIR = -1); the backward
    effect undoes the forward one.  Both are Python statements in the small
    vocabulary of :mod:`revasm.isa.vocabulary`, with operands written
    ``{a}``, ``{b}``, ``{c}`` (register numbers), ``{imm}`` (the immediate as
    a W-bit word), ``{amt}``, ``{k}``.  For branches, ``condition`` is the
    expression that decides whether the branch is taken.

    Gradient mode (``isa/adjoint.py``): ``adjoint`` is the reverse-mode rule on
    the gradient banks ``G``/``GM``, run before ``backward`` when the gradient
    switch is on; ``tangent`` the forward-mode rule on ``T``/``TM``, run after
    ``forward`` when the tangent bank is on; ``adjoint_tangent`` the rule on
    ``TG``/``TGM`` (second order).  Empty means "leaves those banks alone".
    Their inverses (``*_inverse``) are derived, never written.  An entry with
    ``rules_from`` names its inverse partner and runs the partner's gradient-mode
    step in the opposite direction (IROT forward is exactly ROT backward).

    Its cycles are not declared here: they are the RTL core's, which ``isa/timing``
    derives from the templates (the registers written, the unit calls) and the units'
    timing.
    """

    mnemonic: str
    fmt: str
    opcode: int
    forward: str
    backward: str
    doc: str
    energy_class: str
    funct: int = 0
    kind: str = "data"
    condition: str = ""
    writes: tuple[str, ...] = ()
    distinct: tuple[tuple[str, str], ...] = ()
    operand_kinds: tuple[str, ...] = ()
    inverse: str = ""
    aliases: tuple[str, ...] = ()
    extension: bool = False
    differentiable: bool = False
    adjoint: str = ""
    tangent: str = ""
    adjoint_tangent: str = ""
    rules_from: str = ""
    notes: str = ""
    fields: tuple[Field, ...] = field(default=(), compare=False)

    @cached_property
    def operand_names(self) -> tuple[str, ...]:
        """The operand fields' names, in order (cached: the assembler asks per line)."""
        return tuple(f.name for f in self.fields)

    @property
    def self_inverse(self) -> bool:
        return self.inverse == self.mnemonic

    @cached_property
    def adjoint_inverse(self) -> str:
        """Undoes ``adjoint`` (the gradient-mode step when running forward)."""
        return invert(self.adjoint)

    @cached_property
    def tangent_inverse(self) -> str:
        """Undoes ``tangent`` (run before ``backward`` when the tangent bank is on)."""
        return invert(self.tangent)

    @cached_property
    def adjoint_tangent_inverse(self) -> str:
        """Undoes ``adjoint_tangent``."""
        return invert(self.adjoint_tangent)

    def syntax(self) -> str:
        """Assembly syntax, e.g. ``ADD $a $b`` or ``BEQ $a $b off``."""
        parts = [self.mnemonic]
        for name, kind in zip(self.operand_names, self.operand_kinds):
            parts.append(f"${name}" if kind == "reg" else name)
        return " ".join(parts)


def make(mnemonic: str, fmt: str, opcode: int, **kwargs: Any) -> Instruction:
    """Build an entry, deriving its fields and operand kinds from the format."""
    fields = FORMATS[fmt]
    kinds = []
    for f in fields:
        if f.name in ("a", "b", "c"):
            kinds.append("reg")
        elif f.name == "imm":
            kinds.append("imm")
        elif f.name == "amt":
            kinds.append("amt")
        elif f.name == "k":
            kinds.append("k")
        else:
            kinds.append("off")
    kwargs.setdefault("inverse", mnemonic)
    return Instruction(mnemonic=mnemonic, fmt=fmt, opcode=opcode, fields=fields,
                       operand_kinds=tuple(kinds), **kwargs)
