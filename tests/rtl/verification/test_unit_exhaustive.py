"""rtl/verification/unit_exhaustive.py: the units run on every input at a reduced width in
Verilator, against the table's oracle and the unit's cycle model (`make formal` runs
every operation at W = 8; here W = 6, one Verilator build)."""
from __future__ import annotations

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from revasm.rtl.verification import unit_exhaustive, unit_proofs
from revasm.rtl.verification.verilator import missing_tools

W = 6
FU = unit_proofs.FUNCTION_UNIT


@pytest.fixture(autouse=True)
def _verilator() -> None:
    if missing_tools():
        pytest.skip("the exhaustive checks need verilator")


@pytest.mark.parametrize("name", ["fn_sin", "fn_tanh", "fn_sigmoid", "fn_pow", "fdiv", "irot"])
def test_the_function_unit_is_the_tables_on_every_input(name: str) -> None:
    records = unit_exhaustive.run(FU, name, W)
    assert len(records) == 1 << (unit_proofs.arity(name) * W)
    assert (records["cycles"] != unit_exhaustive.STUCK).all()
    assert unit_exhaustive.mismatches(FU, name, W, records) == []


def test_the_rotation_law_holds_on_every_input() -> None:
    assert unit_exhaustive.law_mismatches(W) == []


def test_a_wrong_result_a_wrong_fault_or_a_wrong_cycle_count_is_found() -> None:
    """The comparison is not vacuous: one changed word, fault flag or cycle count of the
    unit's records is reported, with its operands."""
    records = unit_exhaustive.run(FU, "fn_atan2", W).copy()
    assert unit_exhaustive.mismatches(FU, "fn_atan2", W, records) == []
    for field, index, change in (("r0", 0x123, 1), ("flags", 0x0, 2), ("cycles", 0x77, 1)):
        broken = records.copy()
        broken[field][index] ^= change
        (found,) = unit_exhaustive.mismatches(FU, "fn_atan2", W, broken)
        x, y = index & 63, index >> 6
        assert found.startswith(f"fn_atan2({x}, {y}):"), found
    broken = unit_exhaustive.run(FU, "rot", W).copy()
    broken["r1"][5000] ^= 4
    (found,) = unit_exhaustive.mismatches(FU, "rot", W, broken)
    assert found.startswith(f"rot({5000 & 63}, {(5000 >> 6) & 63}, {5000 >> 12}):"), found


def test_a_width_beyond_the_records_is_refused() -> None:
    with pytest.raises(ValueError, match="16-bit records"):
        unit_exhaustive.run(FU, "fn_sin", 32)


def test_the_checks_are_in_the_registry() -> None:
    """Every unit operation has a bmc proof and an exhaustive check, selectable alike."""
    from revasm.rtl.verification import proof_registry
    proofs = proof_registry.unit_registry()
    for proof in (p for p in proofs if p.prop == "unit"):
        twin = [p for p in proofs if p.prop == "exhaustive" and p.name == proof.name]
        assert len(twin) == 1 and twin[0].operation == proof.operation
        assert twin[0].engine == proof_registry.EXHAUSTIVE_ENGINE
    chosen = proof_registry.select(proofs, ["unit:fn_pow"], ["exhaustive"])
    assert [p.key for p in chosen] == ["function unit: fn_pow exhaustive"]
