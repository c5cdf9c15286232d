"""PAL source lines to tokens.

PAL is line oriented: ``;`` starts a comment, tokens are separated by white
space (PendVM reads them with ``sscanf("%s")``).  As a convenience, commas
separate operands too (``add $1, $2``), and ``label:`` ends a token even when
no space follows it (``loop:add $1 $2``).
"""
from __future__ import annotations

import re
from typing import NamedTuple

HEADER = ";; pendulum pal file"
COMMENT = ";"

# An explicit raw word ``raw:N`` (a declaration's value, assembler/values.py: N starts
# with a digit or a sign, so ``raw:add`` is still the label raw before an instruction),
# a label definition ``name:`` or any run of characters other than white space and commas.
_TOKEN = re.compile(r"(?i:raw):[-+]?\d[^\s,;]*|[^\s,:;]+:|[^\s,;]+")
_LINE_END = re.compile(r"\r\n|\r|\n")


class Token(NamedTuple):
    """A word of a source line and the 1-based column where it starts (a named tuple: a
    long program's lines make millions, and a frozen dataclass's construction cost a
    tenth of assembling a 10^5-statement Janus program's output)."""

    text: str
    column: int


def code_part(line: str) -> str:
    """The line without its comment."""
    cut = line.find(COMMENT)
    return line if cut < 0 else line[:cut]


def tokenize(line: str) -> list[Token]:
    """The tokens of a line, each with its column.  A line with no comma and no colon (no
    label, no ``raw:``) is words between white space: ``str.split`` finds them, a third
    faster than the pattern on a long file (``tests/assembler/test_lexer.py`` holds the
    two equal)."""
    code = code_part(line)
    if "," in code or ":" in code:
        return tokens_by_pattern(code)
    out = []
    at = 0
    for word in code.split():
        at = code.index(word, at)
        out.append(Token(word, at + 1))
        at += len(word)
    return out


def tokens_by_pattern(code: str) -> list[Token]:
    """The tokens of a line's code part by the token pattern (any line)."""
    return [Token(m.group(), m.start() + 1) for m in _TOKEN.finditer(code)]


def source_lines(source: str) -> list[str]:
    """The lines of a source text, without line ends (and without a UTF-8 BOM).

    A line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (classic Mac OS files), never at
    the other characters ``str.splitlines`` takes (form feed, ``\\x1c``, ``\\u2028``, ...),
    so line numbers are an editor's.
    """
    if source.startswith("\ufeff"):
        source = source[1:]
    # (a compiler's text has no \r: str.split is ~10x the regular expression's speed on
    # a 10^5-statement program's 30 MB, and splits it the same)
    lines = source.split("\n") if "\r" not in source else _LINE_END.split(source)
    if lines and lines[-1] == "":
        lines.pop()  # the text ends with a line end
    return lines


def has_header(first_line: str) -> bool:
    """PendVM compares the first 20 characters of the file with the header."""
    return first_line.startswith(HEADER)
