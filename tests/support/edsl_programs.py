"""Random well-formed eDSL programs that walk arrays: what the -O2 passes transform.

``random_program(seed)`` writes a ``@reversible`` function ``f(out: Loss, x, y, z, t,
s, n, u)`` over Fixed arrays (``x``, ``y`` of N elements, ``z`` of M x N, ``t`` of
angles), a Fixed scalar ``s`` and two Int inputs (``n`` a loop bound, ``u`` an index),
and a body drawn from the shapes the optimiser rewrites: element updates with affine
indices (``i``, ``i + 1``, ``N - 2 - i``, ``2 * i``, a counter ``k`` stepped by a
constant, ``u``), ``for`` loops over constant ranges (small ones are unrolled), variable
ranges (``range(n)``) and backward ranges, nested loops, 2-D elements, ROT and SWAP of
elements, ``if`` on an element, ancilla arrays in the frame, compute-copy-uncompute
routines and calls of a helper (inlined) and of a looping function (a portal call).
Every index stays inside its array, no statement names an element twice, and the loss
is a sum of products of distinct elements, so each program compiles for gradients.

``inputs(seed)`` draws the inputs.  Used by tests/compiler/test_levels.py.
"""
from __future__ import annotations

import random

N = 6
M = 3
K = 8  # angles in t

HEADER = f"""from revasm.compiler import (ROT, SWAP, Array, Fixed, Int, Loss, ancilla, free,
                              reversible, routine, sin)

N = {N}
M = {M}


@reversible
def helper(a: Fixed, b: Fixed):
    a += b * 0.375


@reversible
def walk(p: Array[Fixed, N], q: Array[Fixed, N], n: Int):
    for i in range(n):
        p[i] += q[i] * 0.25
    for i in range(N - 1):
        q[i + 1] -= p[i] * 0.125


"""

