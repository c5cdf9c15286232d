"""The Givens network of the NiLang paper's benchmarks, N = 100: an orthogonal matrix
applied to a vector as N(N-1)/2 = 4950 Givens rotations (NiLang's ``umm!``), with a
loss for differentiation.

    k = 0
    for j in 0..N-1: for i in N-2 down to j: ROT(x[i], x[i+1], theta[k]); k += 1
    out = sum_i w[i] x[i]          (after the rotations; w fixed weights)

Each ROT is three lifting shears, undone bit for bit by IROT, so the network needs
no stored intermediates.  The gradient of ``out`` in ``x`` and ``theta`` comes from
the machine's backward run in gradient mode.  Reference (float64, with its gradient
by hand): ``examples/nilang/workloads.py``; test: tests/sim/vector/test_nilang_workloads.py.

    revasm compile examples/nilang/givens100.py:givens_loss --width 64 -o givens100.pal
"""
from revasm.compiler import ROT, Array, Fixed, Loss, ancilla, free, reversible

N = 100
M = 4950  # N * (N - 1) / 2


@reversible
def givens(x: Array[Fixed, N], theta: Array[Fixed, M]):
    k = ancilla(0)
    for j in range(N):
        for i in range(N - 2, j - 1, -1):
            ROT(x[i], x[i + 1], theta[k])
            k += 1
    free(k, M, checked=True)


@reversible
def givens_loss(out: Loss, x: Array[Fixed, N], theta: Array[Fixed, M], w: Array[Fixed, N]):
    givens(x, theta)
    for i in range(N):
        out += w[i] * x[i]
