"""The differential check: random programs run alike on the compiled engine and the reference.

Shared by ``test_compiled_differential*.py`` (the bounded sample of ``make test``, split
by kind of program so that pytest's workers share it) and ``bench/compiled_campaign.py``.


Compiling a kernel costs far more than running it, so the programs are laid side by side
in one image (``program_generators.concatenate``: each keeps its START..FINISH region)
and every lane starts at its own program's START or FINISH (``Lanes.run(start=...)``).
Each program gets ``LANES_PER_PROGRAM`` lanes: the first with the program's own inputs,
the others random words.  Per batch, bit for bit on every lane (registers, memory, BR,
DIR, PC, tape, steps, cycles, output, halted/faulted and the fault's fields):

* ``forward``  -- from START;
* ``backward`` -- ``run_back`` from where the forward run halted;
* ``from-finish`` -- fresh lanes run backward from FINISH (an EMIT there faults: empty tape);
* ``gradient`` / ``hessian`` -- the host protocol: forward, then the gradient (and tangent)
  banks seeded with random words and ``run_back`` in gradient mode, comparing ``G``
  (``T``, ``TG``) and the memory gradient banks too.

Programs come from ``program_generators`` (hypothesis draws them; straight-line programs
over every data instruction, structured ones with loops, diamonds and portal calls, and
programs that fault in each way ``FAULT_KINDS`` names), both widths.  A batch is a few
thousand generated lines at most (the compiled engine's ``WHOLE_LINES``): a kernel up to
that size compiles as one numba function, a larger one as regions with fixed costs each.
``bench/compiled_campaign.py`` runs the same checks on 10^4 programs.
"""
from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from lane_checks import FAULT_FIELDS
from program_generators import (
    ProgramBatch,
    ProgramBuilder,
    ProgramCase,
    concatenate,
    examples,
    faulting_programs,
    mnemonics,
    straight_line_programs,
    structured_programs,
)

pytest.importorskip("numba")

from revasm.sim.compiled import generate
from revasm.sim.compiled.engine import ENGINE
from revasm.sim.compiled.generate import kernel_source
from revasm.sim.reference.engine import ReferenceLanes

LANES_PER_PROGRAM = 3
MAX_STEPS = 20_000
#: Generated lines per kernel build: the compiled engine compiles a kernel up to this
#: size as one numba function, a larger one as regions with a fixed cost each.
WHOLE_LINES = getattr(generate, "WHOLE_LINES", 1400)
#: Programs per batch: with 3 lanes each, fewer than the compiled engine's parallel
#: threshold (64 lanes), so one kernel entry point is compiled per mode.
BATCH_PROGRAMS = 20
PASSES = ("forward", "backward", "from-finish", "gradient", "hessian")



# --- batches ------------------------------------------------------------------------------

def kernel_lines(case: ProgramCase, derivative: str | None) -> int:
    """Lines of the kernel source ``case`` alone compiles to, in a pass's mode."""
    return kernel_source(case.image, derivative is not None, derivative == "hessian",
                         memory_words=len(case.image) + 64).count("\n")


def batches(cases: list[ProgramCase], derivative_every: int = 0, first: int = 0
            ) -> list[tuple[list[ProgramCase], str | None]]:
    """Consecutive cases grouped into batches, each with its derivative pass (None, or
    every ``derivative_every``-th batch the gradient and the Hessian pass in turn): at most
    ``BATCH_PROGRAMS`` programs, and a kernel of at most the compiled engine's
    ``WHOLE_LINES`` generated lines (one numba function; a larger kernel is cut into
    regions whose fixed costs add up) -- a longer program is a batch of its own."""
    groups: list[tuple[list[ProgramCase], str | None]] = []
    lines = 0
    derivatives = first
    header: dict[tuple[int, str | None], int] = {}
    for case in cases:
        derivative = groups[-1][1] if groups else None
        if groups:
            key = (case.image.width, derivative)
            if key not in header:
                header[key] = kernel_lines(_empty_program(case.image.width), derivative)
            size = kernel_lines(case, derivative) - header[key]
        if (not groups or len(groups[-1][0]) >= BATCH_PROGRAMS
                or lines + size > WHOLE_LINES):
            derivative = None
            if derivative_every and len(groups) % derivative_every == 0:
                derivative = "hessian" if derivatives % 2 else "gradient"
                derivatives += 1
            groups.append(([], derivative))
            lines = kernel_lines(case, derivative)
        else:
            lines += size
        groups[-1][0].append(case)
    return groups


def _empty_program(width: int) -> ProgramCase:
    image = ProgramBuilder(width).op("START").op("FINISH").build()
    return ProgramCase(image)


@dataclass
class Inputs:
    """Every lane's initial registers and memory words (lane ``j`` runs program
    ``j // lanes_per_program``)."""

    registers: dict[int, np.ndarray]
    memory: dict[int, np.ndarray]

    def load(self, machine, prologue: dict[int, np.ndarray] | None = None) -> None:
        registers = dict(self.registers)
        if prologue:
            registers.update(prologue)
        for register, words in registers.items():
            machine.set_bank_word("R", register, words)
        for address, words in self.memory.items():
            machine.set_bank_word("MEM", address, words)


