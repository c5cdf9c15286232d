"""Source maps end to end (issue #40): a compiled Janus or Python program is reported at the
user's file and line on every surface -- `run` (text and JSON), `batch`, the debugger's
breakpoints and stack frames, the DAP server, the image sidecar -- with the generated PAL
only as extra detail (``pal_line``); Janus's run-time checks read in Janus terms.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import revasm
from revasm.assembler import apply_sidecar, sidecar_dict
from revasm.cli.commands_debug import _dap_session
from revasm.cli.main import cli
from revasm.compiler.api import compile_janus_source
from revasm.debug.dap import Adapter
from revasm.machine import fault_json

ROOT = Path(__file__).resolve().parents[2]
SORT = ROOT / "examples" / "janus" / "sort.ja"

#: A Janus program whose loop entry assertion fails (i starts at 5): line 4 faults.
ENTRY = """procedure main()
    int i = 5
    int x
    from i = 0 loop
        i += 1
    until i = 3
    x += 1
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    path = tmp_path / "entry.ja"
    path.write_text(ENTRY)
    return path


def test_run_json_names_the_janus_file_and_line_not_the_generated_pal(entry: Path):
    result = invoke("run", str(entry), "--json")
    assert result.exit_code == 1
    fault = json.loads(result.stdout)["fault"]
    assert (fault["file"], fault["line"], fault["source"]) == (str(entry), 4, "from i = 0 loop")
    assert fault["message"] == ("the from assertion i = 0 of this loop must be true when the "
                                "loop is entered and false after every iteration (each time "
                                "the loop comes back around), and it is not")
    assert fault["pal_file"] == "entry.main.pal" and fault["pal_line"] > 7  # only a detail


def test_run_text_reports_the_fault_at_the_janus_line(entry: Path):
    result = invoke("run", str(entry))
    assert result.exit_code == 1
    first, second = result.stderr.splitlines()[:2]
    assert first.startswith(f"{entry}:4:5: runtime error: the from assertion i = 0")
    assert second.strip() == "from i = 0 loop"
    assert "postcondition" not in result.stderr


def test_batch_fault_records_name_the_janus_line(entry: Path, tmp_path: Path):
    inputs = tmp_path / "x.csv"
    inputs.write_text("x\n0\n1\n")
    result = invoke("batch", str(entry), "--inputs", str(inputs), "--json")
    assert result.exit_code == 1
    faults = json.loads(result.stdout)["faults"]
    assert [(f["lane"], f["file"], f["line"]) for f in faults] == \
        [(0, str(entry), 4), (1, str(entry), 4)]
    text = invoke("batch", str(entry), "--inputs", str(inputs))
    assert f"lane 0: {entry}:4: uncaught-jump: the from assertion" in text.stderr


def test_a_python_fault_names_the_python_line_and_the_index_value(tmp_path: Path):
    source = tmp_path / "pick.py"
    source.write_text("from revasm.compiler import Array, Int, Out, reversible\n\n\n"
                      "@reversible\n"
                      "def pick(out: Out[Int], a: Array[Int, 4], i: Int = 6):\n"
                      "    out += a[i]\n")
    result = invoke("run", str(source), "--json")
    assert result.exit_code == 1
    fault = json.loads(result.stdout)["fault"]
    assert (fault["file"], fault["line"], fault["check"]) == (str(source), 6, "bounds")
    assert fault["message"] == "index i of a[i] at line 6 is 6, outside 0..3 (array a, 4)"


