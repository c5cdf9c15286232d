"""Overflow events (docs/isa.md "Overflow events"): counted reversibly on OV,
bit for bit alike on every engine, a fault on a strict machine, reported by every command."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from program_generators import ProgramBuilder
from sampling import sampled

from revasm.cli.main import cli
from revasm.isa import WordFormat
from revasm.isa.primitives import PRIMITIVES
from revasm.sim.engine import overflow_counts
from revasm.sim.engines import available, load
from revasm.sim.reference import Machine

#: Extension instructions that can overflow, with their operand count.
COUNTING = {"ADDMUL": 3, "SUBMUL": 3, "ADDDIV": 3, "SUBDIV": 3, "ADDEXP": 2, "SUBEXP": 2,
            "ADDTAN": 2, "ADDABS": 2, "SUBABS": 2, "ADDSINH": 2, "ADDCOSH": 2, "ADDSIN": 2,
            "ADDPOW": 3, "ROT": 3, "IROT": 3}
REGISTERS = (1, 2, 3, 4, 5)
LANES = 24


def _words(fmt: WordFormat) -> st.SearchStrategy[int]:
    """Words that overflow often: the ends of the range, big reals, anything."""
    big = [fmt.from_real(v) & fmt.mask for v in (180, -180, 50000, -50000, 22, -0.5, 3)]
    edges = [0, 1, fmt.one, fmt.mask, fmt.sign_bit, fmt.sign_bit - 1]
    return st.one_of(st.sampled_from(big + edges), st.integers(0, fmt.mask))


@st.composite
def overflowing_programs(draw, width: int):
    """A straight-line program of counting instructions and ``LANES`` initial states."""
    builder = ProgramBuilder(width=width).op("START")
    for _ in range(draw(st.integers(1, 6))):
        mnemonic = draw(st.sampled_from(sorted(COUNTING)))
        operands = draw(st.permutations(REGISTERS))[:COUNTING[mnemonic]]
        builder.op(mnemonic, *operands)
    builder.op("FINISH")
    fmt = WordFormat(width)
    lanes = [[draw(_words(fmt)) for _ in REGISTERS] for _ in range(LANES)]
    return builder.build(), lanes


def _load(image, lanes, engine: str, strict: bool):
    machine = load(image, len(lanes), engine_name=engine)
    machine.strict = strict
    for i, register in enumerate(REGISTERS):
        machine.set_bank_word("R", register, np.array([lane[i] for lane in lanes],
                                                      dtype=np.uint64))
    return machine


def _outcome(machine) -> list:
    return [(machine.snapshot(lane), machine.fault(lane) and machine.fault(lane).message)
            for lane in range(machine.lanes)]


ENGINES = [name for name in ("vector", "compiled") if name in available()]


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("engine", ENGINES)
@sampled(lambda n: settings(max_examples=n, deadline=None,
                            suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.data_too_large]),
         data=st.data(), bounded=3, full=6)  # each example a kernel build on `compiled`
def test_every_engine_counts_overflow_events_bit_for_bit_like_the_reference(engine, width,
                                                                            data):
    image, lanes = data.draw(overflowing_programs(width))
    for strict in (False, True):
        reference = _load(image, lanes, "reference", strict)
        other = _load(image, lanes, engine, strict)
        reference.run(1)
        other.run(1)
        assert _outcome(other) == _outcome(reference)
        assert overflow_counts(other).tolist() == overflow_counts(reference).tolist()
        if not strict:
            reference.run_back()
            other.run_back()
            assert _outcome(other) == _outcome(reference)


@pytest.mark.parametrize("width", [32, 64])
@sampled(lambda n: settings(max_examples=n, deadline=None), data=st.data(), bounded=15,
         full=40)
def test_backward_undoes_forward_overflow_counter_included(width, data):
    image, lanes = data.draw(overflowing_programs(width))
    for lane in lanes:
        machine = Machine(image)
        for register, word in zip(REGISTERS, lane):
            machine.registers[register] = word
        before = machine.snapshot()
        try:
            machine.run(1)
        except Exception:  # an arithmetic fault (x / 0): nothing to undo
            continue
        events = machine.overflows
        assert events >= 0
        machine.run(-1)
        assert machine.overflows == 0
        assert machine.snapshot().turned() == before


@pytest.mark.parametrize("width", [32, 64])
@sampled(lambda n: settings(max_examples=n, deadline=None), data=st.data(), bounded=12,
         full=30)
def test_a_strict_machine_stops_exactly_where_the_counter_first_moves(width, data):
    """Strict faults at the first instruction that would count, before it writes."""
    image, lanes = data.draw(overflowing_programs(width))
    for lane in lanes:
        counting, strict = Machine(image), Machine(image)
        strict.strict = True
        for machine in (counting, strict):
            for register, word in zip(REGISTERS, lane):
                machine.registers[register] = word
        records = []
        try:
            counting.run(1, trace=records.append)
        except Exception:  # x / 0 and the like
            continue
        if counting.overflows == 0:
            strict.run(1)
            assert strict.snapshot() == counting.snapshot()
            continue
        from revasm.machine import MachineFault
        with pytest.raises(MachineFault) as info:
            strict.run(1)
        assert info.value.kind == "overflow"
        # the instructions before it ran, the faulting one did not
        assert strict.overflows == 0 and info.value.step == strict.steps


# --- the examples and the command line ------------------------------------------

EXP = """;; pendulum pal file
.input  x $1 fixed = 22.0
.output y $2
        start
        addexp $2 $1
        finish
