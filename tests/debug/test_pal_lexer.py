"""The Pygments lexer of PAL: every example lexes without an Error token, every
instruction's mnemonic is a keyword, and `pygmentize -l pal` finds it by its entry point."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, Operator

from revasm.compiler import compile_file
from revasm.debug.pal_lexer import PalLexer
from revasm.isa.table import INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "examples").glob("**/*.pal"))


def tokens(text: str) -> list[tuple]:
    return [(kind, value) for kind, value in PalLexer().get_tokens(text) if value.strip()]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_example_lexes_without_an_error_token(path):
    found = tokens(path.read_text())
    assert not [t for t in found if t[0] in Error]
    assert any(kind in Keyword for kind, _ in found)


def test_compiled_pal_lexes_without_an_error_token():
    pal = compile_file(ROOT / "examples" / "nilang" / "rfib.py", "rfib").pal
    assert not [t for t in tokens(pal) if t[0] in Error]


def test_the_parts_of_a_line_get_their_kinds():
    found = tokens("loop:  addi  $3 -0x1f  ; count down\n.input x $1 fixed = 0.5 in 1..20\n")
    assert found == [
        (Name.Label, "loop:"), (Keyword, "addi"), (Name.Variable, "$3"), (Number.Hex, "-0x1f"),
        (Comment.Single, "; count down"), (Keyword.Declaration, ".input"), (Name, "x"),
        (Name.Variable, "$1"), (Keyword.Type, "fixed"), (Operator, "="),
        (Number.Float, "0.5"), (Keyword.Type, "in"), (Number.Integer, "1"),
        (Operator, ".."), (Number.Integer, "20")]


def test_every_mnemonic_of_the_table_is_a_keyword_in_either_case():
    for entry in INSTRUCTIONS:
        for name in (entry.mnemonic, entry.mnemonic.lower()):
            assert tokens(name + " $1")[0] == (Keyword, name)


def test_an_unknown_character_is_an_error_token():
    assert (Error, "@") in tokens("add $1 $2 @")


def test_pygments_finds_the_lexer_by_name_and_file_name():
    assert isinstance(get_lexer_by_name("pal"), PalLexer)
    assert isinstance(get_lexer_for_filename("fib.pal"), PalLexer)
    highlighted = subprocess.run(
        [sys.executable, "-m", "pygments", "-l", "pal", "-f", "html",
         str(ROOT / "examples" / "fib.pal")], capture_output=True, text=True, check=True).stdout
    assert '<span class="nl">top:</span>' in highlighted
