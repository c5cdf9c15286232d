"""The RTL core's memory map: a stack window at the top of the address space.

The core has a physical memory; its top cells hold the top of [0, 2^W), where a
downward stack from address 0 puts its first push (docs/rtl.md "Memory map").  These
tests run the conformance suite's stack programs and its jump onto FINISH on the core in
lockstep with the reference, both ways, and check that an address outside the windows
faults on both sides with the same kind, PC and address.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from click.testing import CliRunner
from pal_sources import CONFORMANCE

from revasm.assembler import assemble, assemble_file
from revasm.cli.main import cli
from revasm.rtl.hardware.memory_map import MemoryMap
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.verification.cosim import Job, Lockstep

SUITE = CONFORMANCE
TOP = 2**32


def test_the_windows_hold_the_bottom_and_the_top_of_the_address_space() -> None:
    memory_map = CoreParams(memory_words=256, stack_words=64).memory_map
    assert (memory_map.low_words, memory_map.stack_base) == (192, TOP - 64)
    assert [memory_map.cell(a) for a in (0, 191, TOP - 64, TOP - 1)] == [0, 191, 192, 255]
    assert [memory_map.cell(a) for a in (192, 255, 65536, TOP - 65)] == [None] * 4
    cells = memory_map.cells()
    assert [cell for cell, _ in cells] == list(range(256))
    assert all(memory_map.cell(address) == cell for cell, address in cells)
    assert "outside the RTL core's memory map (0..191 and 4294967232..4294967295" in \
        memory_map.outside(TOP - 65)
    assert memory_map.outside(TOP - 64) is None
    assert MemoryMap(64, 1024, 0).cell(2**64 - 1) is None  # no stack window
    with pytest.raises(ValueError, match="stack_words"):
        CoreParams(memory_words=256, stack_words=256)


def _job(name: str) -> Job:
    return Job(assemble_file(SUITE / name), name=name)


@pytest.mark.parametrize("width, names", [
    (32, ["downward_stack.pal", "call_then_jump_onto_finish.pal"]),
    (64, ["downward_stack_64.pal"]),
])
def test_a_downward_stack_from_0_and_a_jump_onto_finish_run_in_lockstep(width, names) -> None:
    results = Lockstep(CoreParams(width=width, memory_words=256)).run(
        [_job(name) for name in names], stop_on_divergence=False)
    for result in results:
        assert [(run.direction, run.status) for run in result.runs] == \
            [(1, "finished"), (-1, "finished")], [run.divergence for run in result.runs]
        assert result.runs[0].steps == result.runs[1].steps > 0


def test_the_compiler_style_conformance_programs_run_in_lockstep() -> None:
    names = ["frank_downward_recursion.pal", "roopl_dispatch.pal", "pendvmpy_uncall.pal"]
    # pendvmPy's array is at 1400: a low window of 1536 words, a stack window of 512
    results = Lockstep(CoreParams(memory_words=2048, stack_words=512)).run(
        [_job(name) for name in names], stop_on_divergence=False)
    for result in results:
        assert [(run.direction, run.status) for run in result.runs] == \
            [(1, "finished"), (-1, "finished")], [run.divergence for run in result.runs]


def test_an_address_outside_the_windows_faults_with_kind_pc_and_address() -> None:
    # both_ends.pal writes 2^32 - 1 (the stack window), 18, then 65536: outside
    below = assemble(";; pendulum pal file\nstart\n addi $1 -65\n exch $2 $1\n finish\n",
                     "below.pal")  # 2^32 - 65: just below a 64-cell stack window
    results = Lockstep(CoreParams(memory_words=256, stack_words=64)).run(
        [_job("both_ends.pal"), Job(below, name="below")], stop_on_divergence=False)
    got = [(run.status, run.fault_kind, run.fault_pc, run.fault_address)
           for result in results for run in result.runs]
    assert got == [("fault", "memory-address", 9, 65536),
                   ("fault", "memory-address", 2, TOP - 65)]
    assert "address 4294967231 is outside the RTL core's memory map" in \
        results[1].runs[0].fault_message


def test_rtl_sim_reports_the_faulting_address_and_refuses_words_outside_the_map() -> None:
    path = str(SUITE / "both_ends.pal")
    runner = CliRunner()
    result = runner.invoke(cli, ["rtl", "sim", path, "--memory-words", "128", "--json"])
    assert result.exit_code == 1
    (run,) = json.loads(result.output)["runs"]
    assert (run["fault_kind"], run["fault_pc"], run["fault_address"]) == \
        ("memory-address", 9, 65536)
    assert "memory map (0..63 and 4294967232..4294967295" in run["fault_message"]
    result = runner.invoke(cli, ["rtl", "sim", path, "--memory-words", "128",
                                 "--mem", "100=5"])
    assert result.exit_code == 1
    assert "error: an initial word at address 100 is outside the RTL core's memory map" \
        in result.output
    result = runner.invoke(cli, ["rtl", "sim", path, "--memory-words", "32",
                                 "--stack-words", "24"])
    assert result.exit_code == 1 and "low memory window (8 of 32 words)" in result.output
