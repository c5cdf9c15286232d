"""Breakpoints (labels, PCs, PAL lines, Python lines) and watchpoints (registers, words, names).

A breakpoint is a set of PCs: the session stops when it arrives at one of them, in either
direction of time.  A Python line compiles to many instructions, so its breakpoint
stops only on *entering* the line (the previous stop was on another line).  A
watchpoint is a place whose word the session compares after every instruction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from revasm.assembler.image import DeclaredName, Image, UnknownName

from .source_map import SourceMap


class DebugError(ValueError):
    """A command the session cannot carry out, with the reason in the user's words."""


@dataclass
class Breakpoint:
    """Where to stop: ``spec`` as the user wrote it, its ``pcs``, and its ``kind``
    (``label``, ``pc``, ``pal-line``, ``python-line`` or ``janus-line``)."""

    number: int
    spec: str
    kind: str
    pcs: frozenset[int]
    line: int | None = None
    hits: int = 0

    def to_json(self) -> dict:
        return {"id": self.number, "spec": self.spec, "kind": self.kind,
                "pcs": sorted(self.pcs), "line": self.line, "hits": self.hits}


@dataclass
class Watchpoint:
    """A register, memory word or declared name whose changes stop the session."""

    number: int
    spec: str
    register: int | None = None
    address: int | None = None
    fixed: bool = False
    hits: int = 0
    last: int = field(default=0, repr=False)

    def to_json(self) -> dict:
        return {"id": self.number, "spec": self.spec, "register": self.register,
                "address": self.address, "hits": self.hits}


_LINE = re.compile(r"^(?:(?P<file>.*?):|line\s+)(?P<line>\d+)$")
_NUMBER = re.compile(r"^(?:0x[0-9a-fA-F]+|\d+)$")


def parse_breakpoint(spec: str, source: SourceMap, number: int) -> Breakpoint:
    """``LABEL``, ``ADDR`` (a PC, as PendVM's ``break 0x10``), ``:N`` / ``line N`` (a line
    of the debugged file: the Janus or Python source of a compiled program), ``FILE.pal:N``,
    ``FILE.py:N``, ``FILE.ja:N``."""
    spec = spec.strip()
    if not spec:
        raise DebugError("say where to break: a label, a PC, :LINE or FILE:LINE")
    if _NUMBER.match(spec):
        pc = int(spec, 0)
        if not (0 <= pc < len(source.image) and source.image.is_code[pc]):
            raise DebugError(f"pc {pc} is not an instruction of the program "
                             f"(0..{len(source.image) - 1})")
        return Breakpoint(number, spec, "pc", frozenset({pc}), source.pal_line(pc))
    match = _LINE.match(spec)
    if match:
        line = int(match["line"])
        file = match["file"] or ""
        python = (source.program is not None and not file.endswith(".pal")) or \
            file.endswith((".py", ".ja"))
        if python:
            if source.program is None:
                language = "Janus" if file.lower().endswith(".ja") else "Python"
                raise DebugError(f"{spec}: this program was not compiled from {language}")
            if file and Path(file).name != Path(source.python_file or "").name:
                raise DebugError(f"{spec}: the program comes from {source.python_file}")
            pcs = source.pcs_of_python_line(line)
            kind = f"{source.language}-line"
        else:
            if file and source.program is None and Path(file).name != Path(source.pal_file).name:
                raise DebugError(f"{spec}: the program comes from {source.pal_file}")
            pcs = source.pcs_of_pal_line(line)
            kind = "pal-line"
        if not pcs:
            raise DebugError(f"{spec}: no instruction comes from line {line}")
        return Breakpoint(number, spec, kind, frozenset(pcs), line)
    label_pc = source.code_label(spec)
    if label_pc is None:
        known = ", ".join(name for names in source.labels.values() for name in names)
        raise DebugError(f"{spec!r} is not a label of an instruction (labels: {known or 'none'})")
    return Breakpoint(number, spec, "label", frozenset({label_pc}), source.pal_line(label_pc))


def parse_watchpoint(spec: str, source: SourceMap, number: int) -> Watchpoint:
    """``$n``, ``[ADDR]`` / ``[LABEL]`` (a memory word) or a declared name."""
    spec = spec.strip()
    image = source.image
    if spec.startswith("[") and spec.endswith("]"):
        return Watchpoint(number, spec, address=parse_address(spec[1:-1], source))
    place = resolve_name(image, spec, "there is nothing to watch")
    return Watchpoint(number, spec, place.register, place.address, place.fixed)


def resolve_name(image: Image, name: str, zero: str = "") -> DeclaredName:
    """``$n`` or a declared name (``Image.resolve_name``); ``zero`` refuses ``$0`` saying why."""
    try:
        place = image.resolve_name(name)
    except UnknownName as exc:
        raise DebugError(str(exc)) from None
    if zero and place.register == 0:
        raise DebugError(f"$0 always reads zero: {zero}")
    return place


def parse_address(text: str, source: SourceMap) -> int:
    """A memory address: a number (decimal or 0x) or a label."""
    text = text.strip()
    if _NUMBER.match(text):
        address = int(text, 0)
    elif text in source.image.symbols:
        address = source.image.symbols[text]
    else:
        raise DebugError(f"{text!r} is neither an address nor a label")
    mask = (1 << source.image.width) - 1
    if not 0 <= address <= mask:
        raise DebugError(f"address {address} is not a {source.image.width}-bit word")
    return address
