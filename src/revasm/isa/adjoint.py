"""Adjoint rules: how each instruction acts on the gradient and tangent banks.

Gradient mode (docs/gradient.md) gives every register and memory word shadows:

* ``G`` / ``GM`` -- the gradient bank (registers / memory): d loss / d word;
* ``T`` / ``TM`` -- the tangent bank: d word / d eps along a direction v
  (forward mode);
* ``TG`` / ``TGM`` -- the gradient tangents: d G / d eps, which after the
  backward pass hold a Hessian-vector product H v (forward-over-reverse).

All banks hold W-bit words in the same Qi.f format as the values, and every
rule is fixed-point arithmetic that wraps mod 2^W, so the gradient pass is
itself exactly reversible.

Each table entry carries three templates, in the vocabulary of
``isa/vocabulary.py`` (``isa/instruction.py``):

* ``adjoint`` -- the reverse-mode rule, applied to ``G``/``GM`` when the
  machine runs backward with the gradient switch on, *before* the value is
  uncomputed (it reads the values as the forward instruction left them);
* ``tangent`` -- the forward-mode rule, applied to ``T``/``TM`` *after* the
  value is computed, when the tangent bank is on;
* ``adjoint_tangent`` -- the derivative of ``adjoint`` along v, applied to
  ``TG``/``TGM`` before ``adjoint`` (it reads ``G`` before the update).

Their inverses are not written by hand: :func:`invert` (``isa/inverse_rules.py``)
derives them, which is possible because every template is a sequence of
invertible updates after local definitions.  For the accumulate family
``a ±= phi(b, c)`` the templates are *derived* (:func:`accumulate_rules`) from
phi's partial derivatives, declared once per family (``isa/derivatives.py``).
Bitwise, shift, comparison, integer-immediate and control instructions have
empty templates: their gradient words are left as they are.

This module holds the banks and the order one gradient-mode step runs an
entry's templates in (:func:`mode_statements`), and the one template the engines
execute for it (:func:`mode_template`: every template's fault checks first, so a
faulting step has no effect, ``isa/step_order.py``); it re-exports the derivative
declarations and :func:`invert` so ``revasm.isa.adjoint`` stays the one place
to import the gradient-mode rules from.  It reads the table (through
``isa/codec.py``); the table reads only ``derivatives`` and ``inverse_rules``.
"""
from __future__ import annotations

from functools import lru_cache

from .codec import lookup
from .derivatives import (
    BINARY_DERIVATIVES,
    COPY_DERIVATIVE,
    PRODUCT_DERIVATIVE,
    QUOTIENT_DERIVATIVE,
    UNARY_DERIVATIVES,
    Derivative,
    GradientRules,
    accumulate_rules,
)
from .instruction import Instruction
from .inverse_rules import invert
from .step_order import checks_first

#: The bank names a gradient template may use, with what they hold.
BANKS = {
    "G": "register gradients d loss / d R[i]",
    "GM": "memory gradients d loss / d MEM[i]",
    "T": "register tangents d R[i] / d eps",
    "TM": "memory tangents d MEM[i] / d eps",
    "TG": "register gradient tangents d G[i] / d eps (Hessian-vector products)",
    "TGM": "memory gradient tangents d GM[i] / d eps",
}


def banks_needed(gradient: bool, tangent: bool) -> tuple[str, ...]:
    """The banks the gradient and tangent switches use (TG/TGM need both)."""
    wanted: tuple[str, ...] = ()
    if gradient:
        wanted += ("G", "GM")
    if tangent:
        wanted += ("T", "TM")
    if gradient and tangent:
        wanted += ("TG", "TGM")
    return wanted


def mode_statements(instruction: Instruction, direction: int, gradient: bool,
                    tangent: bool) -> list[str]:
    """The templates one step executes, in order, for a direction and bank switches.

    Backward with both banks: ``adjoint_tangent``, ``adjoint``, inverse
    ``tangent``, ``backward``; forward runs the inverses in the opposite
    order: ``forward``, ``tangent``, inverse ``adjoint``, inverse
    ``adjoint_tangent``.  With a bank off its templates are left out, so
    plain runs execute exactly ``forward``/``backward``.  An entry with
    ``rules_from`` executes its partner's statements for the other direction
    (its value templates are the partner's, swapped), so running it is bit for
    bit running the partner the other way, in every bank.
    """
    ins = instruction
    if ins.rules_from and (gradient or tangent):
        partner = lookup(ins.rules_from)
        assert partner is not None  # rules_from names an entry of the table (IROT: ROT)
        # The partner's value step the other way moves the same words; the entry's own
        # step also counts the entry's own overflow events (OV), so it stands in for it.
        theirs = partner.backward if direction > 0 else partner.forward
        mine = ins.forward if direction > 0 else ins.backward
        return [mine if part == theirs else part
                for part in mode_statements(partner, -direction, gradient, tangent)]
    if direction > 0:
        parts = [ins.forward]
        if tangent:
            parts.append(ins.tangent)
        if gradient:
            parts.append(ins.adjoint_inverse)
            if tangent:
                parts.append(ins.adjoint_tangent_inverse)
    else:
        parts = []
        if gradient:
            if tangent:
                parts.append(ins.adjoint_tangent)
            parts.append(ins.adjoint)
        if tangent:
            parts.append(ins.tangent_inverse)
        parts.append(ins.backward)
    return [part for part in parts if part]


def mode_template(instruction: Instruction, direction: int, gradient: bool = False,
                  tangent: bool = False) -> str:
    """The one template a step executes: :func:`mode_statements` with every fault check
    first (``isa/step_order.py``), so a faulting step writes nothing, in every engine.

    Without the gradient and tangent switches it is the value template itself.
    """
    return _mode_template(instruction, direction, gradient, tangent)


@lru_cache(maxsize=4096)
def _mode_template(instruction: Instruction, direction: int, gradient: bool,
                   tangent: bool) -> str:
    return checks_first(mode_statements(instruction, direction, gradient, tangent),
                        instruction.distinct, instruction.mnemonic)


def mode_sequence(instruction: Instruction, direction: int, gradient: bool = False,
                  tangent: bool = False) -> str:
    """:func:`mode_statements` joined as they are, template after template: the order the
    RTL's gradient unit runs them in (it undoes the first part when the second faults,
    docs/rtl.md "Gradient mode")."""
    return "\n".join(mode_statements(instruction, direction, gradient, tangent))


__all__ = ["BANKS", "BINARY_DERIVATIVES", "COPY_DERIVATIVE", "PRODUCT_DERIVATIVE",
           "QUOTIENT_DERIVATIVE", "UNARY_DERIVATIVES", "Derivative", "GradientRules",
           "accumulate_rules", "banks_needed", "invert", "mode_sequence", "mode_statements",
           "mode_template"]
