"""A batch report as terminal tables and as an HTML page."""
from __future__ import annotations

import html

from .batch import STATISTICS
from .terminal import SCENARIO_LABELS, class_label
from .units import count, si


def _metric_label(metric: str) -> tuple[str, str]:
    """(label, unit) of a distribution metric."""
    if metric.startswith("energy_J."):
        return f"energy, {metric.split('.', 1)[1]}", "J"
    if metric.startswith("bits_erased."):
        name = metric.split(".", 1)[1]
        return f"bits erased, {SCENARIO_LABELS.get(name, name).split(' (')[0]}", ""
    return metric.replace("_", " "), ""


def _value(value: float, unit: str) -> str:
    return si(value, unit) if unit else f"{value:,.4g}"


def distribution_rows(report: dict) -> list[list[str]]:
    rows = []
    for metric, stats in report["distribution"].items():
        label, unit = _metric_label(metric)
        rows.append([label] + [_value(stats[name], unit) for name in STATISTICS])
    return rows


def format_batch_report(report: dict) -> str:
    """Aggregates and the per-lane distribution, as plain text."""
    lines = [f"revasm report: {report['file']} over {report['lanes']} lanes "
             f"(W = {report['width']}, {report['mode']} mode): {report['finished']} finished"
             + (", faults: " + ", ".join(f"{k} x{v}" for k, v in report["faults"].items())
                if report["faults"] else "")]
    engines = report["engines"]
    if "vector_error" in engines:
        lines.append(f"  vector simulator: not compared ({engines['vector_error']})")
    if "vector_forward_steps_agree" in engines:
        lines.append("  vector simulator: forward steps and cycles "
                     + ("agree on every lane" if engines["vector_forward_steps_agree"]
                        else "DIFFER from the reference"))
    lines.append("")
    totals = report["totals"]
    lines.append("Totals over all lanes and runs")
    for name, value in totals["by_class"].items():
        lines.append(f"  {class_label(name):<52} {count(value):>14}")
    lines.append(f"  {'steps':<52} {count(totals['steps']):>14}")
    lines.append(f"  {'cycles':<52} {count(totals['cycles']):>14}")
    for name, joules in report["energy_J"].items():
        lines.append(f"  {'energy, ' + name:<52} {si(joules, 'J'):>14}")
    for name, bits in report["bits_erased"].items():
        label = SCENARIO_LABELS.get(name, name).split(" (")[0]
        lines.append(f"  {'bits erased, ' + label:<52} {count(bits):>14}")
    lines.append("")
    rows = distribution_rows(report)
    widths = [max(len(row[i]) for row in rows + [["Per lane"] + list(STATISTICS)])
              for i in range(len(STATISTICS) + 1)]
    header = ["Per lane"] + list(STATISTICS)
    lines.append("  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i])
                           for i, h in enumerate(header)))
    for row in rows:
        lines.append("  ".join(("  " + v).ljust(widths[0]) if i == 0 else v.rjust(widths[i])
                               for i, v in enumerate(row)))
    return "\n".join(lines)


