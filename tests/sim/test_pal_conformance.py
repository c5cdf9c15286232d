"""The PAL conformance suite: our own programs in tests/support/pal_conformance/, on every engine.

Each program states what it must leave behind in ``; expect`` comments, values worked out
by hand from PISA's semantics (never copied from a simulator's output)::

    ; expect $5 = 77              a register, signed (every register not listed must be 0)
    ; expect [0xffffffff] = 5     a memory word, signed; the address a number (negative
                                  numbers are taken mod 2^W) or a label
    ; expect br = 8               BR when the run halts (a jump onto FINISH)
    ; expect pc = done            where the run halts (a label or an address)
    ; expect steps = 14           instructions of the forward run
    ; expect output = 3 3 -4      the words SHOW/EMIT printed, signed

Every program runs forward on every engine, is compared with the expectations and with
the reference bit for bit, then runs backward from where it halted and must restore its
initial state exactly.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pal_sources import CONFORMANCE

from revasm.assembler import Image, assemble, assemble_file
from revasm.isa.fixed_point import WordFormat
from revasm.sim.engines import available, load

SUITE = CONFORMANCE
PROGRAMS = sorted(SUITE.glob("*.pal"))
ENGINES = available()
_EXPECT = re.compile(r";\s*expect\s+(\S+)\s*=\s*(.*?)\s*$")


def expectations(image: Image, text: str) -> dict:
    """The ``; expect`` lines of a program, resolved against its image."""
    fmt = WordFormat(image.width)
    registers = [0] * 32
    memory: dict[int, int] = {}
    control: dict[str, object] = {}

    def number(token: str) -> int:
        return image.symbols[token] if token in image.symbols else int(token, 0)

    for line in text.splitlines():
        match = _EXPECT.match(line.strip())
        if not match:
            continue
        what, value = match.groups()
        if what.startswith("$"):
            registers[int(what[1:])] = int(value, 0)
        elif what.startswith("["):
            memory[number(what[1:-1]) & fmt.mask] = fmt.signed(int(value, 0) & fmt.mask)
        elif what == "output":
            control[what] = [int(v, 0) for v in value.split()]
        else:
            control[what] = number(value)
    return {"registers": registers, "memory": memory, **control}


def run_forward_and_back(image: Image, engine: str, addresses=()) -> dict:
    """Forward, then backward from the halted state, on one lane of ``engine``; the words
    at ``addresses`` after the forward run."""
    fmt = WordFormat(image.width)
    machine = load(image, 1, engine_name=engine, max_steps=1_000_000)
    before = machine.snapshot(0)
    machine.run(1)
    assert machine.fault(0) is None, str(machine.fault(0))
    assert machine.halted.tolist() == [True]
    after = machine.snapshot(0)
    words = {address: fmt.signed(int(machine.bank_word("MEM", address)[0]))
             for address in addresses}
    result = {
        "snapshot": after,
        "registers": [fmt.signed(word) for word in after.registers],
        "memory": words,
        "br": after.br, "pc": after.pc, "steps": int(machine.steps[0]),
        "output": [fmt.signed(word) for word in machine.output(0)],
    }
    machine.run(-1)
    assert machine.fault(0) is None, str(machine.fault(0))
    assert machine.snapshot(0) == before.turned(), machine.snapshot(0).differences(
        before.turned())
    return result


#: The compiled engine builds a kernel per program, in a time that grows faster than the
#: program (on this 2-core machine: 20 words 5 s, 49 words 18 s, roopl_dispatch.pal's 129
#: words 70 s); ``make test`` runs it on the programs up to this many words, ``make
#: conformance`` (REVASM_CONFORMANCE_ALL=1) on every one.  The other engines run them all.
COMPILED_MAX_WORDS = 10**9 if os.environ.get("REVASM_CONFORMANCE_ALL") else 32


def _engines(path: Path) -> list[str]:
    if len(assemble_file(path)) <= COMPILED_MAX_WORDS:
        return ENGINES
    return [name for name in ENGINES if name != "compiled"]


CASES = [pytest.param(path, name, id=f"{path.stem}-{name}")
         for path in PROGRAMS for name in _engines(path)]


@pytest.mark.parametrize("path, engine", CASES)
def test_every_conformance_program_leaves_what_it_expects_and_runs_back(path: Path,
                                                                        engine: str):
    image = assemble_file(path)
    expected = expectations(image, path.read_text())
    got = run_forward_and_back(image, engine, expected["memory"])
    assert got["registers"] == expected["registers"]
    assert got["memory"] == expected["memory"]
    for name in ("br", "pc", "steps", "output"):
        if name in expected:
            assert got[name] == expected[name], name
    if engine != "reference":
        assert got["snapshot"] == run_forward_and_back(image, "reference")["snapshot"]


def many_labels(count: int) -> str:
    """A long program: ``count`` paired jumps over a poisoned word, each with its labels."""
    lines = [";; pendulum pal file", "start"]
    for i in range(count):
        lines += [f"j{i}:     bra k{i}", "        addi $9 1000     ; jumped over",
                  f"k{i}:     bra j{i}", f"        addi $3 {i % 100}", f"        addi $4 j{i}",
                  f"        addi $4 -k{i}"]
    lines.append("        finish")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_long_program_with_many_labels_runs_both_ways(engine: str):
    # 1202 instructions and 400 labels; the compiled engine's kernel build grows with
    # the program (minutes for 300 instructions on a loaded machine), so it gets 74
    count = 12 if engine == "compiled" else 200
    image = assemble(many_labels(count), "labels.pal")
    assert len(image.symbols) == 2 * count and len(image) == 6 * count + 2
    got = run_forward_and_back(image, engine)
    # every block adds i % 100 to $3 and j_i - k_i = -2 to $4
    assert got["registers"][3] == sum(i % 100 for i in range(count))
    assert got["registers"][4] == -2 * count and got["registers"][9] == 0
    assert got["steps"] == 2 + 5 * count  # START, FINISH and 5 per block (one word skipped)
