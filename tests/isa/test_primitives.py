"""Every engine's implementation of every primitive is its row's reference, bit for bit.

The tests are generated from the primitives table (``isa/primitives.py``): for each row
and both widths, on edge words (0, +-1 ulp, the ends of the range, +-1.0 and its
neighbours, pi/2 and pi, each fault's boundary) and on hypothesis' operand words,

* the vector engine's lane function (``sim/vector/vocabulary.py``) gives the reference's
  words, and on the lanes where the reference raises, the fault of the same kind with
  the same message;
* the compiled engine's numba function (``sim/compiled``, width as its last argument)
  gives the reference's words wherever the reference does not fault -- and its domain
  checks, generated from the row's ``Fault`` conditions by the translator, give the
  reference's faults when the row's instruction runs on the compiled engine;
* the row's declared faults are the reference's: a condition holds exactly where the
  reference raises, with that kind and message;

and a row without an implementation in an engine fails with a message that names it.
The overflow predicates are rows like the others.  The RTL's function unit refuses a
function-unit row it has no routine for (``rtl/hardware/function_unit.py``).
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from revasm.isa.fixed_point import WordFormat
from revasm.isa.functions.errors import DivideByZero, DomainError
from revasm.isa.primitives import (
    FAULT_LIST,
    PAIRS,
    PRIMITIVES,
    Primitive,
    fault_holds,
    primitive,
)
from revasm.isa.rotation import pi_raw
from revasm.isa.table import INSTRUCTIONS
from revasm.sim.vector.vocabulary import LANEWISE, LaneContext, lanewise_rows, vector_vocabulary

WIDTHS = (32, 64)
ROWS = [pytest.param(p, id=p.name) for p in PRIMITIVES]
FAULTING_ROWS = [pytest.param(p, id=p.name) for p in PRIMITIVES if p.can_fault]


def edge_words(width: int) -> list[int]:
    """The words every row is tried on: 0 and its neighbours, the ends of the range and
    theirs, +-1.0 and +-2.0 and their neighbours, pi/2, pi and 2 pi (the rotations'
    reductions), and the exp/sinh/cosh saturation region (about (W - F - 1) ln 2)."""
    fmt = WordFormat(width)
    mask, one = fmt.mask, fmt.one
    pi = pi_raw(fmt)
    saturation = (width - fmt.frac_bits - 1) * 45426 * one // 65536  # ~ (W-F-1) ln 2
    signed = [0, 1, -1, 2, -2, one, -one, one + 1, one - 1, -one + 1, 2 * one, -2 * one,
              pi >> 1, pi, -pi, 2 * pi, saturation, -saturation, saturation + one,
              fmt.max_signed, fmt.max_signed - 1, fmt.min_signed, fmt.min_signed + 1]
    return sorted({v & mask for v in signed})


def operand_tuples(row: Primitive, width: int, limit: int = 3000) -> list[tuple[int, ...]]:
    """Every tuple of edge words (a fixed sample of them for three operands)."""
    edges = edge_words(width)
    tuples = list(itertools.product(edges, repeat=row.arity))
    if len(tuples) > limit:
        tuples = random.Random(f"{row.name}{width}").sample(tuples, limit)
    return tuples


def reference_results(row: Primitive, width: int,
                      tuples: list[tuple[int, ...]]) -> list[tuple[str, Any]]:
    """Per tuple: ("value", word or pair) or ("fault", (kind, message))."""
    function = row.reference(WordFormat(width))
    out: list[tuple[str, Any]] = []
    for args in tuples:
        try:
            out.append(("value", function(*args)))
        except DivideByZero as exc:
            out.append(("fault", ("divide-by-zero", str(exc))))
        except DomainError as exc:
            out.append(("fault", ("domain-error", str(exc))))
    return out


def operand_strategy(row: Primitive, width: int) -> st.SearchStrategy:
    """Lists of operand tuples: uniform words, small signed values and words near the
    edges, so that faults and saturations are drawn too."""
    fmt = WordFormat(width)
    one = fmt.one
    word = st.one_of(
        st.integers(0, fmt.mask),
        st.integers(-8 * one, 8 * one).map(lambda v: v & fmt.mask),
        st.integers(-64, 64).map(lambda v: v & fmt.mask),
        st.sampled_from(edge_words(width)))
    return st.lists(st.tuples(*([word] * row.arity)), min_size=1, max_size=40)


DRAWN = settings(max_examples=15, deadline=None, database=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- the table's own faults -------------------------------------------------------------------

def declared_fault(row: Primitive, args: tuple[int, ...],
                   fmt: WordFormat) -> tuple[str, str] | None:
    """The first of the row's faults whose conditions hold: (kind, message), or None."""
    for fault in row.faults:
        if fault_holds(fault, args, fmt):
            return fault.kind, fault.detail(fmt.signed(args[0]))
    return None