"""
PRODUCT = """;; pendulum pal file
.width  64
.input  x $1 fixed = 50000.0
.input  y $2 fixed = 50000.0
.loss   z $3
        start
        addmul $3 $1 $2
        finish
"""


@pytest.fixture
def programs(tmp_path: Path) -> dict[str, str]:
    paths = {}
    for name, text in (("exp", EXP), ("product", PRODUCT)):
        path = tmp_path / f"{name}.pal"
        path.write_text(text)
        paths[name] = str(path)
    return paths


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("engine", ["reference", *ENGINES])
def test_exp_22_and_50000_squared_at_q32_32_are_reported_by_run(programs, engine):
    for name in ("exp", "product"):
        result = _invoke("run", programs[name], "--width", "64", "--engine", engine, "--json")
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["status"] == "finished" and out["overflows"] == 1
        assert "warning: 1 overflow event" in result.stderr


def test_strict_exits_1_with_the_line_and_no_traceback(programs):
    result = _invoke("run", programs["product"], "--width", "64", "--strict")
    assert result.exit_code == 1
    assert "machine fault (overflow): ADDMUL $3 $1 $2 at line 7 (pc 1)" in result.stderr
    assert "does not fit the word (Q32.32)" in result.stderr
    assert "Traceback" not in result.output
    as_json = _invoke("run", programs["exp"], "--width", "64", "--strict", "--json")
    assert as_json.exit_code == 1
    fault = json.loads(as_json.stdout)["fault"]
    assert (fault["kind"], fault["line"], fault["source"]) == ("overflow", 5, "addexp $2 $1")


def test_grad_and_hessian_report_the_forward_pass_events_or_fault_when_strict(programs):
    result = _invoke("grad", programs["product"], "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["overflows"] == 1
    assert "overflow event in the forward pass" in result.stderr
    for command in ("grad", "hessian"):
        strict = _invoke(command, programs["product"], "--strict", "--json")
        assert strict.exit_code == 1
        assert json.loads(strict.stdout)["fault"]["kind"] == "overflow"


def test_check_counts_events_and_still_restores_the_state(programs):
    result = _invoke("check", programs["product"], "--width", "64", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["restored"] == 1 and out["overflows"] == 1
    strict = _invoke("check", programs["product"], "--width", "64", "--strict")
    assert strict.exit_code == 1 and "overflow" in strict.output


def test_batch_reports_overflow_events_per_lane(programs, tmp_path: Path):
    inputs = tmp_path / "xs.csv"
    inputs.write_text("x,y\n50000.0,50000.0\n2.0,3.0\n-50000.0,50000.0\n")
    result = _invoke("batch", programs["product"], "--width", "64", "--inputs", str(inputs),
                     "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["overflows"] == [1, 0, 1]
    assert "2 of 3 lanes counted overflow events" in result.stderr
    strict = _invoke("batch", programs["product"], "--width", "64", "--inputs", str(inputs),
                     "--strict", "--json")
    assert strict.exit_code == 1
    assert json.loads(strict.stdout)["fault_kind"] == ["overflow", "", "overflow"]


def test_an_out_of_range_set_is_a_usage_error_on_every_command(tmp_path):
    # (not PRODUCT: its default 50000.0 does not fit Q16.16 either, and a declaration's
    # value follows the same rule, so it is an assembly error before any --set)
    square = tmp_path / "square.pal"
    square.write_text(";; pendulum pal file\n.input x $1 fixed = 1.5\n.loss z $3\n"
                      "start\naddmul $3 $1 $1\nfinish\n")
    for command in ("run", "check", "grad", "hessian", "report"):
        result = _invoke(command, str(square), "--width", "32", "--set", "x=40000.0")
        assert result.exit_code == 2, (command, result.output)
        assert "40000.0 does not fit Q16.16" in result.output


# --- each engine's overflow predicates are the scalar definition -------------------------

PREDICATES = {p.name: p.arity for p in PRIMITIVES if p.predicate}  # isa/primitives.py


def _edge_columns(fmt: WordFormat, n: int, seed: int) -> list[list[int]]:
    import random

    rng = random.Random(seed)
    special = [0, 1, fmt.one, fmt.mask, fmt.sign_bit, fmt.sign_bit - 1, fmt.sign_bit + 1,
               fmt.mask - fmt.one + 1, (1 << (fmt.width - 1)) >> (fmt.width // 4),
               *(fmt.from_real(v) & fmt.mask for v in (1.5707963267948966, -1.5707963267948966,
                                                       3.14159, 181, 46341))]
    return [[rng.choice(special) if rng.random() < 0.6 else rng.randrange(fmt.mask + 1)
             for _ in range(n)] for _ in range(3)]


@pytest.mark.parametrize("width", [32, 64])
def test_the_vector_predicates_are_the_scalar_definition(width):
    from revasm.isa.vocabulary import vocabulary
    from revasm.sim.vector.vocabulary import LaneContext, vector_vocabulary

    fmt = WordFormat(width)
    scalar = vocabulary(fmt)
    context = LaneContext(np)
    lanes = vector_vocabulary(fmt, np, context)
    columns = _edge_columns(fmt, 3000, width)
    context.reset(3000)
    arrays = [np.array(column, dtype=np.uint64) for column in columns]
    for name, arity in PREDICATES.items():
        got = lanes[name](*arrays[:arity]).tolist()
        assert got == [scalar[name](*row) for row in zip(*columns[:arity])], name


@pytest.mark.skipif("compiled" not in ENGINES, reason="numba is not installed")
@pytest.mark.parametrize("width", [32, 64])
def test_the_compiled_predicates_are_the_scalar_definition(width):
    from revasm.isa.vocabulary import vocabulary
    from revasm.sim.compiled import overflow

    fmt = WordFormat(width)
    scalar = vocabulary(fmt)
    columns = _edge_columns(fmt, 1000, width + 1)
    for name, arity in PREDICATES.items():
        function = getattr(overflow, name)
        for row in zip(*columns[:arity]):
            assert int(function(*map(np.uint64, row), width)) == scalar[name](*row), (name, row)


# --- compiled Python: strict by default ---------------------------------------------------

PYTHON = """from revasm.compiler import *


