"""NiLang paper workloads (Givens network N = 100, sparse Frobenius dot, Petersen
graph embedding, ADBench GMM) on the vector simulator: not yet in the suite."""
from __future__ import annotations

WORKLOADS = ("givens_network_n100", "sparse_frobenius_dot", "petersen_embedding", "adbench_gmm")


def run(quick: bool) -> dict:
    del quick
    return {
        "status": "not yet",
        "workloads": {name: "not yet" for name in WORKLOADS},
        "reason": ("these programs come from the compiler (compiler/, examples/nilang/); "
                   "compiling them to PAL images and timing them here is not wired up yet"),
    }
