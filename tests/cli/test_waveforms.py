"""`revasm run --vcd`: the reference's waveforms, named and timed as the RTL's.

Runs are written as VCDs -- ``revasm run --vcd`` (or
``rtl/verification/waveform.write_vcd``) from the reference, ``revasm rtl sim --vcd`` (or
the lockstep) from Amaranth's simulation of the core -- read back with vcdvcd, and every
signal of the reference's file must exist in the RTL's and hold the same value at every
moment up to the end of the reference's run: forward runs (examples/fib.pal, a program
with a second register write, memory, output and a loop, examples/bessel_j2.pal with its
unit calls), backward ones (every unit operation run back) and runs that fault, each kind
of fault the core raises.  Most use a core of 256 memory words, whose host load is short;
the command-line ones the default core.  The reference's file starts at the run pulse (the
host's load folded into time 0), so it is compared with the RTL's ``load_edges`` edges
later; with ``--vcd-load`` it has the load too and is compared edge for edge.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from click.testing import CliRunner
from pal_sources import BUSY
from vcdvcd import VCDVCD

from revasm.cli.loading import load_program
from revasm.cli.machine_io import initial_words
from revasm.cli.main import cli
from revasm.isa.timing import FIRST_COMMIT
from revasm.machine import MachineFault
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.verification.cosim import Job, Lockstep, reference_lane
from revasm.rtl.verification.waveform import PERIOD, WaveformError, load_edges, write_vcd

ROOT = Path(__file__).resolve().parents[2]



def _steps(changes: list[tuple[int, str]], times: list[int]) -> list[int]:
    """The signal's value at each of ``times`` (sorted), from its changes (sorted)."""
    values, index, value = [], 0, 0
    for time in times:
        while index < len(changes) and changes[index][0] <= time:
            value = int(changes[index][1], 2)
            index += 1
        values.append(value)
    return values


def _agree(reference: Path, rtl: Path, params: CoreParams | None = None) -> tuple[int, int]:
    """Every signal of the reference's VCD exists in the RTL's and holds the same value at
    every time either changes it, up to the end of the reference's file; returns (signals,
    comparisons).  With ``params``, the reference's file starts at the run pulse: its time
    t is the RTL's t + the host's load (``load_edges(params)`` clock periods)."""
    ours = VCDVCD(str(reference), store_tvs=True)
    theirs = VCDVCD(str(rtl), store_tvs=True, signals=list(ours.references_to_ids))
    offset = 0 if params is None else load_edges(params) * PERIOD
    end = ours.endtime
    assert theirs.endtime > end + offset  # the RTL's file goes on: read-back, backward run
    compared = 0
    for name in ours.references_to_ids:
        assert name in theirs.references_to_ids, name
        # the RTL's changes up to the run pulse are its state at the reference's time 0
        mine = ours[name].tv
        other = [(max(t - offset, 0), value) for t, value in theirs[name].tv]
        times = sorted({t for t, _ in mine} | {t for t, _ in other if t <= end})
        for time, a, b in zip(times, _steps(mine, times), _steps(other, times)):
            assert a == b, (name, time, a, b)
        compared += len(times)
    return len(ours.references_to_ids), compared


#: every operation of both units, with an angle above pi/2 (the rotation's reduction)
UNITS = """;; pendulum pal file
.input x $1 fixed = 0.75
.input y $2 fixed = -2.5
.input t $3 fixed = 3.0
.input u $19 fixed = 1.25
.input v $20 fixed = -0.5
        start
        addmul  $4 $1 $2
        adddiv  $5 $1 $2
        addsin  $6 $1
        addcos  $16 $2
        addtan  $7 $2
        addexp  $8 $2
        addlog  $9 $1
        addsqrt $10 $3
        addatan $17 $2
        addatan2 $11 $1 $2
        addpow  $12 $3 $1
        addtanh $13 $2
        addsinh $18 $1
        addcosh $14 $3
        addabs  $15 $2
        rot     $19 $20 $3
        irot    $19 $20 $5
        finish
"""

