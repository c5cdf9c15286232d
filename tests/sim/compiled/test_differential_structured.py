"""Random structured programs (loops, diamonds, portal calls and uncalls) run alike on the
compiled engine and the reference: the checks of ``tests/support/differential.py``."""
from __future__ import annotations

import pytest
from differential import (
    WIDTHS,
    check_kind,
)
from sampling import SAMPLES as SAMPLE_NAMES


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLE_NAMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_random_structured_programs_run_alike_on_both_engines(width, sample):
    reports = check_kind("structured", width, sample)
    # a derivative pass at each width (the bounded sample's W = 64 is one batch: the
    # Hessian pass, which checks the gradient banks too), both over the two widths
    assert {"gradient", "hessian"} & set().union(*(r.passes for r in reports))
