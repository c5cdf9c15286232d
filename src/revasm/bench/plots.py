"""PNG plots of benchmark results; matplotlib is optional (the JSON says when it is absent)."""
from __future__ import annotations

from pathlib import Path


def plot(name: str, result: dict, path: Path) -> str:
    """Draw ``result`` to ``path``; returns the path, or why no plot was drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "skipped: matplotlib is not installed (pip install matplotlib)"
    if name == "vector_throughput" and result.get("programs"):
        figure, axis = plt.subplots(figsize=(6, 4))
        for program, data in result["programs"].items():
            batches = [row["batch"] for row in data["vector"]]
            rates = [row["lane_instructions_per_s"] for row in data["vector"]]
            axis.loglog(batches, rates, marker="o", label=f"vector, {program}")
            axis.axhline(data["reference_instructions_per_s"], linestyle=":",
                         label=f"reference, {program}")
            limit = [row.get("bandwidth_elements_per_s") for row in data["vector"]]
            if any(limit):
                axis.loglog([b for b, v in zip(batches, limit) if v],
                            [v for v in limit if v], linestyle="--", color="grey")
        axis.set_xlabel("lanes (batch)")
        axis.set_ylabel("(lane-)instructions per second")
        axis.legend(fontsize=7)
    elif name == "bessel_gradients" and result.get("timings"):
        figure, axis = plt.subplots(figsize=(6, 4))
        labels = list(result["timings"])
        axis.bar(labels, [result["timings"][k] for k in labels])
        axis.set_yscale("log")
        axis.set_ylabel("seconds per evaluation")
    else:
        return "skipped: nothing to plot"
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)