#: The batch HTML page lists this many lanes at most (the JSON report has them all).
HTML_LANES = 200


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _batch_plots(report: dict) -> list[str]:
    """Outputs and gradients against the first input that varies across lanes, and the
    histogram of steps per lane when lanes differ in steps: only plots that show something."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    from .html_report import figure_html

    lanes = report["per_lane"]
    figures = []
    inputs = lanes[0]["inputs"] if lanes else {}
    varying = [name for name in inputs
               if all(_is_number(lane["inputs"].get(name)) for lane in lanes)
               and len({lane["inputs"][name] for lane in lanes}) >= 2]
    if varying:
        x_name = varying[0]
        series = [("output", name) for name in lanes[0]["outputs"]] + \
            [("gradient", name) for name in lanes[0].get("gradient", {})]
        for kind, name in series:
            key = "outputs" if kind == "output" else "gradient"
            points = sorted((lane["inputs"][x_name], lane[key][name]) for lane in lanes
                            if lane["status"] == "finished"
                            and _is_number(lane.get(key, {}).get(name)))
            if len(points) < 2:
                continue
            figure, axes = pyplot.subplots(figsize=(6, 3.4))
            axes.plot([x for x, _ in points], [y for _, y in points],
                      marker="o" if len(points) <= 50 else None)
            axes.set_xlabel(x_name)
            label = name if kind == "output" else f"d loss / d {name}"
            axes.set_ylabel(label)
            axes.set_title(f"{label} against {x_name}, one point per lane")
            figures.append((f"{kind} {name} against input {x_name}", figure))
    steps = [lane["steps"] for lane in lanes]
    if len(set(steps)) >= 2:
        figure, axes = pyplot.subplots(figsize=(6, 3.4))
        axes.hist(steps, bins=min(30, len(set(steps))))
        axes.set_xlabel("steps per lane (all runs)")
        axes.set_ylabel("lanes")
        axes.set_title("Steps per lane")
        figures.append(("Steps per lane", figure))
    return figure_html(figures)


def _lane_columns(lanes: list[dict], key: str) -> list[str]:
    """The names under ``key`` (inputs, outputs, gradient) of any lane, in first-seen order."""
    names: dict[str, None] = {}
    for lane in lanes:
        names.update(dict.fromkeys(lane.get(key, {})))
    return list(names)


def render_batch_html(report: dict) -> str:
    """The batch report as one HTML page: totals, the per-lane distribution, one row per
    lane (its inputs, outputs and gradient; the first ``HTML_LANES``) and plots."""
    from .html_report import STYLE, html_table, page, plots_available

    lanes = report["per_lane"]
    parts = [f"<h1>revasm report: {html.escape(report['file'])}, {report['lanes']} lanes</h1>",
             f"<p>W = {report['width']}, {report['mode']} mode, {report['finished']} lanes "
             "finished" + ("; faults: " + html.escape(", ".join(
                 f"{k} x{v}" for k, v in report["faults"].items())) if report["faults"] else "")
             + "</p>"]
    engines = report["engines"]
    if "vector_forward_steps_agree" in engines:
        parts.append("<p>Vector simulator: forward steps and cycles "
                     + ("agree on every lane" if engines["vector_forward_steps_agree"]
                        else "<b>DIFFER from the reference</b>") + "</p>")
    totals = report["totals"]
    rows = [[class_label(name), count(value)] for name, value in totals["by_class"].items()]
    rows += [["steps", count(totals["steps"])], ["cycles", count(totals["cycles"])]]
    rows += [[f"energy, {name}", si(joules, "J")] for name, joules in report["energy_J"].items()]
    rows += [[f"bits erased, {SCENARIO_LABELS.get(name, name).split(' (')[0]}", count(bits)]
             for name, bits in report["bits_erased"].items()]
    parts.append("<h2>Totals over all lanes and runs</h2>")
    parts.append(html_table(["quantity", "total"], rows, caption="Totals"))
    parts.append("<h2>Per-lane distribution</h2>")
    parts.append(html_table(["metric"] + list(STATISTICS), distribution_rows(report),
                            caption="Distribution over lanes"))
    parts.append("<h2>Lanes</h2>")
    shown = lanes[:HTML_LANES]
    if len(lanes) > len(shown):
        parts.append(f'<p class="note">The first {len(shown)} of {len(lanes)} lanes; '
                     "<code>--json</code> gives every lane.</p>")
    inputs, outputs = _lane_columns(shown, "inputs"), _lane_columns(shown, "outputs")
    gradient = _lane_columns(shown, "gradient")
    models = list(report["energy_J"])
    headers = (["lane", "status"] + [f"in: {n}" for n in inputs]
               + [f"out: {n}" for n in outputs] + [f"grad: {n}" for n in gradient]
               + ["steps", "cycles"] + [f"energy, {m}" for m in models])
    rows = [[str(lane["lane"]), lane["status"] + (f" ({lane['fault']})" if lane["fault"] else "")]
            + [str(lane["inputs"].get(n, "")) for n in inputs]
            + [str(lane["outputs"].get(n, "")) for n in outputs]
            + [str(lane.get("gradient", {}).get(n, "")) for n in gradient]
            + [count(lane["steps"]), count(lane["cycles"])]
            + [si(lane["energy_J"][m], "J") for m in models] for lane in shown]
    parts.append(html_table(headers, rows, caption="One row per lane"))
    parts.append("<h2>Plots</h2>")
    if plots_available():
        plots = _batch_plots(report)
        parts += plots or ['<p class="note">No plot: no input varies across lanes and every '
                           "lane takes the same steps.</p>"]
    else:
        parts.append('<p class="note">Plots need matplotlib: '
                     "<code>pip install 'revasm[plots]'</code>.</p>")
    return page("revasm batch report", STYLE, parts)
