"""DAP input bounds (issue #40): malformed headers, bodies and out-of-order requests get an
error (a ``success: false`` response, or an ``output`` event for an unreadable message) and
never end the server; the debugger's counts are bounded before they are trusted."""
from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

from revasm.cli.commands_debug import _dap_session, open_session
from revasm.debug.commands import Interpreter
from revasm.debug.dap import MAX_BODY, Adapter, read_message, serve

FIB = Path(__file__).resolve().parents[2] / "examples" / "fib.pal"


def frame(body: bytes | str, length: int | str | None = None) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    size = len(data) if length is None else length
    return b"Content-Length: " + str(size).encode() + b"\r\n\r\n" + data


def request(seq: int, command: object, arguments: object = None) -> bytes:
    message: dict = {"seq": seq, "type": "request", "command": command}
    if arguments is not None:
        message["arguments"] = arguments
    return frame(json.dumps(message))


def replies(data: bytes) -> list[dict]:
    out = io.BytesIO()
    serve(io.BytesIO(data), out, _dap_session)
    stream = io.BytesIO(out.getvalue())
    messages = []
    while (message := read_message(stream)) is not None:
        messages.append(message)
    return messages


MALFORMED = [
    b"Content-Length: abc\r\n\r\n",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 1000000000000\r\n\r\n",
    b"X-Long: " + b"a" * 5000 + b"\r\n\r\n",
    b"".join(b"X-Header: 1\r\n" for _ in range(100)) + b"\r\n",
    frame("[" * 100000 + "]" * 100000),
    frame("not json\r\n"),
    frame(b"\xff\xfe\r\n"),
    frame("[1, 2, 3]"),
    frame(json.dumps({"type": "response", "seq": 1})),
    b"\r\n",
]
OUT_OF_ORDER = [
    (2, 5, None), (3, "initialize", [1, 2]), (4, "pause", {}), (5, "configurationDone", {}),
    (6, "stackTrace", {}), (7, "setVariable", {"name": "$1", "value": "1"}),
    (8, "variables", {"variablesReference": "x"}), (9, "launch", {"program": 7}),
    (10, "launch", {"program": str(FIB), "set": ["$1=99999999999"]}),
    (11, "setBreakpoints", {"source": "nope", "breakpoints": [3]}),
    (12, "evaluate", {"expression": "$1"}),
]


def test_malformed_and_out_of_order_messages_get_errors_and_the_server_lives_on():
    data = b"".join(MALFORMED)
    data += b"".join(request(seq, command, arguments) for seq, command, arguments in OUT_OF_ORDER)
    data += request(20, "initialize", {}) + request(21, "disconnect", {})
    messages = replies(data)
    unreadable = [m for m in messages if m.get("event") == "output"
                  and "unreadable message" in m["body"]["output"]]
    assert len(unreadable) >= 6  # each malformed frame reported, none fatal
    responses = {m["request_seq"]: m for m in messages if m["type"] == "response"}
    for seq, _, _ in OUT_OF_ORDER:
        assert responses[seq]["success"] is False and responses[seq]["message"], seq
    assert "does not fit a 32-bit word" in responses[10]["message"]
    assert responses[20]["success"] and responses[21]["success"]
    assert messages[-1] == {**messages[-1], "type": "event", "event": "terminated"}
    assert not any("internal error" in json.dumps(m) for m in messages)


def test_a_body_longer_than_the_bound_is_refused_without_reading_it():
    stream = io.BytesIO(b"Content-Length: %d\r\n\r\n" % (MAX_BODY + 1))
    try:
        read_message(stream)
    except ValueError as exc:
        assert "is not a length from 0 to" in str(exc)
    else:
        raise AssertionError("an oversized body was accepted")


COMMANDS = ["initialize", "launch", "configurationDone", "setBreakpoints",
            "setFunctionBreakpoints", "setExceptionBreakpoints", "continue", "reverseContinue",
            "next", "stepIn", "stepOut", "stepBack", "pause", "threads", "stackTrace",
            "scopes", "variables", "setVariable", "evaluate", "nonsense"]
GARBAGE: list[object] = [None, 0, -1, 10**30, "x", "$1", [], {}, [1], {"a": 1}, True, 1.5]


def _arguments(rng: random.Random, command: str) -> object:
    if rng.random() < 0.2:
        return rng.choice(GARBAGE)
    if command == "launch":
        return {"program": str(FIB), "stopOnEntry": rng.random() < 0.5,
                "display": rng.choice(["values", "words", "values"])}
    keys = ["variablesReference", "frameId", "name", "value", "expression", "source",
            "breakpoints", "startFrame", "levels", "line", "format", "display"]
    return {key: rng.choice(GARBAGE) for key in rng.sample(keys, rng.randint(0, 4))}


def test_random_request_sequences_are_each_answered_once_without_an_internal_error():
    rng = random.Random(40)
    for _ in range(150):
        sent: list[dict] = []
        adapter = Adapter(sent.append, _dap_session)
        for seq in range(1, 9):
            command = rng.choice(COMMANDS) if seq > 1 or rng.random() < 0.5 else "launch"
            adapter.handle({"seq": seq, "type": "request", "command": command,
                            "arguments": _arguments(rng, command)})
            answers = [m for m in sent if m["type"] == "response" and m["request_seq"] == seq]
            assert len(answers) == 1, (command, sent[-3:])
            assert "internal error" not in answers[0].get("message", ""), answers[0]
            json.dumps(sent)


def test_the_dap_server_process_survives_garbage_and_ends_at_the_end_of_input():
    data = b"".join(MALFORMED) + request(1, "initialize", {}) + request(2, "disconnect", {})
    done = subprocess.run([sys.executable, "-m", "revasm", "dap"], input=data,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    messages = []
    stream = io.BytesIO(done.stdout)
    while (message := read_message(stream)) is not None:
        messages.append(message)
    assert [m["success"] for m in messages if m["type"] == "response"] == [True, True]


def test_the_debuggers_counts_are_bounded_before_they_run():
    interpreter = Interpreter(open_session(str(FIB), max_steps=1000))
    [memory] = interpreter.execute("memory 0 999999999999")
    assert memory["event"] == "error" and "at most 65536" in memory["message"]
    [step] = interpreter.execute("stepi 99999999999999")
    assert step["event"] == "error" and "at most 1000" in step["message"]
    [loop] = interpreter.execute("stepi 1000")
    assert loop.get("reason") in ("limit", "end"), loop
