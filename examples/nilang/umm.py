"""umm!: a unitary (orthogonal) matrix applied to a vector as a Givens network.

NiLang's ``umm!(x, θ)``: N(N-1)/2 rotations, each exactly reversible in fixed
point (ROT is three lifting shears, undone bit for bit by IROT):

    k = 0
    for j in 0..N-1: for i in N-2 down to j: ROT(x[i], x[i+1], theta[k]); k += 1

The counter k ends at N(N-1)/2, a relation the compiler cannot prove from
the loops: ``free(k, M, checked=True)`` leaves it to the run-time check.
"""
from revasm.compiler import ROT, Array, Fixed, ancilla, free, reversible

N = 4
M = 6  # N * (N - 1) / 2


@reversible
def umm(x: Array[Fixed, N], theta: Array[Fixed, M]):
    k = ancilla(0)
    for j in range(N):
        for i in range(N - 2, j - 1, -1):
            ROT(x[i], x[i + 1], theta[k])
            k += 1
    free(k, M, checked=True)
