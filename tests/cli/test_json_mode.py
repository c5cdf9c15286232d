"""`--json`: exactly one JSON object on stdout whatever happens (docs/cli.md).

Every command, given --json, with an assembly or compile error, a usage error, a missing
file, a machine fault and an internal error prints one JSON object on stdout; every error
object validates against the schema shipped in the package
(revasm/cli/schemas/error.schema.json), with a small validator for the subset of JSON
Schema it uses (jsonschema is not a dependency).  Also: a real VALUE out of the word's
range is a usage error on every command (it used to wrap).
"""
from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
import tomllib
from click.testing import CliRunner

from revasm.cli.json_mode import error_schema, wants_json
from revasm.cli.main import cli
from revasm.report.schema import validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BAD = EXAMPLES / "errors" / "bad.pal"          # two assembly errors, the first at 4:10
BROKEN = EXAMPLES / "errors" / "broken.pal"    # an uncaught jump at run time
FIB = EXAMPLES / "fib.pal"
FIXED = EXAMPLES / "fixed_point.pal"           # .input x $1 fixed

SCHEMA = error_schema()


# The error schema is checked by the validator the report schemas use (one validator).
schema_errors = validate


def test_the_validator_rejects_what_the_schema_forbids():
    good = {"status": "error", "exit_code": 1,
            "error": {"kind": "input", "file": None, "line": None, "col": None,
                      "message": "x: error: no such file"}}
    assert schema_errors(good, SCHEMA) == []
    for broken in ({**good, "status": "ok"}, {**good, "extra": 1},
                   {**good, "error": {**good["error"], "kind": "oops"}},
                   {**good, "error": {k: v for k, v in good["error"].items() if k != "col"}},
                   {**good, "error": {**good["error"], "line": 0}},
                   {**good, "error": {**good["error"], "line": True}},
                   {**good, "exit_code": 3}):
        assert schema_errors(broken, SCHEMA), broken


def test_the_schema_ships_as_package_data():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["package-data"]["revasm.cli.schemas"] == ["*.json"]
    assert SCHEMA["properties"]["status"] == {"const": "error"}
    assert (ROOT / "docs" / "cli.md").read_text().count("error.schema.json") >= 1


def test_wants_json_stops_at_a_double_dash():
    assert wants_json(["run", "x.pal", "--json"])
    assert not wants_json(["run", "x.pal"])
    assert not wants_json(["compile", "--", "--json"])


# --- running a command -----------------------------------------------------------------

