"""Move the flat test files of ``tests/`` into the tree that mirrors ``src/revasm/``.

The one-time move of issue 37 ("tests mirroring the package"), kept as a script so that a
branch that still adds or edits flat test files can be moved the same way after a merge:

    python tools/relayout_tests.py          # git mv every file of MOVES still flat
    python tools/relayout_tests.py --check  # list flat test files MOVES does not place

For each move it ``git mv``\\ s the file, puts an ``__init__.py`` in every folder on the way
(``tests`` and its subfolders are packages: two files may share a name), re-points the
file's ``Path(__file__)`` walks to the repository root at the new depth, and rewrites the
file's old path (``tests/test_x.py``, or the bare name) in every tracked text file: docs,
Makefile, pyproject, the sources, the tests, ``tests/conftest.py``'s ``LONGEST_FILES``.
Where a new test file goes is docs/decisions.md "Tests mirror the package".
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

#: Flat test file -> its place in the tree (paths under tests/).
MOVES: dict[str, str] = {
    "test_adjoint_checks.py": "isa/test_adjoint_checks.py",
    "test_adjoint_rules.py": "isa/test_adjoint_rules.py",
    "test_elementary.py": "isa/test_elementary.py",
    "test_isa_table.py": "isa/test_table.py",
    "test_isa_timing.py": "isa/test_timing.py",
    "test_primitives.py": "isa/test_primitives.py",
    "test_semantics.py": "isa/test_semantics.py",
    "test_unit_timing.py": "isa/timing/test_units.py",
    "test_assembler.py": "assembler/test_assemble.py",
    "test_assembler_errors.py": "assembler/test_errors.py",
    "test_disassembler.py": "assembler/test_disassemble.py",
    "test_image_io.py": "assembler/test_image_io.py",
    "test_machine_fault_json.py": "machine/test_fault_json.py",
    "test_machine_next_pc.py": "machine/test_next_pc.py",
    "test_engines.py": "sim/test_engines.py",
    "test_engine_cycles.py": "sim/test_engine_cycles.py",
    "test_gradient.py": "sim/test_gradient.py",
    "test_gradient_properties.py": "sim/test_gradient_properties.py",
    "test_hessian.py": "sim/test_hessian.py",
    "test_host_names.py": "sim/test_host_names.py",
    "test_live_output.py": "sim/test_live_output.py",
    "test_overflow.py": "sim/test_overflow.py",
    "test_pal_conformance.py": "sim/test_pal_conformance.py",
    "test_step_faults.py": "sim/test_step_faults.py",
    "test_pisa_semantics.py": "sim/reference/test_pisa_semantics.py",
    "test_reference_cycles.py": "sim/reference/test_cycles.py",
    "test_reference_faults.py": "sim/reference/test_faults.py",
    "test_reference_machine.py": "sim/reference/test_machine.py",
    "test_reference_properties.py": "sim/reference/test_properties.py",
    "test_vector_machine.py": "sim/vector/test_machine.py",
    "test_vector_nilang_workloads.py": "sim/vector/test_nilang_workloads.py",
    "test_vector_properties.py": "sim/vector/test_properties.py",
    "test_compiled_differential.py": "sim/compiled/test_differential.py",
    "test_compiled_differential_faults.py": "sim/compiled/test_differential_faults.py",
    "test_compiled_differential_structured.py": "sim/compiled/test_differential_structured.py",
    "test_compiled_engine.py": "sim/compiled/test_engine.py",
    "test_compiled_interpreter.py": "sim/compiled/test_interpreter.py",
    "test_compiled_pipeline.py": "sim/compiled/test_pipeline.py",
    "test_compiled_regions.py": "sim/compiled/test_generate.py",
    "test_compiled_rotations.py": "sim/compiled/test_rotations.py",
    "test_compiled_timing.py": "sim/compiled/test_timing.py",
    "test_tile_engine.py": "sim/tile/test_engine.py",
    "test_compiler_checks.py": "compiler/test_checks.py",
    "test_compiler_examples.py": "compiler/test_examples.py",
    "test_compiler_levels.py": "compiler/test_levels.py",
    "test_compiler_literals.py": "compiler/test_literals.py",
    "test_compiler_optimizations.py": "compiler/test_optimizations.py",
    "test_compiler_passes.py": "compiler/test_passes.py",
    "test_compiler_lean_passes.py": "compiler/backend/test_lean_passes.py",
    "test_frontend_limits.py": "compiler/frontend/test_limits.py",
    "test_nilang_ba_bench.py": "bench/test_nilang_ba.py",
    "test_source_maps.py": "machine/test_source_maps.py",
    "test_value_rule.py": "machine/test_values.py",
    "test_input_bounds.py": "cli/test_input_bounds.py",
    "test_dap_bounds.py": "debug/test_dap_bounds.py",
    "test_signals_streams.py": "cli/test_signals_streams.py",
    "test_ibesselj_precision.py": "compiler/test_ibesselj_precision.py",
    "test_frontend_errors.py": "compiler/frontend/test_errors.py",
    "test_janus.py": "compiler/frontend/janus/test_janus.py",
    "test_janus_differential.py": "compiler/frontend/janus/test_differential.py",
    "test_janus_errors.py": "compiler/frontend/janus/test_errors.py",
    "test_lowering.py": "compiler/backend/test_lowering.py",
    "test_rtl_area.py": "rtl/synthesis/test_area.py",
    "test_rtl_block_ram.py": "rtl/hardware/test_memory.py",
    "test_rtl_cosim.py": "rtl/verification/test_cosim.py",
    "test_rtl_formal.py": "rtl/verification/test_formal.py",
    "test_rtl_memory_map.py": "rtl/hardware/test_memory_map.py",
    "test_rtl_synth.py": "rtl/synthesis/test_synth.py",
    "test_rtl_synth_cache.py": "rtl/test_tools.py",
    "test_rtl_synth_ecp5.py": "rtl/synthesis/test_synth_targets.py",
    "test_rtl_unit_exhaustive.py": "rtl/verification/test_unit_exhaustive.py",
    "test_rtl_units.py": "rtl/hardware/test_units.py",
    "test_rtl_verilator.py": "rtl/verification/test_verilator.py",
    "test_report.py": "report/test_report.py",
    "test_report_batch.py": "report/test_batch.py",
    "test_report_by_line.py": "report/test_by_line.py",
    "test_batch_chunked.py": "batching/test_chunks.py",
    "test_batch_dask.py": "batching/test_cluster.py",
    "test_batch_inputs.py": "batching/test_inputs.py",
    "test_dap.py": "debug/test_dap.py",
    "test_debug_session.py": "debug/test_session.py",
    "test_pal_lexer.py": "debug/test_pal_lexer.py",
    "test_bench_campaign.py": "bench/test_compiled_campaign.py",
    "test_bench_j2_arithmetic.py": "bench/test_j2_arithmetic.py",
    "test_bench_rtl_lockstep.py": "bench/test_rtl_lockstep.py",
    "test_fuzz.py": "bench/test_fuzz.py",
    "test_cli.py": "cli/test_main.py",
    "test_cli_json.py": "cli/test_json_mode.py",
    "test_atomic_writes.py": "cli/test_outputs.py",
    "test_waveform.py": "cli/test_waveforms.py",
    "test_grad_expr.py": "cli/test_grad_expr.py",
    "test_cli_grad.py": "cli/test_commands_grad.py",
    "test_batch_cli.py": "cli/test_commands_batch.py",
    "test_bench_cli.py": "cli/test_commands_bench.py",
    "test_debug_cli.py": "cli/test_commands_debug.py",
    "test_report_cli.py": "cli/test_commands_report.py",
    "test_rtl_cli.py": "cli/test_commands_rtl.py",
}

#: Test files that stay in tests/ itself: the Python API's modules (src/revasm/*.py) and
#: the checks of the whole project.
STAY = frozenset({"test_loading.py", "test_rtl_sim.py", "test_programs_reverse_check.py",
                  "test_docs.py", "test_readme.py", "test_import_graph.py",
                  "test_packaging.py"})

#: Shared helpers and data -> tests/support/ (on pytest's ``pythonpath``: imported by their
#: bare names, ``from program_generators import ...``).
SUPPORT = ("batch_programs.py", "differential.py", "edsl_programs.py", "janus_programs.py",
           "lane_checks.py", "nilang_examples.py", "pal_sources.py", "program_generators.py",
           "rtl_programs.py", "sampling.py", "window_program.py", "pal_conformance")

_WALK = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?(?:\.parent\.parent|\.parents\[1\])")
_TEXT = (".py", ".md", ".toml", ".cfg", ".txt", ".json", ".yml", ".yaml", "Makefile", "run")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def _packages(path: Path) -> None:
    """An ``__init__.py`` in ``path``'s folder and each folder above it up to tests/."""
    folder = path.parent
    while folder != TESTS.parent:
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text("")
            _git("add", str(init.relative_to(ROOT)))
        folder = folder.parent


