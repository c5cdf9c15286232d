"""The report as one self-contained HTML page: the terminal's tables, plus plots.

Plots need matplotlib (``pip install 'revasm[plots]'``); without it the page
has the tables and says how to get the plots.  Plots are inline SVG, so the
file needs nothing beside it.
"""
from __future__ import annotations

import html
import io
from typing import Any

from .by_line_format import BY_LINE_STYLE, render_by_line_html
from .terminal import SCENARIO_LABELS, TRAFFIC_LABELS, class_label, run_label, traffic_keys
from .units import count, si

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; text-align: left; }
.note { color: #666; font-size: 0.9em; }
figure { display: inline-block; margin: 0 1em 1em 0; }
"""


def html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = [f"<th>{html.escape(row[0])}</th>"]
        cells += [f'<td class="n">{html.escape(str(v))}</td>' for v in row[1:]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def plots_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def svg_chart(figure: Any) -> str:  # a matplotlib Figure (matplotlib is optional)
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _plots(report: dict) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    figures = []
    runs = report["runs"]
    classes = sorted({c for run in runs for c in run["by_class"]})
    figure, axes = pyplot.subplots(figsize=(6, 3.2))
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        axes.bar([x + i * width for x in range(len(classes))],
                 [run["by_class"].get(c, 0) for c in classes], width, label=run_label(run))
    axes.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(classes))],
                    [class_label(c).split(" (")[0] for c in classes], rotation=20)
    axes.set_ylabel("instructions executed")
    axes.set_title("Op counts by class")
    axes.legend()
    figures.append(("Op counts by class and run", figure))

    models = report["energy"]
    if models:
        figure, axes = pyplot.subplots(figsize=(6, 3.2))
        axes.bar([m["name"] for m in models], [max(m["total_J"], 1e-30) for m in models])
        axes.set_yscale("log")
        axes.set_ylabel("energy (J)")
        axes.set_title("Energy of the whole protocol, per model")
        figures.append(("Energy per model", figure))
    for model in models:
        if model["kind"] == "adiabatic":
            figure, axes = pyplot.subplots(figsize=(6, 3.2))
            axes.loglog([p["switching_time_s"] for p in model["sweep"]],
                        [p["total_J"] for p in model["sweep"]])
            axes.axvline(model["switching_time_s"], linestyle="--", color="gray")
            axes.set_xlabel("switching time T (s)")
            axes.set_ylabel("energy (J)")
            axes.set_title(f"{model['name']}: energy vs switching time")
            figures.append((f"{model['name']}: energy falls as switching slows, until "
                            "leakage dominates", figure))
    scenarios = report["erasure"]["scenarios"]
    figure, axes = pyplot.subplots(figsize=(6, 3.2))
    axes.barh([SCENARIO_LABELS.get(n, n) for n in scenarios],
              [max(s["bits_erased"], 0.5) for s in scenarios.values()])
    axes.set_xscale("log")
    axes.set_xlabel("bits erased")
    axes.set_title("Bits erased per scenario")
    figures.append(("Bits erased", figure))
    out = []
    for caption, figure in figures:
        out.append(f"<figure>{svg_chart(figure)}<figcaption>{html.escape(caption)}</figcaption>"
                   "</figure>")
        pyplot.close(figure)
    return out


def render_html(report: dict) -> str:
    """The whole page."""
    runs = report["runs"]
    columns = [run_label(run) for run in runs]
    parts = [f"<h1>revasm report: {html.escape(report['file'])}</h1>",
             f"<p>W = {report['width']}, {report['mode']} mode, status "
             f"<b>{html.escape(report['status'])}</b>"
             + ("; the backward run restored the initial state" if report.get("restored")
                else "") + "</p>"]
    if "fault" in report:
        parts.append(f"<p>Fault: {html.escape(report['fault']['message'])}</p>")
    values = [[k, v] for k, v in report["inputs"].items()]
    values += [[k, v] for k, v in report["outputs"].items()]
    if values:
        parts.append(html_table(["name", "value"], values))
    if plots_available():
        parts += _plots(report)
    else:
        parts.append('<p class="note">Plots need matplotlib: '
                     "<code>pip install 'revasm[plots]'</code>.</p>")
    classes = sorted({c for run in runs for c in run["by_class"]})
    parts.append("<h2>Op counts</h2>")
    rows = [[class_label(c)] + [count(r["by_class"].get(c, 0)) for r in runs] for c in classes]
    rows.append(["steps"] + [count(r["steps"]) for r in runs])
    rows.append(["cycles"] + [count(r["cycles"]) for r in runs])
    parts.append(html_table(["class"] + columns, rows))
    names = sorted({n for run in runs for n in run["by_instruction"]})
    parts.append(html_table(["instruction"] + columns,
                        [[n] + [count(r["by_instruction"].get(n, 0)) for r in runs]
                         for n in names]))
    parts.append("<h2>Traffic and occupancy</h2>")
    parts.append(html_table(["traffic"] + columns,
                        [[TRAFFIC_LABELS[key]] + [count(r["traffic"][key]) for r in runs]
                         for key in traffic_keys(runs)]))
    occupancy = ["peak_live_registers", "peak_data_words", "highest_data_address",
                 "ancilla_words", "peak_ancilla_words"]
    parts.append(html_table(["occupancy"] + columns,
                        [[key.replace("_", " ")] + [count(r["occupancy"][key]) for r in runs]
                         for key in occupancy]))
    parts.append("<h2>Energy</h2>")
    parts.append(html_table(["model", "energy", "title", "source"],
                        [[m["name"], si(m["total_J"], "J"), m["title"], m["source"]]
                         for m in report["energy"]]))
    parts.append("<h2>Bits erased</h2>")
    landauer = next((m for m in report["energy"] if m["kind"] == "landauer"), None)
    rows = []
    for name, scenario in report["erasure"]["scenarios"].items():
        row = [SCENARIO_LABELS.get(name, name), count(scenario["bits_erased"]),
               count(scenario["bits_stored"])]
        if landauer:
            row.append(si(landauer["scenarios_J"][name], "J"))
        rows.append(row)
    parts.append(html_table(["scenario", "bits erased", "bits stored"]
                        + (["Landauer"] if landauer else []), rows))
    style = STYLE
    if "by_line" in report:
        parts.append(render_by_line_html(report["by_line"]))
        style += BY_LINE_STYLE
    parts.append('<p class="note">Every count and model is explained in docs/energy.md.</p>')
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>revasm report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")
