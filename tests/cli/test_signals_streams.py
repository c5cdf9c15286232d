"""Signals and streams (issue #40): Ctrl-C exits 130 saying "interrupted" and what was kept,
in text and JSON mode; a ``--json`` debug session still ends with its ``exit`` event; an
output stream that cannot be written (a full disk, a closed pipe) is reported as such, never
as an internal error.  Every test runs ``revasm`` in a subprocess and signals it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIB = ROOT / "examples" / "fib.pal"
AB = ROOT / "examples" / "ab.csv"
MULTIPLY = ROOT / "examples" / "multiply.pal"
#: a run of some 10^10 steps: it is still running when the signal comes
LONG = ["--set", "n=2000000000", "--max-steps", "1000000000000", "--engine", "reference"]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _default_sigint() -> None:
    """A child of a shell's background job inherits SIGINT ignored; Python then never
    raises KeyboardInterrupt.  The terminal's Ctrl-C is the default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: object, stdin: int | None = subprocess.DEVNULL, stdout: object = None
          ) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "revasm", *map(str, args)], stdin=stdin,
                            stdout=subprocess.PIPE if stdout is None else stdout,
                            stderr=subprocess.PIPE, preexec_fn=_default_sigint, cwd=ROOT)


def interrupt(process: subprocess.Popen, after: float = 4.0) -> tuple[str, str]:
    time.sleep(after)
    assert process.poll() is None, "the command ended before the signal"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return (out or b"").decode(), err.decode()


@pytest.mark.parametrize("mode", ["text", "json"])
def test_ctrl_c_exits_130_saying_interrupted_and_what_was_kept(mode):
    process = start("run", FIB, *LONG, *(["--json"] if mode == "json" else []))
    out, err = interrupt(process)
    assert process.returncode == 130
    assert "revasm: interrupted: every output file written so far is kept" in err
    assert "Aborted!" not in err and "Traceback" not in err
    if mode == "json":
        error = json.loads(out.strip().splitlines()[-1])
        assert error["exit_code"] == 130 and error["error"]["kind"] == "interrupted"
        assert "interrupted" in error["error"]["message"]


def test_an_interrupted_chunked_batch_says_its_chunks_are_kept(tmp_path):
    inputs = tmp_path / "in.csv"
    inputs.write_text("n\n" + "2000000000\n" * 4)
    out = tmp_path / "out.parquet"
    process = start("batch", FIB, "--inputs", inputs, "-o", out, "--chunk-lanes", 2,
                    "--engine", "reference", "--max-steps", 10**12)
    _, err = interrupt(process, after=6.0)
    assert process.returncode == 130
    assert f"the chunks written so far are kept in {out}" in err


def test_a_piped_json_debug_session_ends_with_its_exit_event_on_ctrl_c_while_waiting():
    process = start("debug", FIB, "--json", stdin=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"stepi 2\n")
    process.stdin.flush()
    first = [json.loads(process.stdout.readline()) for _ in range(2)]
    assert [e["event"] for e in first] == ["start", "stopped"]
    out, err = interrupt(process, after=1.0)  # waiting for the next line
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1]["event"] == "exit" and lines[-1]["interrupted"] is True
    assert lines[-1]["time"] == 2 and process.returncode == 130
    assert "revasm: interrupted" in err and "Traceback" not in err


def test_a_json_debug_session_interrupted_mid_command_stops_between_instructions():
    process = start("debug", FIB, "--set", "n=2000000000", "--max-steps", 10**12, "--json",
                    stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(b"continue\nstepi\n")
    process.stdin.flush()
    out, _ = interrupt(process, after=6.0)
    lines = [json.loads(line) for line in out.splitlines()]
    stopped = [e for e in lines if e["event"] == "stopped"]
    assert stopped[-1]["reason"] == "interrupted" and stopped[-1]["input"] == "continue"
    assert lines[-1]["event"] == "exit" and lines[-1]["interrupted"] is True
    assert lines[-1]["time"] == stopped[-1]["time"] > 0  # the stepi after it did not run
    assert process.returncode == 130


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("run", FIB), ("run", FIB, "--json"),
                                  ("run", FIB, "--trace"), ("disasm", FIB),
                                  ("debug", FIB, "--json"),
                                  # (a compilation ends its process without freeing the
                                  # program, revasm/leftovers.py: still exit 1, saying so)
                                  ("compile", ROOT / "examples" / "janus" / "fib_pair.ja")])
def test_a_full_disk_on_stdout_is_reported_as_such(args):
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "revasm", *map(str, args)],
                              stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
                              cwd=ROOT, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "revasm: error: cannot write the output: no space left on the device" in err
    assert "internal error" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("args", [("run", FIB, "--trace"), ("run", FIB, "--trace", "--json"),
                                  ("debug", FIB, "--json")])
def test_a_closed_pipe_on_stdout_is_reported_as_such(args):
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first byte
    try:
        done = subprocess.run([sys.executable, "-m", "revasm", *map(str, args)],
                              stdin=subprocess.DEVNULL, stdout=write, stderr=subprocess.PIPE,
                              cwd=ROOT, timeout=120)
    finally:
        os.close(write)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "revasm: error: cannot write the output: the reader closed it (broken pipe)" in err
    assert "internal error" not in err and "Exception ignored" not in err


SHOWS = """;; pendulum pal file
        start
        li     $2 100000
top:    bne    $1 $0 bottom
        addi   $3 1
        show   $3
        addi   $1 1
bottom: bne    $1 $2 top
        finish
"""


@pytest.mark.parametrize("unbuffered", [True, False])
@pytest.mark.parametrize("json_mode", [True, False])
def test_a_pipe_closed_after_part_of_the_output_is_reported_also_unbuffered(
        tmp_path, unbuffered, json_mode):
    """The reader takes the first bytes and goes.  Under PYTHONUNBUFFERED (or ``python
    -u``) CPython's text layer dropped the rest of a write the pipe took only part of, and
    reported it whole: the 0.7 MB ``--json`` object was cut short, with exit 0 and no
    word."""
    program = tmp_path / "shows.pal"
    program.write_text(SHOWS)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    process = subprocess.Popen(
        [sys.executable, "-m", "revasm", "run", str(program), *(["--json"] if json_mode else [])],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
        env=env)
    head = process.stdout.read(10)
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1, err
    assert head.startswith(b'{"status":' if json_mode else b"1\n2\n")
    assert "revasm: error: cannot write the output: the reader closed it (broken pipe)" in err
    assert "internal error" not in err and "Exception ignored" not in err