@pytest.mark.parametrize(("body", "line", "message"), [
    ("    if x = 0 then\n        x += 1\n    fi x = 0\n", 8,  # at the fi assertion
     "the fi assertion x = 0 is false after the then branch (the test x = 0 was true, so "
     "x = 0 must be true)"),
    ("    local int t = 1\n        x += t\n    delocal int t = 2\n", 8,
     "delocal int t = 2: t does not hold 2 here"),
    ("    pop(x, s)\n", 6, "pop(x, s): the stack s is empty"),
    ("    x += 1\n    pop(x, s)\n", 7, "pop(x, s) pops into x, which must be 0 and is not"),
    ("    assert x = 1\n", 6, "the assertion x = 1 is false"),
    ("    x += 7\n    y += a[x + 1]\n", 7,
     "index x + 1 of a[x + 1] at line 7 is 8, outside 0..3 (array a, 4)"),
    ("    from y = 0 loop\n        push(x, s)\n        y += 1\n    until y = 70\n", 7,
     "push(x, s): the stack s is full (a stack holds 64 elements)"),
])
def test_janus_checks_read_in_janus_terms(body: str, line: int, message: str):
    source = "procedure main()\n    int x\n    int y\n    int a[4]\n    stack s\n" + body
    fault = fault_json(revasm.run(compile_janus_source(source, "f.ja").image,
                                  engine="reference").fault)
    assert (fault["file"], fault["line"], fault["message"]) == ("f.ja", line, message)
    assert fault["source"] == source.splitlines()[line - 1].strip()
    assert "__" not in fault["message"] and "{$" not in fault["message"]


def test_a_backward_run_fault_is_in_janus_terms_too(tmp_path: Path):
    # backward from x = 0 the fi assertion x = 1 picks the else branch, where the test
    # x = 0 holds: the if cannot be undone
    path = tmp_path / "back.ja"
    path.write_text("procedure main()\n    int x\n    if x = 0 then\n        x += 1\n"
                    "    fi x = 1\n")
    result = invoke("run", str(path), "--reverse", "--set", "x=0", "--json")
    assert result.exit_code == 1
    fault = json.loads(result.stdout)["fault"]
    assert (fault["file"], fault["line"]) == (str(path), 3)
    assert fault["message"].startswith("running backward, the fi assertion x = 1 chose a "
                                       "branch that the if test x = 0 does not agree with")


def test_the_debugger_breaks_on_a_janus_line_and_stops_there():
    script = "break :13\ncontinue\nbacktrace\n"
    result = CliRunner().invoke(cli, ["debug", str(SORT), "--json"], input=script)
    events = [json.loads(line) for line in result.stdout.splitlines()]
    start = events[0]
    assert "Janus lines" in start["breakpoints_on"] and start["file"] == str(SORT)
    point = next(e for e in events if e["event"] == "breakpoint")
    assert point["kind"] == "janus-line" and point["line"] == 13
    stop = next(e for e in events if e["event"] == "stopped")
    assert (stop["reason"], stop["file"], stop["line"]) == ("breakpoint", str(SORT), 13)
    assert stop["source"] == "rank[i] += 1" and stop["pal_file"] == "sort.main.pal"
    assert stop["pal_line"] != 13
    frames = next(e for e in events if e["event"] == "frames")["frames"]
    assert frames[0]["file"] == str(SORT) and frames[0]["line"] == 13


def test_dap_breakpoints_and_stack_frames_are_janus_lines():
    sent: list[dict] = []
    adapter = Adapter(sent.append, _dap_session)

    def request(command: str, **arguments) -> dict:
        adapter.handle({"seq": len(sent) + 1, "type": "request", "command": command,
                        "arguments": arguments})
        return next(m for m in reversed(sent) if m["type"] == "response")

    request("initialize", adapterID="revasm")
    assert request("launch", program=str(SORT))["success"]
    answer = request("setBreakpoints", source={"path": str(SORT)},
                     breakpoints=[{"line": 13}])["body"]["breakpoints"]
    assert answer == [{"id": answer[0]["id"], "verified": True, "line": 13}]
    request("configurationDone")
    stopped = [m for m in sent if m.get("event") == "stopped"]
    assert stopped and stopped[-1]["body"]["reason"] == "breakpoint"
    frames = request("stackTrace", threadId=1)["body"]["stackFrames"]
    assert frames[0]["line"] == 13 and frames[0]["source"]["path"] == str(SORT.resolve())


def test_the_image_sidecar_keeps_the_user_source_map():
    image = compile_janus_source(ENTRY, "entry.ja").image
    again = apply_sidecar(image, json.loads(json.dumps(sidecar_dict(image))))
    assert again.locations == image.locations
    origins = {location.origin.line for location in again.locations.values()
               if location.origin is not None}
    assert origins <= set(range(1, 8)) and 4 in origins
    result = revasm.run(again, engine="reference")
    assert fault_json(result.fault)["line"] == 4
