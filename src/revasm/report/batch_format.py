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


def render_batch_html(report: dict) -> str:
    """The batch report as one HTML page (tables; a histogram when matplotlib is there)."""
    from .html_report import STYLE, html_table, plots_available, svg_chart

    parts = [f"<h1>revasm report: {html.escape(report['file'])}, {report['lanes']} lanes</h1>",
             f"<p>W = {report['width']}, {report['mode']} mode, {report['finished']} lanes "
             "finished</p>"]
    if plots_available():
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
        figure, axes = pyplot.subplots(figsize=(6, 3.2))
        axes.hist([lane["steps"] for lane in report["per_lane"]], bins=30)
        axes.set_xlabel("steps per lane (all runs)")
        axes.set_ylabel("lanes")
        parts.append(f"<figure>{svg_chart(figure)}</figure>")
        pyplot.close(figure)
    parts.append("<h2>Per-lane distribution</h2>")
    parts.append(html_table(["metric"] + list(STATISTICS), distribution_rows(report)))
    parts.append("<h2>Lanes</h2>")
    models = list(report["energy_J"])
    rows = [[str(lane["lane"]), lane["status"], count(lane["steps"]), count(lane["cycles"])]
            + [si(lane["energy_J"][m], "J") for m in models] for lane in report["per_lane"]]
    parts.append(html_table(["lane", "status", "steps", "cycles"] + models, rows))
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>revasm batch report"
            f"</title><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n")
