"""The directives of the assembly language (lines whose first word starts with '.').

``.start`` is PendVM's; the others are revasm extensions that PendVM does not
read.  Directive names are case-insensitive, like mnemonics.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Directive:
    name: str
    syntax: str
    doc: str
    min_operands: int
    max_operands: int


#: Declarations name a register or memory word for the tools (``revasm run
#: --set``, ``revasm grad``); the role says what the tools do with it.
DECLARATION_ROLES = {".input": "input", ".output": "output", ".loss": "loss", ".name": "name"}
VALUE_TYPES = {"fixed": True, "int": False}
_ROLE_DOCS = {
    ".input": "an input, set by the tools before a run",
    ".output": "an output, read by the tools after a run",
    ".loss": "the loss, whose gradient `revasm grad` computes",
    ".name": "a plain name, for --set and for reports",
}

DIRECTIVES: dict[str, Directive] = {d.name: d for d in (
    Directive(".width", ".width 32|64", "the machine's word width (default 32)", 1, 1),
    Directive(".pendvm", ".pendvm",
              "PendVM-compatibility mode: ADDI, XORI, ANDIX and SLTIX take any 32-bit "
              "immediate, as PendVM's 1997 parser does, at the same address "
              "(docs/assembly.md, PendVM variants)", 0, 0),
    Directive(".start", ".start LABEL|ADDRESS",
              "execution starts here (default: the START instruction)", 1, 1),
    Directive(".const", ".const NAME VALUE",
              "a named constant: a number, fixed-point literal or earlier constant", 2, 2),
    Directive(".equ", ".equ NAME VALUE", "the same as .const", 2, 2),
    *(Directive(name, f"{name} NAME LOC [fixed|int] [= VALUE]"
                + (" [in LO..HI]" if name == ".input" else ""),
                f"declare NAME as {_ROLE_DOCS[name]}; LOC is a register $n or a memory "
                "word (label or address); the value is fixed point unless 'int'; VALUE is "
                "the word the host loads there before a run when the user gives none"
                + ("; in LO..HI is the domain revasm check --random draws from (ends "
                   "included)" if name == ".input" else ""), 2, 9 if name == ".input" else 5)
      for name in DECLARATION_ROLES),
)}


def lookup_directive(name: str) -> Directive | None:
    return DIRECTIVES.get(name.lower())
