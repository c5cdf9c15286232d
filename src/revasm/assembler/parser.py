"""PAL lines to statements: labels, then a mnemonic or directive, then operands.

A statement is what one source line says::

    looptop: bne $3 $0 loopbot     ; labels, head, operands
    .input x $1 fixed              ; a directive (head starts with '.')
    done:                          ; labels alone name the next address

Only the shape of the line is checked here; what the head and operands mean
is the assembler's business.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .diagnostics import DiagnosticLog
from .lexer import HEADER, Token, code_part, has_header, tokenize
from .literals import is_number

#: Labels, constants and declared names: a letter or '_', then letters,
#: digits, '_' or '.' (ROOPL emits names like ``l_Program_vt``).
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")

#: Labels as PendVM defines them: any word that ends with ':' (its loader tests only
#: the last character), so ``.L3:``, ``1st:`` and ``loop-top:`` are labels too.  We
#: refuse three spellings that would read as something else: a leading '$' (a
#: register), a leading '-' or '+' (a negated name, a sign) and a number (``10:``).
LABEL = re.compile(r"[^\s,;:$+\-][^\s,;:]*\Z")


@dataclass(slots=True)
class Statement:
    """One non-empty source line."""

    line: int
    text: str
    labels: list[Token] = field(default_factory=list)
    head: Token | None = None
    operands: list[Token] = field(default_factory=list)

    @property
    def is_directive(self) -> bool:
        return self.head is not None and self.head.text.startswith(".")

    def end_column(self) -> int:
        """The column just after the last token (where a missing operand goes)."""
        return len(code_part(self.text).rstrip()) + 1


def parse_line(number: int, text: str, log: DiagnosticLog) -> Statement | None:
    """The statement on a line, or None for a blank or comment-only line."""
    tokens = tokenize(text)
    if not tokens:
        return None
    statement = Statement(number, text)
    rest = list(tokens)
    while rest and rest[0].text.endswith(":"):
        label = rest.pop(0)
        name = label.text[:-1]
        if not LABEL.match(name) or is_number(name):
            log.error(number, label.column,
                      f"invalid label {label.text!r}: a label is a word that is not a "
                      "number and does not start with '$', '-' or '+'")
            continue
        statement.labels.append(Token(name, label.column))
    if rest:
        statement.head = rest.pop(0)
    for token in rest:
        if token.text.endswith(":"):
            log.error(number, token.column,
                      f"unexpected label {token.text!r}: labels come first on a line")
        else:
            statement.operands.append(token)
    return statement


def parse_source(lines: list[str], log: DiagnosticLog,
                 parsed: Sequence[Statement | None] | None = None) -> list[Statement]:
    """Every statement of a PAL file, after checking the header line.

    Without the header, line 1 is reported and then read as an ordinary line,
    so that the rest of the file still gets checked.  ``parsed``, when given, holds a
    line's statement where its writer knows it already (the compiler's instructions:
    ``parsed[k]`` is what :func:`parse_line` makes of line ``k + 1``, as
    ``tests/compiler/backend/test_writer.py`` checks); the other lines are read here.
    """
    statements: list[Statement] = []
    first = 1
    if lines and has_header(lines[0]):
        first = 2
    else:
        log.error(1, 1, f"expected the PAL header {HEADER!r} at the start of line 1")
    for number in range(first, len(lines) + 1):
        statement = parsed[number - 1] if parsed is not None else None
        if statement is None:
            statement = parse_line(number, lines[number - 1], log)
        if statement is not None:
            statements.append(statement)
    return statements
