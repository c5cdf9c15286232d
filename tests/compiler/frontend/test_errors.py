"""The front end's catalogue of ill-formed programs: exact messages, lines and columns.

docs/language.md lists the same catalogue.  Each program is the smallest one
that shows the mistake; the error is a CompileError at the Python position of
the offending construct, with a hint.
"""
from __future__ import annotations

import pytest

from revasm.compiler import CompileError, compile_source

CATALOGUE = [
    ('assignment',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y = x\n',
     5, 5,
     "assignment '=' overwrites a value, which is not reversible",
     'accumulate instead (y += ...), or allocate an ancilla: y = ancilla(0.0)'),
    ('multiply_assign',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y *= x\n',
     5, 5,
     '*= is not reversible in fixed point',
     'use +=, -= or ^= (an accumulation), e.g. y += x * a into a zero y'),
    ('shared_read_write',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y += y * x\n',
     5, 10,
     "'y' is both read and written by this statement",
     'y += f(y) is not reversible; copy it into an ancilla first'),
    ('ancilla_not_restored',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    t = ancilla(0.0)\n    t += sin(x)\n    y += t\n    free(t, 0.0)\n',
     8, 5,
     "ancilla 't' (allocated at line 5) is not provably restored to 0.0: t += sin(x) at line 6 is not undone",
     'undo the update (~routine, or the inverse statement); if a relation the compiler cannot see restores it, write free(t, 0.0, checked=True), which the machine checks at run time'),
    ('loop_variable_modified',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, n: Int):\n    for i in range(n):\n        y += 1.0\n        i += 1\n',
     7, 9,
     "loop variable 'i' of the loop at line 5 is modified in its body",
     'the loop runs backward by counting the same range; copy the value into an ancilla and change that'),
    ('range_bound_modified',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, n: Int):\n    for i in range(n):\n        n -= 1\n',
     6, 9,
     "range bound 'n' of the loop at line 5 is modified in its body",
     'the loop runs backward by counting the same range; copy the value into an ancilla and change that'),
    ('condition_changed',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    if x > 0:\n        x -= 1.0\n',
     6, 9,
     "this branch changes 'x', which the condition of the if at line 5 reads, and the if has no postcondition",
     'give the condition that holds afterwards: if (pre, post): ...'),
    ('while_without_postcondition',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    while x > 0:\n        x -= 1.0\n',
     5, 11,
     'a while loop needs a postcondition: while (pre, post):',
     'pre keeps the loop going; post must be false on entry and true after every iteration (e.g. while (k < n, k != 0):)'),
    ('undefined_variable',
     'from revasm.compiler import *\n\n@reversible\ndef f(total: Fixed, x: Fixed):\n    totl += x\n',
     5, 5,
     "undefined variable 'totl'",
     "did you mean 'total'?"),
    ('unknown_function',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y += sine(x)\n',
     5, 10,
     "unknown function 'sine' in an expression",
     'did you mean sin?'),
    ('return',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    return x\n',
     5, 5,
     'a reversible function cannot return a value',
     'results are written into parameters: out += ...'),
    ('missing_type',
     'from revasm.compiler import *\n\n@reversible\ndef f(y, x: Fixed):\n    y += x\n',
     4, 7,
     "parameter 'y' has no type",
     'annotate it: y: Fixed, y: Int or y: Array[Fixed, N]'),
    ('unknown_type',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: float, x: Fixed):\n    y += x\n',
     4, 10,
     "unknown type 'float'",
     "types are Fixed, Int, Array[Fixed, N], Array[Int, N, M]; Loss or Out mark the entry function's loss or outputs"),
    ('ancilla_never_freed',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    t = ancilla(0.0)\n    t += x\n',
     5, 5,
     "ancilla 't' is never freed",
     'free it before the function ends: free(t, 0)'),
    ('index_out_of_range',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, a: Array[Fixed, 4]):\n    y += a[4]\n',
     5, 12,
     "index 4 is out of range 0..3 of 'a'",
     ''),
    ('wrong_index_count',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, a: Array[Fixed, 3, 3]):\n    y += a[1]\n',
     5, 10,
     "'a' has 2 dimension(s) (3, 3); 1 index(es) given",
     ''),
    ('call_arity',
     'from revasm.compiler import *\n\n@reversible\ndef g(y: Fixed, x: Fixed):\n    y += x\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    g(y)\n',
     9, 5,
     'g takes 2 argument(s), got 1',
     'def g(y, x) is on line 4'),
    ('aliased_arguments',
     'from revasm.compiler import *\n\n@reversible\ndef g(y: Fixed, x: Fixed):\n    y += x\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    g(y, y)\n',
     9, 10,
     'y is passed twice to g; the parameters would alias',
     'pass a copy held in an ancilla'),
    ('constant_to_written_parameter',
     'from revasm.compiler import *\n\n@reversible\ndef g(y: Fixed, x: Fixed):\n    y += x\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    g(2.0, x)\n',
     9, 7,
     "g changes its parameter 'y', so it cannot be given the constant 2.0",
     'pass an ancilla holding it'),
    ('unroutine_without_routine',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y += x\n    ~routine\n',
     6, 5,
     '~routine without a routine to undo',
     'compute first: with routine(): ..., then ~routine'),
    ('syntax_error',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    y += (x\n',
     5, 10,
     "Python syntax error: '(' was never closed",
     ''),
    ('no_reversible_function',
     'def f(y, x):\n    y += x\n',
     1, 1,
     'no function marked @reversible in this file',
     'decorate the function: from revasm.compiler import reversible; @reversible def f(x: Fixed): ...'),
    ('break',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, n: Int):\n    for i in range(n):\n        break\n',
     6, 9,
     'break is not part of the reversible language',
     'see docs/language.md for the statements a @reversible function may use'),
    ('swap_with_itself',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, x: Fixed):\n    SWAP(x, x)\n',
     5, 5,
     'x is exchanged with itself',
     ''),
    ('write_to_table',
     'from revasm.compiler import *\nT = (1, 2, 3)\n\n@reversible\ndef f(y: Fixed, i: Int):\n    T[i] += 1\n',
     6, 5,
     "'T' is a constant table; it cannot be written",
     ''),
    ('product_read_twice_for_ad',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Loss, x: Fixed):\n    y += x * x\n',
     5, 10,
     'x is read twice by one product, a shared read that gradient mode does not allow',
     'write sq(x), whose gradient rule reads it once'),
    ('integer_division',
     'from revasm.compiler import *\n\n@reversible\ndef f(k: Int, n: Int):\n    k += n / 2\n',
     5, 10,
     'integer division is not supported',
     'divide Fixed values'),
    ('slice',
     'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed, a: Array[Fixed, 4]):\n    y += a[1:3]\n',
     5, 12,
     'slices are not supported',
     'loop over the elements: for i in range(n): ... a[i] ...'),
]


