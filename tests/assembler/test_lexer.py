"""The lexer's two ways of finding a line's tokens agree on every line."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from revasm.assembler.lexer import code_part, tokenize, tokens_by_pattern

_PIECES = st.sampled_from([" ", "\t", "\f", "\v", "\xa0", "\u2028", "\x1c", "add", "$1",
                           "-5", "raw:0x8000", "loop:", ",", ";", "; note", "a.b", "é", ":",
                           "0x1F", "data"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
@example("              add     $14 $19             ; big.ja:10")
@example("loop:add $1, $2")
def test_split_words_are_the_patterns_tokens(line):
    assert tokenize(line) == tokens_by_pattern(code_part(line))