def check_declared_faults(row: Primitive, width: int, tuples: list[tuple[int, ...]]) -> None:
    fmt = WordFormat(width)
    for args, (what, result) in zip(tuples, reference_results(row, width, tuples)):
        expected = result if what == "fault" else None
        assert declared_fault(row, args, fmt) == expected, (row.name, width, args)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", ROWS)
def test_the_declared_faults_are_the_references(row: Primitive, width: int) -> None:
    check_declared_faults(row, width, operand_tuples(row, width))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", FAULTING_ROWS)
def test_the_declared_faults_are_the_references_on_drawn_words(row: Primitive,
                                                               width: int) -> None:
    @DRAWN
    @given(operand_strategy(row, width))
    def check(tuples: list[tuple[int, ...]]) -> None:
        check_declared_faults(row, width, tuples)
    check()


def test_every_fault_is_reached_by_the_edge_words() -> None:
    """Not vacuous: each declared fault holds on some edge tuple at both widths."""
    for name, fault in FAULT_LIST:
        row = primitive(name)
        for width in WIDTHS:
            fmt = WordFormat(width)
            assert any(fault_holds(fault, args, fmt) for args in operand_tuples(row, width)), \
                (name, fault.kind, width)


# --- the vector engine ------------------------------------------------------------------------

def vector_results(row: Primitive, width: int,
                   tuples: list[tuple[int, ...]]) -> list[tuple[str, Any]]:
    """The vector engine's lane function of the row on one lane per tuple."""
    ctx = LaneContext(np)
    names = vector_vocabulary(WordFormat(width), np, ctx)
    ctx.reset(len(tuples))
    columns = [np.array([args[k] for args in tuples], dtype=np.uint64)
               for k in range(row.arity)]
    got = names[row.name](*columns)
    if row.name in PAIRS:
        values: list[Any] = list(zip(*(np.asarray(g).tolist() for g in got)))
    else:
        values = np.broadcast_to(np.asarray(got), (len(tuples),)).tolist()
    faults: dict[int, tuple[str, str]] = {}
    for mask, kind, describe in ctx.events:
        for lane in np.nonzero(np.asarray(mask))[0].tolist():
            faults.setdefault(lane, (kind, describe(lane)))
    return [("fault", faults[lane]) if lane in faults else ("value", values[lane])
            for lane in range(len(tuples))]


def check_vector(row: Primitive, width: int, tuples: list[tuple[int, ...]]) -> None:
    expected = reference_results(row, width, tuples)
    got = vector_results(row, width, tuples)
    for args, want, have in zip(tuples, expected, got):
        assert have == want, (row.name, width, args)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_row_has_a_vector_implementation(width: int) -> None:
    """A row the vector engine runs lanewise without declaring it (``LANEWISE``) has no
    vectorized implementation: vectorize it, or declare the stop-gap."""
    undeclared = sorted(lanewise_rows(WordFormat(width)) - LANEWISE[width])
    if undeclared:
        pytest.fail(f"no vector implementation at W = {width} of {', '.join(undeclared)}: "
                    "add a lane function to sim/vector/vocabulary.py, or list the row in "
                    "its LANEWISE (the per-lane call of the reference)")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", ROWS)
