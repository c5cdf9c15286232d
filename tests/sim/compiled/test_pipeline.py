"""The kernels' numba pipeline (sim/compiled/pipeline.py): kernel functions compile
without SSA, and a function that gives one local two integer types -- which numba
would unify to ``float64`` without SSA -- is compiled again by numba's default
pipeline, to the same results as a plain ``njit``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit

from revasm.assembler import assemble_file
from revasm.sim.compiled import cache, machine
from revasm.sim.compiled.engine import ENGINE
from revasm.sim.compiled.pipeline import KernelCompiler
from revasm.sim.reference.engine import ReferenceLanes

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
LEAN, DEFAULT = "nopython_without_ssa", "nopython"


def pipelines(dispatcher) -> list[str]:
    """The pipeline that produced each of ``dispatcher``'s compiled versions."""
    return [name for cres in dispatcher.overloads.values()
            for name in cres.metadata["pipeline_times"]]


def mixed(flag, x):
    """``y`` is uint64 on one path and int64 on the other: ``float64`` without SSA."""
    if flag:
        y = np.uint64(x) * np.uint64(3)
        return y >> np.uint64(1)
    y = np.int64(x) - 7
    return np.uint64(y)


def uniform(x):
    """Every local of one integer type, as in a kernel."""
    y = np.uint64(x)
    for _ in range(3):
        y = (y << np.uint64(1)) ^ np.uint64(0x9E3779B97F4A7C15)
    return y


def test_a_function_of_uniform_locals_compiles_without_ssa():
    lean = njit(pipeline_class=KernelCompiler)(uniform)
    assert lean(5) == njit(uniform)(5)
    assert pipelines(lean) == [LEAN]


def test_a_local_of_two_integer_types_falls_back_to_numbas_pipeline():
    lean = njit(pipeline_class=KernelCompiler)(mixed)
    plain = njit(mixed)
    for flag, x in ((True, 2**61 + 5), (False, 3), (False, 2**62)):
        assert lean(flag, x) == plain(flag, x)
        assert type(lean(flag, x)) is type(plain(flag, x))
    assert pipelines(lean) == [DEFAULT]


def test_a_programs_kernel_compiles_without_ssa_and_runs_as_the_reference(tmp_path,
                                                                            monkeypatch):
    """The J2 example's gradient kernel, compiled afresh: its inner functions went
    through the lean pipeline (none fell back), and its gradient is the reference's."""
    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setattr(machine, "_MODULES", {})
    monkeypatch.setattr(cache, "_LOADED", {})
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    x = image.names["x"].register
    words = np.array([1 << 31, 3 << 30, 5 << 29], dtype=np.uint64)
    runs = []
    for lanes in (ENGINE.load(image, 3, max_steps=None),
                  ReferenceLanes(image, 3, max_steps=None)):
        lanes.set_bank_word("R", x, words)
        lanes.run(1)
        lanes.gradient = True
        lanes.set_bank_word("G", 1, np.full(3, 1 << 32, dtype=np.uint64))
        lanes.run_back()
        runs.append([lanes.snapshot(lane) for lane in range(3)])
    assert runs[0] == runs[1]
    modules = list(machine._MODULES.values())
    assert modules
    inner = [getattr(module, name) for module in modules
             for name in ("lane_range", "run_serial") if hasattr(module, name)]
    compiled = [name for function in inner for name in pipelines(function)]
    assert compiled and set(compiled) == {LEAN}