def _random_word(rng: random.Random, value: int, width: int) -> int:
    mask = (1 << width) - 1
    kind = rng.randrange(4)
    if kind == 0:
        return value & mask
    if kind == 1:
        return rng.randrange(-40, 40) & mask
    if kind == 2:
        return rng.randrange(-(8 << (width // 2)), 8 << (width // 2)) & mask
    return rng.getrandbits(width)


def lane_inputs(batch: ProgramBatch, per_program: int, rng: random.Random
                ) -> tuple[Inputs, dict[int, np.ndarray]]:
    """Each program's first lane its own inputs, the others random words; and every
    lane's prologue registers (a run from FINISH needs them)."""
    width = batch.image.width
    mask = (1 << width) - 1
    lanes = len(batch.cases) * per_program
    registers: dict[int, np.ndarray] = {}
    memory: dict[int, np.ndarray] = {}
    prologue: dict[int, np.ndarray] = {}
    image_words = [w & mask for w in batch.image.words]
    for k in range(len(batch.cases)):
        case = batch.relocated(k)
        for j in range(k * per_program, (k + 1) * per_program):
            own = j == k * per_program
            for register, value in case.registers.items():
                words = registers.setdefault(register, np.zeros(lanes, dtype=np.uint64))
                words[j] = value & mask if own else _random_word(rng, value, width)
            for address, value in case.memory.items():
                words = memory.setdefault(address, np.full(lanes, image_words[address],
                                                           dtype=np.uint64))
                words[j] = value & mask if own else _random_word(rng, value, width)
            for register, value in case.prologue.items():
                prologue.setdefault(register, np.zeros(lanes, dtype=np.uint64))[j] = value
    return Inputs(registers, memory), prologue


# --- comparing ------------------------------------------------------------------------------

def differences(compiled, reference, batch: ProgramBatch, per_program: int,
                banks: tuple[str, ...] = (), addresses=()) -> list[str]:
    """Every way two engines' lanes differ, each naming the lane and its program."""
    found: list[str] = []

    def say(lane: int, what: str) -> None:
        k = lane // per_program
        found.append(f"lane {lane} (program {k}: {batch.cases[k].description}, "
                     f"cells {batch.offsets[k]}..): {what}")

    for name in ("steps", "cycles", "halted", "faulted"):
        mine, theirs = getattr(compiled, name).tolist(), getattr(reference, name).tolist()
        for lane, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                say(lane, f"{name} {a} != {b}")
    for lane in range(compiled.lanes):
        mine, theirs = compiled.snapshot(lane), reference.snapshot(lane)
        if mine != theirs:
            say(lane, f"state: {mine.differences(theirs)}")
        if compiled.output(lane) != reference.output(lane):
            say(lane, f"output {compiled.output(lane)} != {reference.output(lane)}")
        f, g = compiled.fault(lane), reference.fault(lane)
        if (f is None) != (g is None):
            say(lane, f"fault {f} != {g}")
        elif f is not None:
            for name in FAULT_FIELDS:
                if getattr(f, name) != getattr(g, name):
                    say(lane, f"fault {name}: {getattr(f, name)!r} != {getattr(g, name)!r}")
    for name in banks:
        places = range(32) if name in ("G", "T", "TG") else addresses
        for index in places:
            mine, theirs = compiled.bank_word(name, index), reference.bank_word(name, index)
            for lane in np.nonzero(mine != theirs)[0].tolist():
                say(lane, f"{name}[{index}] {int(mine[lane])} != {int(theirs[lane])}")
    return found


# --- one batch, every pass ----------------------------------------------------------------------

@dataclass
class BatchReport:
    """What one batch ran and found."""

    programs: int
    lanes: int
    cells: int
    passes: list[str]
    failures: list[str] = field(default_factory=list)
    faults: Counter = field(default_factory=Counter)
    instructions: set[str] = field(default_factory=set)
    seconds: float = 0.0


def check_batch(cases: list[ProgramCase], *, seed: int = 0, derivative: str | None = None,
                per_program: int = LANES_PER_PROGRAM, max_steps: int = MAX_STEPS
                ) -> BatchReport:
    """Run ``cases`` as one batch on both engines, every pass, and list the differences.

    ``derivative``: ``"gradient"`` (the G banks) or ``"hessian"`` (G and T: the
    tangent-over-gradient pass), or None for the value passes only."""
    started = time.perf_counter()
    rng = random.Random(seed)
    batch = concatenate(cases)
    image = batch.image
    lanes = len(cases) * per_program
    memory_words = len(image) + 64
    starts = np.repeat(np.array(batch.entries, dtype=np.int64), per_program)
    finishes = np.repeat(np.array(batch.finishes, dtype=np.int64), per_program)
    inputs, prologue = lane_inputs(batch, per_program, rng)
    addresses = sorted(inputs.memory)
    passes = ["forward", "backward", "from-finish"] + ([derivative] if derivative else [])
    report = BatchReport(len(cases), lanes, len(image), passes,
                         instructions=set().union(*(mnemonics(c.image) for c in cases)))

    def pair():
        compiled = ENGINE.load(image, lanes, max_steps=max_steps, memory_words=memory_words)
        reference = ReferenceLanes(image, lanes, max_steps=max_steps, memory_words=memory_words)
        return compiled, reference

    def compare(name: str, banks: tuple[str, ...] = (), before=None) -> None:
        """The pass's differences; and the faults it raised (lanes that ``before``, a
        mask, says had faulted already are not counted again)."""
        for lane in range(lanes):
            fault = reference.fault(lane)
            if fault is not None and (before is None or not before[lane]):
                report.faults[fault.kind] += 1
        report.failures.extend(f"{name}: {d}" for d in
                               differences(compiled, reference, batch, per_program, banks,
                                           addresses))

    compiled, reference = pair()
    for machine in (compiled, reference):
        inputs.load(machine)
        machine.run(1, start=starts)
    compare("forward")
    faulted = reference.faulted.copy()
    for machine in (compiled, reference):
        machine.run_back()
    compare("backward", before=faulted)

    compiled, reference = pair()
    for machine in (compiled, reference):
        inputs.load(machine, prologue)
        machine.run(-1, start=finishes)
    compare("from-finish")

    if derivative is not None:
        tangent = derivative == "hessian"
        mask = (1 << image.width) - 1
        seeds = {("G", r): [rng.getrandbits(image.width) for _ in range(lanes)]
                 for r in rng.sample(range(1, 32), 3)}
        if tangent:
            seeds.update({("T", r): [rng.randrange(-(4 << 16), 4 << 16) & mask
                                     for _ in range(lanes)]
                          for r in rng.sample(range(1, 32), 3)})
        compiled, reference = pair()
        for machine in (compiled, reference):
            inputs.load(machine)
            machine.run(1, start=starts)
            machine.gradient = True
            machine.tangent = tangent
            for (bank, r), words in seeds.items():
                machine.set_bank_word(bank, r, np.array(words, dtype=np.uint64))
            machine.run_back()
        banks = ("G", "GM", "T", "TM", "TG", "TGM") if tangent else ("G", "GM")
        compare(derivative, banks)
    report.seconds = time.perf_counter() - started
    return report


def check_sample(cases: list[ProgramCase], seed: int, derivative_every: int = 0,
                 first: int | None = None) -> list[BatchReport]:
    """Every batch of ``cases`` (:func:`batches`; ``first`` picks the first derivative
    pass, ``seed`` by default), with its passes."""
    return [check_batch(group, seed=seed + index, derivative=derivative)
            for index, (group, derivative) in
            enumerate(batches(cases, derivative_every, first=seed if first is None else first))]


# --- the bounded sample of `make test` ------------------------------------------------------------

#: The kinds of random program, by width (sized so that batches stay small).
STRATEGIES = {
    "straight-line": lambda width: straight_line_programs(width, max_length=10),
    "structured": lambda width: structured_programs(width, max_procedures=2, statements=4),
    "faulting": lambda width: faulting_programs(width),
}
#: kind -> (programs per width, every how many batches a derivative pass runs): the
#: program kernels' sample in ``make test`` -- every instruction, pass and fault kind, in
#: few kernel builds (each is tens of seconds of numba; ``tests/sim/compiled/test_interpreter.py``
#: adds 300 programs on the interpreter kernel, one build for them all).  Its counts are
#: the fewest found whose programs use every instruction (a test checks it).
SAMPLE = {"straight-line": (30, 1), "structured": (10, 1), "faulting": (30, 2)}
#: The larger sample of ``make test-long`` (300 programs on program kernels: ~30 minutes).
FULL_SAMPLE = {"straight-line": (50, 2), "structured": (35, 4), "faulting": (65, 3)}
SAMPLES = {"bounded": SAMPLE, "full": FULL_SAMPLE}
WIDTHS = (32, 64)


def sample_cases(kind: str, width: int, sample: str = "bounded") -> list[ProgramCase]:
    """The sample's programs of one kind and width (the same on every run)."""
    count, _ = SAMPLES[sample][kind]
    cases = examples(STRATEGIES[kind](width), count, seed=width)
    assert len(cases) == count
    return cases


def first_derivative(width: int) -> int:
    """:func:`batches`' ``first`` for a width's sample: the gradient pass first at W = 32,
    the Hessian pass at W = 64 (a kind whose bounded sample is one batch a width still
    runs both)."""
    return width // 32 + 1


def check_kind(kind: str, width: int, sample: str = "bounded") -> list[BatchReport]:
    """Check the sample's programs of one kind and width; fail on any difference."""
    _, derivative_every = SAMPLES[sample][kind]
    cases = sample_cases(kind, width, sample)
    reports = check_sample(cases, seed=width, derivative_every=derivative_every,
                           first=first_derivative(width))
    failures = [f for r in reports for f in r.failures]
    assert not failures, "\n".join(failures[:20])
    assert sum(r.programs for r in reports) == len(cases)
    return reports