#: one program per way the core faults (``rtl/verification/waveform.CORE_FAULTS``), with its
#: direction
FAULTS = {
    "divide-by-zero": (1, """;; pendulum pal file
.input x $1 fixed = 0.75
        start
        addsin $2 $1
        adddiv $3 $1 $4        ; $4 = 0: the unit faults after its first cycle
        finish
"""),
    "domain-error": (1, """;; pendulum pal file
.input x $1 fixed = -0.5
        start
        addexp $3 $1
        addlog $2 $1
        finish
"""),
    "memory-address": (1, """;; pendulum pal file
        start
        addi $4 1
        exch $5 $4             ; address 1 holds an instruction
        finish
"""),
    "illegal-instruction": (1, """;; pendulum pal file
        start
        addi $1 1
        data 5
        finish
"""),
    "tape-empty": (-1, """;; pendulum pal file
        start
        addi $2 5
        emit $2                ; backward: nothing on the tape to take back
        finish
"""),
    "uncaught-jump": (1, (ROOT / "examples/errors/broken.pal").read_text()),
}

SMALL = CoreParams(memory_words=256)


def _both(tmp_path: Path, text: str, direction: int) -> tuple[object, object, tuple[int, int]]:
    """The reference's waveforms (``write_vcd``) and the lockstep's of one run of ``text``
    on the small core: (the reference's fault, the RTL's run, what ``_agree`` found)."""
    source = tmp_path / "program.pal"
    source.write_text(text)
    image = load_program(str(source))
    registers, memory = initial_words(image, (), (), memory_words=SMALL.memory_map.low_words)
    job = Job(image, registers=registers, memory=memory, directions=(direction,))
    machine = reference_lane(job, SMALL.memory_map)
    records: list = []
    machine.run(direction, trace=records.append)  # type: ignore[call-arg]
    fault = machine.fault(0)
    ours, theirs = tmp_path / "reference.vcd", tmp_path / "rtl.vcd"
    with open(ours, "w") as out:
        write_vcd(out, image, records, registers, memory, direction=direction, params=SMALL,
                  fault=fault)
    (result,) = Lockstep(SMALL).run([job], vcd=str(theirs))
    (run,) = result.runs
    return fault, run, _agree(ours, theirs, SMALL)


def _first_edge(changes: list[tuple[int, str]]) -> int:
    """The clock edge at which a 1-bit signal first rises."""
    return next(time for time, value in changes if value == "1") // PERIOD


@pytest.mark.parametrize(("source", "load"), [("examples/fib.pal", False),
                                              ("examples/fib.pal", True), ("busy.pal", False)])
def test_the_reference_waveforms_equal_the_rtl_ones_on_every_shared_signal(tmp_path, source,
                                                                           load):
    runner = CliRunner()
    if source == "busy.pal":
        (tmp_path / source).write_text(BUSY)
        path = str(tmp_path / source)
    else:
        path = str(ROOT / source)
    ours, theirs = tmp_path / "reference.vcd", tmp_path / "rtl.vcd"
    result = runner.invoke(cli, ["run", path, "--vcd", str(ours), "--json"]
                           + ["--vcd-load"] * load)
    assert result.exit_code == 0, result.output
    steps = json.loads(result.output)["steps"]
    result = runner.invoke(cli, ["rtl", "sim", path, "--forward-only", "--vcd", str(theirs)])
    assert result.exit_code == 0, result.output
    params = CoreParams(width=load_program(path).width)
    signals, compared = _agree(ours, theirs, None if load else params)
    assert signals == 22 + 32  # bench.top's and the register file's
    written = VCDVCD(str(ours), store_tvs=True)
    pulses = written["bench.top.retire__valid"].tv
    assert sum(value == "1" for _, value in pulses) == steps
    assert compared > 4 * steps
    # the program starts at the file's first edge, or after the host's load (--vcd-load)
    run = load_edges(params) if load else 0
    assert _first_edge(written["bench.top.host__busy"].tv) == run
    assert _first_edge(pulses) == run + FIRST_COMMIT


def test_run_vcd_starts_at_the_run_with_the_loaded_registers(tmp_path):
    """Without --vcd-load the file's first moment holds the loaded state (x = 1.0 in $1)
    and its first instruction commits within the first few edges; --vcd-load alone is
    refused (it says how --vcd writes)."""
    path = str(ROOT / "examples/bessel_j2.pal")
    out = tmp_path / "j2.vcd"
    result = CliRunner().invoke(cli, ["run", path, "--set", "x=1.0", "--vcd", str(out)])
    assert result.exit_code == 0, result.output
    written = VCDVCD(str(out), store_tvs=True)
    image = load_program(path)
    x = image.names["x"]
    assert x.register == 1
    first = written["bench.top.regfile.\\bank[1]"].tv[0]
    assert first[0] == 0 and int(first[1], 2) == 1 << (32 if image.width == 64 else 16)
    assert _first_edge(written["bench.top.retire__valid"].tv) == FIRST_COMMIT
    result = CliRunner().invoke(cli, ["run", path, "--vcd-load"])
    assert result.exit_code == 2 and "--vcd-load" in result.output