def invoke(*args) -> tuple[dict, int, str]:
    """Run ``revasm ARGS``: the one JSON object on stdout, the exit code, stderr."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    try:
        out = json.loads(result.stdout)  # exactly one JSON value: nothing before or after
    except ValueError:
        raise AssertionError(f"not one JSON object on stdout: {result.stdout!r}\n"
                             f"stderr: {result.stderr}") from None
    assert isinstance(out, dict), out
    assert "Traceback" not in result.stderr
    if out.get("status") == "error":
        assert schema_errors(out, SCHEMA) == [], out
        assert out["exit_code"] == result.exit_code
    return out, result.exit_code, result.stderr


def error_of(*args, code: int = 1, kind: str) -> dict:
    out, exit_code, stderr = invoke(*args)
    assert out["status"] == "error", out
    assert exit_code == code, (exit_code, out)
    assert out["error"]["kind"] == kind, out
    assert stderr.strip(), "the human text goes to stderr too"
    return out["error"]


@pytest.fixture
def lanes_csv(tmp_path) -> Path:
    path = tmp_path / "lanes.csv"
    path.write_text("n\n5\n7\n")
    return path


#: Every command that takes a PAL FILE: name -> the arguments around FILE.
def file_commands(lanes: Path) -> dict[str, tuple[list[str], list[str]]]:
    return {
        "run": (["run"], []),
        "check": (["check"], []),
        "grad": (["grad"], []),
        "hessian": (["hessian"], []),
        "report": (["report"], []),
        "batch": (["batch"], ["--inputs", str(lanes)]),
        "rtl sim": (["rtl", "sim"], []),
        "asm": (["asm"], []),
        "disasm": (["disasm"], []),
        "debug": (["debug"], []),
    }


FILE_COMMANDS = ["run", "check", "grad", "hessian", "report", "batch", "rtl sim", "asm",
                 "disasm", "debug"]


@pytest.mark.parametrize("name", FILE_COMMANDS)
def test_an_assembly_error_is_one_json_object_with_its_place(name, lanes_csv, tmp_path):
    before, after = file_commands(lanes_csv)[name]
    extra = ["-o", str(tmp_path / "out.bin")] if name == "asm" else []
    error = error_of(*before, BAD, *after, *extra, "--json", kind="assembly")
    assert (error["file"], error["line"], error["col"]) == (str(BAD), 4, 10)
    assert [(d["line"], d["col"]) for d in error["diagnostics"]] == [(4, 10), (5, 3)]
    assert "unknown instruction 'foo'" in error["diagnostics"][1]["message"]
    assert error["message"].startswith(f"{BAD}:4:10: error:")


@pytest.mark.parametrize("name", FILE_COMMANDS)
def test_a_missing_file_is_one_json_object(name, lanes_csv, tmp_path):
    before, after = file_commands(lanes_csv)[name]
    missing = tmp_path / "nowhere.pal"
    error = error_of(*before, missing, *after, "--json", kind="input")
    assert error["file"] == str(missing)
    assert "no such file" in error["message"]


def test_missing_inputs_of_a_batch_is_one_json_object(tmp_path):
    error_of("batch", FIB, "--inputs", tmp_path / "none.csv", "--json", kind="input")


def test_a_compile_error_is_one_json_object_with_its_place(tmp_path):
    source = tmp_path / "bad.py"
    source.write_text("from revasm.compiler import reversible\n\n@reversible\ndef f(x:\n")
    error = error_of("compile", source, "--json", kind="compile")
    assert error["file"] == str(source) and error["line"] >= 1 and error["col"] >= 1
    error_of("compile", tmp_path / "none.py", "--json", kind="input")
    error = error_of("grad-expr", "sin(x", "--at", "x=1.0", "--json", kind="compile")
    assert (error["file"], error["line"]) == ("<expression>", 1)


#: A bad option value (or a missing argument) for every command: exit 2.
USAGE_ERRORS = {
    "run": ["run", FIB, "--width", "48"],
    "run --set": ["run", FIB, "--set", "n=abc"],
    "check": ["check", FIB, "--random", "-1"],
    "grad": ["grad", FIB, "--width", "48"],
    "hessian": ["hessian", FIB, "--width", "48"],
    "report": ["report", FIB, "--model", "nosuch"],
    "batch": ["batch", FIB, "--inputs", EXAMPLES / "lanes.csv", "--width", "48"],
    "rtl sim": ["rtl", "sim", FIB, "--width", "48"],
    "rtl verilog": ["rtl", "verilog", "-o", "core.v", "--width", "48"],
    "rtl formal": ["rtl", "formal", "--jobs", "0"],
    "rtl synth": ["rtl", "synth", "--target", "nosuch"],
    "asm": ["asm", FIB, "--format", "elf"],
    "disasm": ["disasm"],
    "compile": ["compile", EXAMPLES / "nilang" / "rfib.py", "--emit", "nosuch"],
    "grad-expr": ["grad-expr", "x * 2", "--at", "x"],
    "bench": ["bench", "nosuch"],
    "unknown option": ["run", FIB, "--no-such-option"],
    "unknown command": ["nosuch"],
}


@pytest.mark.parametrize("name", USAGE_ERRORS)
def test_a_usage_error_is_one_json_object_and_exit_2(name):
    error = error_of(*USAGE_ERRORS[name], "--json", code=2, kind="usage")
    assert error["file"] is None and error["line"] is None
    assert error["message"]


def test_a_usage_error_names_the_option():
    assert error_of("run", FIB, "--set", "n=abc", "--json", code=2,
                    kind="usage")["option"] == "--set"
    assert error_of("grad-expr", "x", "--at", "x", "--json", code=2,
                    kind="usage")["option"] == "--at"


@pytest.mark.parametrize("name", ["run", "check", "grad", "hessian", "report", "batch",
                                  "rtl sim"])
def test_a_fault_keeps_its_own_one_object(name, lanes_csv):
    args = {
        "run": ["run", BROKEN],
        "check": ["check", BROKEN],
        "grad": ["grad", EXAMPLES / "bessel_j2.pal", "--set", "x=1.0", "--max-steps", "1"],
        "hessian": ["hessian", EXAMPLES / "bessel_j2.pal", "--set", "x=1.0",
                    "--max-steps", "1"],
        "report": ["report", BROKEN],
        "batch": ["batch", FIB, "--inputs", lanes_csv, "--max-steps", "1"],
        "rtl sim": ["rtl", "sim", BROKEN],
    }[name]
    out, code, _ = invoke(*args, "--json")
    assert code == 1
    assert out.get("status") != "error"
    assert "fault" in json.dumps(out)


def test_a_fault_in_grad_expr_is_one_fault_object():
    out, code, stderr = invoke("grad-expr", "log(x)", "--at", "x=-1.0", "--json")
    assert code == 1 and out["status"] == "fault"
    assert out["fault"]["kind"] == "domain-error"
    assert "not defined at this point" in stderr


def _commands():
    """(path, command object) of every leaf command."""
    found = []
    for name, command in cli.commands.items():
        if isinstance(command, click.Group):
            found += [((name, sub), leaf) for sub, leaf in command.commands.items()]
        else:
            found.append(((name,), command))
    return found


#: Arguments that get each command past its option parser to its body.
BODY_ARGS = {
    ("run",): [FIB], ("check",): [FIB], ("grad",): [FIB], ("hessian",): [FIB],
    ("report",): [FIB], ("batch",): [FIB, "--inputs", EXAMPLES / "lanes.csv"],
    ("rtl", "sim"): [FIB], ("rtl", "verilog"): ["-o", "core.v"], ("rtl", "formal"): [],
    ("rtl", "synth"): [], ("asm",): [FIB], ("disasm",): [FIB],
    ("compile",): [EXAMPLES / "nilang" / "rfib.py"], ("grad-expr",): ["x", "--at", "x=1.0"],
    ("bench",): [], ("debug",): [FIB], ("dap",): [],
}


def test_every_command_is_covered():
    assert {path for path, _ in _commands()} == set(BODY_ARGS)


@pytest.mark.parametrize("path", sorted(BODY_ARGS), ids=" ".join)
def test_an_internal_error_is_one_json_object(path, monkeypatch):
    command = dict(_commands())[path]

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(command, "callback", explode)
    out, code, stderr = invoke(*path, *BODY_ARGS[path], "--json")
    assert code == 1 and out["status"] == "error"
    assert out["error"]["kind"] == "internal" and out["error"]["exception"] == "RuntimeError"
    assert "internal error: RuntimeError: boom" in out["error"]["message"]
    assert "Please report this" in stderr


def test_an_internal_error_after_printing_is_still_one_object(monkeypatch):
    """Output a command printed before it failed goes to stderr; stdout has the error."""
    import revasm.cli.commands_run as commands_run

    def prints_then_fails(*args, **kwargs):
        click.echo('{"status": "finished"}')
        raise KeyError("late")

    monkeypatch.setattr(commands_run.api, "run", prints_then_fails)
    out, code, stderr = invoke("run", FIB, "--json")
    assert code == 1 and out["error"]["kind"] == "internal"
    assert '{"status": "finished"}' in stderr


def test_success_objects_of_the_commands_that_gained_json(tmp_path):
    out, code, _ = invoke("asm", FIB, "-o", tmp_path / "fib.bin", "--listing", "--json")
    assert code == 0 and out["status"] == "ok" and out["instructions"] == 15
    assert out["output"] == str(tmp_path / "fib.bin") and "listing" in out
    out, code, _ = invoke("disasm", tmp_path / "fib.bin", "--json")
    assert code == 0 and out["source"].startswith(";; pendulum pal file")
    out, code, _ = invoke("compile", EXAMPLES / "nilang" / "rfib.py", "--json")
    assert code == 0 and out["output"] is None and "start" in out["text"].lower()
    out, code, _ = invoke("run", "--help", "--json")
    assert code == 0 and out["status"] == "ok" and "Usage:" in out["text"]


def test_without_json_errors_stay_text():
    result = CliRunner().invoke(cli, ["run", str(BAD)], catch_exceptions=False)
    assert result.exit_code == 1 and result.stdout == ""
    assert f"{BAD}:4:10: error:" in result.stderr


# --- VALUEs out of range --------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["run"], ["check"], ["grad", "--width", "32", "--loss", "z"],
    ["hessian", "--width", "32", "--loss", "z"], ["report"], ["rtl", "sim"]])
@pytest.mark.parametrize("value", ["40000.0", "-32769.0", "32768.0", "1e9"])
def test_a_real_that_does_not_fit_the_word_is_a_usage_error(command, value):
    result = CliRunner().invoke(cli, [*command, str(FIXED), "--set", f"x={value}"],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "does not fit Q16.16" in result.stderr
    error = error_of(*command, FIXED, "--set", f"x={value}", "--json", code=2, kind="usage")
    assert error["option"] == "--set"


@pytest.mark.parametrize("value", ["32767.0", "-32768.0", "0.5"])
def test_reals_at_the_ends_of_the_range_are_taken(value):
    out, code, _ = invoke("run", FIXED, "--set", f"x={value}", "--json")
    assert code == 0 and out["named"]["x"] == float(value)


def test_raw_integers_keep_their_unsigned_range():
    out, code, _ = invoke("run", FIB, "--set", "$9=0xffffffff", "--json")
    assert code == 0 and out["registers"]["$9"] == -1
    error_of("run", FIB, "--set", "$9=0x100000000", "--json", code=2, kind="usage")


@pytest.mark.parametrize("value", ["40000.0", "-40000", "1e12", "nan", "inf"])
def test_grad_expr_refuses_a_point_that_does_not_fit(value):
    result = CliRunner().invoke(cli, ["grad-expr", "x * 2", "--at", f"x={value}",
                                      "--width", "32"], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    error = error_of("grad-expr", "x * 2", "--at", f"x={value}", "--width", "32", "--json",
                     code=2, kind="usage")
    assert error["option"] == "--at"


def test_grad_expr_at_w64_takes_what_w32_refuses():
    out, code, _ = invoke("grad-expr", "x * 2", "--at", "x=40000.0", "--json")
    assert code == 0 and out["value"] == 80000.0
