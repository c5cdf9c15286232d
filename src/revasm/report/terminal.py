"""The report as terminal tables (the default output of ``revasm report``)."""
from __future__ import annotations

from .classes import REPORT_CLASSES
from .units import count, si

SCENARIO_LABELS = {
    "reversible": "reversible (forward, copy out, backward)",
    "reversible_forward_only": "reversible, forward only (garbage erased)",
    "irreversible": "irreversible machine, same computation",
    "tape": "tape-based reverse-mode AD (store-all)",
}

TRAFFIC_LABELS = {"register_reads": "register-file reads",
                  "register_writes": "register-file writes", "memory_reads": "memory reads",
                  "memory_writes": "memory writes", "instruction_fetches": "instruction fetches",
                  "gradient_reads": "gradient-bank reads",
                  "gradient_writes": "gradient-bank writes",
                  "memory_gradient_reads": "memory-gradient reads",
                  "memory_gradient_writes": "memory-gradient writes"}
GRADIENT_TRAFFIC = ("gradient_reads", "gradient_writes", "memory_gradient_reads",
                    "memory_gradient_writes")


def traffic_keys(runs: list[dict]) -> list[str]:
    """Traffic rows worth showing: gradient-bank rows only when a run has them."""
    return [key for key in TRAFFIC_LABELS
            if key not in GRADIENT_TRAFFIC or any(run["traffic"].get(key) for run in runs)]


def run_label(run: dict) -> str:
    return run["direction"] if run["mode"] == "value" else f"{run['direction']} ({run['mode']})"


def class_label(name: str) -> str:
    return REPORT_CLASSES[name][0] if name in REPORT_CLASSES else name


def _table(title: str, columns: list[str], rows: list[tuple[str, list[str]]]) -> list[str]:
    width = max([len(title)] + [len(label) + 2 for label, _ in rows])
    cells = [columns] + [values for _, values in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    head = title.ljust(width) + "".join(f"  {c:>{w}}" for c, w in zip(columns, widths))
    lines = [head]
    for label, values in rows:
        lines.append(("  " + label).ljust(width)
                     + "".join(f"  {v:>{w}}" for v, w in zip(values, widths)))
    return lines


def _with_total(values: list[int]) -> list[str]:
    """One count per run, then their total."""
    return [count(v) for v in values] + [count(sum(values))]


def format_report(report: dict) -> str:
    """Every table of the report, as plain text."""
    runs = report["runs"]
    columns = [run_label(run) for run in runs] + ["total"]
    lines = []
    state = report["status"]
    if report.get("restored") is True:
        state += "; the backward run restored the initial state"
    elif report.get("restored") is False:
        state += "; the backward run did NOT restore the initial state"
    lines.append(f"revasm report: {report['file']} (W = {report['width']}, "
                 f"{report['mode']} mode): {state}")
    if report["inputs"]:
        lines.append("  inputs:  " + ", ".join(f"{k} = {v}" for k, v in report["inputs"].items()))
    if report["outputs"]:
        lines.append("  outputs: " + ", ".join(f"{k} = {v}" for k, v in report["outputs"].items()))
    if report.get("gradient"):
        lines.append("  gradient: " + ", ".join(f"{k} = {v}"
                                                for k, v in report["gradient"].items()))
    if "fault" in report:
        lines.append(f"  fault: {report['fault']['kind']}: {report['fault']['message']}")
    lines.append("")
    classes = sorted({c for run in runs for c in run["by_class"]},
                     key=lambda c: list(REPORT_CLASSES).index(c) if c in REPORT_CLASSES else 99)
    rows = [(class_label(c), _with_total([r["by_class"].get(c, 0) for r in runs]))
            for c in classes]
    rows.append(("steps (instructions)", _with_total([r["steps"] for r in runs])))
    rows.append(("cycles", _with_total([r["cycles"] for r in runs])))
    lines += _table("Op counts by class", columns, rows)
    lines.append("")
    names = sorted({n for run in runs for n in run["by_instruction"]})
    lines += _table("Op counts by instruction", columns,
                    [(n, _with_total([r["by_instruction"].get(n, 0) for r in runs]))
                     for n in names])
    adjoint = sorted({c for run in runs for c in run["adjoint_operations"]})
    if adjoint:
        lines.append("")
        lines += _table("Adjoint operations (gradient pass)", columns,
                        [(c, _with_total([r["adjoint_operations"].get(c, 0) for r in runs]))
                         for c in adjoint])
    lines.append("")
    lines += _table("Traffic", columns,
                    [(TRAFFIC_LABELS[key], _with_total([r["traffic"][key] for r in runs]))
                     for key in traffic_keys(runs)])
    lines.append("")
    occupancy_rows = [
        ("peak live registers", "peak_live_registers"), ("peak data-memory words",
                                                          "peak_data_words"),
        ("highest data address", "highest_data_address"), ("ancilla words", "ancilla_words"),
        ("peak ancilla words", "peak_ancilla_words")]
    lines += _table("Occupancy", columns[:-1],
                    [(label, [count(run["occupancy"][key]) for run in runs])
                     for label, key in occupancy_rows])
    lines.append("")
    lines += format_energy(report["energy"])
    lines.append("")
    lines += format_erasure(report)
    if "by_line" in report:
        from .by_line_format import format_by_line
        lines.append("")
        lines += format_by_line(report["by_line"])
    return "\n".join(lines)


def format_energy(models: list[dict]) -> list[str]:
    lines = ["Energy"]
    for model in models:
        head = f"  {model['name']:<10} {si(model['total_J'], 'J'):>11}  {model['title']}"
        lines.append(head)
        if model["kind"] == "per_operation":
            parts = ", ".join(f"{part.replace('_', ' ')} {si(j, 'J')}"
                              for part, j in model["by_part"].items())
            lines.append(f"  {'':<10} {'':>11}  {parts}")
            if model.get("unpriced_classes"):
                lines.append(f"  {'':<10} {'':>11}  no price for: "
                             + ", ".join(model["unpriced_classes"]))
        elif model["kind"] == "adiabatic":
            lines.append(f"  {'':<10} {'':>11}  switching time {si(model['switching_time_s'], 's')}"
                         f": {model['factor']:.4g} x {model['base_model']}; optimum "
                         f"{si(model['optimal_switching_time_s'], 's')}: "
                         f"{si(model['optimal_total_J'], 'J')}")
        else:
            lines.append(f"  {'':<10} {'':>11}  k T ln 2 = {si(model['J_per_bit'], 'J')} per bit "
                         f"at {model['temperature_K']:g} K (reversible protocol; "
                         "other scenarios below)")
    return lines


def format_erasure(report: dict) -> list[str]:
    erasure = report["erasure"]
    landauer = next((m for m in report["energy"] if m["kind"] == "landauer"), None)
    columns = ["bits erased", "bits stored"] + (["Landauer"] if landauer else [])
    rows = []
    for name, scenario in erasure["scenarios"].items():
        values = [count(scenario["bits_erased"]), count(scenario["bits_stored"])]
        if landauer:
            values.append(si(landauer["scenarios_J"][name], "J"))
        rows.append((SCENARIO_LABELS.get(name, name), values))
    lines = _table(f"Bits erased (W = {erasure['word_bits']})", columns, rows)
    tape = erasure["scenarios"]["tape"]["parts"]
    lines.append(f"  tape: {count(tape['tape_values_popped'])} value bits + "
                 f"{count(tape['tape_control_bits'])} branch bits stored; "
                 f"{count(tape['adjoint_updates'])} bits of adjoint updates overwritten")
    return lines
