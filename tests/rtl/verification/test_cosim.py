"""The RTL core in lockstep with the reference simulator: examples, random programs, faults.

Each test builds one simulated core and runs many programs on it (loading
each through the host interface), so that elaboration is paid once.
"""
from __future__ import annotations

import glob

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: The RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")
pytestmark = WARNINGS_ARE_ERRORS

import rtl_programs  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from program_generators import (  # noqa: E402
    DATA_INSTRUCTIONS,
    GENERAL,
    LINK_REGISTERS,
    PROCEDURE_INSTRUCTIONS,
    PROCEDURE_WRITES,
    ProgramBuilder,
    ProgramCase,
    _Context,
    _finish,
    _initial_registers,
    _prologue,
    _Structure,
    examples,
    structured_programs,
)
from sampling import SAMPLES, count  # noqa: E402

from revasm.assembler import assemble_file  # noqa: E402
from revasm.isa.table import INSTRUCTIONS  # noqa: E402
from revasm.rtl.hardware.function_unit import IMPLEMENTED  # noqa: E402
from revasm.rtl.hardware.params import CoreParams  # noqa: E402
from revasm.rtl.hardware.semantics import FUNCTION_OPS  # noqa: E402
from revasm.rtl.verification.cosim import TEST_MEMORY_WORDS, Job, Lockstep  # noqa: E402

#: Entries whose templates call a function-unit operation the RTL lacks.
UNSUPPORTED = frozenset(
    ins.mnemonic for ins in INSTRUCTIONS
    if any(f"{op}(" in ins.forward + ins.backward for op in FUNCTION_OPS if op not in IMPLEMENTED))
SUPPORTED_DATA = tuple(i for i in DATA_INSTRUCTIONS if i.mnemonic not in UNSUPPORTED)
SUPPORTED_PROCEDURE = tuple(i for i in PROCEDURE_INSTRUCTIONS if i.mnemonic not in UNSUPPORTED)
#: on Amaranth's simulator (slow at W = 64), make test's bounded sample and make test-long's
#: full one (tests/support/sampling.py); the Verilator path runs 100 per width three ways
PROGRAMS_PER_WIDTH = {"bounded": 16, "full": 40}


class _SupportedStructure(_Structure):
    """The generator's structure, with procedure bodies over the supported instructions."""

    def procedure(self, index: int) -> None:
        b = self.builder
        b.label(f"proc{index}_top").op("BRA", f"proc{index}_bot")
        b.label(f"proc{index}").op("SWAPBR", LINK_REGISTERS[index])
        b.op("NEG", LINK_REGISTERS[index])
        self.statements(_Context(PROCEDURE_WRITES, 1, index + 1, SUPPORTED_PROCEDURE), 4)
        b.label(f"proc{index}_bot").op("BRA", f"proc{index}_top")


@st.composite
def supported_programs(draw, width: int):
    """structured_programs of program_generators over the instructions the RTL implements."""
    builder = ProgramBuilder(width)
    procedures = draw(st.integers(0, len(LINK_REGISTERS)))
    structure = _SupportedStructure(draw, width, builder, procedures)
    _prologue(builder, width)
    if draw(st.booleans()):
        structure.statements(_Context(GENERAL, 0, 0, SUPPORTED_DATA), 6)
    else:  # a longer straight line
        for _ in range(draw(st.integers(0, 16))):
            structure.statement(_Context(GENERAL, 3, procedures, SUPPORTED_DATA))
    builder.op("FINISH")
    for index in range(procedures):
        structure.procedure(index)
    memory = _finish(builder, draw, width, finish=False)
    return ProgramCase(builder.build(), _initial_registers(draw, width), memory,
                       f"program with {procedures} procedures, W={width}")


