"""Random structured programs (loops, diamonds, portal calls and uncalls) run alike on the
compiled engine and the reference: the checks of ``differential.py``."""
from __future__ import annotations

import pytest
from differential import (
    WIDTHS,
    check_kind,
)

pytestmark = pytest.mark.usefixtures("fresh_kernel_cache")  # kernels of its own

@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_random_structured_programs_run_alike_on_both_engines(width):
    reports = check_kind("structured", width)
    assert {"gradient", "hessian"} <= set().union(*(r.passes for r in reports))
