"""ADBench's Gaussian mixture model objective (microsoft/ADBench, src/cpp/shared/gmm.h,
``gmm_objective``) for d = 2, K = 5, n = 1000, differentiated by the machine.

    err = CONSTANT + sum_i logsumexp_k(alphas[k] + sum_q[k] - |Q_k (x_i - means[k])|^2 / 2)
          - n logsumexp(alphas) + sum_k (|exp(q_k)|^2 + L_k^2) / 2       (Wishart prior,
                                                                          gamma = 1, m = 0)

with, per component k, icf[k] = (q0, q1, L): Q_k = [[exp(q0), 0], [L, exp(q1)]] and
sum_q[k] = q0 + q1.  CONSTANT = -n d log(2 pi) / 2 - K C, C the Wishart normaliser
(n_w = d + m + 1 = 3: C = n_w d (log gamma - log(2)/2) - log Gamma_d(n_w / 2) = -2.53).
logsumexp subtracts the running maximum, as gmm.h does, so exp never underflows to 0
and log never sees 0; the maximum is a chain of fresh ancillas (max of the first k
terms), each a two-way ``if`` that reads only earlier links.

Reference (float64) and inputs: ``examples/nilang/workloads.py``.

    revasm compile examples/nilang/gmm.py:gmm --width 64 -o gmm.pal
"""
from revasm.compiler import Array, Fixed, Int, Loss, ancilla, exp, log, reversible, routine, sq

D = 2
K = 5
NPTS = 1000
CONSTANT = -1825.2219451744988  # -NPTS D log(2 pi) / 2 - K C (workloads.gmm_constant())


@reversible
def logsumexp(acc: Fixed, v: Array[Fixed, K]):
    """acc += log(sum_k exp(v[k])), computed as max + log(sum exp(v - max))."""
    with routine():
        top = ancilla(Array[Fixed, K])   # top[k] = max(v[0..k])
        seen = ancilla(Array[Fixed, K])  # a copy of top, read by the next link
        s = ancilla(0.0)
        top[0] += v[0]
        seen[0] += top[0]
        for k in range(1, K):
            if v[k] > seen[k - 1]:
                top[k] += v[k]
            else:
                top[k] += seen[k - 1]
            seen[k] += top[k]
        for k in range(K):
            s += exp(v[k] - top[K - 1])
    acc += log(s) + top[K - 1]
    ~routine


@reversible
def main_term(m: Fixed, alphas: Array[Fixed, K], means: Array[Fixed, K, D],
              icf: Array[Fixed, K, 3], qd: Array[Fixed, K, D], sum_q: Array[Fixed, K],
              x: Array[Fixed, NPTS, D], i: Int, k: Int):
    """m += alphas[k] + sum_q[k] - |Q_k (x_i - means[k])|^2 / 2."""
    with routine():
        c0 = ancilla(0.0)
        c1 = ancilla(0.0)
        y0 = ancilla(0.0)
        y1 = ancilla(0.0)
        c0 += x[i, 0] - means[k, 0]
        c1 += x[i, 1] - means[k, 1]
        y0 += qd[k, 0] * c0
        y1 += qd[k, 1] * c1
        y1 += icf[k, 2] * c0
    m += alphas[k] + sum_q[k]
    m -= 0.5 * (sq(y0) + sq(y1))
    ~routine


@reversible
def point_term(acc: Fixed, alphas: Array[Fixed, K], means: Array[Fixed, K, D],
               icf: Array[Fixed, K, 3], qd: Array[Fixed, K, D], sum_q: Array[Fixed, K],
               x: Array[Fixed, NPTS, D], i: Int):
    """acc += logsumexp_k of point i's main terms."""
    with routine():
        terms = ancilla(Array[Fixed, K])
        for k in range(K):
            main_term(terms[k], alphas, means, icf, qd, sum_q, x, i, k)
    logsumexp(acc, terms)
    ~routine


@reversible
def gmm(out: Loss, alphas: Array[Fixed, K], means: Array[Fixed, K, D],
        icf: Array[Fixed, K, 3], x: Array[Fixed, NPTS, D]):
    with routine():
        qd = ancilla(Array[Fixed, K, D])
        sum_q = ancilla(Array[Fixed, K])
        slse = ancilla(0.0)
        lse_alphas = ancilla(0.0)
        prior = ancilla(0.0)
        for k in range(K):
            for j in range(D):
                qd[k, j] += exp(icf[k, j])
                sum_q[k] += icf[k, j]
        for i in range(NPTS):
            point_term(slse, alphas, means, icf, qd, sum_q, x, i)
        logsumexp(lse_alphas, alphas)
        for k in range(K):
            for j in range(D):
                prior += 0.5 * sq(qd[k, j])
            prior += 0.5 * sq(icf[k, 2])
    out += slse + prior
    out -= NPTS * lse_alphas
    out += CONSTANT
    ~routine
