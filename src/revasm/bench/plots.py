"""PNG plots of benchmark results; matplotlib is optional (the JSON says when it is absent).

Every benchmark whose result has timings or rates gets a plot: ``vector_throughput`` its
rate-against-batch curves, every other one horizontal bars (one label per line, so labels
never overlap) of its times and rates, on log scales, each panel one unit.  A result with
neither plots its counts.  Bars are labelled by their place in the JSON, a list's records
by their names (``pal_loop compiled untraced forward W=32``), not by index.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

#: At most this many bars per panel (the largest, by the bars' own order otherwise).
MAX_BARS = 40
#: Keys never plotted: bookkeeping, not measurements.
SKIPPED_KEYS = {"machine", "plot", "quick", "benchmark", "seed", "first_seed", "width",
                "widths", "batches", "threads", "repeats"}
#: String fields that name a record of a list, in the order they make its label.
NAME_FIELDS = ("name", "program", "workload", "engine", "path", "direction", "mode", "kind")


def _record_label(record: dict, index: int) -> str:
    """A list element's label: its naming fields (and width, lanes), else its index."""
    words = [str(record[key]) for key in NAME_FIELDS if isinstance(record.get(key), str)]
    for key, prefix in (("width", "W="), ("lanes", "lanes="), ("batch", "batch=")):
        if isinstance(record.get(key), int) and not isinstance(record.get(key), bool):
            words.append(f"{prefix}{record[key]}")
    return " ".join(words) if words else f"#{index}"


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], float]]:
    """Every number of a JSON value with the labels of its path."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [(path, float(value))]
    out: list[tuple[tuple[str, ...], float]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in SKIPPED_KEYS:
                out += _leaves(item, path + (str(key),))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            label = _record_label(item, index) if isinstance(item, dict) else f"#{index}"
            out += _leaves(item, path + (label,))
    return out


def unit_of(key: str) -> str | None:
    """'rate' (per second), 'time' (seconds) or None (a count), from a JSON key's name."""
    key = key.lower()
    if key.endswith(("per_s", "per_second", "per_sec", "_rate")) or "_per_s_" in key:
        return "rate"
    if key.endswith(("_s", "seconds", "_ns", "_ms")) or key in ("s", "ns", "ms"):
        return "time"
    return None


def _scale(key: str) -> float:
    """Seconds per unit of a time key (nanoseconds and milliseconds become seconds)."""
    return 1e-9 if key.lower().endswith("ns") else 1e-3 if key.lower().endswith("ms") else 1.0


def panels(result: dict) -> list[tuple[str, list[tuple[str, float]]]]:
    """(axis label, [(bar label, value)]) of what a benchmark's bars show: its times and
    rates, else its counts; positive values only (log scales).  A path prefix every bar
    of a panel shares goes to the axis label; a panel keeps its first ``MAX_BARS`` bars."""
    groups: dict[str, list[tuple[tuple[str, ...], float]]] = {"time": [], "rate": [],
                                                              "count": []}
    for path, value in _leaves(result):
        if not path or value <= 0:
            continue
        unit = unit_of(path[-1]) or ("time" if "timings" in path[:-1] else "count")
        if unit == "time":
            value *= _scale(path[-1])
        groups[unit].append((path if path != ("seconds",) else ("whole benchmark",), value))
    titles = {"time": "seconds", "rate": "per second", "count": "count"}
    chosen = [unit for unit in ("rate", "time") if groups[unit]
              and not (unit == "time" and len(groups[unit]) == 1 and groups["rate"])]
    if not chosen and groups["count"]:
        chosen = ["count"]
    out = []
    for unit in chosen:
        entries = groups[unit]
        shared = 0
        while len(entries) > 1 and all(len(path) > shared + 1 for path, _ in entries) and \
                len({path[shared] for path, _ in entries}) == 1:
            shared += 1
        axis = titles[unit] + " (log scale)"
        if shared:
            axis = " / ".join(entries[0][0][:shared]) + ": " + axis
        if len(entries) > MAX_BARS:
            axis += f"; the first {MAX_BARS} of {len(entries)} (all in the JSON)"
        out.append((axis, [(" / ".join(path[shared:]), value)
                           for path, value in entries[:MAX_BARS]]))
    return out


def _shorten(label: str, limit: int = 70) -> str:
    """At most ``limit`` characters: the middle of a long label gives way to an ellipsis."""
    if len(label) <= limit:
        return label
    keep = (limit - 1) // 2
    return label[:keep] + "…" + label[-(limit - 1 - keep):]


def figure_for(name: str, result: dict) -> Any:
    """The matplotlib Figure of a benchmark's result, or the reason there is none (a str)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "skipped: matplotlib is not installed (pip install 'revasm[plots]')"
    if name == "vector_throughput" and result.get("programs"):
        figure, axis = plt.subplots(figsize=(7, 4.5))
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
        axis.set_title(f"{name}: throughput against batch")
        axis.legend(fontsize=7)
        figure.tight_layout()
        return figure
    bars = panels(result)
    if not bars:
        return "skipped: no measurement in the result"
    heights = [0.6 + 0.26 * len(values) for _, values in bars]
    figure, axes = plt.subplots(len(bars), 1, figsize=(10, sum(heights) + 0.8),
                                gridspec_kw={"height_ratios": heights}, squeeze=False)
    for axis, (unit, values) in zip(axes[:, 0], bars):
        labels = [_shorten(label) for label, _ in values]
        positions = range(len(values))
        axis.barh(list(positions), [value for _, value in values], color="tab:blue")
        axis.set_yticks(list(positions), labels, fontsize=8)
        axis.invert_yaxis()  # the JSON's order, top to bottom
        axis.set_xscale("log")
        axis.set_xlabel(unit)
        for position, (_, value) in zip(positions, values):
            axis.annotate(f"{value:.3g}", (value, position), xytext=(3, 0),
                          textcoords="offset points", va="center", fontsize=7)
    axes[0, 0].set_title(name + (" (quick)" if result.get("quick") else ""))
    figure.tight_layout()
    return figure


def plot(name: str, result: dict, path: Path) -> str:
    """Draw ``result`` to ``path``; returns the path, or why no plot was drawn."""
    figure = figure_for(name, result)
    if isinstance(figure, str):
        return figure
    import matplotlib.pyplot as plt
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)
