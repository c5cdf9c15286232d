"""`make demo`: the main job end to end on an embedded example.

compile (a @reversible Python function) -> assemble -> run forward and backward
-> gradient checked against float64 calculus -> op-count/energy report -> the
same binary on the RTL, in lockstep with the reference simulator.  Each step is
the `revasm` command a user would type, printed before it runs.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = '''\
from revasm.compiler import Fixed, Loss, ancilla, free, reversible, routine, sin, sq


@reversible
def apex(loss: Loss, x: Fixed, y: Fixed):
    """loss += (x / y)^2 * sin(x), by compute-copy-uncompute."""
    q = ancilla(0.0)
    q2 = ancilla(0.0)
    s = ancilla(0.0)
    with routine():
        q += x / y
        q2 += sq(q)
        s += sin(x)
    loss += q2 * s
    ~routine
    free(s, 0.0)
    free(q2, 0.0)
    free(q, 0.0)
'''

X, Y = 0.3, 0.5
INPUTS = ["--set", f"x={X}", "--set", f"y={Y}"]


def revasm(*args: str, capture: bool = False) -> str:
    """Run one revasm command, echoing it; stop the demo if it fails."""
    print(f"\n$ revasm {' '.join(args)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "revasm", *args], text=True,
                            capture_output=capture)
    if result.returncode:
        if capture:
            print(result.stdout, result.stderr)
        raise SystemExit(f"demo: `revasm {args[0]}` failed with exit code {result.returncode}")
    if capture:
        print(result.stdout.rstrip())
    return result.stdout if capture else ""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "apex.py").write_text(SOURCE)
        pal, image = str(work / "apex.pal"), str(work / "apex.bin")
        print("The embedded example: loss = (x/y)^2 sin(x) as a reversible program.")
        revasm("compile", f"{work / 'apex.py'}:apex", "-o", pal, "--width", "64")
        revasm("asm", pal, "-o", image)
        revasm("run", image, *INPUTS)
        revasm("check", pal, *INPUTS, "--random", "20")
        out = json.loads(revasm("grad", pal, *INPUTS, "--json", capture=True))
        expected = {
            "x": 2 * X / Y**2 * math.sin(X) + (X / Y) ** 2 * math.cos(X),
            "y": -2 * X**2 / Y**3 * math.sin(X),
        }
        for name, value in expected.items():
            error = abs(out["gradient"][name] - value)
            print(f"  d loss / d {name} = {out['gradient'][name]:.9f}   float64 calculus: "
                  f"{value:.9f}   |error| = {error:.1e}")
            if error > 1e-6:
                raise SystemExit(f"demo: gradient of {name} is off by {error}")
        revasm("report", pal, *INPUTS, "--grad")
        try:
            import amaranth  # noqa: F401
        except ImportError:
            print("\n(the RTL step needs the 'rtl' extra: pip install 'revasm[rtl]')")
        else:
            revasm("rtl", "sim", image, *INPUTS)
        print("\ndemo: every step agreed.")


if __name__ == "__main__":
    main()
