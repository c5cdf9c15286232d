"""The Janus lexer: every token is where its position says, and what it skips is space
or comment."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler.errors import CompileError
from revasm.compiler.frontend.janus.parser import tokenize

_PIECES = st.sampled_from(["a", "b1", "x'", "12", " ", "\t", "\n", "\r\n", "+=", "<=>", "-",
                           "//c\n", "/* c\n d */", "/*", "*/", "(", "]", "procedure", "\"s\"",
                           "#", "&&", "!=", "\f"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_each_token_is_at_its_position_and_the_rest_is_space_or_comment(text):
    lines = text.split("\n")  # the lexer's lines end at \n only
    try:
        tokens = tokenize(text, "t.ja")
    except CompileError as exc:  # an unknown character or an unclosed comment, named there
        rest = lines[exc.pos.line - 1][exc.pos.column - 1:]
        assert rest[:1] == "#" or rest.startswith("/*"), (text, exc.message, rest)
        return
    left = list(lines)
    for token in tokens[:-1]:
        line = lines[token.pos.line - 1]
        start = token.pos.column - 1
        assert line[start:start + len(token.text)] == token.text
        row, end = left[token.pos.line - 1], start + len(token.text)
        left[token.pos.line - 1] = row[:start] + " " * len(token.text) + row[end:]
    assert tokens[-1].kind == "end"
    # with the tokens blanked, only spaces and comments are left
    assert re.fullmatch(r"(?:[ \t\r\f\v\n]|//[^\n]*|/\*(?:.|\n)*?\*/)*", "\n".join(left))
