"""`revasm dap --port N`: DAP over TCP on localhost, one session per connection, errors as
DAP answers (issue #40's bounds hold on a socket too), a clean end on Ctrl-C or SIGTERM."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from revasm.cli.commands_debug import dap_session
from revasm.debug.dap import LOCALHOST, TcpServer, read_message

ROOT = Path(__file__).resolve().parents[2]
BESSEL = ROOT / "examples" / "bessel_j2.pal"
FIB = ROOT / "examples" / "fib.pal"
LOOPS = ROOT / "examples" / "nested_loops.pal"


class SocketClient:
    """A DAP client on one TCP connection."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection((LOCALHOST, port), timeout=60)
        self.reader = self.socket.makefile("rb")
        self.seq = 0
        self.events: list[dict] = []

    def send_bytes(self, data: bytes) -> None:
        self.socket.sendall(data)

    def send(self, command: str, **arguments) -> dict:
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments}).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        while True:
            message = self.read()
            assert message is not None, "the server closed the connection"
            if message["type"] == "response":
                assert message["request_seq"] == self.seq and message["command"] == command
                return message
            self.events.append(message)

    def read(self) -> dict | None:
        return read_message(self.reader)

    def event(self, name: str) -> dict:
        for index, event in enumerate(self.events):
            if event.get("event") == name:
                return self.events.pop(index)
        while True:
            message = self.read()
            assert message is not None, f"the connection ended before {name!r}"
            if message.get("event") == name:
                return message
            self.events.append(message)

    def close(self) -> None:
        self.reader.close()
        self.socket.close()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_server() -> tuple[subprocess.Popen, int]:
    # SIGINT as a terminal gives it: a run from a shell's background job has it ignored,
    # and the server would inherit that and never see the Ctrl-C the test sends
    process = subprocess.Popen([sys.executable, "-m", "revasm", "dap", "--port", "0"],
                               preexec_fn=_default_sigint,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stderr is not None
    line = process.stderr.readline().decode()
    assert f"listening on {LOCALHOST}:" in line, line
    port = int(line.split(f"{LOCALHOST}:")[1].split()[0])
    return process, port


@pytest.fixture
def server():
    process, port = _start_server()
    yield process, port
    if process.poll() is None:
        process.kill()
        process.wait()


def test_two_connections_are_two_sessions_and_ctrl_c_ends_the_server_cleanly(server):
    process, port = server
    first = SocketClient(port)
    assert first.send("initialize", adapterID="revasm")["body"]["supportsStepBack"] is True
    first.event("initialized")
    assert first.send("launch", program=str(BESSEL), set={"x": 1.0})["success"]
    answer = first.send("setBreakpoints", source={"path": str(BESSEL)},
                        breakpoints=[{"line": 37}])["body"]["breakpoints"]
    assert answer[0]["verified"]
    first.send("configurationDone")
    assert first.event("stopped")["body"]["reason"] == "breakpoint"

    second = SocketClient(port)  # while the first session is open: a session of its own
    second.send("initialize", adapterID="revasm")
    assert second.send("launch", program=str(FIB), stopOnEntry=True)["success"]
    second.send("configurationDone")
    assert second.event("stopped")["body"]["reason"] == "entry"
    # malformed frames on the socket: reported, and the session answers on
    second.send_bytes(b"Content-Length: abc\r\n\r\n" + b"Content-Length: 3\r\n\r\n[1]")
    assert second.send("threads")["success"]
    unreadable = [e for e in second.events if e.get("event") == "output"
                  and "unreadable message" in e["body"]["output"]]
    assert len(unreadable) == 2
    assert not second.send("nonsense")["success"]
    second.send("disconnect")
    second.event("terminated")
    assert second.read() is None  # the server closed this connection, and only this one
    second.close()

    first.send("stepBack", threadId=1)
    assert first.event("stopped")["body"]["reason"] == "step"
    frames = first.send("stackTrace", threadId=1)["body"]["stackFrames"]
    assert frames[0]["line"] == 36 and frames[0]["source"]["path"] == str(BESSEL)
    first.close()  # the client goes away without disconnect: the server lives on

    third = SocketClient(port)
    assert third.send("initialize", adapterID="revasm")["success"]
    third.close()

    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0
    assert process.stderr is not None
    tail = process.stderr.read().decode()
    assert "stopped after 3 session(s)" in tail and "Traceback" not in tail


def test_sigterm_ends_the_server_with_a_session_open(server):
    process, port = server
    client = SocketClient(port)
    client.send("initialize", adapterID="revasm")
    client.event("initialized")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert client.read() is None  # its connection is shut down
    client.close()


def test_a_port_in_use_is_an_error_not_a_traceback():
    with socket.socket() as taken:
        taken.bind((LOCALHOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "revasm", "dap", "--port", str(port)],
                              capture_output=True, timeout=60, cwd=ROOT)
    assert done.returncode == 1
    assert f"cannot listen on {LOCALHOST}:{port}" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()


def test_the_server_listens_on_localhost_only_and_outlives_a_dropped_client():
    server = TcpServer(0, dap_session)
    assert server.port and server.host == LOCALHOST
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        dropped = socket.create_connection((LOCALHOST, server.port), timeout=30)
        dropped.sendall(b"Content-Length: 500\r\n\r\n{\"seq\": 1")  # half a message, then gone
        dropped.close()
        client = SocketClient(server.port)
        assert client.send("initialize", adapterID="revasm")["success"]
        client.send("disconnect")
        client.event("terminated")
        client.close()
    finally:
        server.close()
    thread.join(10)
    assert not thread.is_alive() and server.sessions == 2


@pytest.mark.long  # in make test, twice, its worker died during it (alone it passes): see below
def test_closing_the_server_stops_a_session_in_the_middle_of_a_long_continue():
    """(Run in ``make test``'s workers, after hundreds of other tests, this test's worker
    process died during it twice -- "node down: Not properly terminated" -- and xdist then
    waited for ever; alone, and with its file, it passes. Until that is understood it runs in
    ``make test-long`` only.)"""
    server = TcpServer(0, dap_session)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = SocketClient(server.port)
    # a million iterations: many seconds of the debugger's machine, still running at the
    # close (kept that small: a run the close failed to stop would go on beside later tests)
    assert client.send("launch", program=str(LOOPS), set={"n": 1000, "m": 1000})["success"]
    assert client.send("configurationDone")["success"]  # the run starts after the answer
    time.sleep(0.5)
    started = time.monotonic()
    server.close(timeout=20)
    assert server.live_sessions == 0 and time.monotonic() - started < 10
    thread.join(10)
    assert not thread.is_alive()
    client.close()