def test_the_vector_engine_is_the_reference_on_edge_words(row: Primitive, width: int) -> None:
    check_vector(row, width, operand_tuples(row, width))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", ROWS)
def test_the_vector_engine_is_the_reference_on_drawn_words(row: Primitive, width: int) -> None:
    @DRAWN
    @given(operand_strategy(row, width))
    def check(tuples: list[tuple[int, ...]]) -> None:
        check_vector(row, width, tuples)
    check()


# --- the compiled engine ----------------------------------------------------------------------

def compiled_function(row: Primitive) -> Callable:
    pytest.importorskip("numba")
    from revasm.sim.compiled.translate import kernel_function

    function = kernel_function(row.name)
    if function is None:
        pytest.fail(f"the compiled engine has no implementation of {row.name}: add a numba "
                    "function of that name to sim/compiled/vocab.py (or overflow.py), the "
                    "width as its last argument")
    return function


def check_compiled(row: Primitive, width: int, tuples: list[tuple[int, ...]]) -> int:
    """The numba function on every tuple the reference does not fault on; how many."""
    function = compiled_function(row)
    checked = 0
    for args, (what, want) in zip(tuples, reference_results(row, width, tuples)):
        if what == "fault":  # the kernels check the row's faults first (tested below)
            continue
        got = function(*[np.uint64(a) for a in args], width)
        have = tuple(int(g) for g in got) if row.name in PAIRS else int(got)
        assert have == want, (row.name, width, args)
        checked += 1
    return checked


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", ROWS)
def test_the_compiled_engine_is_the_reference_on_edge_words(row: Primitive, width: int) -> None:
    assert check_compiled(row, width, operand_tuples(row, width)) > 0


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", ROWS)
def test_the_compiled_engine_is_the_reference_on_drawn_words(row: Primitive,
                                                             width: int) -> None:
    compiled_function(row)

    @DRAWN
    @given(operand_strategy(row, width))
    def check(tuples: list[tuple[int, ...]]) -> None:
        check_compiled(row, width, tuples)
    check()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["fmul", "fdiv"])
def test_the_compiled_fused_results_are_the_row_and_its_predicate(name: str, width: int) -> None:
    """``fmul_ovf``/``fdiv_ovf`` (one product or division for a call and its overflow
    predicate, ``translate.FUSED``) give the row's word and its predicate's flag."""
    pytest.importorskip("numba")
    from revasm.sim.compiled import vocab

    fmt = WordFormat(width)
    row = primitive(name)
    assert row.overflow is not None
    value, flag = row.reference(fmt), primitive(row.overflow).reference(fmt)
    fused = getattr(vocab, f"{name}_ovf")
    events = 0
    for x, y in operand_tuples(row, width):
        if name == "fdiv" and y == 0:
            continue
        got = tuple(int(v) for v in fused(np.uint64(x), np.uint64(y), width))
        assert got == (value(x, y), flag(x, y)), (name, width, x, y)
        events += flag(x, y)
    assert events > 5


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["rot", "irot", "ovf_rot", "ovf_irot"])
def test_the_compiled_planned_rotations_are_the_rows(name: str, width: int) -> None:
    """The kernels rotate through an angle's plan computed once (``rotation_plan``, then
    ``<name>_planned``, ``translate.ROTATIONS``): the row's result all the same."""
    pytest.importorskip("numba")
    from revasm.sim.compiled import overflow, vocab

    row = primitive(name)
    reference = row.reference(WordFormat(width))
    planned = getattr(vocab, f"{name}_planned", None) or getattr(overflow, f"{name}_planned")
    for x, y, theta in operand_tuples(row, width, limit=600):
        plan = vocab.rotation_plan(np.uint64(theta), width)
        got = planned(np.uint64(x), np.uint64(y), *plan, width)
        have = tuple(int(g) for g in got) if name in PAIRS else int(got)
        assert have == reference(x, y, theta), (name, width, x, y, theta)


