"""Inverse gradient-mode templates: :func:`invert` derives the template that undoes one.

Every adjoint, tangent and adjoint-tangent template is a sequence of
invertible updates (``X = (X ± term) & M``, ``X = -X & M``, swaps,
``rot``/``irot``) after local definitions (``_name = ...``), and no update
reads the word it writes; so the inverse is the definitions followed by the
updates reversed, each inverted.  ``Instruction.*_inverse`` use it.
"""
from __future__ import annotations

import re

_TARGET = r"[A-Z]+\[[^\]]+\]"
_ACCUMULATE = re.compile(
    rf"^(?P<target>{_TARGET}) = \((?P=target) (?P<op>[+-]) (?P<term>.+)\) & M$")
_NEGATE = re.compile(rf"^(?P<target>{_TARGET}) = -(?P=target) & M$")
_SWAP = re.compile(rf"^(?P<x>{_TARGET}), (?P<y>{_TARGET}) = (?P=y), (?P=x)$")
_ROTATE = re.compile(rf"^(?P<x>{_TARGET}), (?P<y>{_TARGET}) = (?P<f>i?rot)\((?P=x), (?P=y), "
                     r"(?P<angle>.+)\)$")
_DEFINE = re.compile(r"^_\w+(, _\w+)* = .+$")


def _top_level_sum(term: str) -> bool:
    """Whether ``term`` has a + or - outside parentheses (then it needs them after a -)."""
    depth = 0
    for i, ch in enumerate(term):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in "+-" and depth == 0 and i > 0:
            return True
    return False


def _invert_update(line: str) -> str:
    if m := _ACCUMULATE.match(line):
        op = "-" if m["op"] == "+" else "+"
        term = m["term"]
        if op == "-" and _top_level_sum(term):
            term = f"({term})"
        return f"{m['target']} = ({m['target']} {op} {term}) & M"
    if _NEGATE.match(line) or _SWAP.match(line):
        return line
    if m := _ROTATE.match(line):
        other = "irot" if m["f"] == "rot" else "rot"
        return f"{m['x']}, {m['y']} = {other}({m['x']}, {m['y']}, {m['angle']})"
    raise ValueError(f"not an invertible gradient update: {line!r} (write X = (X ± term) & M, "
                     "X = -X & M, a swap, or X, Y = rot/irot(X, Y, angle))")


def invert(template: str) -> str:
    """The template that undoes ``template``: definitions first, updates reversed and inverted.

    Exact as long as no update reads the word it writes and the definitions
    read nothing the updates write -- true of every table entry, and checked
    by executing both on random states (tests/isa/test_adjoint_rules.py).
    """
    if not template:
        return ""
    lines = template.split("\n")
    definitions = [line for line in lines if _DEFINE.match(line)]
    updates = lines[len(definitions):]
    if lines[:len(definitions)] != definitions:
        raise ValueError(f"local definitions must come first in {template!r}")
    return "\n".join(definitions + [_invert_update(line) for line in reversed(updates)])
