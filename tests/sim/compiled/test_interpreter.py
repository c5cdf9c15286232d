"""The compiled engine's interpreter kernel (sim/compiled/interpreter.py): one kernel per
width and mode runs any image bit for bit like the reference, and ``auto`` sends long
programs to it instead of compiling their own kernels.

The kernel does not depend on the program, so a whole sample -- straight-line, structured
and faulting programs side by side -- runs as one batch after one compile per mode
(``differential.check_batch``: forward, backward, backward from FINISH, and a gradient or
Hessian pass, every lane compared field by field with the reference).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from differential import check_batch
from program_generators import (
    examples,
    faulting_programs,
    mnemonics,
    straight_line_programs,
    structured_programs,
)
from window_program import check_window_program

pytest.importorskip("numba")

from revasm.assembler import assemble_file
from revasm.isa import INSTRUCTIONS
from revasm.sim.compiled import machine
from revasm.sim.compiled.interpreter import interpreter_source
from revasm.sim.compiled.machine import CompiledLanes

FIB = Path(__file__).resolve().parents[3] / "examples" / "fib.pal"


@pytest.fixture
def interpreter(monkeypatch):
    """The compiled engine's lanes run the interpreter kernel."""
    monkeypatch.setenv("REVASM_KERNEL", "interpreter")


#: Programs of each kind per width in ``make test-long`` (kernels compiled: three modes);
#: ``bench/compiled_campaign.py --kernel interpreter`` runs the same checks on 10^4.
SAMPLE = {"straight-line": 30, "structured": 12, "faulting": 25}
#: ``make test``'s bounded sample: W = 64, value passes -- the one interpreter kernel the
#: rest of this file compiles anyway (each kernel is minutes of numba on a loaded core),
#: which runs any number of programs: 300 of them, with the program kernels' sample
#: (``differential.SAMPLE``) the random programs ``make test`` checks on the compiled engine.
SMALL_SAMPLE = {"straight-line": 150, "structured": 50, "faulting": 100}


def _sample(width: int, sizes: dict[str, int] = SAMPLE, seed: int = 101) -> list:
    seed += width  # not the program kernels' sample (test_compiled_differential*.py)
    return (examples(straight_line_programs(width, max_length=10), sizes["straight-line"],
                     seed=seed)
            + examples(structured_programs(width, max_procedures=2, statements=4),
                       sizes["structured"], seed=seed)
            + examples(faulting_programs(width), sizes["faulting"], seed=seed))


def _check(width: int, derivative: str | None, sizes: dict[str, int], seed: int,
           faults: int) -> None:
    cases = _sample(width, sizes, seed)
    report = check_batch(cases, seed=width, derivative=derivative)
    assert not report.failures, "\n".join(report.failures[:20])
    assert report.programs == len(cases) == sum(sizes.values())
    assert {"forward", "backward", "from-finish"} <= set(report.passes)
    assert derivative is None or derivative in report.passes
    # faults of several kinds came out alike (their fields are compared lane by lane)
    assert len(report.faults) >= 2, report.faults
    assert sum(report.faults.values()) >= faults


@pytest.mark.long
@pytest.mark.parametrize("width, derivative", [(64, "hessian"), (32, None)])
def test_random_programs_run_alike_on_the_interpreter_and_the_reference(
        interpreter, width, derivative):
    _check(width, derivative, SAMPLE, 101, faults=20)


def test_a_bounded_sample_runs_alike_on_the_interpreter_and_the_reference(interpreter):
    """make test's share of the campaign above: other programs, W = 64, value passes."""
    _check(64, None, SMALL_SAMPLE, 7, faults=60)


def test_the_sample_runs_every_instruction():
    used = set().union(*(mnemonics(case.image) for width in (32, 64)
                         for case in _sample(width)))
    assert {ins.mnemonic for ins in INSTRUCTIONS} - used == set()


def test_the_kernel_has_one_case_per_entry_and_direction():
    """Derived from the table: every entry but START/FINISH (stepped before the dispatch)
    is a case of each direction's tree, in value and in gradient mode."""
    for gradient in (False, True):
        source = interpreter_source(32, gradient=gradient)
        for ins in INSTRUCTIONS:
            if ins.kind in ("start", "finish"):
                continue
            assert source.count(f"# {ins.mnemonic}\n") == 2, ins.mnemonic


def test_auto_runs_long_programs_on_the_interpreter(monkeypatch, tmp_path):
    """``auto`` compiles a program's own kernel unless it is longer than
    ``PROGRAM_KERNEL_LINES`` and not compiled yet; ``program`` and ``interpreter`` force."""
    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))  # fib's kernel not compiled yet
    image = assemble_file(FIB)
    lines = CompiledLanes(image, 1, kernel="program").kernel_source().count("\n")
    monkeypatch.setattr(machine, "PROGRAM_KERNEL_LINES", lines - 1)
    assert CompiledLanes(image, 1).uses_interpreter()
    assert not CompiledLanes(image, 1, kernel="program").uses_interpreter()
    monkeypatch.setattr(machine, "PROGRAM_KERNEL_LINES", lines)
    assert not CompiledLanes(image, 1).uses_interpreter()
    assert CompiledLanes(image, 1, kernel="interpreter").uses_interpreter()
    assert "INTERPRETER = True" in CompiledLanes(image, 1, kernel="interpreter").kernel_source()
    with pytest.raises(ValueError, match="kernel must be one of auto, program, interpreter"):
        CompiledLanes(image, 1, kernel="fast")
    # far more instructions than the limit: the interpreter, its source never generated
    monkeypatch.setattr(machine, "PROGRAM_KERNEL_LINES", 1)
    monkeypatch.setattr(CompiledLanes, "_program_source", lambda *_: pytest.fail("generated"))
    assert sum(image.is_code) > machine.LONG_PROGRAM_FACTOR
    assert CompiledLanes(image, 1).uses_interpreter()


def test_a_long_example_runs_alike_on_both_kernels():
    """fib's loop: the interpreter leaves what the program's kernel leaves, both ways."""
    image = assemble_file(FIB)
    runs = {}
    for kernel in ("interpreter", "program"):
        lanes = CompiledLanes(image, 2, kernel=kernel)
        lanes.run(1)
        forward = (lanes.register(1).tolist(), lanes.steps.tolist(), lanes.cycles.tolist())
        lanes.run_back()
        runs[kernel] = (forward, lanes.register(1).tolist(), lanes.snapshot(0))
    assert runs["interpreter"] == runs["program"]
    assert runs["interpreter"][0][0] == [2584, 2584]


def test_the_window_above_the_image_on_the_interpreter(interpreter):
    """The window grows and takes in a table word on the interpreter too, forward and
    backward (tests/support/window_program.py; its gradient pass runs on the program's kernel)."""
    assert check_window_program("interpreter", gradient=False).window >= 128