def test_bessel_j2_waveforms_equal_the_rtl_ones_unit_calls_included(tmp_path):
    """examples/bessel_j2.pal at x = 1.0 calls the multiply/divide and function units,
    whose waits depend on their operands (``isa/timing/units.py``)."""
    path = str(ROOT / "examples/bessel_j2.pal")
    ours, theirs = tmp_path / "reference.vcd", tmp_path / "rtl.vcd"
    runner = CliRunner()
    result = runner.invoke(cli, ["run", path, "--set", "x=1.0", "--vcd", str(ours), "--json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.output)["steps"]
    result = runner.invoke(cli, ["rtl", "sim", path, "--set", "x=1.0", "--forward-only",
                                 "--vcd", str(theirs)])
    assert result.exit_code == 0, result.output
    signals, compared = _agree(ours, theirs, CoreParams(width=load_program(path).width))
    assert signals == 22 + 32 and compared > 4 * steps


@pytest.mark.parametrize("direction", [1, -1], ids=["forward", "backward"])
def test_every_unit_operation_is_timed_as_the_core_runs_it(tmp_path, direction):
    fault, run, (signals, compared) = _both(tmp_path, UNITS, direction)
    assert fault is None and run.status == "finished", run.divergence
    assert run.steps == 19 and signals == 22 + 32 and compared > 19 * 4


@pytest.mark.parametrize("kind", ["divide-by-zero", "domain-error", "memory-address",
                                  "illegal-instruction", "uncaught-jump"])
def test_a_faulting_run_is_written_up_to_and_including_its_fault(tmp_path, kind):
    direction, text = FAULTS[kind]
    fault, run, (signals, compared) = _both(tmp_path, text, direction)
    assert fault is not None and fault.kind == kind
    assert run.status == "fault" and run.fault_kind == kind, run.divergence
    ours = VCDVCD(str(tmp_path / "reference.vcd"), store_tvs=True)
    assert ours["bench.top.host__fault"].tv[-1][1] == "1"  # the fault is in the file
    assert signals == 22 + 32 and compared > 20


def test_a_backward_run_that_faults_is_written_from_the_command_line(tmp_path):
    """``run --reverse --vcd`` against ``rtl sim --reverse --vcd``: backward from FINISH,
    EMIT finds the tape empty."""
    source, ours, theirs = tmp_path / "tape.pal", tmp_path / "reference.vcd", tmp_path / "r.vcd"
    source.write_text(FAULTS["tape-empty"][1])
    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(source), "--reverse", "--vcd", str(ours)])
    assert result.exit_code == 1 and "tape-empty" in result.output
    result = runner.invoke(cli, ["rtl", "sim", str(source), "--reverse", "--vcd", str(theirs)])
    assert result.exit_code == 1 and "fault (tape-empty at pc 2, same as the reference)" in (
        result.output)
    signals, compared = _agree(ours, theirs, CoreParams(width=load_program(str(source)).width))
    assert signals == 22 + 32 and compared > 20
    backward = VCDVCD(str(ours), store_tvs=True)["bench.top.host__dir_backward"].tv
    assert backward[-1][1] == "1"


def test_a_fault_the_core_does_not_have_is_refused(tmp_path):
    """The reference's step limit: the core would run on, so no waveforms are written."""
    out = tmp_path / "loop.vcd"
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples/fib.pal"), "--max-steps", "5",
                                      "--vcd", str(out)])
    assert result.exit_code == 1
    assert "--vcd: the run stopped on step-limit" in result.output and not out.exists()
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples/fib.pal"), "--vcd",
                                      str(ROOT / "examples/fib.pal")])
    assert result.exit_code == 2 and "--vcd" in result.output  # never over the program
    image = load_program(str(ROOT / "examples/fib.pal"))
    with open(tmp_path / "x.vcd", "w") as out, pytest.raises(WaveformError, match="overflow"):
        write_vcd(out, image, [], {}, {}, fault=MachineFault("overflow", "strict"))
