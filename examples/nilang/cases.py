"""The NiLang examples with inputs and float64 references (used by tests and counts.py).

Each case: the file and entry function, inputs, a float64 reference of the
outputs, and the tolerance at each word width with its reason.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


@dataclass
class Case:
    name: str
    file: str
    entry: str
    inputs: dict[str, Any]
    reference: Callable[[dict[str, Any]], dict[str, Any]]
    #: absolute tolerance per width (values agree with float64 within this)
    tolerance: dict[int, float]
    why: str = ""
    loss: str | None = None
    wrt: list[str] | None = field(default=None)

    @property
    def path(self) -> Path:
        return HERE / self.file


def _fib(n: int) -> int:
    a, b = 1, 1  # NiLang's rfib: fib(n) = 1 for n <= 2
    for _ in range(max(n - 2, 0)):
        a, b = b, a + b
    return b if n > 2 else 1


def _rfibn(z: int) -> int:
    n = 0
    while _fib(n) < z:
        n += 1
    return n


def _bessel_j2(z: float) -> float:
    return sum((-1) ** k * (z / 2) ** (2 * k + 2) / (math.factorial(k) * math.factorial(k + 2))
               for k in range(40))


def _umm(x, theta):
    y = list(x)
    n = len(y)
    k = 0
    for j in range(n):
        for i in range(n - 2, j - 1, -1):
            a, b = y[i], y[i + 1]
            c, s = math.cos(theta[k]), math.sin(theta[k])
            y[i], y[i + 1] = a * c - b * s, a * s + b * c
            k += 1
    return y


def _qr(a):
    q, r = np.linalg.qr(np.array(a, dtype=float))
    s = np.sign(np.diag(r))
    return (q * s).tolist(), (r.T * s).T.tolist()


SPARSE_A = np.zeros((4, 4))
SPARSE_B = np.zeros((4, 4))
for (i, j), v in {(0, 0): 1.5, (2, 0): -0.5, (1, 1): 2.0, (3, 2): 0.25, (0, 3): 1.0,
                  (2, 3): 3.0}.items():
    SPARSE_A[i, j] = v
for (i, j), v in {(0, 0): 2.0, (1, 0): 1.0, (2, 0): 4.0, (1, 1): -1.5, (0, 2): 2.0,
                  (3, 2): 8.0, (2, 3): 0.5}.items():
    SPARSE_B[i, j] = v


def csc(matrix: np.ndarray) -> tuple[list[int], list[int], list[float]]:
    """Compressed sparse columns, with the sentinel row the example reads past the end."""
    colptr, rows, values = [0], [], []
    for j in range(matrix.shape[1]):
        for i in range(matrix.shape[0]):
            if matrix[i, j]:
                rows.append(i)
                values.append(float(matrix[i, j]))
        colptr.append(len(rows))
    return colptr, rows + [matrix.shape[0]], values


def _sparse_inputs():
    ac, ar, av = csc(SPARSE_A)
    bc, br, bv = csc(SPARSE_B)
    return {"a_colptr": ac, "a_rowval": ar, "a_nzval": av, "b_colptr": bc, "b_rowval": br,
            "b_nzval": bv}


PAIR_U = (0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 5, 7, 6, 6, 5,
          0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6,
          7, 8)
PAIR_V = (5, 6, 7, 8, 9, 1, 2, 3, 4, 4, 7, 9, 9, 8, 8,
          2, 3, 6, 7, 8, 9, 3, 4, 5, 7, 8, 9, 4, 5, 6, 8, 9, 5, 6, 7, 9, 5, 6, 7, 8, 6, 9, 7,
          8, 9)


def petersen_loss(x) -> float:
    x = np.asarray(x, dtype=float)
    d = [np.linalg.norm(x[u] - x[v]) for u, v in zip(PAIR_U, PAIR_V)]
    d1, d2 = np.array(d[:15]), np.array(d[15:])
    m = d1.mean() - d2.mean() + 0.1
    return float(d1.var(ddof=1) + d2.var(ddof=1) + (math.exp(m) - 1 if m > 0 else 0.0))


X_PETERSEN = np.random.default_rng(1).uniform(-1, 1, (10, 5)).round(4).tolist()
A_QR = [[1.0, 0.5, -0.25], [0.3, 2.0, 0.7], [-1.2, 0.4, 1.5]]
X4 = [0.5, 1.25, -2.0, 3.0]
Y4 = [1.0, 2.0, 3.0, -0.5]
THETA = [0.3, -0.7, 1.1, 0.2, -1.4, 0.9]

CASES = [
    Case("rfib", "rfib.py", "rfib", {"out": 0, "n": 10}, lambda v: {"out": _fib(v["n"])},
         {32: 0, 64: 0}, "integers: exact"),
    Case("rfibn", "rfibn.py", "rfibn", {"n": 0, "z": 100}, lambda v: {"n": _rfibn(v["z"])},
         {32: 0, 64: 0}, "integers: exact"),
    Case("ibesselj", "ibesselj.py", "ibesselj", {"z": 1.0}, lambda v: {"out": _bessel_j2(v["z"])},
         {32: 5e-5, 64: 1e-8},
         "the approximate multiplier rounds each term (its residual of ~ulp/|x| is kept in a "
         "fresh cell, never fed back); the series stops at the first term below 1e-6"),
    Case("dot", "dot.py", "dot", {"x": X4, "y": Y4},
         lambda v: {"out": float(np.dot(v["x"], v["y"]))}, {32: 1e-4, 64: 1e-8},
         "4 rounded products"),
    Case("norm2", "dot.py", "norm2", {"x": X4}, lambda v: {"out": float(np.dot(v["x"], v["x"]))},
         {32: 1e-4, 64: 1e-8}, "4 rounded products"),
    Case("umm", "umm.py", "umm", {"x": X4, "theta": THETA},
         lambda v: {"x": _umm(v["x"], v["theta"])}, {32: 5e-4, 64: 1e-7},
         "6 rotations of a few ulp each, on inputs quantised to the format"),
    Case("qr", "qr.py", "qr", {"A": A_QR},
         lambda v: dict(zip(("Q", "R"), _qr(v["A"]))), {32: 5e-4, 64: 1e-7},
         "Gram-Schmidt: ~30 rounded products, divisions and a square root per column"),
    Case("sparse_dot", "sparse_dot.py", "sparse_dot", _sparse_inputs(),
         lambda v: {"r": float((SPARSE_A * SPARSE_B).sum())}, {32: 1e-4, 64: 1e-8},
         "5 rounded products of exact inputs"),
    Case("petersen", "petersen.py", "embedding_loss", {"x": X_PETERSEN},
         lambda v: {"out": petersen_loss(v["x"])}, {32: 1e-3, 64: 1e-7},
         "45 square roots and ~300 rounded operations"),
]
