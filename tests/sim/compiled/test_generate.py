"""The compiled engine's large-program path (sim/compiled/generate.py): a kernel split into
region functions runs bit for bit like the reference, regions respect their budget and
cut where few branch arcs cross, and a compile is announced once (a cached kernel never).

The other compiled-engine tests run kernels whole (their programs are small); here the
thresholds are lowered so that even small programs run split into many regions.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from revasm.assembler import assemble, assemble_file
from revasm.sim.compiled import cache, generate, machine
from revasm.sim.compiled.engine import ENGINE
from revasm.sim.reference.engine import ReferenceLanes

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture
def kernel_cache(tmp_path, monkeypatch):
    """A fresh kernel cache, and no kernel module shared from earlier tests."""
    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setattr(machine, "_MODULES", {})
    monkeypatch.setattr(cache, "_LOADED", {})  # modules earlier tests imported by key
    return tmp_path / "kernels"


@pytest.fixture(scope="module")
def split_kernels(tmp_path_factory):
    """The split kernels' cache, one for this module's tests: a kernel one of them compiled
    (fib's, split alike, in six tests) the others load from disk instead of compiling it
    again -- a load is what a user's second run does, and the first test compiled it."""
    return tmp_path_factory.mktemp("split-kernels")


@pytest.fixture
def split(split_kernels, monkeypatch):
    """Every kernel split, in regions of at most 40 lines; no kernel module in memory from
    earlier tests (the split ones on disk, :func:`split_kernels`)."""
    monkeypatch.setenv("REVASM_CACHE_DIR", str(split_kernels))
    monkeypatch.setattr(machine, "_MODULES", {})
    monkeypatch.setattr(cache, "_LOADED", {})
    monkeypatch.setattr(generate, "WHOLE_LINES", 0)
    monkeypatch.setattr(generate, "REGION_LINES", 40)


def assert_same(compiled, reference, banks: tuple[str, ...] = ()) -> None:
    assert compiled.steps.tolist() == reference.steps.tolist()
    assert compiled.cycles.tolist() == reference.cycles.tolist()
    assert compiled.halted.tolist() == reference.halted.tolist()
    for lane in range(compiled.lanes):
        assert compiled.snapshot(lane) == reference.snapshot(lane), lane
        f, g = compiled.fault(lane), reference.fault(lane)
        assert (f is None) == (g is None), (lane, f, g)
        if f is not None:
            assert (f.kind, f.message, f.pc, f.step) == (g.kind, g.message, g.pc, g.step)
    for name in banks:
        for register in range(32):
            assert compiled.bank_word(name, register).tolist() == \
                reference.bank_word(name, register).tolist(), (name, register)


# --- cutting blocks into regions ---------------------------------------------------------------

def test_regions_keep_their_budget_and_the_blocks_order():
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    kernel = generate._Kernel(image, True, True)
    for direction in (1, -1):
        blocks = kernel.blocks(direction)
        runs = generate.regions(blocks, direction, kernel.cells, 60)
        assert len(runs) > 2
        assert [b.start for run in runs for b in run] == [b.start for b in blocks]
        for run in runs:
            assert len(run) == 1 or sum(len(b.lines) for b in run) <= 60


def test_a_cut_falls_between_loops_not_inside_one():
    loop = "top{n}: bne $3 $0 bottom{n}\n" + "addi $2 1\n" * 10 + "bottom{n}: bne $3 $5 top{n}\n"
    image = assemble(";; pendulum pal file\nstart\naddi $1 1\naddi $1 1\n"
                     + loop.format(n=1) + loop.format(n=2) + "finish\n")
    kernel = generate._Kernel(image, False, False)
    blocks = kernel.blocks(1)
    crossing = generate._crossings(kernel.cells)
    assert crossing[3] == 0 and crossing[4] == crossing[14] == 2 and crossing[15] == 0
    runs = generate.regions(blocks, 1, kernel.cells, sum(len(b.lines) for b in blocks) - 1)
    assert len(runs) == 2
    assert runs[1][0].start == 15  # between the loops (pc 15: the second loop's top)


def test_a_small_kernel_stays_one_function():
    image = assemble_file(EXAMPLES / "fib.pal")
    assert "def region_" not in generate.kernel_source(image)
    split = generate.kernel_source(image, whole_lines=0, region_lines=40)
    assert split.count("def region_") >= 4
    assert "FORWARD_REGION" in split


# --- split kernels run like the reference --------------------------------------------------

@pytest.mark.parametrize("name", ["fib.pal", "nested_loops.pal", "diamonds.pal",
                                  "exch_data.pal"])
def test_split_kernels_run_forward_and_backward_like_the_reference(split, name):
    image = assemble_file(EXAMPLES / name)
    compiled = ENGINE.load(image, 3, max_steps=1_000_000)
    reference = ReferenceLanes(image, 3, max_steps=1_000_000)
    for lanes in (compiled, reference):
        for declared in image.names.values():
            if declared.default is not None:
                if declared.register is not None:
                    lanes.set_bank_word("R", declared.register, declared.default)
                else:
                    lanes.set_bank_word("MEM", declared.address, declared.default)
        lanes.run(1)
    assert compiled.CTL[generate.STATUS, 0] == generate.HALTED
    assert_same(compiled, reference)
    if image.finish is not None:
        for lanes in (compiled, reference):
            lanes.run_back()
        assert_same(compiled, reference)


@pytest.mark.parametrize("limit", [1, 7, 40, 41, 133])
def test_split_kernels_stop_at_the_step_limit_like_the_reference(split, limit):
    image = assemble_file(EXAMPLES / "fib.pal")
    compiled = ENGINE.load(image, 1, max_steps=limit)
    reference = ReferenceLanes(image, 1, max_steps=limit)
    for lanes in (compiled, reference):
        lanes.run(1)
    assert_same(compiled, reference)


def test_split_j2_gradient_and_tangent_like_the_reference(split):
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    x = np.array([int(v * 2**32) for v in (1.0, -2.5, 0.3)], dtype=np.int64)
    compiled = ENGINE.load(image, 3)
    reference = ReferenceLanes(image, 3)
    for lanes in (compiled, reference):
        lanes.set_bank_word("R", 1, x)
        lanes.run(1)
        lanes.set_bank_word("G", 2, 1 << 32)
        lanes.set_bank_word("T", 1, 1 << 32)
        lanes.gradient = lanes.tangent = True
        lanes.run_back()
    assert "def region_" in compiled.kernel_source()
    assert_same(compiled, reference, banks=("G", "T", "TG"))


# --- announcing a compile ---------------------------------------------------------------------

def test_a_compile_is_announced_and_a_cached_kernel_is_not(kernel_cache, monkeypatch):
    notices: list[str] = []
    monkeypatch.setattr(machine, "COMPILE_NOTICE", notices.append)
    image = assemble_file(EXAMPLES / "fib.pal")
    source = generate.kernel_source(image)
    assert not cache.is_compiled(source, "run_serial")
    ENGINE.load(image, 1).run(1)
    assert notices[0] == "compiling kernel for fib.pal (15 instructions)... "
    assert notices[1].startswith("done in ") and notices[1].endswith(" s\n")
    assert cache.is_compiled(source, "run_serial")
    assert not cache.is_compiled(source, "run_parallel")
    ENGINE.load(image, 1).run(1)  # compiled in this process: nothing to announce
    assert len(notices) == 2
