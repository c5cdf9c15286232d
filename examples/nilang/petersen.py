"""Embedding the Petersen graph in K = 5 dimensions: the NiLang paper's loss.

10 vertices, 15 edges (L1) and the 30 disconnected pairs (L2).  With d the
distance between the two vertices of a pair, the loss is

    var(d over L1) + var(d over L2) + (exp(m) - 1 if m > 0),
    m = mean(d over L1) - mean(d over L2) + 0.1

(sample variances), small when all edges have one length and all non-edges
another, longer one.  Every intermediate is uncomputed by ~routine.
"""
from revasm.compiler import (
    Array,
    Fixed,
    Int,
    Loss,
    ancilla,
    exp,
    free,
    reversible,
    routine,
    sq,
    sqrt,
)

V = 10
K = 5
P = 45  # 15 edges, then 30 disconnected pairs
EDGES = 15
MARGIN = 0.1

# the pairs, 0-based: edges first (outer 5-cycle, spokes, inner pentagram), then the rest
PAIR_U = (0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 5, 7, 6, 6, 5,
          0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6,
          7, 8)
PAIR_V = (5, 6, 7, 8, 9, 1, 2, 3, 4, 4, 7, 9, 9, 8, 8,
          2, 3, 6, 7, 8, 9, 3, 4, 5, 7, 8, 9, 4, 5, 6, 8, 9, 5, 6, 7, 9, 5, 6, 7, 8, 6, 9, 7,
          8, 9)


@reversible
def sqdistance(dist: Fixed, x: Array[Fixed, V, K], u: Int, v: Int):
    """dist += |x[u] - x[v]|^2."""
    for k in range(K):
        with routine():
            diff = ancilla(0.0)
            diff += x[u, k] - x[v, k]
        dist += sq(diff)
        ~routine


@reversible
def var_and_mean_sq(var: Fixed, mean: Fixed, sqd: Array[Fixed, P], first: Int, count: Int):
    """mean += mean of sqrt(sqd[first:first+count]); var += their sample variance."""
    mean_sum = ancilla(0.0)
    var_sum = ancilla(0.0)
    with routine():
        for i in range(first, first + count):
            mean_sum += sqrt(sqd[i])
            var_sum += sqd[i]
    mean += mean_sum / count
    with routine():
        var_anc1 = ancilla(0.0)
        var_anc2 = ancilla(0.0)
        sqmean = ancilla(0.0)
        var_anc1 += var_sum / count
        sqmean += sq(mean)
        var_anc1 -= sqmean
        var_anc2 += var_anc1 * count
    var += var_anc2 / (count - 1)
    ~routine
    ~routine
    free(var_sum, 0.0)
    free(mean_sum, 0.0)


@reversible
def embedding_loss(out: Loss, x: Array[Fixed, V, K]):
    sqd = ancilla(Array[Fixed, P])
    v1 = ancilla(0.0)
    m1 = ancilla(0.0)
    v2 = ancilla(0.0)
    m2 = ancilla(0.0)
    with routine():
        for p in range(P):
            sqdistance(sqd[p], x, PAIR_U[p], PAIR_V[p])
        var_and_mean_sq(v1, m1, sqd, 0, EDGES)
        var_and_mean_sq(v2, m2, sqd, EDGES, P - EDGES)
        m1 -= m2 - MARGIN
    out += v1 + v2
    if m1 > 0:
        out += exp(m1)
        out -= 1.0
    ~routine
    free(m2, 0.0)
    free(v2, 0.0)
    free(m1, 0.0)
    free(v1, 0.0)
    free(sqd)