def _collect(width: int, count: int) -> list[ProgramCase]:
    cases: list[ProgramCase] = []
    memory_map = CoreParams(width=width, memory_words=TEST_MEMORY_WORDS).memory_map

    @settings(max_examples=count, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(supported_programs(width))
    def draw(case: ProgramCase) -> None:
        # a program whose words reach past the core's data memory cannot be loaded on it
        # (the generator does not bound a program's length; a clean clone drew one)
        assume(not any(memory_map.outside(address) for address in case.memory))
        cases.append(case)

    draw()
    return cases[:count]


def _report(results) -> str:
    lines = []
    for result in results:
        for run in result.runs:
            if not run.ok:
                lines.append(f"{result.job.name}: {run.direction:+d}: {run.status}: "
                             f"{run.divergence}")
    return "\n".join(lines)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("sample", SAMPLES)
def test_random_programs_in_lockstep(sample: str, width: int) -> None:
    programs = count(sample, **PROGRAMS_PER_WIDTH)
    cases = _collect(width, programs)
    assert len(cases) == programs
    jobs = [Job(c.image, c.registers, c.memory, name=f"#{i} {c.description}")
            for i, c in enumerate(cases)]
    results = Lockstep(CoreParams(width=width, memory_words=TEST_MEMORY_WORDS),
                       max_steps=20_000).run(jobs, stop_on_divergence=False)
    assert len(results) == len(jobs)
    assert _report(results) == ""
    statuses = {run.status for r in results for run in r.runs}
    assert statuses <= {"finished", "fault"}
    # most programs run both ways (faults are rare: divide by zero, log/sqrt domain)
    both_ways = sum(len(r.runs) == 2 and r.runs[1].status == "finished" for r in results)
    assert both_ways >= programs // 2
    assert sum(run.steps for r in results for run in r.runs) > 10 * programs


#: Random programs per width in gradient mode on the Amaranth path (each twice: the
#: gradient protocol, and gradient mode both ways); ``bench/rtl_lockstep.py`` runs hundreds.
GRADIENT_PROGRAMS = {"bounded": 6, "full": 15}


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("sample", SAMPLES)
def test_random_programs_in_gradient_mode_in_lockstep(sample: str, width: int) -> None:
    """Every G register (G[0] too) and GM word after each run as the reference's."""
    programs = count(sample, **GRADIENT_PROGRAMS)
    cases = examples(structured_programs(width), programs, seed=width + 1)
    jobs = [job for i, case in enumerate(cases)
            for job in rtl_programs.jobs(case, f"#{i}", ("gradient", "gradient-both"))]
    results = Lockstep(rtl_programs.params(width, 512), max_steps=20_000).run(
        jobs, stop_on_divergence=False)
    assert len(results) == len(jobs) == 2 * programs
    assert rtl_programs.problems(results) == []
    finished = [r for r in results if [run.status for run in r.runs] == ["finished"] * 2]
    assert len(finished) >= programs


EXAMPLES = sorted(glob.glob("examples/*.pal"))


def test_examples_in_lockstep() -> None:
    # at W = 32, the width of the cores here (bessel_j2 and apex say .width 64)
    images = [assemble_file(path, width=32) for path in EXAMPLES]
    jobs = []
    for path, image in zip(EXAMPLES, images):
        from revasm.sim.host import initial_words
        registers, memory = initial_words(image, memory_words=1024)
        jobs.append(Job(image, registers, memory, name=path))
    by_width: dict[int, list[Job]] = {}
    for job in jobs:
        by_width.setdefault(job.image.width, []).append(job)
    results = []
    for width, group in by_width.items():
        results += Lockstep(CoreParams(width=width, memory_words=2048)).run(
            group, stop_on_divergence=False)
    agreed = 0
    for result in results:
        image = result.job.image
        for run in result.runs:
            if run.status == "unimplemented":
                # only ever at an instruction that needs a missing function-unit operation
                from revasm.isa.codec import decode
                ins, _ = decode(image.words[run.fault_pc] & 0xFFFFFFFF)
                assert ins.mnemonic in UNSUPPORTED, result.job.name
            else:
                assert run.status == "finished", (result.job.name, run.divergence)
        if all(run.status == "finished" for run in result.runs):
            assert [run.direction for run in result.runs] == [1, -1]
            # the lockstep checked the count at every commit and at the halt
            assert all(run.cycles == run.reference_cycles >= 6 * run.steps
                       for run in result.runs)
            agreed += 1
    assert agreed >= 5


def test_a_compiled_program_in_lockstep_counts_the_rtl_s_cycles() -> None:
    """A Janus program compiled to PAL (procedure calls and uncalls, loops): the RTL and
    the reference agree on it both ways, its cycles at every commit and at the halt."""
    from revasm.compiler.api import compile_janus_file
    from revasm.sim.host import initial_words
    image = compile_janus_file("examples/janus/fib_pair.ja").image
    registers, memory = initial_words(image, memory_words=1024)
    (result,) = Lockstep(CoreParams(width=32, memory_words=2048)).run(
        [Job(image, registers, memory, name="fib_pair.ja")])
    assert [run.status for run in result.runs] == ["finished", "finished"], _report([result])
    assert [run.cycles for run in result.runs] == [run.reference_cycles for run in result.runs]
    # every retired instruction costs the core's six-state schedule or more (isa/timing)
    assert result.runs[0].steps > 200
    assert result.runs[0].cycles >= 6 * result.runs[0].steps


def _uncaught_jump(width: int) -> Job:
    b = ProgramBuilder(width)
    b.op("START").op("ADDI", 1, 3).op("BRA", "land").op("ADDI", 2, 1)
    b.label("land").op("ADDI", 2, 5)  # does not catch the jump
    b.op("FINISH")
    return Job(b.build(), name="uncaught jump")


def _faults(width: int) -> list[Job]:
    divide = ProgramBuilder(width)
    divide.op("START").op("ADDI", 1, 7).op("ADDDIV", 3, 1, 2).op("FINISH")
    address = ProgramBuilder(width)
    address.op("START").op("ADDI", 1, 2).op("EXCH", 3, 1).op("FINISH")
    outside = ProgramBuilder(width)
    outside.op("START").op("ADDI", 1, 1000).op("EXCH", 3, 1).op("FINISH")
    illegal = ProgramBuilder(width)
    illegal.op("START").op("ADDI", 1, 1).data(5).op("FINISH")
    tape = ProgramBuilder(width)
    tape.op("START").op("EMIT", 1).op("FINISH")
    return [Job(divide.build(), name="divide"), Job(address.build(), name="code cell"),
            Job(outside.build(), name="outside"), Job(illegal.build(), name="data cell"),
            Job(tape.build(), directions=(-1,), name="empty tape")]


@pytest.mark.parametrize("width", [32, 64])
def test_faults_match_the_reference(width: int) -> None:
    jobs = [_uncaught_jump(width), *_faults(width)]
    results = Lockstep(CoreParams(width=width, memory_words=TEST_MEMORY_WORDS)).run(
        jobs, stop_on_divergence=False)
    kinds = {}
    for result in results:
        (run,) = result.runs
        assert run.status == "fault", (result.job.name, run.divergence)
        kinds[result.job.name] = (run.fault_kind, run.fault_pc)
    assert kinds == {"uncaught jump": ("uncaught-jump", 4), "divide": ("divide-by-zero", 2),
                     "code cell": ("memory-address", 2), "outside": ("memory-address", 2),
                     "data cell": ("illegal-instruction", 2), "empty tape": ("tape-empty", 1)}


def _gradient_jobs(width: int) -> list[Job]:
    """Every data entry alone (loss on its register a), then the examples with a .loss."""
    import random

    from program_generators import ProgramBuilder

    from revasm.isa.fixed_point import WordFormat
    from revasm.sim.host import Place
    fmt = WordFormat(width)
    rng = random.Random(width)
    jobs = []
    for ins in DATA_INSTRUCTIONS:
        if ins.mnemonic in ("EXCH", "EMIT"):
            continue
        operands = []
        for name, kind in zip(ins.operand_names, ins.operand_kinds):
            if kind == "reg":
                operands.append({"a": 1, "b": 2, "c": 3}[name])
            elif kind == "imm":
                operands.append(rng.randint(-300, 300))
            elif kind == "amt":
                operands.append(rng.randint(0, width - 1))
            else:
                operands.append(1)
        b = ProgramBuilder(width)
        b.op("START").op(ins.mnemonic, *operands).op("FINISH")
        registers = {1: fmt.from_real(rng.uniform(-2, 2)), 2: fmt.from_real(rng.uniform(0.5, 2)),
                     3: fmt.from_real(rng.uniform(0.5, 2))}
        jobs.append(Job(b.build(), registers, {}, name=ins.mnemonic,
                        loss=Place("a", register=1)))
    # EXCH and aliasing (ADDMUL $4 $3 $3) through a small program
    b = ProgramBuilder(width)
    b.op("START").op("ADDI", 5, "cell").op("EXCH", 2, 5).op("ADDMUL", 4, 2, 2)
    b.op("ADDMUL", 1, 4, 3).op("EXCH", 2, 5).op("ADDI", 5, "-cell").op("FINISH")
    b.label("cell").data(fmt.from_real("1.5"))
    jobs.append(Job(b.build(), {3: fmt.from_real("0.75")}, {}, name="exch+alias",
                    loss=Place("y", register=1)))
    return jobs


@pytest.mark.parametrize("width", [32, 64])
def test_gradient_mode_in_lockstep(width: int) -> None:
    from revasm.sim.host import initial_words, resolve
    jobs = _gradient_jobs(width)
    if width == 64:  # the families with unit calls and the aliasing case (time budget)
        jobs = [j for j in jobs if j.name.startswith(("ADDMUL", "SUBDIV", "ROT", "IROT",
                                                      "ADDSIN", "ADDPOW", "ADDATAN2",
                                                      "SWAP", "NEG", "exch"))]
    if width == 32:
        for path in EXAMPLES:
            image = assemble_file(path, width=width)
            losses = [n for n, d in image.names.items() if d.role == "loss"]
            if not losses:
                continue
            registers, memory = initial_words(image, memory_words=TEST_MEMORY_WORDS)
            jobs.append(Job(image, registers, memory, name=path,
                            loss=resolve(image, losses[0])))
    results = Lockstep(CoreParams(width=width, memory_words=TEST_MEMORY_WORDS,
                                  gradient=True)).run(jobs, stop_on_divergence=False)
    assert _report(results) == ""
    both = [r.job.name for r in results if [run.status for run in r.runs] == ["finished"] * 2]
    assert len(both) >= len(results) - 3, [(r.job.name, [(x.status, x.fault_kind)
                                                         for x in r.runs]) for r in results
                                           if r.job.name not in both]
    assert {"ADDMUL", "ROT", "ADDSIN", "exch+alias"} <= set(both)
    if width == 32:
        assert "ADDDIV" in both and len(results) >= 57


def test_a_gradient_step_off_its_counted_cycles_is_a_divergence(monkeypatch) -> None:
    """Gradient mode's cycles are checked too (isa/timing: the micro-program, its unit
    calls): with the reference counting ADDMUL's gradient step one cycle long, the backward
    run diverges at that step, the forward run (value mode) not."""
    from program_generators import ProgramBuilder

    from revasm.sim.host import Place
    rtl_programs.miscount(monkeypatch, lambda entry, backward, gradient:
                gradient and entry.mnemonic == "ADDMUL")
    b = ProgramBuilder(32)
    b.op("START").op("ADDMUL", 1, 2, 3).op("FINISH")
    job = Job(b.build(), {2: 3 << 15, 3: 5 << 14}, {}, name="addmul", loss=Place("a", register=1))
    (result,) = Lockstep(CoreParams(memory_words=TEST_MEMORY_WORDS, gradient=True)).run([job])
    forward, backward = result.runs
    assert forward.status == "finished"
    assert forward.cycles == forward.reference_cycles == 6 + 45 + 6
    assert backward.status == "divergence"
    assert backward.divergence == ("step 2, pc 1: the RTL committed it 138 cycles after the "
                                   "run pulse, the reference's cycle count (isa/timing) puts "
                                   "the commit at 139")


def test_a_miscounted_step_or_halt_is_a_divergence(monkeypatch) -> None:
    """Every commit is checked against the reference's count, and the halt too: START one
    cycle long diverges at the first commit; FINISH one cycle long after its commit (the
    halt alone checks that: nothing follows it) diverges when the core goes idle."""
    from program_generators import ProgramBuilder
    b = ProgramBuilder(32)
    b.op("START").op("ADDI", 1, 3).op("FINISH")
    params = CoreParams(memory_words=TEST_MEMORY_WORDS)
    rtl_programs.miscount(monkeypatch, lambda entry, backward, gradient: entry.mnemonic == "START")
    (result,) = Lockstep(params).run([Job(b.build(), directions=(1,))])
    assert result.runs[0].divergence == (
        "step 1, pc 0: the RTL committed it 5 cycles after the run pulse, the reference's "
        "cycle count (isa/timing) puts the commit at 6")
    rtl_programs.miscount(monkeypatch, lambda entry, backward, gradient: entry.mnemonic == "FINISH",
                after=True)
    (result,) = Lockstep(params).run([Job(b.build(), directions=(1,))])
    assert result.runs[0].divergence == ("the RTL halted 18 cycles after the run pulse, the "
                                         "reference counts 19")


#: Programs whose fixed-point results do not fit: (name, width, source, events forward).
OVERFLOWING = [
    ("50000 * 50000 (ADDMUL)", 64, """
.input  x $1 fixed = 50000.0
.input  y $2 fixed = 50000.0
        start
        addmul $3 $1 $2
        submul $4 $1 $2
        finish
""", 2),
    ("exp(22) (ADDEXP)", 64, """
.input  x $1 fixed = 22.0
        start
        addexp $2 $1
        subexp $3 $1
        finish
""", 2),
    ("a sum leaving the range", 32, """
.input  x $1 fixed = 30000.0
.input  y $2 fixed = 1.0
        start
        addmul $3 $1 $2
        addmul $3 $1 $2
        submul $4 $1 $2
        submul $4 $1 $2
        submul $4 $1 $2
        finish
""", 2),
    ("a quotient that does not fit (ADDDIV)", 32, """
.input  x $1 fixed = 30000.0
.input  y $2 fixed = 0.25
.input  z $5 fixed = -0.25
        start
        adddiv $3 $1 $2
        subdiv $4 $1 $5
        adddiv $6 $2 $1
        finish
""", 2),
    ("products that fit and one that does not", 32, """
.input  x $1 fixed = -181.0
.input  y $2 fixed = 181.0
.input  z $5 fixed = 182.0
        start
        addmul $3 $1 $2
        addmul $4 $2 $2
        addmul $6 $5 $5
        finish
""", 1),
    ("rotations whose shears or negation wrap (ROT, IROT)", 32, """
.input  x $1 fixed = 30000.0
.input  y $2 fixed = 30000.0
.input  t $3 fixed = 0.7
.input  u $4 fixed = 30000.0
.input  v $5 fixed = 30000.0
.input  m $6 fixed = -32768.0
.input  s $8 fixed = 3.0
.input  p $9 fixed = 0.5
.input  q $10 fixed = -0.25
        start
        rot $1 $2 $3
        irot $4 $5 $3
        rot $6 $7 $8
        rot $9 $10 $8
        irot $9 $10 $3
        finish
""", 3),
]


@pytest.mark.parametrize("width", [32, 64])
def test_overflow_events_agree_forward_and_backward(width: int) -> None:
    from revasm.assembler import assemble
    from revasm.sim.host import initial_words
    jobs, expected = [], {}
    for name, w, source, events in OVERFLOWING:
        if w != width:
            continue
        image = assemble(";; pendulum pal file\n" + source.lstrip("\n"), width=width)
        registers, memory = initial_words(image, memory_words=TEST_MEMORY_WORDS)
        jobs.append(Job(image, registers, memory, name=name))
        expected[name] = events
    results = Lockstep(CoreParams(width=width, memory_words=TEST_MEMORY_WORDS)).run(
        jobs, stop_on_divergence=False)
    assert _report(results) == ""
    for result in results:
        forward, backward = result.runs
        assert (forward.status, backward.status) == ("finished", "finished")
        assert forward.overflows == expected[result.job.name], result.job.name
        assert backward.overflows == 0, result.job.name


def _one_step_job(mnemonic: str, operands: tuple[int, ...], registers: dict[int, int],
                  direction: int) -> Job:
    from revasm.sim.host import Place
    b = ProgramBuilder(width=32)
    b.op("START").op(mnemonic, *operands).op("FINISH")
    return Job(b.build(), registers, {}, directions=(direction,),
               name=f"{mnemonic} {direction:+d}", loss=Place("y", register=1),
               gradient_forward=direction > 0)


def test_a_step_that_faults_after_its_adjoint_leaves_no_effect_on_the_rtl() -> None:
    """A faulting step has no effect on the RTL either (docs/rtl.md "Gradient mode").
    Backward, ADDLOG $1 $2 in gradient mode with $2 = -1.0: the adjoint micro-program adds
    G[$1] * (1 / $2) to G[$2], then the value step takes log of a negative; the core puts
    G back before it faults, and the lockstep (which reads G back after a fault) agrees."""
    backward = _one_step_job("ADDLOG", (1, 2), {2: -(1 << 16) & 0xFFFFFFFF}, -1)
    # SUBATAN2 $1 $2 $3 forward at b = c = 2^-9: the value step takes atan2 = pi/4 from
    # $1, then the inverse adjoint divides by b^2 + c^2, which rounds to 0; the core puts
    # $1 and OV back before it faults
    forward = _one_step_job("SUBATAN2", (1, 2, 3), {2: 128, 3: 128}, +1)
    # the same from $1 = -2^31: the value step's subtraction overflows and counts in OV,
    # which the core takes back (OV is compared after the fault)
    counted = _one_step_job("SUBATAN2", (1, 2, 3), {1: 1 << 31, 2: 128, 3: 128}, +1)
    results = Lockstep(CoreParams(width=32, memory_words=TEST_MEMORY_WORDS, gradient=True)
                       ).run([backward, forward, counted], stop_on_divergence=False)
    assert [(run.status, run.fault_kind) for result in results for run in result.runs] == [
        ("fault", "domain-error"), ("fault", "divide-by-zero"), ("fault", "divide-by-zero")
    ], _report(results)
