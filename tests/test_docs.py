"""The documents render as they should: docs/isa.md is what `python -m revasm.isa.docs`
prints, and every Markdown table (docs/*.md, README.md) has as many cells in each row
as in its header.

Cells are split the way GitHub-flavoured Markdown splits them: on every `|` that is not
escaped as `\\|` -- inside a code span too, so a `|` in a formula must be escaped.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
_FENCE = re.compile(r"^\s*(```|~~~)")
_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def cells(line: str) -> list[str]:
    """The cells of a table row (GFM: split on unescaped pipes, outer pipes optional)."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", text)]


def tables(text: str) -> list[tuple[int, list[str], list[tuple[int, str]]]]:
    """Every table outside code fences: (header line number, header cells, body rows)."""
    found = []
    lines = text.splitlines()
    fenced = False
    i = 0
    while i < len(lines):
        if _FENCE.match(lines[i]):
            fenced = not fenced
            i += 1
            continue
        if (not fenced and "|" in lines[i] and i + 1 < len(lines)
                and _DELIMITER.match(lines[i + 1]) and "-" in lines[i + 1]):
            header = cells(lines[i])
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip() and "|" in lines[j]:
                rows.append((j + 1, lines[j]))
                j += 1
            found.append((i + 1, header, rows))
            i = j
            continue
        i += 1
    return found


def test_isa_md_is_what_the_generator_prints():
    generated = subprocess.run([sys.executable, "-m", "revasm.isa.docs"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
    assert (ROOT / "docs" / "isa.md").read_text() == generated, \
        "docs/isa.md is stale: run `python -m revasm.isa.docs > docs/isa.md`"


def test_isa_md_has_its_tables():
    found = tables((ROOT / "docs" / "isa.md").read_text())
    assert len(found) >= 4
    assert any("SHOW" in row for _, _, rows in found for _, row in rows)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_table_row_has_the_header_s_cells(document: Path):
    problems = []
    for line_number, header, rows in tables(document.read_text()):
        delimiter = cells(document.read_text().splitlines()[line_number])
        if len(delimiter) != len(header):
            problems.append(f"{document.name}:{line_number + 1}: the delimiter row has "
                            f"{len(delimiter)} cells, the header {len(header)}")
        for row_number, row in rows:
            if len(cells(row)) != len(header):
                problems.append(f"{document.name}:{row_number}: {len(cells(row))} cells, "
                                f"the header (line {line_number}) has {len(header)}: {row[:100]}")
    assert not problems, "\n".join(problems)


def test_the_cell_splitter_sees_the_old_show_row_bug():
    header = "| syntax | effect | inverse | gradient | cycles | class | encoding |"
    bad = ("| `SHOW $a` | print a | self-inverse | none | 1 | io | `op` |"
           " aliases: SHOW, OUT, OUTPUT")
    assert len(cells(bad)) == len(cells(header)) + 1
    assert len(cells(r"| `a \| b` | c |")) == 2


def test_the_rtl_doc_s_cycles_per_instruction_are_the_schedule_s():
    """docs/rtl.md's row of cycles per instruction (a b c = 0.7, 1.3, 0.9, W = 32: the
    value step / the backward step in gradient mode) is what isa/timing counts -- what
    every simulator reports and the lockstep checks against the RTL."""
    from revasm.isa.codec import encode, lookup
    from revasm.isa.fixed_point import WordFormat
    from revasm.isa.timing import step_cycles
    text = (ROOT / "docs" / "rtl.md").read_text()
    header = ("| ADD | NEG | XOR | SWAP | ADDMUL | ADDDIV | ROT | ADDSIN | ADDTAN | ADDATAN2 "
              "| ADDPOW |")
    lines = text.splitlines()
    at = lines.index(header)
    names = [cell.strip() for cell in header.strip("|").split("|")]
    cells = [cell.strip() for cell in lines[at + 2].strip("|").split("|")]
    fmt = WordFormat(32)
    registers = [0, fmt.from_real("0.7"), fmt.from_real("1.3"), fmt.from_real("0.9")] + [0] * 28
    for name, cell in zip(names, cells, strict=True):
        entry = lookup(name)
        word = encode(entry, {n: i + 1 for i, n in enumerate(entry.operand_names)})
        expected = (f"{step_cycles(word, False, registers, 32)} / "
                    f"{step_cycles(word, True, registers, 32, gradient=True)}")
        assert cell == expected, name

