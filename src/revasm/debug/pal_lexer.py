"""A Pygments lexer for PAL, the assembly text of the Pendulum ISA and its extension.

Registered as the ``pal`` lexer (an entry point in pyproject.toml), so ``pygmentize -l
pal FILE`` and any Pygments user highlight PAL; the debugger's source display uses it.
The mnemonics and directives come from the instruction table and the assembler's
directive and pseudo-instruction tables: nothing here keeps its own list.
"""
from __future__ import annotations

import re

from pygments.lexer import RegexLexer, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    Whitespace,
)

from revasm.assembler.assemble import DATA_MNEMONIC
from revasm.assembler.directives import DIRECTIVES, VALUE_TYPES
from revasm.assembler.pseudo_instructions import PSEUDO_INSTRUCTIONS
from revasm.isa.table import INSTRUCTIONS


def _mnemonics() -> list[str]:
    names = {entry.mnemonic for entry in INSTRUCTIONS}
    names |= {alias for entry in INSTRUCTIONS for alias in entry.aliases}
    names |= {pseudo.mnemonic for pseudo in PSEUDO_INSTRUCTIONS} | {DATA_MNEMONIC}
    return sorted(names, key=lambda name: (-len(name), name))


#: the end of a word: names may hold dots (``v_x.0``) and underscores
_END = r"(?![\w.])"


class PalLexer(RegexLexer):
    """PAL: labels, mnemonics, registers, numbers (integer, hex, fixed point), directives,
    ``;`` comments."""

    name = "PAL"
    aliases = ["pal", "pisa"]
    filenames = ["*.pal", "*.pisa"]
    mimetypes = ["text/x-pal"]
    url = "https://github.com/sjmurdoch/PendVM"
    flags = re.IGNORECASE | re.MULTILINE

    tokens = {
        "root": [
            (r";.*?$", Comment.Single),
            (r"\s+", Whitespace),
            (r"[A-Za-z_][\w.]*:", Name.Label),
            (words(sorted(DIRECTIVES, key=len, reverse=True), suffix=_END), Keyword.Declaration),
            (words(_mnemonics(), suffix=_END), Keyword),
            (words(sorted(VALUE_TYPES) + ["in"], suffix=_END), Keyword.Type),
            (r"\$\d+", Name.Variable),
            (r"[-+]?0x[0-9a-f]+" + _END, Number.Hex),
            (r"[-+]?\d+(?=\.\.)", Number.Integer),
            (r"[-+]?(\d+\.\d*|\.\d+)(e[-+]?\d+)?" + _END, Number.Float),
            (r"[-+]?\d+" + _END, Number.Integer),
            (r"\.\.|=|[-+*/]", Operator),
            (r",", Punctuation),
            (r"[A-Za-z_][\w.]*", Name),
        ],
    }
