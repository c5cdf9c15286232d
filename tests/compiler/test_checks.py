"""Run-time checks of array accesses (bounds, aliasing), their selection, and input domains.

Each check fires with the kind, the PAL line, the Python line, the array and the index
values; what the compiler can prove is rejected (or dropped) at compile time; every
@reversible example runs from its declared defaults and passes a random check drawn
from its declared domains.
"""
from __future__ import annotations

import pytest
from nilang_examples import program_files

import revasm
from revasm.assembler import assemble
from revasm.compiler import CompileError, compile_file, compile_source
from revasm.programs import ProgramFault
from revasm.programs import run_program as run

HEADER = "from revasm.compiler import *\n\n"

ACCESS = HEADER + """\
@reversible
def add(a: Array[Fixed, 4], b: Array[Fixed, 4], i: Int, j: Int):
    a[i] += a[j]

@reversible
def swap(a: Array[Fixed, 4], i: Int, j: Int):
    SWAP(a[i], a[j])

@reversible
def product(y: Fixed, a: Array[Fixed, 4], i: Int, j: Int):
    y += a[i] * a[j]

@reversible
def grid(a: Array[Fixed, 2, 3], b: Array[Fixed, 4], i: Int, j: Int):
    a[i, j] += 1.5

@reversible
def neighbours(a: Array[Fixed, 4], i: Int):
    a[i] += a[i + 1]
"""


def _fault(entry: str, inputs: dict, **options) -> ProgramFault:
    program = compile_source(ACCESS, entry, "access.py", **options)
    with pytest.raises(ProgramFault) as info:
        run(program, inputs)
    return info.value


@pytest.mark.parametrize("entry, line", [("add", 5), ("swap", 9), ("product", 13)])
def test_two_places_naming_one_element_fault_with_the_line_array_and_index(entry, line):
    fault = _fault(entry, {"a": [1, 2, 3, 4], "i": 2, "j": 2})
    assert fault.check == "alias"
    assert fault.pos.line == line and fault.pal_line is not None
    assert "same element a[2]" in str(fault) and f"line {line}" in str(fault)
    assert "PAL line" in str(fault)


def test_distinct_indices_run_and_give_the_right_answer():
    program = compile_source(ACCESS, "add", "access.py")
    assert run(program, {"a": [1, 2, 3, 4], "i": 1, "j": 2}).values["a"] == [1, 5, 3, 4]
    swapped = run(compile_source(ACCESS, "swap", "access.py"), {"a": [1, 2, 3, 4], "i": 0,
                                                                  "j": 3})
    assert swapped.values["a"] == [4, 2, 3, 1]


@pytest.mark.parametrize("i, j, shown", [(7, 0, "is 7, outside 0..3"),
                                          (1, -1, "is -1, outside 0..3")])
def test_an_index_outside_the_array_faults_with_its_value(i, j, shown):
    fault = _fault("add", {"a": [1, 2, 3, 4], "i": i, "j": j})
    assert fault.check == "bounds"
    assert shown in str(fault) and "array a" in str(fault)
    assert fault.pos.line == 5


def test_each_dimension_is_checked_not_only_the_flat_index():
    fault = _fault("grid", {"i": 0, "j": 3})  # a[0, 3] is a[1, 0] flat: still wrong
    assert fault.check == "bounds" and "index 2 j of a[i, j]" in str(fault)
    assert "is 3, outside 0..2" in str(fault)


def test_proven_accesses_keep_no_guard():
    program = compile_source(ACCESS, "neighbours", "access.py")
    assert "same element" not in program.pal  # i and i + 1 never meet
    loop = HEADER + ("@reversible\ndef f(a: Array[Fixed, 4], b: Array[Fixed, 4]):\n"
                     "    for i in range(3):\n        a[i] += b[i + 1]\n")
    assert "outside" not in compile_source(loop, "f", "loop.py").pal


