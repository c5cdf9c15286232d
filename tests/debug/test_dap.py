"""`revasm dap`: a Debug Adapter Protocol client in the test speaks to the server over pipes.

The session of the issue's closing note: launch, set a breakpoint, continue, stepBack x3,
variables, reverseContinue, disconnect -- with the values checked against the machine.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BESSEL = ROOT / "examples" / "bessel_j2.pal"
PROCEDURE = ROOT / "examples" / "procedure.pal"


class Client:
    """A DAP client over a `revasm dap` subprocess's pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "revasm", "dap"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        self.seq = 0
        self.events: list[dict] = []

    def send(self, command: str, **arguments) -> dict:
        """Send a request; return its response (events that come before it are kept)."""
        return self.send_raw(command, arguments)

    def send_raw(self, command: str, arguments) -> dict:
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        while True:
            message = self.read()
            if message["type"] == "response":
                assert message["request_seq"] == self.seq and message["command"] == command
                return message
            self.events.append(message)

    def read(self) -> dict:
        assert self.process.stdout is not None
        length = None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            if not line.strip():
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(self.process.stdout.read(length))

    def event(self, name: str) -> dict:
        """The next event of that name (read on if it has not come yet)."""
        for index, event in enumerate(self.events):
            if event["event"] == name:
                return self.events.pop(index)
        while True:
            message = self.read()
            if message["type"] == "event" and message["event"] == name:
                return message
            self.events.append(message)

    def start(self, program: str, **launch: object) -> dict:
        """Initialize, launch ``program`` stopped on its entry, and the ``stopped`` body."""
        self.send("initialize", adapterID="revasm")
        assert self.send("launch", program=program, stopOnEntry=True, **launch)["success"]
        self.send("configurationDone")
        return self.event("stopped")["body"]

    def variables(self, frame: int, scope: str) -> dict[str, str]:
        scopes = self.send("scopes", frameId=frame)["body"]["scopes"]
        reference = next(s["variablesReference"] for s in scopes if s["name"] == scope)
        listed = self.send("variables", variablesReference=reference)["body"]["variables"]
        return {v["name"]: v["value"] for v in listed}

    def close(self) -> int:
        self.process.stdin.close()  # type: ignore[union-attr]
        return self.process.wait(timeout=30)


@pytest.fixture
def client():
    c = Client()
    yield c
    if c.process.poll() is None:
        c.process.kill()
        c.process.wait()


def test_launch_break_continue_step_back_three_times_variables_reverse_continue(client):
    init = client.send("initialize", adapterID="revasm", linesStartAt1=True)
    assert init["success"] and init["body"]["supportsStepBack"] is True
    client.event("initialized")
    assert client.send("launch", program=str(BESSEL), grad=False, set=["x=1.0"])["success"]
    answer = client.send("setBreakpoints", source={"path": str(BESSEL)},
                         breakpoints=[{"line": 37}])["body"]["breakpoints"]
    assert answer == [{"id": 1, "verified": True, "line": 37}]
    assert client.send("configurationDone")["success"]
    stopped = client.event("stopped")["body"]
    assert stopped["reason"] == "breakpoint" and stopped["hitBreakpointIds"] == [1]
    assert client.send("threads")["body"]["threads"] == [{"id": 1, "name": "machine"}]
    frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
    assert frames[0]["line"] == 37 and frames[0]["source"]["path"] == str(BESSEL)
    client.send("continue", threadId=1)
    client.event("stopped")
    machine = client.variables(0, "Machine")
    assert machine["PC"] == "21" and machine["time"] == "38"
    assert client.variables(0, "Registers")["$15"] == "1"  # k after one iteration
    lines = []
    for _ in range(3):
        assert client.send("stepBack", threadId=1)["success"]
        assert client.event("stopped")["body"]["reason"] == "step"
        lines.append(client.send("stackTrace", threadId=1)["body"]["stackFrames"][0]["line"])
    assert lines == [36, 35, 34]  # swap, addi, exch: the loop body, backward
    registers = client.variables(0, "Registers")
    assert registers["$15"] == "1" and registers["$7"] != "0"  # exch undone: term back in $7
    assert client.variables(0, "Names")["x"] == "1.0"
    client.send("reverseContinue", threadId=1)
    stopped = client.event("stopped")["body"]
    assert stopped["reason"] == "breakpoint"
    assert client.variables(0, "Machine")["time"] == "21"
    assert client.variables(0, "Registers")["$15"] == "0"
    evaluated = client.send("evaluate", expression="$15", context="watch")["body"]
    assert evaluated["result"] == "0"
    client.send("disconnect")
    client.event("terminated")
    assert client.close() == 0


