"""The gradient-mode templates of the ISA table: invertible, consistent, complete."""
from __future__ import annotations

import random

import pytest

from revasm.isa import INSTRUCTIONS, WordFormat, lookup
from revasm.isa.adjoint import (
    BINARY_DERIVATIVES,
    UNARY_DERIVATIVES,
    invert,
    mode_statements,
    mode_template,
)
from revasm.isa.table import BINARY_FUNCTIONS, UNARY_FUNCTIONS
from revasm.isa.vocabulary import vocabulary

GRADIENT_ENTRIES = [i for i in INSTRUCTIONS
                    if i.adjoint or i.tangent or i.adjoint_tangent or i.rules_from]
MODES = [(True, False), (False, True), (True, True)]
BANKS = ("R", "G", "T", "TG")
MEMORY_BANKS = ("MEM", "GM", "TM", "TGM")


def _operands(ins, rng: random.Random) -> dict[str, int]:
    while True:
        operands = {}
        for name, kind in zip(ins.operand_names, ins.operand_kinds):
            operands[name] = rng.randrange(1, 8) if kind == "reg" else 0
        if all(operands[x] != operands[y] for x, y in ins.distinct):
            return operands


def _state(fmt: WordFormat, rng: random.Random) -> dict[str, list[int]]:
    one = fmt.one
    # Values: moderate positive reals (inside every function's domain); banks: any word.
    state = {"R": [0] + [rng.randrange(one // 4, 2 * one) for _ in range(7)]}
    for bank in BANKS[1:]:
        state[bank] = [rng.randrange(fmt.mask + 1) for _ in range(8)]
    state["R"][7] = 3  # EXCH's address register (b = 7 is possible)
    state["OV"] = [fmt.mask]  # the overflow counter (at -1): restored too
    for bank in MEMORY_BANKS:
        state[bank] = [rng.randrange(fmt.mask + 1) for _ in range(8)]
    return state


def _execute(template: str, state: dict[str, list[int]], fmt: WordFormat) -> None:
    namespace = dict(vocabulary(fmt))
    namespace.update(state)
    namespace["addr"] = lambda word: word % 8
    namespace["overflow"] = lambda flag: flag
    exec(compile(template, "<rule>", "exec"), namespace)


def _copy(state):
    return {name: list(words) for name, words in state.items()}


def _case(ins, fmt: WordFormat, rng: random.Random) -> tuple[dict, dict, dict]:
    """Random operands and machine state for one entry (EXCH's address kept in memory),
    and a copy of the state."""
    values = _operands(ins, rng)
    state = _state(fmt, rng)
    if ins.mnemonic == "EXCH":
        state["R"][values["b"]] = 3
    return values, state, _copy(state)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("ins", GRADIENT_ENTRIES, ids=lambda i: i.mnemonic)
def test_every_gradient_template_is_undone_by_its_derived_inverse(ins, width):
    fmt = WordFormat(width)
    rng = random.Random(ins.mnemonic + str(width))
    for _ in range(5):
        values, state, before = _case(ins, fmt, rng)
        for template in (ins.adjoint, ins.tangent, ins.adjoint_tangent):
            if not template:
                continue
            _execute(template.format(**values), state, fmt)
            _execute(invert(template).format(**values), state, fmt)
            assert state == before, template


@pytest.mark.parametrize("gradient,tangent", MODES)
@pytest.mark.parametrize("ins", GRADIENT_ENTRIES, ids=lambda i: i.mnemonic)
def test_gradient_mode_step_backward_then_forward_is_the_identity(ins, gradient, tangent):
    fmt = WordFormat(64)
    rng = random.Random(ins.mnemonic)
    for _ in range(5):
        values, state, before = _case(ins, fmt, rng)
        _execute(mode_template(ins, -1, gradient, tangent).format(**values), state, fmt)
        assert state != before or not ins.adjoint
        _execute(mode_template(ins, 1, gradient, tangent).format(**values), state, fmt)
        assert state == before


@pytest.mark.parametrize("ins", [i for i in GRADIENT_ENTRIES if not i.self_inverse],
                         ids=lambda i: i.mnemonic)
def test_running_an_entry_backward_is_running_its_partner_forward(ins):
    """ADD backward and SUB forward (ROT backward, IROT forward) agree on every bank
    (not on the overflow counter, see test_isa_table)."""
    fmt = WordFormat(32)
    rng = random.Random(ins.mnemonic)
    partner = lookup(ins.inverse)
    for gradient, tangent in MODES:
        for _ in range(3):
            values = _operands(ins, rng)
            state = _state(fmt, rng)
            other = _copy(state)
            _execute(mode_template(ins, -1, gradient, tangent).format(**values), state, fmt)
            _execute(mode_template(partner, 1, gradient, tangent).format(**values), other, fmt)
            # The words agree; the overflow counter does not: the entry backward takes
            # back its own event, the partner forward counts the partner's.
            state.pop("OV"), other.pop("OV")
            assert state == other


def test_borrowed_rules_name_an_inverse_partner_with_rules_of_its_own():
    for ins in INSTRUCTIONS:
        if ins.rules_from:
            partner = lookup(ins.rules_from)
            assert partner.mnemonic == ins.inverse and partner.adjoint
            assert not (ins.adjoint or ins.tangent or ins.adjoint_tangent)
            # its own value step stands in for the partner's (the same words move; the
            # entry counts its own overflow events): isa/adjoint.py mode_statements
            for direction in (1, -1):
                own = ins.forward if direction > 0 else ins.backward
                assert own in mode_statements(ins, direction, True, True)


def test_plain_runs_execute_exactly_the_value_templates():
    for ins in INSTRUCTIONS:
        assert mode_template(ins, 1) == ins.forward
        assert mode_template(ins, -1) == ins.backward


def test_every_function_family_declares_its_derivatives():
    assert set(UNARY_DERIVATIVES) == set(UNARY_FUNCTIONS)
    assert set(BINARY_DERIVATIVES) == set(BINARY_FUNCTIONS)


def test_differentiable_entries_have_an_adjoint_unless_they_add_a_constant():
    for ins in INSTRUCTIONS:
        if ins.differentiable and not (ins.adjoint or ins.rules_from):
            assert "imm" in ins.operand_names, ins.mnemonic
        if ins.adjoint:
            assert ins.differentiable and ins.kind == "data"


def test_non_differentiable_entries_leave_every_bank_alone():
    for ins in INSTRUCTIONS:
        if not ins.differentiable:
            assert not (ins.adjoint or ins.tangent or ins.adjoint_tangent or ins.rules_from)


def test_invert_rejects_a_statement_it_cannot_undo():
    with pytest.raises(ValueError, match="not an invertible"):
        invert("G[{a}] = G[{b}]")
    with pytest.raises(ValueError, match="definitions must come first"):
        invert("G[{a}] = -G[{a}] & M\n_x = 1")
