"""Line steps over calls in compiled programs (Python and Janus), both ways.

``step`` and ``reverse-step`` stop at the same places, so going back retraces going
forward stop by stop: into a call (the body's first line; the call's entry on the
``def``/``procedure`` line is no stop), out of it (the remainder of the calling line after
the return, which begins with the landing of the return jump), and at the first line of
``main``, whose step back is START.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from revasm.debug import Session, SourceMap
from revasm.debug.commands import Interpreter
from revasm.loading import load_program
from revasm.sim.host import initial_words

ROOT = Path(__file__).resolve().parents[2]
RFIB = ROOT / "examples" / "nilang" / "rfib.py"
FIB_PAIR = ROOT / "examples" / "janus" / "fib_pair.ja"


def compiled_session(path: Path, function: str | None, inputs: dict | None = None) -> Session:
    loaded = load_program(f"{path}:{function}" if function else str(path))
    registers, memory = initial_words(loaded.image, inputs or {})
    return Session(loaded.image, registers=registers, memory=memory,
                   source=SourceMap(loaded.image, loaded.program))


def place(session: Session) -> tuple[int, int, int | None, int]:
    """Time, PC, the user's line and the call depth: where a stop is."""
    return session.time, session.pc, session.source.line_of(session.pc), len(session.stack)


def go_to(session: Session, time: int) -> None:
    while session.time < time:
        session.step()
    while session.time > time:
        session.step(backward=True)


@pytest.mark.parametrize(("path", "function", "inputs"), [
    (RFIB, "rfib", {"n": 5}),
    (FIB_PAIR, None, {"n": 4}),
    (ROOT / "examples" / "nilang" / "rfibn.py", None, {"z": 3}),
])
@pytest.mark.parametrize("over", [False, True])
def test_reverse_step_retraces_the_stops_of_step(path, function, inputs, over):
    """From every stop of `step` (`next`), `reverse-step` (`reverse-next`) stops at the stop
    before it: calls entered and left, recursion, the remainder of a calling line."""
    session = compiled_session(path, function, inputs)
    if over:
        session.step_line()  # into main: `next` from START would run main through whole
    stops = [place(session)]
    while len(stops) < 150 and session.step_line(over=over).reason == "step":
        stops.append(place(session))
    if over:
        assert len(stops) >= 3 and {depth for *_, depth in stops} <= {0, 1}
    else:
        assert len(stops) > 20 and max(depth for *_, depth in stops) >= 3
    for before, after in zip(stops[-2::-1], stops[:0:-1]):
        if over and after[3] < before[3]:
            continue  # `next` out of a call: back from there, `reverse-next` runs it whole
        go_to(session, after[0])
        assert session.step_line(backward=True, over=over).reason == "step"
        assert place(session) == before, f"back from {after}"


@pytest.mark.parametrize(("path", "function", "call_line", "first_line"), [
    (RFIB, "rfib", 21, 16),      # rfib(out, n1) -> n1 += n - 1
    (FIB_PAIR, None, 19, 5),     # call fib(a, b, n) -> if n = 0 then
])
def test_step_back_from_a_functions_first_line_stops_on_the_calling_line(
        path, function, call_line, first_line):
    session = compiled_session(path, function, {"n": 4})
    debugger = Interpreter(session)

    def stop(command: str) -> dict:
        [event] = debugger.execute(command)
        assert event["event"] == "stopped", event
        return event

    debugger.execute(f"break :{call_line}")
    called = stop("continue")
    assert (called["reason"], called["line"]) == ("breakpoint", call_line)
    debugger.execute("delete")
    entered = stop("step")  # into the call: its first line, not its def/procedure line
    assert (entered["line"], entered["depth"]) == (first_line, called["depth"] + 1)
    for back in ("reverse-step", "reverse-next"):
        event = stop(back)
        assert event["reason"] == "step"
        assert (event["line"], event["depth"], event["time"], event["pc"]) == \
            (call_line, called["depth"], called["time"], called["pc"]), back
        assert stop("step")["time"] == entered["time"]
    event = stop("reverse-finish")  # back to the call's jump, in the calling line
    assert (event["line"], event["depth"]) == (call_line, called["depth"])
    assert called["time"] < event["time"] < entered["time"]


@pytest.mark.parametrize(("path", "function", "first_line"), [(RFIB, "rfib", 16),
                                                               (FIB_PAIR, None, 19)])
def test_step_back_from_the_first_line_of_main_stops_at_start(path, function, first_line):
    session = compiled_session(path, function, {"n": 4})
    debugger = Interpreter(session)
    [entered] = debugger.execute("step")
    assert (entered["line"], entered["depth"]) == (first_line, 1)
    for back in ("reverse-step", "reverse-next"):
        [event] = debugger.execute(back)
        assert (event["reason"], event["pc"], event["time"], event["depth"]) == \
            ("step", 0, 0, 0), back
        debugger.execute("step")
    debugger.execute("reverse-step")
    [event] = debugger.execute("reverse-step")
    assert event["reason"] == "beginning" and event["time"] == 0