def test_a_constant_range_past_the_end_is_a_compile_error():
    source = HEADER + ("@reversible\ndef f(a: Array[Fixed, 4], b: Array[Fixed, 4]):\n"
                       "    for i in range(6):\n        a[i] += 1.5\n")
    with pytest.raises(CompileError) as info:
        compile_source(source, "f", "past.py")
    assert "past.py:6:11" in str(info.value) and "takes the values 0..5" in str(info.value)


def test_a_constant_index_past_the_end_is_a_compile_error():
    source = HEADER + "@reversible\ndef f(a: Array[Fixed, 4], b: Array[Fixed, 4]):\n" \
                      "    a[5] += 1.5\n"
    with pytest.raises(CompileError, match="out of range 0..3"):
        compile_source(source, "f", "const.py")


def test_the_same_element_twice_by_construction_is_a_compile_error():
    source = HEADER + "@reversible\ndef f(a: Array[Fixed, 4], i: Int):\n" \
                      "    SWAP(a[i], a[i + 0])\n"
    with pytest.raises(CompileError, match="same element"):
        compile_source(source, "f", "same.py")


def test_checks_select_kinds_and_false_drops_them_all():
    no_bounds = compile_source(ACCESS, "add", "access.py",
                               checks={"alias", "ancilla", "branch", "range"})
    assert "outside" not in no_bounds.pal and "same element" in no_bounds.pal
    no_alias = compile_source(ACCESS, "add", "access.py",
                              checks={"bounds", "ancilla", "branch", "range"})
    assert "outside" in no_alias.pal and "same element" not in no_alias.pal
    assert "trap" not in compile_source(ACCESS, "add", "access.py", checks=False).pal
    with pytest.raises(ValueError, match="unknown check kind"):
        compile_source(ACCESS, "add", "access.py", checks={"bound"})


DOMAIN = HEADER + """\
@reversible
def pick(y: Out, a: Array[Fixed, 4] = (1.0, 2.0, 3.0, 4.0), n: Int[0, 3] = 2):
    y += a[n]
"""


def test_domains_and_defaults_reach_the_pal_and_random_checks_draw_from_them():
    program = compile_source(DOMAIN, "pick", "pick.py")
    assert ".input n $" in program.pal and "int = 2 in 0..3" in program.pal
    assert "fixed = 3.0" in program.pal
    assert revasm.run(program.image).named["y"] == 3.0  # from the defaults
    result = revasm.check(program.image, random=50, seed=3)
    assert result.restored == 51
    # without the domain, random integers (1..24) leave the array: the guard faults
    bare = compile_source(DOMAIN.replace("Int[0, 3] = 2", "Int = 2"), "pick", "pick.py")
    assert revasm.check(bare.image, random=50, seed=3).failures


def test_the_pal_domain_directive_is_parsed_checked_and_kept():
    image = assemble(";; pendulum pal file\n.input n $3 int = 5 in 1..20\n"
                     ".input x $4 fixed in -1.0..1.0\nstart\nfinish\n")
    assert image.names["n"].domain == (1, 20) and image.names["n"].default == 5
    assert image.names["x"].domain == (-65536, 65536)
    from revasm.assembler.image_io import apply_sidecar, sidecar_dict
    assert apply_sidecar(image, sidecar_dict(image)).names == image.names
    with pytest.raises(Exception, match="outside the domain"):
        assemble(";; pendulum pal file\n.input n $3 int = 25 in 1..20\nstart\nfinish\n")


@pytest.mark.parametrize("path", program_files(), ids=lambda p: p.name)
def test_every_example_runs_from_its_defaults_and_passes_a_random_check(path):
    program = compile_file(path)
    result = revasm.run(program.image)
    assert result.status == "finished", result.fault
    # gmm.py runs 10M steps per state: 5 states here, 50 by hand (revasm compile
    # examples/nilang/gmm.py -o gmm.pal; revasm check gmm.pal --random 50).
    states = 5 if path.name == "gmm.py" else 50
    check = revasm.check(program.image, random=states, seed=1)
    assert not check.failures, check.failures[0].detail
