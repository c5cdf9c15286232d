"""The ``by_line`` section of a report for people: a terminal table and an HTML listing.

The terminal shows the lines that ran, in source order, with their share of the steps;
the HTML page shows every line of the source with a heat column (the line's share of the
run's steps as a colour and a bar), so the hot loop stands out at a glance.
"""
from __future__ import annotations

import html

from .units import count, si


def _energy_model(section: dict) -> str | None:
    """The model whose joules the listing shows: the first one every line has."""
    names = [set(row["energy_J"]) for row in section["lines"]]
    common = set.intersection(*names) if names else set()
    for row in section["lines"]:
        for name in row["energy_J"]:
            if name in common:
                return str(name)
    return None


def _where(row: dict, files: list[str]) -> str:
    if row["line"] is None:
        return "(none)"
    if len(files) > 1:
        return f"{row['file'].rsplit('/', 1)[-1]}:{row['line']}"
    return str(row["line"])


def format_by_line(section: dict, top: int | None = None) -> list[str]:
    """The lines that ran: steps forward and backward, cycles, share, energy, bits erased
    by an irreversible machine, and the source text.  ``top`` keeps the costliest lines."""
    rows = [row for row in section["lines"] if row["steps"]]
    total = sum(row["steps"] for row in rows) or 1
    model = _energy_model(section)
    if top is not None:
        chosen = {id(row) for row in sorted(rows, key=lambda r: -r["steps"])[:top]}
        rows = [row for row in rows if id(row) in chosen]
    files = section["files"]
    title = "By source line" + (f" ({files[0]})" if len(files) == 1 else "")
    head = ["line", "forward", "backward", "cycles", "share"] + \
        ([f"energy ({model})"] if model else []) + ["bits erased"]
    table = [head]
    for row in rows:
        cells = [_where(row, files), count(row["forward"]["steps"]),
                 count(row["backward"]["steps"]), count(row["cycles"]),
                 f"{100 * row['steps'] / total:.1f}%"]
        if model:
            cells.append(si(row["energy_J"][model], "J"))
        cells.append(count(row["bits_erased"]["irreversible"]))
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = [title]
    for r, row in zip(table, [None, *rows]):
        text = "  " + "  ".join(f"{c:>{w}}" for c, w in zip(r, widths))
        source = "source" if row is None else row["text"].strip()
        lines.append(f"{text}  {source}"[:160].rstrip())
    lines.append("  (bits erased: what an irreversible machine overwrites for the line's "
                 "forward work; docs/energy.md, \"By source line\")")
    return lines


def _heat(share: float) -> str:
    """A background colour from white (no steps) to red (the hottest line)."""
    level = int(255 - 200 * min(max(share, 0.0), 1.0))
    return f"rgb(255,{level},{level})"


def render_by_line_html(section: dict) -> str:
    """Each source file in full, every line with its steps, share, cycles and a heat bar."""
    rows = section["lines"]
    total = sum(row["steps"] for row in rows) or 1
    hottest = max((row["steps"] for row in rows), default=0) or 1
    model = _energy_model(section)
    parts = ["<h2>By source line</h2>",
             '<p class="note">Steps forward + backward of each line of the source, with its '
             "share of the run; the colour follows the hottest line.</p>"]
    for file in section["files"]:
        by_number = {row["line"]: row for row in rows if row["file"] == file}
        head = ["line", "heat", "steps", "share", "cycles"] + \
            ([f"energy ({model})"] if model else []) + ["source"]
        out = [f"<table class=\"listing\"><caption>By source line: {html.escape(file)}</caption>"
               "<tr>"
               + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
        for number, text in enumerate(section["sources"].get(file, []), start=1):
            row = by_number.get(number)
            steps = row["steps"] if row else 0
            share = steps / total
            bar = f'<div class="bar" style="width:{100 * steps / hottest:.1f}%"></div>' \
                if steps else ""
            cells = [f'<td class="n">{number}</td>', f'<td class="heat">{bar}</td>',
                     f'<td class="n">{count(steps) if row else ""}</td>',
                     f'<td class="n">{f"{100 * share:.1f}%" if row else ""}</td>',
                     f'<td class="n">{count(row["cycles"]) if row else ""}</td>']
            if model:
                cells.append(f'<td class="n">{si(row["energy_J"][model], "J") if row else ""}'
                             "</td>")
            cells.append(f"<td><pre>{html.escape(text)}</pre></td>")
            style = f' style="background:{_heat(steps / hottest)}"' if steps else ""
            out.append(f"<tr{style}>{''.join(cells)}</tr>")
        out.append("</table>")
        parts.append(f"<h3>{html.escape(file)}</h3>" + "".join(out))
    unmapped = [row for row in rows if row["line"] is None]
    if unmapped:
        parts.append(f"<p class=\"note\">{count(unmapped[0]['steps'])} steps belong to no "
                     "source line.</p>")
    return "".join(parts)


BY_LINE_STYLE = """
table.listing td { border: none; border-bottom: 1px solid #eee; padding: 0 0.5em; }
table.listing pre { margin: 0; font-size: 0.9em; }
td.heat { width: 8em; }
div.bar { height: 0.8em; background: #c33; }
"""
