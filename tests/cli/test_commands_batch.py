"""`revasm batch`: each input row gives what `revasm run` / `revasm grad` give for it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from revasm.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_every_row_equals_revasm_run_of_that_row(tmp_path):
    rows = [(3, 4), (5, 6), (-7, 100000), (0, 0)]
    inputs = tmp_path / "ab.csv"
    inputs.write_text("a,b\n" + "".join(f"{a},{b}\n" for a, b in rows))
    result = invoke("batch", EXAMPLES / "multiply.pal", "--inputs", inputs, "--json",
                    "--all-registers")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["lanes"] == 4 and out["status"] == ["finished"] * 4
    for lane, (a, b) in enumerate(rows):
        single = json.loads(invoke("run", EXAMPLES / "multiply.pal", "--set", f"a={a}",
                                   "--set", f"b={b}", "--json").stdout)
        assert out["named"]["c"][lane] == single["named"]["c"] == a * b
        assert {r: v[lane] for r, v in out["registers"].items()} == single["registers"]
        assert out["steps"][lane] == single["steps"]


def test_fixed_point_columns_are_reals_and_registers_can_be_named(tmp_path):
    inputs = tmp_path / "x.npz"
    np.savez(inputs, x=np.array([0.5, -1.25, 3.0]), theta=np.array([0.75, 0.1, -2.0]))
    out_path = tmp_path / "out.npz"
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", inputs, "-o", out_path,
                    "--all-registers")
    assert result.exit_code == 0, result.output
    out = np.load(out_path)
    for lane, (x, theta) in enumerate([(0.5, 0.75), (-1.25, 0.1), (3.0, -2.0)]):
        single = json.loads(invoke("run", EXAMPLES / "fixed_point.pal", "--set", f"x={x}",
                                   "--set", f"theta={theta}", "--json").stdout)
        for name in ("z", "p", "q"):
            assert out[name][lane] == single["named"][name]
        assert out["$5"][lane] == single["registers"]["$5"]
    assert list(out["status"]) == ["finished"] * 3


def test_grad_rows_equal_revasm_grad(tmp_path):
    inputs = tmp_path / "xs.csv"
    inputs.write_text("x1,x2\n5.0,3.0\n-1.5,0.25\n")
    result = invoke("batch", EXAMPLES / "x1_plus_x1x2.pal", "--inputs", inputs, "--grad",
                    "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    for lane, (x1, x2) in enumerate([(5.0, 3.0), (-1.5, 0.25)]):
        single = json.loads(invoke("grad", EXAMPLES / "x1_plus_x1x2.pal", "--set", f"x1={x1}",
                                   "--set", f"x2={x2}", "--json").stdout)
        assert out["loss"][lane] == single["loss"]
        assert {k: v[lane] for k, v in out["gradient"].items()} == single["gradient"]
        assert out["named"]["f"][lane] == single["loss"]


def test_a_faulting_lane_is_reported_and_the_others_finish(tmp_path):
    program = tmp_path / "div.pal"
    program.write_text(";; pendulum pal file\n.input a $1 fixed\n.input b $2 fixed\n"
                       ".output q $3\n  start\n  adddiv $3 $1 $2\n  finish\n")
    inputs = tmp_path / "ab.csv"
    inputs.write_text("a,b\n1.0,2.0\n1.0,0.0\n3.0,4.0\n")
    result = invoke("batch", program, "--inputs", inputs, "--json")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["status"] == ["finished", "fault", "finished"]
    assert out["fault_kind"] == ["", "divide-by-zero", ""]
    assert out["faults"][0]["lane"] == 1 and out["faults"][0]["line"] == 6
    assert out["named"]["q"] == [0.5, None, 0.75]  # a faulted lane has no value: null


def test_bad_inputs_get_a_message_and_an_exit_code(tmp_path):
    inputs = tmp_path / "bad.csv"
    inputs.write_text("nope\n1\n")
    result = invoke("batch", EXAMPLES / "multiply.pal", "--inputs", inputs)
    assert result.exit_code == 1
    assert "'nope' is neither a register" in result.output
    ragged = tmp_path / "ragged.npz"
    np.savez(ragged, a=np.arange(3), b=np.arange(4))
    result = invoke("batch", EXAMPLES / "multiply.pal", "--inputs", ragged)
    assert result.exit_code == 1 and "differ in length" in result.output
    result = invoke("batch", EXAMPLES / "multiply.pal", "--inputs", tmp_path / "none.csv")
    assert result.exit_code == 1 and "cannot read" in result.output
    result = invoke("batch", EXAMPLES / "multiply.pal", "--inputs", inputs, "--json", "-o",
                    tmp_path / "o.npz")
    assert result.exit_code == 2
    result = invoke("batch", EXAMPLES / "multiply.pal")
    assert result.exit_code == 2 and "--inputs" in result.output


def test_the_default_columns_are_what_a_user_asks_for(tmp_path):
    """Without --all-registers (or --columns), the results hold the status and fault, the
    counts, the declared names and, with --grad, the loss and the gradients -- no
    register; the values are those of the run with every register kept."""
    inputs = tmp_path / "xs.npz"
    np.savez(inputs, x1=np.array([5.0, -1.5, 0.25]), x2=np.array([3.0, 0.25, -2.0]))
    program = EXAMPLES / "x1_plus_x1x2.pal"
    outputs = {}
    for name, extra in (("default", ()), ("all", ("--all-registers",))):
        outputs[name] = tmp_path / f"{name}.npz"
        result = invoke("batch", program, "--inputs", inputs, "--grad", "-o", outputs[name],
                        *extra)
        assert result.exit_code == 0, result.output
    default, every = np.load(outputs["default"]), np.load(outputs["all"])
    assert not [name for name in default.files if name.startswith("$")]
    assert {"status", "fault_kind", "steps", "cycles", "overflows", "x1", "x2", "f", "loss",
            "forward_steps", "grad_x1", "grad_x2"} <= set(default.files)
    assert len([name for name in every.files if name.startswith("$")]) == 32
    for name in default.files:
        assert np.array_equal(default[name], every[name]), name
    out = json.loads(invoke("batch", program, "--inputs", inputs, "--grad", "--json").stdout)
    assert out["registers"] == {} and out["gradient"]["x1"][0] == 4.0
    both = invoke("batch", program, "--inputs", inputs, "--columns", "loss", "--all-registers",
                  "-o", tmp_path / "both.parquet")
    assert both.exit_code != 0 and "choose one of --columns and --all-registers" in both.output