@pytest.mark.parametrize("name, source, line, column, message, hint", CATALOGUE,
                         ids=[c[0] for c in CATALOGUE])
def test_ill_formed_program_is_a_compile_error_at_its_position(name, source, line, column,
                                                               message, hint):
    with pytest.raises(CompileError) as info:
        compile_source(source, None, "bad.py", for_gradient=name.endswith("_for_ad"))
    error = info.value
    assert (error.pos.file, error.pos.line, error.pos.column) == ("bad.py", line, column)
    assert error.message == message
    assert error.hint == hint
    text = error.format()
    assert text.startswith(f"bad.py:{line}:{column}: error: {message}")
    if name != "no_reversible_function":  # no line to show for a whole-file error
        source_line = source.splitlines()[line - 1]
        assert source_line.rstrip() in text
        assert "  " + " " * (column - 1) + "^" in text


def test_a_nul_character_is_a_compile_error_at_it_on_every_interpreter():
    # (Python before 3.11.4 refused it with a ValueError, later with a SyntaxError)
    source = 'from revasm.compiler import *\n\n@reversible\ndef f(y: Fixed):\n    y += \0x\n'
    with pytest.raises(CompileError) as info:
        compile_source(source, None, "bad.py")
    error = info.value
    assert (error.pos.line, error.pos.column) == (5, 10)
    assert error.format().startswith("bad.py:5:10: error: Python syntax error: the source "
                                      "holds a NUL character (\\x00)\n      y += \\x00x\n")


def test_catalogue_has_at_least_fifteen_programs():
    assert len(CATALOGUE) >= 15
    assert len({c[0] for c in CATALOGUE}) == len(CATALOGUE)


def test_the_same_program_in_value_mode_compiles():
    # y += x * x is only rejected for differentiation
    source = dict((c[0], c[1]) for c in CATALOGUE)["product_read_twice_for_ad"]
    program = compile_source(source, None, "ok.py")
    assert "addmul" in program.pal
