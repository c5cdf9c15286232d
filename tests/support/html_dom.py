"""What a browser would show of an HTML report: its headings and tables, read from the DOM.

``read_page`` parses HTML (a generated file, or the DOM Chromium dumps after rendering it)
into the section headings in order and every table as its caption, header cells and rows of
cell texts.  Tests of the HTML reports assert on this, not on substrings of the markup.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


@dataclass
class Table:
    caption: str = ""
    rows: list[list[str]] = field(default_factory=list)

    @property
    def header(self) -> list[str]:
        return self.rows[0] if self.rows else []

    def body(self) -> list[list[str]]:
        return self.rows[1:]

    def column(self, name: str) -> list[str]:
        index = self.header.index(name)
        return [row[index] for row in self.body()]

    def as_dict(self) -> dict[str, list[str]]:
        """Row label (first cell) to the other cells."""
        return {row[0]: row[1:] for row in self.body()}


@dataclass
class Page:
    headings: list[str] = field(default_factory=list)  # h1/h2 texts, in order
    tables: list[Table] = field(default_factory=list)
    svgs: int = 0
    figure_captions: list[str] = field(default_factory=list)
    text: str = ""
    order: list[str] = field(default_factory=list)  # "h:TEXT" and "t:CAPTION" in order

    def table(self, caption: str) -> Table:
        found = [t for t in self.tables if t.caption == caption]
        assert len(found) == 1, f"{caption!r} not one table of {[t.caption for t in self.tables]}"
        return found[0]

    def position(self, entry: str) -> int:
        return self.order.index(entry)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.stack: list[str] = []
        self.capture: list[str] | None = None
        self.cell: list[str] | None = None
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.stack.append(tag)
        if tag == "table":
            self.page.tables.append(Table())
        elif tag == "tr" and self.page.tables and "table" in self.stack:
            self.page.tables[-1].rows.append([])
        elif tag in ("td", "th") and "table" in self.stack:
            self.cell = []
        elif tag in ("h1", "h2", "caption", "figcaption"):
            self.capture = []
        elif tag == "svg":
            self.page.svgs += 1

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop() != tag:
            pass
        text = " ".join("".join(self.capture or []).split())
        if tag in ("td", "th") and self.cell is not None:
            self.page.tables[-1].rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag in ("h1", "h2"):
            self.page.headings.append(text)
            self.page.order.append(f"h:{text}")
            self.capture = None
        elif tag == "caption":
            self.page.tables[-1].caption = text
            self.page.order.append(f"t:{text}")
            self.capture = None
        elif tag == "figcaption":
            self.page.figure_captions.append(text)
            self.capture = None

    def handle_data(self, data: str) -> None:
        if "svg" in self.stack or "style" in self.stack:
            return
        self.texts.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.capture is not None:
            self.capture.append(data)


def read_page(markup: str) -> Page:
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    reader.page.text = " ".join("".join(reader.texts).split())
    return reader.page


def chromium() -> str | None:
    """A headless Chromium on PATH (Debian's chromium-headless-shell or chromium), or None."""
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def rendered_dom(path: Path) -> str:
    """The DOM Chromium builds from ``path`` (``--dump-dom``): what a browser renders."""
    browser = chromium()
    assert browser is not None
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--dump-dom", path.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