def _rewalk(path: Path) -> None:
    """``Path(__file__)`` walks to the repository root, at the file's new depth."""
    depth = len(path.relative_to(ROOT).parts) - 1
    text = path.read_text()
    new = _WALK.sub(f"Path(__file__).resolve().parents[{depth}]", text)
    if new != text:
        path.write_text(new)


def _renames(moves: dict[str, str]) -> None:
    """Every mention of a moved file's old path, in every tracked text file (results of
    past benchmark runs, bench/results/, are records and left as they were)."""
    files = [ROOT / name for name in _git("ls-files").splitlines()
             if name.endswith(_TEXT)
             and not name.startswith(("tests/support/pal_conformance", "bench/results/"))
             and name != "tools/relayout_tests.py"]
    for file in files:
        if not file.is_file():
            continue
        text = original = file.read_text()
        for old, new in moves.items():
            if file == TESTS / "conftest.py":
                text = text.replace(f'"{old}"', f'"{new}"')
            text = text.replace(f"tests/{old}", f"tests/{new}")
            if old.endswith(".py"):  # a bare file name; a folder only as tests/NAME
                text = re.sub(rf"(?<![\w/]){re.escape(old)}", f"tests/{new}", text)
        if text != original:
            file.write_text(text)


def main(argv: list[str]) -> int:
    flat = sorted(p.name for p in TESTS.glob("test_*.py"))
    unplaced = [name for name in flat if name not in MOVES and name not in STAY]
    if "--check" in argv:
        print("\n".join(unplaced) or "every flat test file is placed")
        return 1 if unplaced else 0
    if unplaced:
        print("not in MOVES (add them, by docs/decisions.md's rule):", *unplaced, sep="\n  ")
        return 1
    (TESTS / "support").mkdir(exist_ok=True)
    moved = {}
    for name in SUPPORT:
        if (TESTS / name).exists():
            _git("mv", f"tests/{name}", f"tests/support/{name}")
            if name.endswith(".py"):
                _rewalk(TESTS / "support" / name)
            moved[name] = f"support/{name}"
    for old, new in MOVES.items():
        if not (TESTS / old).exists():
            continue
        target = TESTS / new
        target.parent.mkdir(parents=True, exist_ok=True)
        _git("mv", f"tests/{old}", f"tests/{new}")
        _packages(target)
        _rewalk(target)
        moved[old] = new
    _packages(TESTS / "conftest.py")
    # Every old path, moved now or before: a file merged in later may still name one.
    _renames({**{name: f"support/{name}" for name in SUPPORT}, **MOVES})
    for old, new in sorted(moved.items()):
        print(f"tests/{old} -> tests/{new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
