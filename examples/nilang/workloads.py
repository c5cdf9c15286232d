"""Inputs and float64 references (values and gradients) of the NiLang paper's benchmark
workloads that have programs here: the Givens network (``givens100.py``), the
ADBench GMM objective (``gmm.py``) and ADBench bundle adjustment (``ba.py``).  Used by
tests/sim/vector/test_nilang_workloads.py and the ``nilang_workloads`` and ``nilang_compare``
benchmarks."""
from __future__ import annotations

import math

import numpy as np

#: The programs whose values and gradients this file checks (the other programs of
#: this folder are checked through cases.py).
PROGRAM_FILES = ("givens100.py", "gmm.py", "ba.py")

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


def gmm_inputs(seed: int = 3, n: int = GMM_N) -> dict:
    """Points from a mixture of five Gaussians and parameters near them (icf per
    component: log diagonal q0, q1, then the lower entry L, as gmm.h stores it); ``n``
    points (the NiLang paper's GMM benchmark has 10^4)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-2, 2, (GMM_K, GMM_D))
    x = centres[rng.integers(0, GMM_K, n)] + rng.normal(0, 0.5, (n, GMM_D))
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


# --- ADBench bundle adjustment, one observation per lane (``ba.py``) -----------------------

BA_PARAMS = ("rot", "c", "f", "x0", "k", "x", "w")  # 3 + 3 + 1 + 2 + 2 + 3 + 1 = 15


def ba_inputs(n: int = 1, seed: int = 5) -> list[dict]:
    """``n`` observations inside ``ba.py``'s domains (one camera, point and pixel each)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        out.append({"rot": rng.uniform(0.05, 0.2, 3).round(6).tolist(),
                    "c": rng.uniform(-0.2, 0.2, 3).round(6).tolist(),
                    "f": round(float(rng.uniform(0.8, 1.6)), 6),
                    "x0": rng.uniform(-0.05, 0.05, 2).round(6).tolist(),
                    "k": rng.uniform(-0.1, 0.1, 2).round(6).tolist(),
                    "x": rng.uniform(3, 5, 3).round(6).tolist(),
                    "w": round(float(rng.uniform(0.5, 1.0)), 6),
                    "feat": rng.uniform(-2, 2, 2).round(6).tolist()})
    return out


def ba_reproj(rot, c, f, x0, k, x, w, feat) -> np.ndarray:
    """ADBench's ``computeReprojError`` (ba.h) for one observation, float64 (numpy arrays
    with a trailing batch axis work too)."""
    rot, c, x0, k, x, feat = (np.asarray(a, dtype=float) for a in (rot, c, x0, k, x, feat))
    xo = x - c
    theta = np.sqrt(np.sum(rot * rot, axis=0))
    u = rot / theta
    ux = np.stack([u[1] * xo[2] - u[2] * xo[1], u[2] * xo[0] - u[0] * xo[2],
                   u[0] * xo[1] - u[1] * xo[0]])
    along = np.sum(u * xo, axis=0) * (1 - np.cos(theta))
    xcam = xo * np.cos(theta) + ux * np.sin(theta) + u * along
    p = xcam[:2] / xcam[2]
    rsq = np.sum(p * p, axis=0)
    p = p * (1 + k[0] * rsq + k[1] * rsq * rsq)
    return w * (f * p + x0 - feat)


def ba_jacobian(observation: dict, h: float = 1e-7) -> np.ndarray:
    """The 2 x 15 Jacobian of ``ba_reproj`` in (rot, c, f, x0, k, x, w), float64 central
    differences."""
    flat = np.concatenate([np.atleast_1d(np.asarray(observation[p], dtype=float))
                           for p in BA_PARAMS])
    sizes = [np.atleast_1d(observation[p]).size for p in BA_PARAMS]

    def err(v: np.ndarray) -> np.ndarray:
        parts, at = {}, 0
        for name, size in zip(BA_PARAMS, sizes):
            parts[name] = v[at] if size == 1 else v[at:at + size]
            at += size
        return ba_reproj(**parts, feat=observation["feat"])
    columns = []
    for j in range(flat.size):
        step = np.zeros_like(flat)
        step[j] = h
        columns.append((err(flat + step) - err(flat - step)) / (2 * h))
    return np.stack(columns, axis=1)