def test_frames_are_the_portal_calls_and_step_out_returns(client):
    client.send("initialize", adapterID="revasm")
    client.send("launch", program=str(PROCEDURE), stopOnEntry=True)
    client.send("setBreakpoints", source={"path": str(PROCEDURE)}, breakpoints=[{"line": 21}])
    client.send("configurationDone")
    assert client.event("stopped")["body"]["reason"] == "entry"
    client.send("continue", threadId=1)
    client.event("stopped")
    frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
    assert [(f["name"], f["line"]) for f in frames] == [("f (pc 9)", 21), ("(program) (pc 1)", 13)]
    client.send("stepOut", threadId=1)
    client.event("stopped")
    frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
    assert len(frames) == 1 and client.variables(0, "Names")["y"] == "21"
    client.send("reverseContinue", threadId=1)
    client.event("stopped")
    assert len(client.send("stackTrace", threadId=1)["body"]["stackFrames"]) == 2
    client.send("disconnect")
    assert client.close() == 0


def test_bad_requests_get_failed_responses_not_a_crash(client):
    client.send("initialize", adapterID="revasm")
    missing = client.send("launch", program=str(ROOT / "examples" / "nowhere.pal"))
    assert not missing["success"] and "no such file" in missing["message"]
    assert not client.send("threads2")["success"]
    assert "not an object" in client.send_raw("launch", [1, 2])["message"]
    assert not client.send("continue", threadId=1)["success"]  # nothing launched
    client.send("launch", program=str(BESSEL), grad=True)
    bad = client.send("setBreakpoints", source={"path": str(BESSEL)},
                      breakpoints=[{"line": 2}])["body"]["breakpoints"]
    assert bad[0]["verified"] is False and "no instruction" in bad[0]["message"]
    client.send("configurationDone")
    stopped = client.event("stopped")["body"]  # no breakpoint: the end of the forward pass
    assert stopped["reason"] == "gradient switch"
    assert "bad arguments" in client.send("scopes", frameId="top")["message"]
    scopes = client.send("scopes", frameId=0)["body"]["scopes"]
    assert "Gradient" in [s["name"] for s in scopes]
    assert client.variables(0, "Gradient")["dj2"] == "1.0"
    # references nothing gave: never answered as if they named a scope
    for reference in (99_999, 10**30, -4, 0):
        answer = client.send("variables", variablesReference=reference)
        assert not answer["success"] and "no such variables reference" in answer["message"]
    for frame in (-5, 1, 10**12):
        answer = client.send("scopes", frameId=frame)
        assert not answer["success"] and f"no frame {frame}" in answer["message"]
    answer = client.send("setVariable", variablesReference=10**6, name="x", value="1")
    assert not answer["success"] and "no such variables reference" in answer["message"]
    client.send("disconnect")
    assert client.close() == 0


def test_a_gradient_scope_is_no_reference_in_a_session_without_gradients(client):
    client.start(str(BESSEL))
    names = [s["name"] for s in client.send("scopes", frameId=0)["body"]["scopes"]]
    assert "Gradient" not in names
    answer = client.send("variables", variablesReference=3)  # where Gradient would be
    assert not answer["success"] and "no such variables reference" in answer["message"]
    client.send("disconnect")
    assert client.close() == 0


