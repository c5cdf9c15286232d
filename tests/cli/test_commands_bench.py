"""`revasm bench --quick`: writes one JSON (and plot) per benchmark, never over a full run's."""
from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from revasm.bench import BENCHMARKS, compile_scale, engine_choice, nilang_compare, tile_speed
from revasm.bench.common import child_outcome, run_child
from revasm.cli.main import cli
from revasm.sim.engines import available

#: Benchmarks ``make test`` leaves to the whole quick suite of ``make test-long``: each
#: builds tile kernels and times fresh processes, minutes on a new kernel cache (fuzz's quick
#: campaign has its own tests, tests/bench/test_fuzz.py); their parts are tested below on
#: small inputs.
LONG_ONLY = ("fuzz", "tile_speed", "engine_choice")


def _quick(tmp_path, names: tuple[str, ...] = ()) -> dict:
    result = CliRunner().invoke(cli, ["bench", "--quick", "--results", str(tmp_path), "--json",
                                      *names], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == set(names or BENCHMARKS)
    for name in printed:
        saved = json.loads((tmp_path / f"{name}.quick.json").read_text())
        assert saved["benchmark"] == name and saved["quick"] is True
        assert not (tmp_path / f"{name}.json").exists()  # a full run's results stay
    return printed


@pytest.mark.long
def test_quick_suite_writes_every_result(tmp_path):
    printed = _quick(tmp_path)
    _check_quick_results(printed)
    choice = printed["engine_choice"]
    assert choice["points"] and all(row["best"] in ("reference", "vector", "tile")
                                    for row in choice["points"])
    assert printed["tile_speed"]["j2_gradient"] and printed["fuzz"]["internal_errors"] == 0


def test_quick_benchmarks_write_their_results(tmp_path):
    printed = _quick(tmp_path, tuple(name for name in BENCHMARKS if name not in LONG_ONLY))
    _check_quick_results(printed)


def test_tile_speed_divergence_runs_every_lane_step_with_masks_and_regrouped():
    rows = tile_speed.divergence(200, 0)  # one tile (of 256): the serial entry
    masks, regroup = rows["masks"], rows["regroup"]
    assert masks["lane_steps"] == regroup["lane_steps"] >= 200 * 2
    assert masks["fetches"] > 0 and masks["lanes_per_fetch"] <= 200


def test_tile_speed_floors_write_the_batchs_columns_and_time_the_arithmetic(tmp_path):
    """The end-to-end floors write the columns they are given with the batch's writer (the
    fewest last: the file holds just those) and divide each time by numpy's forward."""
    import numpy as np

    lanes = 2048
    x = np.linspace(-3, 3, lanes)
    columns = {"status": np.full(lanes, "finished"), "steps": np.arange(lanes), "x": x,
               "loss": x * 2, "grad_x": x * 3}
    floors = tile_speed._floors(columns, tmp_path / "floor.npz", 1, numpy_ns=10.0)
    with np.load(tmp_path / "floor.npz") as written:
        assert sorted(written.files) == sorted(tile_speed.FEWEST_COLUMNS)
        assert written["grad_x"].tolist() == columns["grad_x"].tolist()
    assert floors["default_bytes_per_lane"] == 32 + 8 * 4
    assert floors["default_columns"] == sorted(columns)
    for key in ("write_default", "write_fewest", "arithmetic"):
        assert floors[f"{key}_ns"] > 0
        assert floors[f"{key}_over_numpy_forward"] == floors[f"{key}_ns"] / 10.0
    assert floors["arithmetic_and_write_default_ns"] == \
        floors["arithmetic_ns"] + floors["write_default_ns"]


def test_engine_choice_child_runs_the_grid_program_on_the_engine_named(tmp_path, capsys):
    path = tmp_path / "loop1000.pal"
    path.write_text(engine_choice.program(1_000))
    engine_choice.child([str(path), "reference", "3"])
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert row["engine"] == "ReferenceLanes" and row["halted"]
    assert 900 <= row["steps"] <= 1_100  # "about 1 000 steps a lane"


def test_engine_choice_programs_assemble_at_every_grid_size_and_a_failing_child_raises(
        tmp_path):
    """Every grid program assembles (10^6 steps needs a trip count past ADDI's field), and a
    child that fails for any reason but time or memory stops the benchmark -- it never
    counts as the budget (a run had timed 10^6-step jobs of an unassemblable program)."""
    from revasm.assembler import assemble

    for steps in engine_choice.STEPS:
        assemble(engine_choice.program(steps), f"loop{steps}.pal")
    bad = tmp_path / "bad.pal"
    bad.write_text("        addi $1 99999\n")
    with pytest.raises(RuntimeError, match="failed"):
        engine_choice.timed_job(bad, "reference", 1, 60.0)


def _check_quick_results(printed: dict) -> None:
    speed = printed["sim_speed"]
    assert speed["status"] == "measured" and "reference" in speed["engines"]
    assert set(speed["engines"]) | set(speed["left_out"]) == set(available())
    assert "tile" not in speed["engines"]  # one lane says nothing of a many-lane engine
    assert {row["engine"] for row in speed["results"]} == set(speed["engines"])
    for row in speed["results"]:  # both passes ran whole loops (steps of the loop's shape)
        per_trip = 8 if row["name"] == "pal_loop" else 4
        assert (row["steps"] - 4) % per_trip == 0 and row["steps"] > 4
        assert row["first_seconds"] > 0 and row["instructions_per_second"] > 0
    assert printed["rtl_speed"]["status"] == "skipped"
    throughput = printed["vector_throughput"]["programs"]
    for program in ("straight_line", "branchy"):
        rows = throughput[program]["vector"]
        assert [row["batch"] for row in rows] == [1, 100, 10_000]
        assert all(row["lane_instructions_per_s"] > 0 for row in rows)
        assert "bandwidth_ratio" in rows[-1]
        assert throughput[program]["reference_instructions_per_s"] > 0
    process = speed["process"]  # `revasm run` in a fresh process: compiling, then cached
    assert process["status"] == "measured", process
    assert process["first"]["steps"] == process["cached"]["steps"] > 10**6
    bessel = printed["bessel_gradients"]
    assert bessel["status"] == "measured" and bessel["lanes_faulted"] == 0
    assert bessel["max_abs_error_gradient"] < 1e-6
    compiled = bessel["compiled"]  # the compiled engine beside the vector engine
    assert compiled["status"] == "measured" and compiled["same_gradients_as_vector"]
    assert [row["lanes"] for row in compiled["rows"]] == [1_000, 10_000]
    for row in compiled["rows"]:
        assert row["lanes_faulted"] == 0 and row["max_abs_error_gradient"] < 1e-6
        assert row["ratio_gradient_to_forward"] == row["gradient_s"] / row["numpy_forward_s"]
    scale = printed["compile_scale"]  # every shape compiled, at both sizes, in a process
    assert [(r["shape"], r["statements"]) for r in scale["rows"]] == [
        (shape, n) for shape in compile_scale.SHAPES for n in compile_scale.QUICK_SIZES]
    for row in scale["rows"]:
        assert row["status"] == "measured", row
        assert row["instructions"] >= (row["statements"] if row["shape"] != "constants"
                                       else 1) and row["peak_mb"] > 0
    assert set(scale["growth_large_over_small"]) == set(compile_scale.SHAPES)
    fib = printed["compile_time"]["programs"]["fib.pal"]
    assert fib["status"] == "measured", fib
    assert fib["first"]["steps"] == fib["cached"]["steps"] and fib["cached"]["halted"]
    assert fib["first_wall_s"] > fib["first"]["startup_s"] > 0
    dask = printed["dask_batches"]  # J2 gradients, Parquet -> Zarr, on 2 workers and on 1
    assert dask["status"] == "measured" and dask["lanes"] == 40_000
    for run in (dask["two_workers"], dask["one_worker"]):
        assert run["faulted"] == 0 and run["lanes_per_s"] > 0
    assert len(dask["two_workers"]["peak_rss_mb_per_worker"]) == 2
    assert [row["lanes"] for row in dask["overhead_per_chunk"]] == [10_000]
    compare = printed["nilang_compare"]["workloads"]
    dot = compare["dot"]
    assert dot["status"] == "measured", dot
    assert dot["compiled"]["lanes_faulted"] == 0 and dot["compiled"]["first_and_last_lane_equal"]
    assert dot["compiled"]["max_abs_error_gradient"] < 1e-8
    assert dot["numpy_float64"]["status"] == "measured" and "ratio_to_numpy_float64" in dot
    for library in ("jax", "pytorch"):  # measured when installed, else a note how to
        assert dot[library]["status"] in ("measured", "absent")
        assert dot[library]["status"] == "measured" or "revasm[compare]" in \
            dot[library]["reason"]
    for name in ("givens_network_n100", "sparse_frobenius_dot", "petersen_embedding",
                 "adbench_gmm", "adbench_gmm_10k", "adbench_ba_x", "adbench_ba_y"):
        assert compare[name]["status"] == "skipped"  # full size only
    assert bessel["width_32"]["lanes_faulted"] == 0
    assert bessel["width_32"]["max_abs_error_gradient"] < 1e-3
    nilang = printed["nilang_workloads"]["workloads"]
    for name in ("givens_network_n100", "adbench_gmm"):  # full size only
        assert nilang[name]["status"] == "skipped", nilang[name]
    for name in ("sparse_frobenius_dot", "petersen_embedding"):
        assert nilang[name]["status"] == "measured", nilang[name]
        assert nilang[name]["lanes_equal_reference"] and nilang[name]["lanes_faulted"] == 0
    long_run = printed["long_stack_run"]  # the stack at the top of memory, compiled
    assert long_run["run"]["status"] == "measured", long_run["run"]
    assert long_run["run"]["steps"] == long_run["expected_steps"] == 324_006
    assert long_run["run"]["steps_as_expected"] and long_run["run"]["output_as_expected"]
    assert long_run["run"]["check"] == "restored" and long_run["run"]["fault"] is None
    assert long_run["run"]["lines_printed"] == 200 and long_run["run"]["peak_rss_mib"] > 0
    assert long_run["run"]["live_output_equal"]  # the same run with its output as it runs
    assert len(long_run["run"]["live_run_s_each"]) == long_run["run"]["repeats"] == 5
    assert all(calls >= 1 for calls in long_run["run"]["live_listener_calls"])
    assert all(wait > 0 for wait in long_run["run"]["live_longest_wait_s"])
    command_line = long_run["revasm_run"]  # `revasm run` read line by line through a pipe
    assert command_line["status"] == "measured" and command_line["output_lines"] == 200
    assert command_line["summary"] == "finished after 324006 steps, 1944036 cycles"
    assert command_line["first_line_s"] > 0 and command_line["largest_gap_between_lines_s"] >= 0
    sparse = printed["sparse_memory"]  # as compiled beside dense, per engine
    for row in sparse["workloads"].values():
        assert row["status"] == "measured" and row["same_values"], row
        assert row["reference"]["ratio"] > 0 and row["vector"]["ratio"] > 0
    assert sparse["workloads"]["rfib"]["words_appended"] > 0  # rfib's stack is above it
    assert sparse["summary"]["compiled"]["status"] == "skipped"  # full runs only


def test_unknown_benchmark_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "nope", "--results", str(tmp_path)])
    assert result.exit_code == 2 and "unknown benchmark" in result.output


