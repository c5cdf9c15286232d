"""A compiled run with no step limit stops on Ctrl-C (``CompiledLanes.run_until_stopped``
cuts it into kernel calls of a fraction of a second: Python's SIGINT handler runs only
between them), and gives the same bits as one uncut run (issue #41)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import revasm

ROOT = Path(__file__).resolve().parents[3]

pytest.importorskip("numba")


def test_a_run_with_no_limit_is_cut_into_calls_and_keeps_its_bits(monkeypatch):
    from revasm.sim.compiled.machine import CompiledLanes

    calls = []
    original = CompiledLanes.call_kernel

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompiledLanes, "call_kernel", counted)
    image = revasm.load(ROOT / "examples" / "fib.pal")
    unlimited = revasm.run(image, {"n": 200_000}, engine="compiled")
    cut = len(calls)
    calls.clear()
    limited = revasm.run(image, {"n": 200_000}, engine="compiled", max_steps=10**9)
    assert cut > 1 and len(calls) == 1  # 1 200 008 steps: more than the first slice
    assert unlimited.status == limited.status == "finished"
    assert (unlimited.steps, unlimited.registers, unlimited.memory) == \
        (limited.steps, limited.registers, limited.memory)


SCRIPT = """
import os, signal, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # (a background job ignores it)
import revasm
image = revasm.load({fib!r}, 64)
revasm.run(image, {{"n": 10}}, engine="compiled")  # the kernel built before the clock starts
threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    revasm.run(image, {{"n": -1}}, engine="compiled")  # 2^64 iterations
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_stops_a_compiled_run_that_would_not_end():
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(fib=str(ROOT / "examples" /
                                                                      "fib.pal"))],
                          capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "interrupted", proc.stderr