def faulting_instruction(row: Primitive) -> str:
    """The first table entry whose forward template calls the row on its register operands."""
    registers = ", ".join("R[{" + p + "}]" for p in "bcd"[:row.arity])
    call = f"{row.name}({registers})"
    for ins in INSTRUCTIONS:
        if call in ins.forward:
            return ins.mnemonic
    raise AssertionError(f"no instruction calls {call}")


@pytest.mark.usefixtures("fresh_kernel_cache")
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("row", FAULTING_ROWS)
def test_the_compiled_domain_checks_are_the_rows_faults(row: Primitive, width: int) -> None:
    """The row's instruction (``ADDLOG $1 $2``, ...) on the compiled engine and on the
    reference machine, one lane per edge tuple: the same fault (kind and message) on the
    same lanes, the same words on the others."""
    pytest.importorskip("numba")
    from program_generators import ProgramBuilder

    from revasm.sim.compiled.engine import ENGINE
    from revasm.sim.reference.engine import ReferenceLanes

    registers = list(range(2, 2 + row.arity))
    image = (ProgramBuilder(width).op("START")
             .op(faulting_instruction(row), 1, *registers).op("FINISH").build())
    tuples = operand_tuples(row, width)
    machines = [ENGINE.load(image, len(tuples)), ReferenceLanes(image, len(tuples))]
    for machine in machines:
        for k, register in enumerate(registers):
            machine.set_bank_word("R", register,
                                  np.array([args[k] for args in tuples], dtype=np.uint64))
        machine.run(1)
    compiled, reference = machines
    faults = 0
    for lane in range(len(tuples)):
        mine, theirs = compiled.fault(lane), reference.fault(lane)
        assert (mine is None) == (theirs is None), (row.name, tuples[lane])
        if theirs is not None:
            assert (mine.kind, mine.message) == (theirs.kind, theirs.message), tuples[lane]
            faults += 1
    assert compiled.bank_word("R", 1).tolist() == reference.bank_word("R", 1).tolist()
    assert faults > 0


def test_the_translator_refuses_a_row_without_a_kernel_function(monkeypatch) -> None:
    pytest.importorskip("numba")
    from revasm.sim.compiled import translate

    row = primitive("fn_sin")
    monkeypatch.setitem(translate.BY_NAME, "fn_new", row.__class__(
        "fn_new", 1, "word", "function", "a primitive no engine knows", row.bind))
    translator = translate.Translator(32, {"M": (1 << 32) - 1, "W": 32, "F": 16, "one": 1 << 16})
    with pytest.raises(translate.TranslationError, match="no implementation of the primitive "
                                                         "fn_new"):
        translator.statement("R[1] = fn_new(R[2])", lambda code, aux: [], lambda code, aux: [])


# --- the RTL ----------------------------------------------------------------------------------

def test_the_function_unit_has_a_routine_for_every_function_unit_row() -> None:
    pytest.importorskip("amaranth")
    from revasm.isa.primitives import operations
    from revasm.rtl.hardware.function_unit import IMPLEMENTED, check_routines

    check_routines()
    assert IMPLEMENTED == frozenset(operations("function"))


def test_the_function_unit_refuses_a_row_it_has_no_routine_for(monkeypatch) -> None:
    pytest.importorskip("amaranth")
    from amaranth.hdl import Fragment

    from revasm.rtl.hardware import function_unit

    monkeypatch.setattr(function_unit, "FUNCTION_OPS",
                        (*function_unit.FUNCTION_OPS, "fn_softsign"))
    with pytest.raises(function_unit.MissingRoutine, match="no routine for .*fn_softsign"):
        Fragment.get(function_unit.FunctionUnit(32), None)