def test_the_summary_of_a_full_run_prints_every_kind_of_workload(tmp_path, capsys):
    """The full suite's gradient workloads (not run by --quick) have their own shape."""
    from revasm.cli.commands_bench import _print

    gradient = {"status": "measured", "reference_gradient_s": 0.65,
                "vector": {"batch": 1000, "per_gradient_s": 0.006},
                "jax": {"status": "measured", "per_gradient_s": 0.0017}}
    throughput = {"status": "measured", "batch": 10_000, "reference_instructions_per_s": 7e6,
                  "vector_lane_instructions_per_s": 3e8}
    result = {"seconds": 1.0, "plot": "x.png",
              "workloads": {"givens_network_n100": gradient, "sparse_frobenius_dot": throughput,
                            "adbench_gmm": {"status": "skipped", "reason": "quick"}}}
    _print("nilang_workloads", result, tmp_path)
    out = capsys.readouterr().out
    assert "givens_network_n100: 0.006 s per gradient at batch 1000 (reference 0.65 s; " \
           "jax 0.0017 s)" in out
    assert "sparse_frobenius_dot: 3e+08 lane-instructions/s at batch 10000" in out
    assert "adbench_gmm: skipped: quick" in out


def test_comparisons_without_jax_or_torch_say_how_to_install_them(monkeypatch):
    """jax and torch are optional (the `compare` extra): absent, they are a note."""
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    monkeypatch.setitem(sys.modules, "torch", None)
    inputs = nilang_compare.inputs_of("dot")
    for row in (nilang_compare.jax_baseline("dot", inputs, 10),
                nilang_compare.torch_baseline("dot", inputs, 10)):
        assert row["status"] == "absent"
        assert "not installed: pip install revasm[compare]" in row["reason"]
    assert nilang_compare._version("jax") == "not installed: pip install revasm[compare]"


def test_a_child_over_its_budget_is_recorded_not_awaited():
    done = run_child([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    assert done["timed_out"] and done["wall_s"] < 10
    row = child_outcome(done, 0.5, "compiling")
    assert row["status"] == "budget exceeded" and "within 0 s (compiling)" in row["reason"]
    done = run_child([sys.executable, "-c", "print('{\"x\": 1}')"], 30)
    assert child_outcome(done, 30, "running") == {"wall_s": done["wall_s"],
                                                  "status": "measured", "x": 1}


def test_help_lists_every_registered_benchmark():
    from click.testing import CliRunner

    from revasm.bench import BENCHMARKS
    from revasm.cli.main import cli

    text = CliRunner().invoke(cli, ["bench", "--help"]).stdout
    listed = [line.split()[0] for line in text.splitlines()
              if line.startswith("    ") and line.split()[0] in BENCHMARKS]
    assert listed == list(BENCHMARKS)
