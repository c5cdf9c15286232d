"""`revasm grad` and `revasm hessian`: JSON shape, defaults from declarations, errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def as_json(*args: str) -> tuple[dict, int]:
    result = invoke(*args, "--json")
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0]), result.exit_code


def test_grad_bessel_needs_no_flag_but_the_input():
    out, code = as_json("grad", EXAMPLES / "bessel_j2.pal", "--set", "x=1.0")
    assert code == 0
    assert out["width"] == 64  # the file's .width (Q32.32), as `revasm run` has it
    assert abs(out["loss"] - 0.1149034849) < 1e-6
    assert abs(out["gradient"]["x"] - 0.2102436159) < 1e-6
    assert set(out["steps"]) == set(out["cycles"]) == {"forward", "backward"}
    assert out["steps"]["forward"] == out["steps"]["backward"] > 0


def test_grad_at_x_3():
    out, _ = as_json("grad", EXAMPLES / "bessel_j2.pal", "--set", "x=3.0")
    assert abs(out["gradient"]["x"] - 0.0149981181) < 1e-6


def test_hessian_bessel():
    out, code = as_json("hessian", EXAMPLES / "bessel_j2.pal", "--set", "x=3.0")
    assert code == 0
    assert abs(out["hessian"]["x"]["x"] - (-0.2750500730)) < 1e-5
    assert out["wrt"] == ["x"] and out["passes"] == 2


def test_grad_apex_and_x1x2_from_their_declared_defaults():
    out, _ = as_json("grad", EXAMPLES / "apex.pal")
    assert abs(out["gradient"]["x"] - 1.053170) < 1e-6
    assert abs(out["gradient"]["y"] - (-0.425549)) < 1e-6
    out, _ = as_json("grad", EXAMPLES / "x1_plus_x1x2.pal", "--set", "x1=5.0", "--set", "x2=3.0")
    assert out["loss"] == 20 and out["gradient"] == {"x1": 4.0, "x2": 5.0}


def test_width_32_loss_and_wrt_options():
    out, code = as_json("grad", EXAMPLES / "apex.pal", "--width", "32", "--loss", "$3",
                        "--wrt", "x,$2")
    assert code == 0 and out["width"] == 32 and out["loss_name"] == "$3"
    assert list(out["gradient"]) == ["x", "$2"]
    assert abs(out["gradient"]["x"] - 2.0) < 2 ** -14  # d(x/y)/dx = 1/y
    assert abs(out["gradient"]["$2"] - (-1.2)) < 2 ** -14


def test_text_output_names_loss_and_gradients():
    result = invoke("grad", EXAMPLES / "x1_plus_x1x2.pal")
    assert result.exit_code == 0
    assert "loss f = 20.0" in result.stdout and "df/dx2 = 5.0" in result.stdout
    result = invoke("hessian", EXAMPLES / "apex.pal")
    assert result.exit_code == 0 and "hessian:" in result.stdout


@pytest.mark.parametrize("args,message", [
    (("grad", EXAMPLES / "fib.pal"), "declares no .loss"),
    (("grad", EXAMPLES / "apex.pal", "--loss", "zz"), "neither a register"),
    (("grad", EXAMPLES / "apex.pal", "--wrt", ","), "--wrt"),
    (("hessian", EXAMPLES / "apex.pal", "--set", "x=abc"), "not a number"),
    (("grad", EXAMPLES / "apex.pal", "--width", "16"), "16"),
])
def test_usage_errors_exit_2_without_traceback(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_missing_file_exits_1():
    result = invoke("grad", "no/such.pal")
    assert result.exit_code == 1 and "no such file" in result.output


def test_backward_fault_is_reported_with_its_pass(tmp_path):
    program = tmp_path / "sqrt0.pal"
    program.write_text(";; pendulum pal file\n.input x $1 fixed = 0.0\n.loss y $2\n"
                       "        start\n        addsqrt $2 $1\n        finish\n")
    out, code = as_json("grad", program)
    assert code == 1
    assert out["status"] == "fault"
    assert out["fault"]["pass"] == "backward (gradient)"
    assert out["fault"]["kind"] == "divide-by-zero" and out["fault"]["line"] == 5
    result = invoke("grad", program)
    assert result.exit_code == 1
    assert "in the backward (gradient) pass" in result.output


def test_help_teaches_with_examples():
    for command in ("grad", "hessian"):
        result = invoke(command, "--help")
        assert result.exit_code == 0
        assert f"revasm {command} examples/" in result.output
