"""The bundle-adjustment and 10k-point GMM rows of ``revasm bench nilang_compare``: their
programs, inputs, float64 references and baselines (the full run measures them; the
quick run skips them), and the Jacobian summary built from the two BA rows."""
from __future__ import annotations

import numpy as np

from revasm.bench import nilang_compare as nc


def test_the_ba_rows_reference_is_ba_jacobians_rows_by_parameter():
    inputs = nc.inputs_of("adbench_ba_x")
    _, workloads = nc._modules()
    jacobian = workloads.ba_jacobian(inputs)
    assert jacobian.shape == (2, 15)
    for row, name in enumerate(nc.BA_ROWS):
        reference = nc.reference_gradient(name, inputs)
        assert list(reference) == list(workloads.BA_PARAMS)
        assert np.array_equal(np.concatenate([np.atleast_1d(v) for v in reference.values()]),
                              jacobian[row])


def test_the_ba_baselines_run_or_say_they_are_not_installed():
    inputs = nc.inputs_of("adbench_ba_y")
    numpy_row = nc.numpy_baseline("adbench_ba_y", inputs, 50)
    assert numpy_row["status"] == "measured" and numpy_row["batch"] == 50
    for row in (nc.jax_baseline("adbench_ba_y", inputs, 5),
                nc.torch_baseline("adbench_ba_y", inputs, 5)):
        assert row["status"] == "measured" or "not installed" in row["reason"]


def test_the_ba_error_in_a_framework_is_the_float64_reference():
    _, workloads = nc._modules()
    inputs = workloads.ba_inputs(3, seed=9)
    batch = {p: np.stack([np.asarray(o[p], float) for o in inputs], axis=-1)
             for p in nc.KEYS["adbench_ba_x"]}
    got = nc._ba_error(np, **batch)
    for lane, observation in enumerate(inputs):
        assert np.allclose(got[:, lane], workloads.ba_reproj(**observation), atol=1e-12)


def test_the_10k_gmm_is_the_gmm_with_its_points_and_constant():
    _, workloads = nc._modules()
    program = nc.compile_workload(nc.WORKLOADS["adbench_gmm_10k"], level=2)
    x = next(p for p in program.function.params if p.name == "x")
    assert x.type.shape == (10_000, 2)
    assert len(nc.inputs_of("adbench_gmm_10k")["x"]) == 10_000
    assert workloads.gmm_constant(10_000) != workloads.gmm_constant(1000)


def test_the_jacobian_summary_adds_the_two_rows():
    def row(seconds: float, steps: int) -> dict:
        return {"status": "measured",
                "compiled": {"status": "measured", "per_gradient_s": seconds,
                             "instructions_per_gradient": steps},
                "numpy_float64": {"status": "measured", "per_gradient_s": seconds / 10},
                "jax": {"status": "absent", "reason": "jax not installed: x"},
                "pytorch": {"status": "absent", "reason": "torch not installed: x"}}
    summary = nc.ba_jacobian({"adbench_ba_x": row(2e-6, 100), "adbench_ba_y": row(3e-6, 120)})
    assert summary["instructions_per_jacobian"] == 220
    assert abs(summary["per_observation_s"]["revasm_compiled"] - 5e-6) < 1e-18
    assert abs(summary["per_observation_s"]["numpy_float64"] - 5e-7) < 1e-18
    assert "not installed" in summary["per_observation_s"]["jax"]
    assert nc.ba_jacobian({"adbench_ba_x": row(1, 1)})["status"] == "not measured"
