"""Inputs and float64 references (values and gradients) of the NiLang paper's benchmark
workloads that have programs here: the Givens network (``givens100.py``) and the
ADBench GMM objective (``gmm.py``).  Used by tests/sim/vector/test_nilang_workloads.py and
the ``nilang_workloads`` benchmark (``revasm bench nilang_workloads``)."""
from __future__ import annotations

import math

import numpy as np

#: The programs whose values and gradients this file checks (the other programs of
#: this folder are checked through cases.py).
PROGRAM_FILES = ("givens100.py", "gmm.py")

# --- Givens network, N = 100 -------------------------------------------------------------

GIVENS_N = 100


def givens_inputs(seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    n = GIVENS_N
    return {"x": rng.uniform(-1, 1, n).round(6).tolist(),
            "theta": rng.uniform(-math.pi, math.pi, n * (n - 1) // 2).round(6).tolist(),
            "w": rng.uniform(-1, 1, n).round(6).tolist()}


def _givens_pairs(n: int) -> list[int]:
    return [i for j in range(n) for i in range(n - 2, j - 1, -1)]


def givens_loss(x, theta, w) -> tuple[float, dict]:
    """out = w . (G x) and its gradient in x, theta (reverse mode by hand, float64).

    Arrays may carry a trailing batch axis (x, w: N x B, theta: M x B): then every
    result has it too (the benchmark's numpy baseline)."""
    x = np.array(x, dtype=float)
    theta = np.asarray(theta, dtype=float)
    w = np.asarray(w, dtype=float)
    pairs = _givens_pairs(len(x))
    cos, sin = np.cos(theta), np.sin(theta)
    for k, i in enumerate(pairs):
        c, s = cos[k], sin[k]
        a, b = x[i], x[i + 1]
        x[i], x[i + 1] = a * c - b * s, a * s + b * c
    out = np.sum(w * x, axis=0)
    g = w.copy()
    gtheta = np.zeros(theta.shape)
    for k in range(len(pairs) - 1, -1, -1):
        i = pairs[k]
        c, s = cos[k], sin[k]
        a, b = x[i], x[i + 1]  # outputs of rotation k
        ga, gb = g[i], g[i + 1]
        gtheta[k] = -ga * b + gb * a
        x[i], x[i + 1] = a * c + b * s, -a * s + b * c  # undo the rotation
        g[i], g[i + 1] = ga * c + gb * s, -ga * s + gb * c
    if out.ndim == 0:
        return float(out), {"x": g.tolist(), "theta": gtheta.tolist()}
    return out, {"x": g, "theta": gtheta}


# --- ADBench GMM, d = 2, K = 5, n = 1000 ---------------------------------------------------

GMM_D, GMM_K, GMM_N = 2, 5, 1000
WISHART_GAMMA, WISHART_M = 1.0, 0


def gmm_inputs(seed: int = 3) -> dict:
    """Points from a mixture of five Gaussians and parameters near them (icf per
    component: log diagonal q0, q1, then the lower entry L, as gmm.h stores it)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-2, 2, (GMM_K, GMM_D))
    x = centres[rng.integers(0, GMM_K, GMM_N)] + rng.normal(0, 0.5, (GMM_N, GMM_D))
    return {"alphas": rng.normal(0, 0.5, GMM_K).round(6).tolist(),
            "means": (centres + rng.normal(0, 0.2, centres.shape)).round(6).tolist(),
            "icf": rng.normal(0, 0.3, (GMM_K, 3)).round(6).tolist(),
            "x": x.round(6).tolist()}


def _log_gamma_distrib(a: float, p: int) -> float:
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(a + 0.5 * (1 - j))
                                                       for j in range(1, p + 1))


def gmm_constant(n: int = GMM_N, d: int = GMM_D, k: int = GMM_K) -> float:
    """gmm.h's CONSTANT minus K times the Wishart normaliser C (gmm.py's CONSTANT)."""
    nw = d + WISHART_M + 1
    c = nw * d * (math.log(WISHART_GAMMA) - 0.5 * math.log(2)) - _log_gamma_distrib(0.5 * nw, d)
    return -n * d * 0.5 * math.log(2 * math.pi) - k * c


def _logsumexp(v: np.ndarray, axis: int = -1) -> np.ndarray:
    top = np.max(v, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(v - top), axis=axis)) + np.squeeze(top, axis)


def gmm_objective(alphas, means, icf, x) -> float:
    """gmm.h's gmm_objective (float64, numpy over points)."""
    alphas, means, icf, x = (np.asarray(a, dtype=float) for a in (alphas, means, icf, x))
    qd = np.exp(icf[:, :2])                                  # K x 2
    sum_q = icf[:, 0] + icf[:, 1]
    centred = x[:, None, :] - means[None, :, :]              # n x K x 2
    y0 = qd[:, 0] * centred[:, :, 0]
    y1 = qd[:, 1] * centred[:, :, 1] + icf[:, 2] * centred[:, :, 0]
    main = alphas + sum_q - 0.5 * (y0 ** 2 + y1 ** 2)
    slse = float(np.sum(_logsumexp(main)))
    prior = float(np.sum(0.5 * WISHART_GAMMA ** 2 * (np.sum(qd ** 2, axis=1) + icf[:, 2] ** 2)
                         - WISHART_M * sum_q))
    return gmm_constant(len(x)) + slse - len(x) * float(_logsumexp(alphas)) + prior


def gmm_gradient(alphas, means, icf, x, h: float = 1e-6) -> dict:
    """d objective / d (alphas, means, icf) by central differences in float64 (30 pairs
    of evaluations; truncation error ~h^2, rounding ~1e-16 |f| / h)."""
    params = {"alphas": np.asarray(alphas, dtype=float), "means": np.asarray(means, dtype=float),
              "icf": np.asarray(icf, dtype=float)}
    out = {}
    for name, value in params.items():
        g = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = []
            for sign in (1, -1):
                moved = {n: v.copy() for n, v in params.items()}
                moved[name][index] += sign * h
                shifted.append(gmm_objective(moved["alphas"], moved["means"], moved["icf"], x))
            g[index] = (shifted[0] - shifted[1]) / (2 * h)
        out[name] = g.tolist()
    return out
