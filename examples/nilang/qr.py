"""The NiLang paper's naive QR decomposition (Gram-Schmidt), compute-copy-uncompute.

For each column: a routine computes the column orthogonalised against the
previous Q columns (ri), the projections (anc_dot) and the squared norm;
R and Q receive copies; ~routine uncomputes every temporary.  A = Q R, with
Q orthogonal and R upper triangular with a positive diagonal.

A's default is a well-conditioned matrix (Q and R start at zero).  Its domain is
per element (A_LOW..A_HIGH): a diagonal in 2..3 and the rest in -0.5..0.5, so every
random A is strictly diagonally dominant, hence far from singular; a random A in a
box around zero may be nearly singular, and then Q's entries overflow Q16.16 (a
singular A faults with a division by zero at the line of ``Q[row, col] += ...``).
"""
from revasm.compiler import Array, Fixed, ancilla, free, reversible, routine, sq, sqrt

N = 3
#: The default A: `revasm run` on the compiled program factors this one.
A0 = ((2.5, 0.5, -0.25), (0.3, 2.0, 0.4), (-0.2, 0.4, 2.8))
A_LOW = ((2, -0.5, -0.5), (-0.5, 2, -0.5), (-0.5, -0.5, 2))
A_HIGH = ((3, 0.5, 0.5), (0.5, 3, 0.5), (0.5, 0.5, 3))


@reversible
def qr(Q: Array[Fixed, N, N], R: Array[Fixed, N, N], A: Array[Fixed[A_LOW, A_HIGH], N, N] = A0):
    anc_norm = ancilla(0.0)
    anc_dot = ancilla(Array[Fixed, N])
    ri = ancilla(Array[Fixed, N])
    for col in range(N):
        with routine():
            for row in range(N):
                ri[row] += A[row, col]
            for precol in range(col):
                for row in range(N):
                    anc_dot[precol] += Q[row, precol] * ri[row]
                for row in range(N):
                    ri[row] -= anc_dot[precol] * Q[row, precol]
            for row in range(N):
                anc_norm += sq(ri[row])
        R[col, col] += sqrt(anc_norm)
        for precol in range(col):
            R[precol, col] += anc_dot[precol]
        for row in range(N):
            Q[row, col] += ri[row] / R[col, col]
        ~routine
    # ~routine restores ri and anc_dot, but the routine reads Q columns < col while
    # the copy writes column col: the compiler tracks whole arrays, so it cannot prove
    # that they do not overlap; the machine checks every element at run time.
    free(ri, checked=True)
    free(anc_dot, checked=True)
    free(anc_norm, 0.0)
