"""A declaration's ``= VALUE`` and ``in LO..HI`` read by the one value rule
(``revasm.machine.values.word_of``), as ``--set`` and the API read a value for the name:
an int name takes an integer (2.0 is 2, 2.5 an error), a fixed name a real (1 is 1.0),
``raw:N`` the raw word N; a bad value is an error at its file:line:col."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import revasm
from revasm.assembler import AssemblyError, assemble

HEADER = ";; pendulum pal file\n"


def _defaults(declarations: str) -> dict[str, int | None]:
    image = assemble(HEADER + declarations + "start\nfinish\n", filename="d.pal")
    return {name: declared.default for name, declared in image.names.items()}


@pytest.mark.parametrize("declaration, word", [
    (".input a $1 int = 2", 2),
    (".input a $1 int = 2.0", 2),  # the old literal rule: the fixed-point word 131072
    (".input a $1 int = -7", (-7) & 0xFFFFFFFF),
    (".input a $1 int = 0x1f", 31),
    (".input a $1 int = raw:0xffffffff", 0xFFFFFFFF),
    (".input a $1 fixed = 1", 1 << 16),  # the old rule: the raw word 1
    (".input a $1 fixed = 0.5", 1 << 15),
    (".input a $1 = 1e-3", 66),  # no type: fixed; 0.001 * 2^16 = 65.5 -> 66
    (".input a $1 fixed = raw:1", 1),
    (".name a $1 int = -2.0", (-2) & 0xFFFFFFFF),
])
def test_a_default_is_the_word_the_value_rule_gives(declaration: str, word: int):
    assert _defaults(declaration + "\n")["a"] == word


def test_the_default_is_what_run_set_gives_for_the_same_text():
    """`= 2.0` and `--set n=2.0` put the same word in an int name, `= 1` and `--set x=1`
    the same in a fixed one."""
    image = assemble(HEADER + ".input n $1 int = 2.0\n.input x $2 fixed = 1\n"
                     "start\nfinish\n", filename="d.pal")
    by_default = revasm.run(image, engine="reference")
    by_set = revasm.run(image, {"n": "2.0", "x": "1"}, engine="reference")
    assert by_default.named == by_set.named == {"n": 2, "x": 1.0}
    assert by_default.registers == by_set.registers


@pytest.mark.parametrize("declaration, column, message", [
    (".input a $1 int = 2.5", 19, "default value of a: 2.5 is not a whole number, and a is "
                                  "an integer (int)"),
    (".input b $2 fixed = 40000.0", 21, "default value of b: 40000.0 does not fit Q16.16 "
                                        "(from -32768 to 32767.99998)"),
    (".input c $3 int = 2147483648", 19, "does not fit a 32-bit int (from -2147483648 to "
                                         "2147483647); raw:2147483648 for its raw bits"),
    (".input d $4 int = raw:0x1ffffffff", 19, "does not fit a 32-bit word"),
    (".input e $5 int in 1..2.5", 23, "domain end of e: 2.5 is not a whole number"),
    (".input f $6 int = zz", 19, "default value of f: 'zz' is not a number"),
])
def test_a_bad_value_is_an_error_at_its_file_line_and_column(declaration: str, column: int,
                                                             message: str):
    with pytest.raises(AssemblyError) as info:
        assemble(HEADER + declaration + "\nstart\nfinish\n", filename="d.pal")
    text = str(info.value)
    assert f"d.pal:2:{column}: error: " in text and message in text, text


def test_a_fixed_domain_reads_reals_and_keeps_the_default_inside():
    image = assemble(HEADER + ".input x $1 fixed = 0.5 in -1..1\nstart\nfinish\n",
                     filename="d.pal")
    assert image.names["x"].domain == (-(1 << 16), 1 << 16)
    with pytest.raises(AssemblyError, match="the default is outside the domain"):
        assemble(HEADER + ".input x $1 fixed = 2 in -1..1\nstart\nfinish\n", filename="d.pal")


def test_a_label_or_constant_default_is_the_word_it_names():
    image = assemble(HEADER + ".input p $1 int = cell\nstart\nfinish\ncell: data 5\n",
                     filename="d.pal")
    assert image.names["p"].default == image.symbols["cell"]


def test_raw_colon_before_an_instruction_is_still_a_label():
    image = assemble(HEADER + "start\nraw:addi $1 3\nfinish\n", filename="d.pal")
    assert "raw" in image.symbols
    assert revasm.run(image, engine="reference").registers["$1"] == 3


# --- the plain declaration's shortcut (declarations._plain_parts) -----------------------

_WORDS = ["x", "y.1", "v_x.0", "$2", "$0", "cell", "int", "fixed", "Int", "=", "=3", "in",
          "IN", "0..3", "1", "-2", "2.5", "raw:7", "K", "-K", "cell", "0x10", "99999999999"]


@given(st.sampled_from([".input", ".output", ".loss", ".name"]),
       st.lists(st.sampled_from(_WORDS), min_size=3, max_size=7), st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_plain_declaration_reads_as_the_general_split_reads_it(directive, words, shape):
    """Whatever the words, the shortcut gives the names, and the errors, that splitting the
    statement in full gives (half the examples in the shortcut's own shape)."""
    if shape:
        words = words[:3] + ["="] + words[3:4] if len(words) > 3 else words
    source = (";; pendulum pal file\n.const K 4\nstart\nfinish\ncell: data 0\n"
              f"{directive} {' '.join(words)}\n")
    from revasm.assembler import declarations

    def outcome() -> object:
        try:
            return assemble(source, filename="d.pal").names
        except AssemblyError as exc:
            return [(d.line, d.column, d.message) for d in exc.diagnostics]
    fast = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(declarations, "_plain_parts", lambda operands: None)
        assert outcome() == fast


def test_the_shortcut_takes_the_compilers_declarations():
    from revasm.assembler.declarations import _plain_parts
    from revasm.assembler.lexer import tokenize

    assert _plain_parts(tokenize("x.5 v_x.5 int = 0")) is not None
    assert _plain_parts(tokenize("x.5 v_x.5 int = 0 in 0..3")) is None
    assert _plain_parts(tokenize("x.5 =v_x.5 int = 0")) is None
