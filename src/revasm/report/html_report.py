"""The report as one self-contained HTML page: everything the terminal report says, plus plots.

The page has the same sections as the text report (``terminal.format_report``), in the
same order: the gradient first (in gradient mode), then labelled tables of inputs and
outputs, op counts with a total column, the adjoint operations of a gradient pass,
traffic, occupancy, the energy of each model with its breakdown, and bits erased.
Plots need matplotlib (``pip install 'revasm[plots]'``); without it the page has the
tables and says how to get the plots.  A plot is drawn only when it compares at least
two numbers.  Plots are inline SVG, so the file needs nothing beside it.
"""
from __future__ import annotations

import html
import io
from typing import Any

from .by_line_format import BY_LINE_STYLE, render_by_line_html
from .classes import REPORT_CLASSES
from .terminal import SCENARIO_LABELS, TRAFFIC_LABELS, class_label, run_label, traffic_keys
from .units import count, si

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; }
.note { color: #666; font-size: 0.9em; }
figure { display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.9em; color: #444; }
"""


_NUMERIC = ' class="n"'


def _looks_numeric(text: str) -> bool:
    """A number (maybe with a unit): right-aligned in its column; words stay left."""
    if not text or len(text.split()) > 2:
        return False
    unsigned = text[1:] if text[0] in "+-" else text
    return unsigned[:1].isdigit() or (unsigned[:1] == "." and unsigned[1:2].isdigit())


def html_table(headers: list[str], rows: list[list[str]], caption: str | None = None) -> str:
    """A table whose first column labels its rows (``th``) and whose other cells are values;
    ``caption`` names the table (a browser shows it above)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = [f"<th>{html.escape(row[0])}</th>"]
        cells += [f'<td{_NUMERIC if _looks_numeric(str(v)) else ""}>{html.escape(str(v))}</td>'
                  for v in row[1:]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    title = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{title}<tr>{head}</tr>{''.join(body)}</table>"


def plots_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def svg_chart(figure: Any) -> str:  # a matplotlib Figure (matplotlib is optional)
    """The figure as inline SVG (the ``<svg>`` element, no XML prologue)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _class_order(classes: set[str]) -> list[str]:
    """Classes in the text report's order (``REPORT_CLASSES``), unknown ones last."""
    order = list(REPORT_CLASSES)
    return sorted(classes, key=lambda c: (order.index(c) if c in order else len(order), c))


def figure_html(figures: list[tuple[str, Any]]) -> list[str]:
    """Each (caption, matplotlib figure) as an HTML figure of inline SVG; closes the figures."""
    from matplotlib import pyplot
    out = []
    for caption, figure in figures:
        out.append(f"<figure>{svg_chart(figure)}<figcaption>{html.escape(caption)}</figcaption>"
                   "</figure>")
        pyplot.close(figure)
    return out


def _plots(report: dict) -> list[str]:
    """The report's plots; each only when it has two or more numbers to compare."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    figures = []
    runs = report["runs"]
    classes = _class_order({c for run in runs for c in run["by_class"]})
    if len(classes) * len(runs) >= 2:
        figure, axes = pyplot.subplots(figsize=(6, 3.4))
        width = 0.8 / max(len(runs), 1)
        for i, run in enumerate(runs):
            axes.bar([x + i * width for x in range(len(classes))],
                     [run["by_class"].get(c, 0) for c in classes], width, label=run_label(run))
        axes.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(classes))],
                        [class_label(c).split(" (")[0] for c in classes], rotation=20,
                        ha="right")
        axes.set_ylabel("instructions executed")
        axes.set_title("Op counts by class")
        axes.legend()
        figures.append(("Op counts by class and run", figure))

    models = report["energy"]
    if len(models) >= 2:
        figure, axes = pyplot.subplots(figsize=(6, 3.4))
        axes.bar([m["name"] for m in models], [max(m["total_J"], 1e-30) for m in models])
        axes.set_yscale("log")
        axes.set_ylabel("energy (J)")
        axes.set_title("Energy of the whole protocol, per model")
        figures.append(("Energy per model", figure))
    for model in models:
        if model["kind"] == "adiabatic" and len(model["sweep"]) >= 2:
            figure, axes = pyplot.subplots(figsize=(6, 3.4))
            axes.loglog([p["switching_time_s"] for p in model["sweep"]],
                        [p["total_J"] for p in model["sweep"]])
            axes.axvline(model["switching_time_s"], linestyle="--", color="gray")
            axes.set_xlabel("switching time T (s)")
            axes.set_ylabel("energy (J)")
            axes.set_title(f"{model['name']}: energy vs switching time")
            figures.append((f"{model['name']}: energy falls as switching slows, until "
                            "leakage dominates", figure))
    scenarios = report["erasure"]["scenarios"]
    if len(scenarios) >= 2:
        figure, axes = pyplot.subplots(figsize=(6, 3.4))
        axes.barh([SCENARIO_LABELS.get(n, n).split(" (")[0] for n in scenarios],
                  [max(s["bits_erased"], 0.5) for s in scenarios.values()])
        axes.set_xscale("log")
        axes.set_xlabel("bits erased (log scale)")
        axes.set_title("Bits erased per scenario")
        figures.append(("Bits erased", figure))
    return figure_html(figures)


def _with_total(values: list[int]) -> list[str]:
    """One count per run, then their total (as the text report's tables)."""
    return [count(v) for v in values] + [count(sum(values))]


#: An array's row shows at most this many values (the GMM's 2 000 points would fill
#: screens); the JSON report has every one.
ROW_VALUES = 64


def grouped_values(values: dict) -> list[tuple[str, str]]:
    """Named values as table rows, an array's elements (``x.0``, ``x.1``, ``icf.2.1``, in
    their order) on one row ``x (N values)``: a gradient of a few hundred array elements
    stays a short table."""
    groups: dict[str, list[tuple[str, object]]] = {}
    for name, value in values.items():
        base, _, index = name.partition(".")
        key = base if index and all(part.isdigit() for part in index.split(".")) else name
        groups.setdefault(key, []).append((name, value))
    rows = []
    for key, members in groups.items():
        if len(members) == 1 and members[0][0] == key:
            rows.append((key, str(members[0][1])))
        else:
            shown = ", ".join(str(value) for _, value in members[:ROW_VALUES])
            if len(members) > ROW_VALUES:
                shown += f", … and {len(members) - ROW_VALUES:,} more (every value in --json)"
            rows.append((f"{key} ({len(members)} values)", shown))
    return rows


def _values_table(title: str, values: dict) -> str:
    """A labelled table of named values (inputs, outputs, gradient), arrays on one row."""
    return html_table(["name", "value"], [list(row) for row in grouped_values(values)],
                      caption=title)


def _energy_sections(models: list[dict]) -> list[str]:
    """Every model's total, then its breakdown, as the text report's Energy section."""
    parts = [html_table(["model", "energy", "title", "source"],
                        [[m["name"], si(m["total_J"], "J"), m["title"], m["source"]]
                         for m in models], caption="Energy of the whole protocol")]
    for model in models:
        if model["kind"] == "per_operation":
            rows = [[part.replace("_", " "), si(joules, "J")]
                    for part, joules in model["by_part"].items()]
            parts.append(html_table(["part", "energy"], rows,
                                    caption=f"{model['name']}: energy by part"))
            if model.get("unpriced_classes"):
                parts.append(f'<p class="note">{html.escape(model["name"])}: no price for '
                             + html.escape(", ".join(model["unpriced_classes"])) + "</p>")
        elif model["kind"] == "adiabatic":
            rows = [["switching time", si(model["switching_time_s"], "s")],
                    [f"factor (x {model['base_model']})", f"{model['factor']:.4g}"],
                    ["optimal switching time", si(model["optimal_switching_time_s"], "s")],
                    ["energy at the optimum", si(model["optimal_total_J"], "J")]]
            parts.append(html_table(["quantity", "value"], rows,
                                    caption=f"{model['name']}: switching time"))
        elif model["kind"] == "landauer":
            rows = [["k T ln 2 per bit", si(model["J_per_bit"], "J")],
                    ["temperature", f"{model['temperature_K']:g} K"]]
            parts.append(html_table(["quantity", "value"], rows,
                                    caption=f"{model['name']}: the bound (reversible protocol; "
                                            "other scenarios under Bits erased)"))
    return parts


def render_html(report: dict) -> str:
    """The whole page: the sections of the text report, in its order, then the plots."""
    runs = report["runs"]
    columns = [run_label(run) for run in runs] + ["total"]
    state = report["status"]
    if report.get("restored") is True:
        state += "; the backward run restored the initial state"
    elif report.get("restored") is False:
        state += "; the backward run did NOT restore the initial state"
    parts = [f"<h1>revasm report: {html.escape(report['file'])}</h1>",
             f"<p>W = {report['width']}, {report['mode']} mode, status "
             f"<b>{html.escape(state)}</b></p>"]
    if "fault" in report:
        parts.append(f"<p>Fault: {html.escape(report['fault']['kind'])}: "
                     f"{html.escape(report['fault']['message'])}</p>")
    if report.get("gradient"):
        parts.append("<h2>Gradient</h2>")
        parts.append(_values_table("Gradient of the loss", report["gradient"]))
    if report["inputs"] or report["outputs"]:
        parts.append("<h2>Inputs and outputs</h2>")
        if report["inputs"]:
            parts.append(_values_table("Inputs", report["inputs"]))
        if report["outputs"]:
            parts.append(_values_table("Outputs", report["outputs"]))
    parts.append("<h2>Totals</h2>")
    totals = report["totals"]
    parts.append(html_table(["quantity", "all runs"],
                            [["steps (instructions)", count(totals["steps"])],
                             ["cycles", count(totals["cycles"])]]
                            + [[f"energy, {m['name']}", si(m["total_J"], "J")]
                               for m in report["energy"]]
                            + [[f"bits erased, {SCENARIO_LABELS.get(n, n).split(' (')[0]}",
                                count(s["bits_erased"])]
                               for n, s in report["erasure"]["scenarios"].items()],
                            caption="Totals of the protocol"))
    parts.append("<h2>Op counts</h2>")
    classes = _class_order({c for run in runs for c in run["by_class"]})
    rows = [[class_label(c)] + _with_total([r["by_class"].get(c, 0) for r in runs])
            for c in classes]
    rows.append(["steps (instructions)"] + _with_total([r["steps"] for r in runs]))
    rows.append(["cycles"] + _with_total([r["cycles"] for r in runs]))
    parts.append(html_table(["class"] + columns, rows, caption="Op counts by class"))
    names = sorted({n for run in runs for n in run["by_instruction"]})
    parts.append(html_table(["instruction"] + columns,
                            [[n] + _with_total([r["by_instruction"].get(n, 0) for r in runs])
                             for n in names], caption="Op counts by instruction"))
    adjoint = sorted({c for run in runs for c in run["adjoint_operations"]})
    if adjoint:
        parts.append("<h2>Adjoint operations</h2>")
        parts.append(html_table(["operation"] + columns,
                                [[c] + _with_total([r["adjoint_operations"].get(c, 0)
                                                    for r in runs]) for c in adjoint],
                                caption="Adjoint operations (gradient pass)"))
    parts.append("<h2>Traffic and occupancy</h2>")
    parts.append(html_table(["traffic"] + columns,
                            [[TRAFFIC_LABELS[key]] + _with_total([r["traffic"][key]
                                                                  for r in runs])
                             for key in traffic_keys(runs)], caption="Traffic"))
    occupancy = [("peak live registers", "peak_live_registers"),
                 ("peak data-memory words", "peak_data_words"),
                 ("highest data address", "highest_data_address"),
                 ("ancilla words", "ancilla_words"), ("peak ancilla words", "peak_ancilla_words")]
    parts.append(html_table(["occupancy"] + columns[:-1],
                            [[label] + [count(r["occupancy"][key]) for r in runs]
                             for label, key in occupancy], caption="Occupancy"))
    parts.append("<h2>Energy</h2>")
    parts += _energy_sections(report["energy"])
    erasure = report["erasure"]
    parts.append(f"<h2>Bits erased (W = {erasure['word_bits']})</h2>")
    landauer = next((m for m in report["energy"] if m["kind"] == "landauer"), None)
    rows = []
    for name, scenario in erasure["scenarios"].items():
        row = [SCENARIO_LABELS.get(name, name), count(scenario["bits_erased"]),
               count(scenario["bits_stored"])]
        if landauer:
            row.append(si(landauer["scenarios_J"][name], "J"))
        rows.append(row)
    parts.append(html_table(["scenario", "bits erased", "bits stored"]
                            + (["Landauer"] if landauer else []), rows,
                            caption="Bits erased per scenario"))
    tape = erasure["scenarios"]["tape"]["parts"]
    parts.append(f'<p class="note">tape: {count(tape["tape_values_popped"])} value bits + '
                 f'{count(tape["tape_control_bits"])} branch bits stored; '
                 f'{count(tape["adjoint_updates"])} bits of adjoint updates overwritten</p>')
    parts.append("<h2>Plots</h2>")
    if plots_available():
        parts += _plots(report)
    else:
        parts.append('<p class="note">Plots need matplotlib: '
                     "<code>pip install 'revasm[plots]'</code>.</p>")
    style = STYLE
    if "by_line" in report:
        parts.append(render_by_line_html(report["by_line"]))
        style += BY_LINE_STYLE
    parts.append('<p class="note">Every count and model is explained in docs/energy.md.</p>')
    return page("revasm report", style, parts)


def page(title: str, style: str, parts: list[str]) -> str:
    """A whole HTML document around ``parts``."""
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{style}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")
