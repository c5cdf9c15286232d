"""`revasm rtl`: lockstep simulation, Verilog, formal and synthesis from the command line."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: The RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")
pytestmark = WARNINGS_ARE_ERRORS

from revasm.cli.main import cli  # noqa: E402


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_help_teaches_with_examples() -> None:
    for command in (("rtl",), ("rtl", "sim"), ("rtl", "verilog"), ("rtl", "formal"),
                    ("rtl", "synth")):
        result = _run(*command, "--help")
        assert result.exit_code == 0
        assert "revasm rtl" in result.output


def test_sim_agrees_forward_and_backward() -> None:
    result = _run("rtl", "sim", "examples/fib.pal", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["status"] == "agree"
    assert [(r["direction"], r["steps"], r["status"]) for r in summary["runs"]] == [
        (1, 134, "finished"), (-1, 134, "finished")]


def test_sim_runs_backward_alone_with_reverse() -> None:
    """``--reverse``: from FINISH on the given state, as ``revasm run --reverse``."""
    result = _run("rtl", "sim", "examples/fib.pal", "--reverse", "--set", "fib=2584",
                  "--set", "$2=1597", "--memory-words", "256", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert [(r["direction"], r["steps"], r["status"]) for r in summary["runs"]] == [
        (-1, 134, "finished")]
    result = _run("rtl", "sim", "examples/fib.pal", "--reverse", "--forward-only")
    assert result.exit_code == 2 and "--reverse is a backward run alone" in result.output


def test_sim_with_inputs_and_vcd(tmp_path) -> None:
    vcd = tmp_path / "mul.vcd"
    result = _run("rtl", "sim", "examples/multiply.pal", "--set", "$1=3", "--forward-only",
                  "--vcd", str(vcd), "--memory-words", "256")
    assert result.exit_code == 0, result.output
    assert "agree on every instruction" in result.output
    assert vcd.stat().st_size > 1000


def test_sim_reports_a_fault_like_the_reference(tmp_path) -> None:
    """An uncaught jump (the assembler refuses it, so the image is built by hand)."""
    from program_generators import ProgramBuilder

    from revasm.assembler import write_bin
    b = ProgramBuilder(32)
    b.op("START").op("ADDI", 1, 3).op("BRA", "land").op("ADDI", 2, 1)
    b.label("land").op("ADDI", 2, 5).op("FINISH")
    image = tmp_path / "jump.bin"
    write_bin(b.build(), image)
    result = _run("rtl", "sim", str(image), "--json")
    summary = json.loads(result.output)
    assert result.exit_code == 1
    (run,) = summary["runs"]
    assert (run["status"], run["fault_kind"], run["fault_pc"]) == ("fault", "uncaught-jump", 4)


def test_sim_refuses_gradient_mode_and_bad_input(tmp_path) -> None:
    result = _run("rtl", "sim", "examples/fib.pal", "--grad")
    assert result.exit_code == 1 and "needs a loss" in result.output
    result = _run("rtl", "sim", str(tmp_path / "missing.pal"))
    assert result.exit_code == 1 and "no such file" in result.output
    result = _run("rtl", "sim", "examples/fib.pal", "--memory-words", "100")
    assert result.exit_code == 1 and "power of two" in result.output
    assert _run("rtl", "synth", "--width", "48").exit_code == 2
    result = _run("rtl", "formal", "--only", "NOPE")
    assert result.exit_code == 1 and "unknown instruction" in result.output
    result = _run("rtl", "formal", "--property", "speed")
    assert result.exit_code == 1 and "unknown propert" in result.output


def test_verilog(tmp_path) -> None:
    out = tmp_path / "core.v"
    result = _run("rtl", "verilog", "-o", str(out), "--memory-words", "64")
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "module revasm_core" in text and "endmodule" in text


def test_formal_proves_named_instructions() -> None:
    result = _run("rtl", "formal", "--only", "xor", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["failed"] == 0
    assert {r["proof"]: r["status"] for r in summary["results"]} == {
        "XOR value": "proved", "XOR backward": "proved"}  # XOR has no gradient rule


def test_sim_gradient_mode() -> None:
    result = _run("rtl", "sim", "examples/x1_plus_x1x2.pal", "--grad", "--memory-words", "64")
    assert result.exit_code == 0, result.output
    assert "and on the gradient banks" in result.output


def test_rtl_sim_reports_the_overflow_counter(tmp_path) -> None:
    program = tmp_path / "ov.pal"
    program.write_text(";; pendulum pal file\n.width 64\n start\n li $1 50000.0\n"
                       " li $2 50000.0\n addmul $3 $1 $2\n finish\n")
    result = _run("rtl", "sim", str(program), "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [r["overflows"] for r in runs] == [1, 0]  # one event forward, taken back backward
    text = _run("rtl", "sim", str(program)).stdout
    assert "forward: 7 instructions" in text and "OV = 1" in text


def test_formal_table_prints_the_registry_without_proving(tmp_path) -> None:
    record = tmp_path / "results.json"
    record.write_text(json.dumps({"results": {"ADD value": {
        "status": "proved", "seconds": 2.5, "command": "revasm rtl formal --only ADD"}}}))
    result = _run("rtl", "formal", "--table", "--record", str(record))
    assert result.exit_code == 0, result.output
    assert "| ADD | proved (2.5 s) | not run | not run |" in result.output
    assert "| XOR | not run | not run | - |" in result.output
