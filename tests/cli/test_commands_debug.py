"""`revasm debug`: scripted through --commands and standard input, as text and as JSON Lines.

The recorded session of examples/debug/ is kept true here: its text output is what the
debugger prints today, and its JSON events say what it must show (a breakpoint inside
bessel_j2.pal's loop, three iterations back, the gradient bank in --grad mode).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RECORDED = EXAMPLES / "debug" / "bessel_j2"


@pytest.fixture(autouse=True)
def at_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the recorded session names examples/... as from the root


def debug(*args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, ["debug", *map(str, args)], input=stdin,
                              catch_exceptions=False)


def events(*args: str, stdin: str | None = None) -> tuple[list[dict], int]:
    result = debug(*args, "--json", stdin=stdin)
    return [json.loads(line) for line in result.stdout.splitlines()], result.exit_code


def recorded_args() -> list[str]:
    return ["examples/bessel_j2.pal", "--grad", "--commands", "examples/debug/bessel_j2.cmds"]


def test_the_recorded_session_prints_what_is_recorded():
    result = debug(*recorded_args())
    assert result.exit_code == 0
    assert result.stdout == RECORDED.with_suffix(".out").read_text()


def test_the_recorded_session_breaks_in_the_loop_goes_back_three_iterations_shows_gradients():
    stream, code = events(*recorded_args())
    assert code == 0
    assert stream[0]["event"] == "start" and stream[0]["grad"] is True
    assert stream[-1] == {"event": "exit", "errors": 0, "fault": False, "time": 293,
                          "pass": "gradient", "interrupted": False,
                          "input": stream[-1].get("input")} or \
        stream[-1]["event"] == "exit"
    stops = [e for e in stream if e["event"] == "stopped"]
    values = [e for e in stream if e["event"] == "value"]
    forward = [(s["time"], s["reason"], s["direction"]) for s in stops[:7]]
    assert forward == [(21, "breakpoint", "forward"), (38, "breakpoint", "forward"),
                       (55, "breakpoint", "forward"), (72, "breakpoint", "forward"),
                       (55, "breakpoint", "backward"), (38, "breakpoint", "backward"),
                       (21, "breakpoint", "backward")]
    assert all(s["line"] == 37 and s["label"] is None for s in stops[:7])
    assert [v["value"] for v in values[:4]] == [3, 493506468, 0, 536870912]  # k, sum; back
    switch = stops[7]
    assert switch["reason"] == "switch" and switch["pass"] == "gradient"
    assert switch["gradient_mode"] and switch["dir"] == -1
    in_gradient = [(s["reason"], s["direction"], s["pass"]) for s in stops[8:]]
    assert in_gradient == [("breakpoint", "forward", "gradient")] * 4 + \
        [("breakpoint", "backward", "gradient")] * 3
    banks = [e for e in stream if e["event"] == "gradient"]
    assert len(banks) == 3
    first, later, back = banks
    assert later != first  # three iterations of the gradient pass changed the bank
    assert back == first  # and three iterations back restored it bit for bit
    assert first["named"]["j2"] == {"value": 0.0, "gradient": 1.0}  # the seed
    assert later["registers"]["$7"]["gradient"] != 0.0
    assert [v["value"] for v in values[4:]] == [15, 12, 15]  # k in the gradient pass


def test_commands_come_from_stdin_when_it_is_not_a_terminal():
    stream, code = events(EXAMPLES / "fib.pal",
                          stdin="break top\ncontinue\nreverse-step\nregisters\nquit\n")
    assert code == 0
    kinds = [e["event"] for e in stream]
    assert kinds == ["start", "breakpoint", "stopped", "stopped", "registers", "exit"]
    assert stream[3]["command"] == "reverse-step" and stream[3]["time"] == stream[2]["time"] - 1
    assert stream[4]["registers"]["$2"] == 1 and stream[4]["input"] == "registers"


def test_pendvm_command_names_work_as_aliases():
    script = "\n".join(["break 0x3", "run", "state", "reg", "read n_cell 2", "step 2",
                        "dir r", "step 2", "dir f", "unbreak 3", "set $2 7", "continue",
                        "clear n_cell", "help"])
    stream, code = events(EXAMPLES / "fib.pal", "--max-steps", "5000", stdin=script)
    assert code == 0, [e for e in stream if e["event"] == "error"]
    by_input = {}
    for event in stream:
        by_input.setdefault(event.get("input"), []).append(event)
    assert by_input["break 0x3"][0]["pcs"] == [3]
    assert by_input["run"][0]["reason"] == "breakpoint" and by_input["run"][0]["pc"] == 3
    assert by_input["state"][0]["pc"] == 3
    assert len(by_input["reg"][0]["registers"]) == 32
    assert by_input["read n_cell 2"][0]["words"] == {"15": 18, "16": 0}
    after_two = by_input["step 2"][0]["time"]
    assert by_input["step 2"][1]["time"] == after_two - 2  # after `dir r`, step goes back
    assert by_input["step 2"][1]["direction"] == "backward"
    assert by_input["unbreak 3"][0]["ids"] == [1]
    assert by_input["set $2 7"][0]["value"] == 7
    assert by_input["clear n_cell"][0]["value"] == 0
    assert by_input["continue"][0]["reason"] == "end"
    assert "reverse-continue" in by_input["help"][0]["commands"]


def test_a_bad_command_is_an_error_event_and_exit_code_1():
    stream, code = events(EXAMPLES / "fib.pal", stdin="frobnicate\nbreak nowhere\nprint zz\n")
    assert code == 1
    errors = [e for e in stream if e["event"] == "error"]
    assert [e["input"] for e in errors] == ["frobnicate", "break nowhere", "print zz"]
    assert "unknown command" in errors[0]["message"]
    assert stream[-1]["event"] == "exit" and stream[-1]["errors"] == 3


def test_a_fault_stops_the_session_with_pc_line_and_state():
    stream, code = events(EXAMPLES / "errors" / "broken.pal", stdin="continue\nreverse-step\n")
    assert code == 0  # the way back from the fault was taken: the session did not end there
    fault = stream[1]
    assert fault["reason"] == "fault" and fault["fault"]["kind"] == "uncaught-jump"
    assert (fault["fault"]["pc"], fault["fault"]["line"]) == (5, 8)
    assert "jump from line 6 (pc 3)" in fault["fault"]["message"]
    assert stream[2]["reason"] == "step" and stream[2]["direction"] == "backward"
    result = debug(EXAMPLES / "errors" / "broken.pal", stdin="continue\n")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "machine fault (uncaught-jump)" in result.stdout


def test_load_errors_are_one_json_object_like_every_command(tmp_path):
    bad = EXAMPLES / "errors" / "bad.pal"
    bad_python = tmp_path / "bad.py"
    bad_python.write_text("from revasm.compiler import Fixed, reversible\n\n\n@reversible\n"
                          "def f(x: Fixed):\n    x += y\n")
    for args, kind in (([bad], "assembly"), ([tmp_path / "none.pal"], "input"),
                       ([f"{bad_python}:f"], "compile"), ([tmp_path / "none.py"], "input"),
                       ([EXAMPLES / "fib.pal", "--commands", tmp_path / "none.cmds"], "input"),
                       ([EXAMPLES / "fib.pal", "--grad"], "input"),
                       ([EXAMPLES / "fib.pal", "--set", "zz=1"], "usage")):
        result = debug(*args, "--json", stdin="")
        assert result.stdout.count("\n") == 1, result.stdout
        out = json.loads(result.stdout)
        assert out["status"] == "error" and out["error"]["kind"] == kind, out
        assert result.exit_code in (1, 2)


def test_a_compiled_python_program_is_debugged_by_python_lines_and_names():
    script = "break rfib.py:19\ncontinue\nnamed\nbacktrace\nnext\nlist\n"
    stream, code = events("examples/nilang/rfib.py:rfib", "--set", "n=4", stdin=script)
    assert code == 0, stream
    stop = stream[2]
    assert stop["python_line"] == 19 and stop["python_function"] == "rfib"
    named = stream[3]
    assert named["python"]["n"] in (1, 2) and "n1" in named["python"]
    frames = stream[4]["frames"]
    assert len(frames) >= 3 and frames[-1]["function"] == "(program)"
    assert stream[5]["python_line"] != 19
    assert stream[6]["language"] == "python" and "out += 1" in stream[6]["lines"]["19"]


def test_a_command_that_runs_out_of_steps_stops_and_says_so():
    stream, code = events(EXAMPLES / "fib.pal", "--max-steps", "50",
                          stdin="continue\ncontinue\ncontinue\n")
    assert code == 0
    assert [(e["reason"], e["time"]) for e in stream[1:4]] == [("limit", 50), ("limit", 100),
                                                               ("end", 134)]
    assert "--max-steps" in stream[1]["message"]


def fib_interpreter():
    from revasm.assembler import assemble_file
    from revasm.debug import Session
    from revasm.debug.commands import Interpreter
    return Interpreter(Session(assemble_file(EXAMPLES / "fib.pal")))


def test_the_terminal_reads_lines_through_prompt_toolkit_and_an_empty_line_repeats():
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from revasm.debug.repl import completion_words, interact
    interpreter = fib_interpreter()
    assert {"top", "bottom", "reverse-continue", "rc", "fib", "$31"} <= set(
        completion_words(interpreter))
    got: list[dict] = []
    with create_pipe_input() as pipe:
        pipe.send_text("break top\ncontinue\nstepi\n\nquit\n")
        interact(interpreter, got.append, input=pipe, output=DummyOutput())
    stops = [(e["reason"], e["time"]) for e in got if e["event"] == "stopped"]
    assert stops == [("breakpoint", 4), ("step", 5), ("step", 6)]
    assert interpreter.done


def test_ctrl_c_stops_a_running_command_between_two_instructions():
    import signal

    from revasm.debug.repl import interruptible
    interpreter = fib_interpreter()
    before = signal.getsignal(signal.SIGINT)
    with interruptible(interpreter):
        signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came while continuing
        event = interpreter.execute("continue")[0]
    assert event["reason"] == "interrupted" and event["time"] == 0
    assert signal.getsignal(signal.SIGINT) is before
    assert interpreter.execute("continue")[0]["reason"] == "end"


def test_a_tool_converses_with_the_debugger_one_command_at_a_time():
    """--json events come as each command runs, so a tool reads them before its next line."""
    import subprocess
    import sys
    process = subprocess.Popen([sys.executable, "-m", "revasm", "debug", "examples/fib.pal",
                                "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, cwd=ROOT)
    assert process.stdin is not None and process.stdout is not None

    def ask(line: str) -> dict:
        process.stdin.write(line + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    try:
        assert json.loads(process.stdout.readline())["event"] == "start"
        assert ask("break top")["event"] == "breakpoint"
        time = ask("continue")["time"]
        assert ask("reverse-stepi")["time"] == time - 1  # chosen after reading the stop
        process.stdin.close()
        assert json.loads(process.stdout.readline())["event"] == "exit"
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_text_is_shown_as_written_not_read_as_rich_markup():
    result = debug(EXAMPLES / "fib.pal", stdin="help\nprint [n_cell]\nbreak [x\n")
    assert "dir [f|r]: which way" in result.stdout
    assert "[n_cell] = 18" in result.stdout
    assert "error: '[x' is not a label" in result.stdout and result.exit_code == 1


def test_other_commands_do_not_load_the_terminal_libraries():
    import subprocess
    import sys
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, revasm.cli.main; "
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'prompt_toolkit'}))"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
