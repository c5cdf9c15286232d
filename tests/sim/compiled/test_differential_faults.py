"""Random programs that fault, in every way a lane can stop, run alike on the compiled engine
and the reference (same fault kind, PC, step and message): the checks of
``tests/support/differential.py``, both widths in one test so that it can assert that every
fault kind happened."""
from __future__ import annotations

from collections import Counter

import pytest
from differential import (
    WIDTHS,
    check_kind,
)
from program_generators import FAULT_KINDS
from sampling import SAMPLES as SAMPLE_NAMES


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_random_faulting_programs_run_alike_on_both_engines(sample):
    faults: Counter = Counter()
    for width in WIDTHS:
        for report in check_kind("faulting", width, sample):
            faults += report.faults
    # every planted kind (a landing on a data cell is an uncaught jump), and an EMIT
    # taken back from an empty tape when a lane runs backward from FINISH
    expected = {kind for kind in FAULT_KINDS if kind != "data-landing"} | {"tape-empty"}
    assert expected - set(faults) == set(), faults