SIGNATURE = ("@reversible\ndef f(out: Loss, x: Array[Fixed, N], y: Array[Fixed, N], "
             "z: Array[Fixed, M, N], t: Array[Fixed, 8], s: Fixed, n: Int[0, 5], "
             "u: Int[0, 4]):\n")


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fresh = 0

    def name(self, prefix: str) -> str:
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    def constant(self) -> str:
        return self.rng.choice(["0.5", "0.25", "-0.75", "1.5", "0.125"])

    def index(self, loops: list[tuple[str, int, int]], counters: list[str]) -> str:
        """An index in 0..N-2 (so ``+ 1`` stays inside): a loop variable, a shifted or
        mirrored one, a stepped counter, ``u`` or a constant."""
        r = self.rng.random()
        if loops and r < 0.6:
            var, low, high = self.rng.choice(loops)  # var in low..high-1, inside 0..N-2
            forms = [var]
            if high <= N - 2:
                forms.append(f"{var} + 1")
            if low >= 1:
                forms.append(f"{var} - 1")
            forms.append(f"N - 2 - {var}")
            if 2 * (high - 1) <= N - 2:
                forms.append(f"2 * {var}")
            return self.rng.choice(forms)
        if counters and r < 0.75:
            return self.rng.choice(counters)
        if r < 0.85:
            return "u"
        return str(self.rng.randrange(N - 1))

    def element(self, array: str, loops: list[tuple[str, int, int]], counters: list[str],
                rows: list[str]) -> str:
        index = self.index(loops, counters)
        if array == "z":
            row = self.rng.choice(rows + [str(self.rng.randrange(M))])
            return f"z[{row}, {index}]"
        return f"{array}[{index}]"

    def statement(self, depth: int, loops: list[tuple[str, int, int]], counters: list[str],
                  rows: list[str], locals_: list[str]) -> list[str]:
        rng = self.rng
        kind = rng.choices(["update", "rot", "swap", "for", "if", "routine", "call",
                            "counter", "local"],
                           weights=[6, 2, 1, 3 if depth < 2 else 0, 1 if depth < 2 else 0,
                                    1, 1, 1 if depth < 2 else 0, 1 if depth < 1 else 0])[0]
        if kind == "update":  # an ancilla array of the frame is read, never written
            target = rng.choice(["x", "y", "z"])
            source = rng.choice([a for a in ["x", "y", "z"] + locals_ if a != target])
            lhs = self.element(target, loops, counters, rows)
            rhs = self.element(source, loops, counters, rows)
            expr = rng.choice([f"{rhs} * {self.constant()}", f"s * {rhs}", f"sin({rhs})",
                               self.constant(), f"{rhs} * 0.5 - s * 0.25"])
            return [f"{lhs} {rng.choice('+-')}= {expr}"]
        if kind == "rot":
            index = self.index(loops, counters)
            angles = [f"t[{rng.randrange(K)}]", "t[u]"] + [f"t[{k}]" for k in counters]
            array = rng.choice(["x", "y"])
            return [f"ROT({array}[{index}], {array}[{index} + 1], {rng.choice(angles)})"]
        if kind == "swap":
            a, b = rng.sample(["x", "y", "z"], 2)
            return [f"SWAP({self.element(a, loops, counters, rows)}, "
                    f"{self.element(b, loops, counters, rows)})"]
        if kind == "for":
            var = self.name("i")
            shape = rng.choice(["small", "small", "long", "variable", "backward", "rows"])
            if shape == "small":
                low = rng.randrange(0, 2)
                high = rng.randrange(low + 1, N - 1)
                head, bounds = f"for {var} in range({low}, {high}):", (low, high)
            elif shape == "long":
                head, bounds = f"for {var} in range(N - 1):", (0, N - 1)
            elif shape == "variable":
                head, bounds = f"for {var} in range(n):", (0, N - 1)  # n in 0..N-1
            elif shape == "backward":
                head, bounds = f"for {var} in range(N - 2, -1, -1):", (0, N - 1)
            else:
                head = f"for {var} in range(M):"
                body = self.block(depth + 1, loops, counters, rows + [var], locals_)
                return [head] + ["    " + line for line in body]
            body = self.block(depth + 1, loops + [(var, *bounds)], counters, rows, locals_)
            return [head] + ["    " + line for line in body]
        if kind == "if":
            test = self.element("y", loops, counters, rows)
            then = self.block(depth + 1, loops, counters, rows, [], avoid="y")
            orelse = self.block(depth + 1, loops, counters, rows, [], avoid="y")
            return ([f"if {test} > 0.0:"] + ["    " + line for line in then] + ["else:"]
                    + ["    " + line for line in orelse])
        if kind == "routine":
            a = self.name("a")
            source = self.element(rng.choice(["x", "z"]), loops, counters, rows)
            target = self.element("y", loops, counters, rows)
            return ["with routine():", f"    {a} = ancilla(0.0)",
                    f"    {a} += {source} * {self.constant()}",
                    f"{target} += {a} * s", "~routine"]
        if kind == "call":
            if rng.random() < 0.5:
                a, b = self.element("x", loops, counters, rows), \
                    self.element("y", loops, counters, rows)
                return [f"{rng.choice(['', '~'])}helper({a}, {b})"]
            return [f"{rng.choice(['', '~'])}walk(x, y, n)"]
        if kind == "counter":
            # a counter stepped by a constant in a loop: an induction pointer's other kind
            k = "k0" if "k0" not in counters else self.name("k")
            low = rng.randrange(0, 2)
            high = rng.randrange(low + 1, N - 1)
            var = self.name("i")
            body = self.block(depth + 1, loops + [(var, low, high)], counters + [k], rows,
                              locals_)
            return ([f"{k} = ancilla(0)", f"for {var} in range({low}, {high}):"]
                    + ["    " + line for line in body] + [f"    {k} += 1",
                                                          f"free({k}, {high - low}, checked=True)"])
        # an ancilla array in the frame, filled from t (only ever read) and emptied again
        w = self.name("w")
        var = self.name("i")
        inner = self.block(depth + 1, loops, counters, rows, locals_ + [w])
        return ([f"{w} = ancilla(Array[Fixed, N])", f"for {var} in range(N):",
                 f"    {w}[{var}] += t[{var}] * 0.5"] + inner +
                [f"for {var} in range(N):", f"    {w}[{var}] -= t[{var}] * 0.5",
                 f"free({w}, checked=True)"])

    def block(self, depth: int, loops: list[tuple[str, int, int]], counters: list[str],
              rows: list[str], locals_: list[str], avoid: str = "") -> list[str]:
        lines: list[str] = []
        for _ in range(self.rng.randrange(1, 4)):
            for _attempt in range(20):
                code = self.statement(depth, loops, counters, rows, locals_)
                if not avoid or not any(f"{avoid}[" in line or "walk(" in line
                                        or "helper(" in line or "SWAP(" in line
                                        for line in code):
                    break
            else:
                code = [f"x[0] += {self.constant()}"]
            lines += code
        return lines


def random_program(seed: int) -> str:
    """The source of one program (entry ``f``)."""
    generator = _Generator(seed)
    body = generator.block(0, [], [], [], [])
    loss = ["for i in range(N):", "    out += x[i] * y[i]", "for i in range(N):",
            "    out += z[1, i] * x[i]", "out += s * y[0]"]
    return HEADER + SIGNATURE + "\n".join("    " + line for line in body + loss) + "\n"


def inputs(seed: int) -> dict:
    """Inputs for ``f``: reals in [-1, 1), ``n`` and ``u`` inside their ranges."""
    rng = random.Random(seed ^ 0x5EED)

    def real() -> float:
        return rng.randrange(-64, 64) / 64

    return {"x": [real() for _ in range(N)], "y": [real() for _ in range(N)],
            "z": [[real() for _ in range(N)] for _ in range(M)],
            "t": [real() for _ in range(K)], "s": real(),
            "n": rng.randrange(N), "u": rng.randrange(N - 1)}