@reversible
def f(x: Fixed, y: Fixed, z: Loss):
    z += x * y
"""


def test_a_compiled_python_function_faults_at_its_line_by_default():
    import revasm
    from revasm.compiler import compile_source
    from revasm.programs import ProgramFault

    program = compile_source(PYTHON, "f", "product.py", width=64, for_gradient=True)
    with pytest.raises(ProgramFault, match="does not fit the word") as info:
        revasm.run_program(program, {"x": 50000.0, "y": 50000.0})
    assert info.value.fault.kind == "overflow" and info.value.pos.line == 6
    with pytest.raises(ProgramFault, match="does not fit the word"):
        revasm.grad_program(program, {"x": 50000.0, "y": 50000.0})
    counted = revasm.run_program(program, {"x": 50000.0, "y": 50000.0}, strict=False)
    assert overflow_counts(counted.machine).tolist() == [1]
    assert revasm.run_program(program, {"x": 3.0, "y": 5.0}).values["z"] == 15.0
    result = _invoke("grad-expr", "x*y", "--at", "x=50000.0,y=50000.0", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["fault"]["kind"] == "overflow"


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_reports_the_same_gradient_and_events(programs, engine):
    """Gradient mode: the forward pass counts, the backward pass takes the events back."""
    from revasm.sim.host import gradient

    image = load_program_for_test(programs["product"])
    results = [gradient(image, engine=name, inputs={"x": 50000.0, "y": 50000.0})
               for name in ("reference", engine)]
    assert results[0].overflows == results[1].overflows == 1
    assert results[0].gradient == results[1].gradient
    for result in results:
        assert overflow_counts(result.machine).tolist() == [0]


def load_program_for_test(path: str):
    from revasm.assembler import assemble_file

    return assemble_file(path, width=64)
