"""param_ranges takes the module's changed variables from the lowering (computed once):
the ranges must be those it finds computing them itself."""
from __future__ import annotations

from pathlib import Path

import pytest

from revasm.compiler.backend.callee_registers import callee_first
from revasm.compiler.backend.param_ranges import changed_variables, param_ranges
from revasm.compiler.frontend.parse import parse_file

EXAMPLES = Path(__file__).parents[3] / "examples" / "nilang"


@pytest.mark.parametrize("name", ["gmm.py", "petersen.py", "qr.py", "rfibn.py", "umm.py"])
def test_ranges_are_the_same_with_the_lowerings_changed_variables(name):
    module = parse_file(EXAMPLES / name)
    changed = changed_variables(module, callee_first(module, set(module.functions)))
    for entry in module.functions:
        assert param_ranges(module, entry, changed) == param_ranges(module, entry)
    # the example has calls with known ranges, so the comparison means something
    if name == "gmm.py":
        assert any(param_ranges(module, entry) for entry in module.functions)
