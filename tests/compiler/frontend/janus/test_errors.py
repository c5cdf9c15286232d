"""Janus's static errors: every one the front end reports, with its exact message and place.

docs/janus.md lists the same catalogue (``test_the_catalogue_is_in_the_docs``).  Each
program is the smallest that shows the mistake; the error is a CompileError at
file:line:col with the source line and a caret, also through ``revasm compile``.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.cli.main import cli
from revasm.compiler import CompileError
from revasm.compiler.api import compile_janus_source

CATALOGUE = [
    ('unexpected_character',
     'procedure main()\n    int x\n    int y\n    x += 1 @ 2\n',
     4, 12,
     "unexpected character '@'",
     ''),
    ('unclosed_comment',
     'procedure main()\n    int x\n    int y\n    x += 1 /* and then\n',
     4, 12,
     'comment /* is never closed',
     'close it with */'),
    ('no_procedures',
     '// nothing here\n',
     2, 1,
     'the file has no procedures',
     'a program needs procedure main()'),
    ('statement_outside_procedure',
     'x += 1\n',
     1, 1,
     "expected 'procedure', found 'x'",
     ''),
    ('procedure_defined_twice',
     'procedure f(int a)\n    a += 1\n\nprocedure f(int b)\n    b += 1\n\nprocedure main()\n    int x\n    int y\n    call f(x)\n',
     4, 11,
     'procedure f is defined twice',
     ''),
    ('no_main',
     'procedure f(int a)\n    a += 1\n',
     1, 1,
     'no procedure main()',
     'the program runs procedure main(), which declares its variables: procedure main() int x ...'),
    ('main_with_parameters',
     'procedure main(int x)\n    x += 1\n',
     1, 16,
     'procedure main() takes no parameters',
     "declare main's variables after main(): int x"),
    ('assignment',
     'procedure main()\n    int x\n    int y\n    x = 1\n',
     4, 7,
     "assignment '=' overwrites a value, which is not reversible",
     'update instead: x += e, x -= e, x ^= e'),
    ('missing_update_operator',
     'procedure main()\n    int x\n    int y\n    x + 1\n',
     4, 7,
     "expected +=, -=, ^= or <=> after the variable, found '+'",
     ''),
    ('missing_fi',
     'procedure main()\n    int x\n    int y\n    if x = 0 then\n        y += 1\n    else\n        y -= 1\n',
     8, 1,
     "expected 'fi' to close the if at line 4, found the end of the file",
     ''),
    ('missing_until',
     'procedure main()\n    int x\n    int y\n    from x = 0 loop\n        x += 1\n',
     6, 1,
     "expected 'until' to close the loop at line 4, found the end of the file",
     ''),
    ('missing_delocal',
     'procedure main()\n    int x\n    int y\n    local int t = 0\n        y += t\n',
     6, 1,
     "expected 'delocal' to close the local at line 4, found the end of the file",
     ''),
    ('empty_branch',
     'procedure main()\n    int x\n    int y\n    if x = 0 then\n    fi x = 0\n',
     5, 5,
     "expected a statement, found 'fi'",
     'write skip for a statement that does nothing'),
    ('call_argument_expression',
     'procedure f(int a)\n    a += 1\n\nprocedure main()\n    int x\n    int y\n    call f(x + 1)\n',
     7, 12,
     'an argument of call and uncall must be a variable name',
     'copy the value into a local variable and pass that: local int t = e  call f(t)  delocal int t = e'),
    ('unsupported_statement',
     'procedure main()\n    int x\n    int y\n    iterate int i = 0 to 3\n        x += i\n    end\n',
     4, 5,
     "'iterate' is not part of the Janus dialect revasm compiles",
     'write the loop as from i = a do ... loop ... until i = b'),
    ('unsupported_type',
     'procedure main()\n    bool b\n    skip\n',
     2, 5,
     "'bool' is not part of the Janus dialect revasm compiles",
     'declare an int; conditions are comparisons (x != 0)'),
    ('array_size_not_positive',
     'procedure main()\n    int a[0]\n    skip\n',
     2, 11,
     'an array size must be a positive number',
     ''),
    ('stack_with_value',
     'procedure main()\n    stack s = 3\n    skip\n',
     2, 11,
     'a stack starts empty; it takes no initial value',
     ''),
    ('local_without_value',
     'procedure main()\n    int x\n    int y\n    local int t\n        y += t\n    delocal int t = 0\n',
     5, 9,
     "expected '=' and the value of the local variable, found 'y'",
     ''),
    ('undefined_variable',
     'procedure main()\n    int x\n    int y\n    x += z\n',
     4, 10,
     "undefined variable 'z'",
     'declare it: as a parameter, in main (int x), or with local'),
    ('misspelt_variable',
     'procedure main()\n    int total\n    totl += 1\n',
     3, 5,
     "undefined variable 'totl'",
     "did you mean 'total'?"),
    ('declared_twice',
     'procedure main()\n    int x\n    int x\n    x += 1\n',
     3, 5,
     'x is already declared (line 2)',
     'give the new variable another name'),
    ('reserved_name',
     'procedure main()\n    int x__len\n    x__len += 1\n',
     2, 5,
     "the name x__len is reserved: revasm's Janus names are letters, digits and single underscores",
     'rename the variable'),
    ('unknown_procedure',
     'procedure main()\n    int x\n    int y\n    call fib(x)\n',
     4, 5,
     "unknown procedure 'fib'",
     ''),
    ('wrong_argument_count',
     'procedure f(int a, int b)\n    a += b\n\nprocedure main()\n    int x\n    int y\n    call f(x)\n',
     7, 5,
     'f takes 2 argument(s), got 1',
     'procedure f is on line 1'),
    ('main_called',
     'procedure main()\n    int x\n    int y\n    call main()\n',
     4, 5,
     'procedure main cannot be called',
     "main is the program's entry"),
    ('argument_passed_twice',
     'procedure f(int a, int b)\n    a += b\n\nprocedure main()\n    int x\n    int y\n    call f(x, x)\n',
     7, 15,
     'x is passed twice to f; the parameters would alias',
     'pass a copy held in a local variable'),
    ('argument_of_wrong_kind',
     'procedure f(int a[3])\n    a[0] += 1\n\nprocedure main()\n    int x\n    int y\n    call f(x)\n',
     7, 12,
     'parameter a of f is an array [3], and x is an int',
     ''),
    ('array_sizes_differ',
     'procedure f(int a[])\n    a[0] += 1\n\nprocedure main()\n    int p[2]\n    int q[3]\n    call f(p)\n    call f(q)\n',
     7, 5,
     'procedure f is called with arrays of different sizes [2] and [3] for its parameter a',
     'give the parameter its size, int a[N], and call it with arrays of that size'),
    ('updated_variable_read',
     'procedure main()\n    int x\n    int y\n    x += y * x\n',
     4, 14,
     "'x' is both updated and read by this statement",
     'x += f(x) is not reversible; copy it into a local variable first'),
    ('updated_element_read',
     'procedure main()\n    int a[3]\n    int i\n    a[i] += a[i] + 1\n',
     4, 13,
     'a[i] is both updated and read by this statement',
     'copy it into a local variable first'),
    ('index_reads_updated_array',
     'procedure main()\n    int a[3]\n    a[a[0]] += 1\n',
     3, 7,
     'the index of a reads a, which this statement updates',
     ''),
    ('swap_with_itself',
     'procedure main()\n    int x\n    int y\n    x <=> x\n',
     4, 5,
     'x is swapped with itself',
     ''),
    ('push_of_an_array',
     'procedure main()\n    int a[2]\n    stack s\n    push(a, s)\n',
     4, 5,
     'push moves an int variable, and a is an array of 1 dimension(s)',
     ''),
    ('push_onto_an_int',
     'procedure main()\n    int x\n    int y\n    push(x, y)\n',
     4, 5,
     'y is an int, not a stack',
     ''),
    ('local_array',
     'procedure main()\n    int x\n    int y\n    local int t[2] = {0, 0}\n        skip\n    delocal int t[2] = {0, 0}\n',
     4, 11,
     'a local variable is an int scalar here',
     'declare arrays and stacks in main or as parameters'),
    ('delocal_other_name',
     'procedure main()\n    int x\n    int y\n    local int t = 0\n        y += t\n    delocal int u = 0\n',
     6, 13,
     'delocal u does not match local t (line 4)',
     'local and delocal name the same variable'),
    ('delocal_reads_itself',
     'procedure main()\n    int x\n    int y\n    local int t = 0\n        y += t\n    delocal int t = t\n',
     6, 13,
     'the value of delocal t reads t itself',
     ''),
    ('stack_as_value',
     'procedure main()\n    int x\n    stack s\n    x += s\n',
     4, 10,
     's is a stack; use push, pop, top and empty',
     ''),
    ('array_as_value',
     'procedure main()\n    int x\n    int a[2]\n    x += a\n',
     4, 10,
     'a is an array; name one element: a[i]',
     ''),
    ('index_of_an_int',
     'procedure main()\n    int x\n    int y\n    x += y[0]\n',
     4, 10,
     'y is an int, not an array',
     ''),
    ('wrong_index_count',
     'procedure main()\n    int x\n    int a[2][2]\n    x += a[1]\n',
     4, 10,
     'a has 2 dimension(s); 1 index(es) given',
     ''),
    ('constant_index_out_of_range',
     'procedure main()\n    int x\n    int a[4]\n    x += a[4]\n',
     4, 12,
     'index 4 is out of range 0..3 of a',
     ''),
    ('condition_as_integer',
     'procedure main()\n    int x\n    int y\n    x += y < 1\n',
     4, 10,
     "'<' is a condition where an integer is needed",
     'Janus has no conversion from conditions to integers; use if'),
    ('integer_as_condition',
     'procedure main()\n    int x\n    int y\n    if x then\n        y += 1\n    fi x\n',
     4, 8,
     'a condition must be a comparison or a logical operation',
     'compare explicitly: x != 0'),
    ('logical_operator_on_integers',
     'procedure main()\n    int x\n    int y\n    if x && y then\n        skip\n    fi x && y\n',
     4, 8,
     '&& joins conditions, and this is an integer',
     'compare explicitly: x != 0'),
    ('arithmetic_on_a_condition',
     'procedure main()\n    int x\n    int y\n    x += (y < 1) + 1\n',
     4, 11,
     '+ takes integers, and this is a condition',
     ''),
    ('negated_integer',
     'procedure main()\n    int x\n    int y\n    if !x then\n        skip\n    fi !x\n',
     4, 9,
     '! negates a condition, not an integer',
     ''),
    ('literal_too_large',
     'procedure main()\n    int x\n    int y\n    x += 3000000000\n',
     4, 10,
     '3000000000 does not fit a 32-bit int (from -2147483648 to 2147483647)',
     ''),
    ('size_of_an_int',
     'procedure main()\n    int x\n    int y\n    x += size(y)\n',
     4, 10,
     'size takes an array or a stack; y is an int',
     ''),
    ('top_of_an_array',
     'procedure main()\n    int x\n    int a[2]\n    x += top(a)\n',
     4, 10,
     'top takes a stack; a is an array of 1 dimension(s)',
     ''),
    ('too_many_initial_values',
     'procedure main()\n    int a[2] = {1, 2, 3}\n    skip\n',
     2, 5,
     '3 values for a dimension of size 2 of a',
     ''),
    ('initial_value_not_a_number',
     'procedure main()\n    int x = 2\n    int y = x + 1\n    skip\n',
     3, 13,
     'the initial value of y must be a number',
     'start from a number and update it: int y = 0 ... y += e'),
]
DOCS = Path(__file__).resolve().parents[4] / "docs" / "janus.md"


@pytest.mark.parametrize("name, source, line, column, message, hint", CATALOGUE,
                         ids=[c[0] for c in CATALOGUE])
def test_ill_formed_janus_is_a_compile_error_at_its_position(name, source, line, column,
                                                             message, hint):
    with pytest.raises(CompileError) as info:
        compile_janus_source(source, "bad.ja")
    error = info.value
    assert (error.pos.file, error.pos.line, error.pos.column) == ("bad.ja", line, column)
    assert (error.message, error.hint) == (message, hint)
    text = error.format()
    assert text.startswith(f"bad.ja:{line}:{column}: error: {message}")
    lines = source.splitlines()
    if line <= len(lines):  # the line and a caret under the column
        assert lines[line - 1].rstrip() in text
        assert "  " + " " * (column - 1) + "^" in text


def test_the_catalogue_names_each_mistake_once():
    assert len({c[0] for c in CATALOGUE}) == len(CATALOGUE) >= 40


def test_the_catalogue_is_in_the_docs():
    docs = DOCS.read_text()
    for name, _, line, column, message, _ in CATALOGUE:
        assert f"bad.ja:{line}:{column}: error: {message}" in docs, name


def test_revasm_compile_reports_a_janus_error_as_one_json_object(tmp_path):
    name, source, line, column, message, _ = CATALOGUE[0]
    path = tmp_path / "bad.ja"
    path.write_text(source)
    result = CliRunner().invoke(cli, ["compile", str(path), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["line"], error["col"]) == ("compile", line, column)
    assert message in error["message"]


EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "janus"
_PIECES = list("ax0 \n+-*/%&|^<>=!(){}[],_'\"") + [
    "if", "fi", "then", "else", "from", "do", "loop", "until", "local", "delocal", "int",
    "stack", "call", "uncall", "push", "pop", "procedure", "main", "<=>", "+=", "size",
    "top", "empty", "printf"]


def test_a_mangled_program_is_a_compile_error_or_a_program_never_a_crash():
    """Seeded mutations of the examples (characters and keywords deleted, inserted,
    copied) through the parser, the checks and the lowering: every outcome is a program
    or a CompileError with a position."""
    from revasm.compiler.frontend.janus import check_program, parse_janus
    from revasm.compiler.frontend.janus.lowering import lower_program
    rng = random.Random(2026)
    sources = [p.read_text() for p in sorted(EXAMPLES.glob("*.ja"))]
    for _ in range(400):
        chars = list(rng.choice(sources))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(chars))
            r = rng.random()
            if r < 0.4:
                del chars[i]
            elif r < 0.8:
                chars.insert(i, rng.choice(_PIECES))
            else:
                j = rng.randrange(len(chars))
                chars[i:i] = chars[j:j + rng.randint(1, 20)]
        try:
            lower_program(check_program(parse_janus("".join(chars), "mangled.ja")))
        except CompileError as exc:
            assert exc.pos.file == "mangled.ja" and exc.pos.line >= 1 and exc.message