def test_a_compiled_python_program_is_debugged_by_its_python_lines(client):
    rfib = ROOT / "examples" / "nilang" / "rfib.py"
    client.send("initialize", adapterID="revasm")
    assert client.send("launch", program=f"{rfib}:rfib", set={"n": 4})["success"]
    answer = client.send("setBreakpoints", source={"path": str(rfib)},
                         breakpoints=[{"line": 19}])["body"]["breakpoints"]
    assert answer[0]["verified"] and answer[0]["line"] == 19
    client.send("configurationDone")
    assert client.event("stopped")["body"]["reason"] == "breakpoint"
    frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
    assert frames[0]["source"]["path"] == str(rfib) and frames[0]["line"] == 19
    assert frames[0]["name"].startswith("rfib ") and len(frames) >= 3
    inner = client.variables(0, "Names")
    assert inner["n"] in ("1", "2") and "n1" in inner
    assert "(variables)" in client.variables(1, "Names")  # saved on the stack, and it says so
    client.send("stepBack", threadId=1)
    client.event("stopped")
    line = client.send("stackTrace", threadId=1)["body"]["stackFrames"][0]["line"]
    assert line != 19
    client.send("disconnect")
    assert client.close() == 0


def test_next_steps_over_a_call_and_step_in_enters_it(client):
    client.start(str(PROCEDURE))

    def where() -> tuple[int, int]:
        frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
        return frames[0]["line"], len(frames)

    assert client.send("setExceptionBreakpoints", filters=[])["success"]
    answer = client.send("setFunctionBreakpoints", breakpoints=[{"name": "f"}, {"name": "g"}])
    assert [b["verified"] for b in answer["body"]["breakpoints"]] == [True, False]
    client.send("continue", threadId=1)
    assert client.event("stopped")["body"]["reason"] == "breakpoint"
    assert where() == (18, 1)  # the portal, reached by the jump (the call is not entered yet)
    client.send("setFunctionBreakpoints", breakpoints=[])
    client.send("reverseContinue", threadId=1)
    assert client.event("stopped")["body"]["reason"] == "beginning"
    for request, expected in (("stepIn", (13, 1)), ("next", (14, 1)), ("stepBack", (13, 1)),
                              ("stepIn", (19, 2)), ("stepOut", (14, 1))):
        assert client.send(request, threadId=1)["success"]
        assert client.event("stopped")["body"]["reason"] == "step"
        assert where() == expected, request
    assert client.variables(0, "Names")["y"] == "21"
    client.send("disconnect")
    assert client.close() == 0


def test_step_back_from_a_functions_first_line_stops_on_the_calling_line(client):
    """stepIn enters a compiled call at its first line; stepBack from there stops on the
    caller's line that made the call (one frame fewer), and from main's first line at START."""
    rfib = ROOT / "examples" / "nilang" / "rfib.py"
    assert client.start(f"{rfib}:rfib", set={"n": 4})["reason"] == "entry"

    def where() -> tuple[int, int]:
        frames = client.send("stackTrace", threadId=1)["body"]["stackFrames"]
        return frames[0]["line"], len(frames)

    assert where() == (12, 1)  # START, on the def line
    for request, expected in (("stepIn", (16, 2)), ("stepBack", (12, 1)), ("stepIn", (16, 2))):
        assert client.send(request, threadId=1)["success"]
        assert client.event("stopped")["body"]["reason"] == "step"
        assert where() == expected, request
    client.send("setBreakpoints", source={"path": str(rfib)}, breakpoints=[{"line": 21}])
    client.send("continue", threadId=1)
    assert client.event("stopped")["body"]["reason"] == "breakpoint"
    assert where() == (21, 2)
    client.send("setBreakpoints", source={"path": str(rfib)}, breakpoints=[])
    for request, expected in (("stepIn", (16, 3)), ("stepBack", (21, 2))):
        assert client.send(request, threadId=1)["success"]
        assert client.event("stopped")["body"]["reason"] == "step"
        assert where() == expected, request
    client.send("disconnect")
    assert client.close() == 0
