"""Random valid programs, built directly as :class:`Image` s (no assembler needed).

Shared by every engine's tests: each strategy draws a :class:`ProgramCase`
(an image plus the initial register and memory values to load) that runs
forward from START to FINISH and back again without an uncaught jump.
Arithmetic faults (division by zero, log of a negative, ...) are possible
outcomes of some programs; tests then check determinism instead.

* :func:`straight_line_programs` -- every ``data``-kind table entry with valid
  operands (``distinct`` respected, ``$0`` never written, EXCH pointing at DATA
  cells through reserved pointer registers);
* :func:`structured_programs` -- nested paired-branch loops with bounded trip
  counts, if/else diamonds over every conditional branch kind, and calls /
  uncalls of procedures through a SWAPBR portal (ROOPL's convention:
  ``f_top: BRA f_bot; f: SWAPBR $ro; NEG $ro; body; f_bot: BRA f_top``, the
  caller ``BRA f`` to call or ``RBRA f`` to uncall).

Register plan (so that generated control flow stays valid):

* ``$1..$8``   general data, also diamond conditions;
* ``$9..$14``  general data, the only registers procedure bodies write;
* ``$15``      a positive fixed-point constant (safe divisor / log argument);
* ``$16,$17``  EXCH pointers to the DATA area (never written after the prologue);
* ``$18..$25`` loop counters and limits (one pair per loop, never shared);
* ``$26..$31`` procedure return-offset registers (one per procedure).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import strategies as st

from revasm.assembler.image import Image, SourceLocation
from revasm.isa import INSTRUCTIONS, decode, encode, lookup, word_format
from revasm.isa.instruction import Instruction
from revasm.machine import MachineFault

#: The faults a generated program may raise: data-dependent arithmetic only.
ARITHMETIC_FAULTS = ("divide-by-zero", "domain-error")


def run_or_fault(machine, direction: int, allowed: tuple[str, ...] = ARITHMETIC_FAULTS):
    """Run ``machine`` in ``direction``; the fault it raised (of an allowed kind), or None."""
    try:
        machine.run(direction)
    except MachineFault as fault:
        assert fault.kind in allowed, str(fault)
        return fault
    return None

GENERAL = tuple(range(1, 15))
CONDITION_REGISTERS = tuple(range(1, 9))
PROCEDURE_WRITES = tuple(range(9, 15))
SAFE_POSITIVE = 15
POINTERS = (16, 17)
LOOP_REGISTERS = tuple(range(18, 26))
LINK_REGISTERS = tuple(range(26, 32))
DATA_CELLS = 4

#: Every data-kind instruction of the table.
DATA_INSTRUCTIONS: tuple[Instruction, ...] = tuple(i for i in INSTRUCTIONS if i.kind == "data")

#: Data instructions that an uncall (a backward run of a procedure) cannot start
#: from an empty tape: procedures leave them out.
PROCEDURE_INSTRUCTIONS = tuple(i for i in DATA_INSTRUCTIONS if i.mnemonic != "EMIT")

#: Instructions that fault on part of their domain (x / 0, log x <= 0, ...): their
#: inputs are usually the positive constant register.
PARTIAL = frozenset({"ADDDIV", "SUBDIV", "ADDLOG", "SUBLOG", "ADDSQRT", "SUBSQRT",
                     "ADDPOW", "SUBPOW"})

#: Conditional branches and the branch whose condition is their negation.
NEGATION = {"BEQ": "BNE", "BNE": "BEQ", "BGEZ": "BLTZ", "BLTZ": "BGEZ",
            "BGTZ": "BLEZ", "BLEZ": "BGTZ"}


# --- building images by hand ------------------------------------------------------

@dataclass
class ProgramBuilder:
    """A tiny assembler for tests: instructions by mnemonic, labels, DATA cells.

    Register operands are numbers, branch targets labels (or absolute
    addresses); the result is an :class:`Image` with a location per cell so
    fault messages name lines (line = address + 1).
    """

    width: int = 32
    file: str = "<generated>"
    cells: list[tuple[str, tuple, str | None]] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)

    def here(self) -> int:
        return len(self.cells)

    def label(self, name: str) -> ProgramBuilder:
        if name in self.labels:
            raise ValueError(f"label {name} defined twice")
        self.labels[name] = len(self.cells)
        return self

    def op(self, mnemonic: str, *operands: int | str) -> ProgramBuilder:
        self.cells.append(("op", (mnemonic, operands), None))
        return self

    def data(self, value: int) -> ProgramBuilder:
        self.cells.append(("data", (value,), None))
        return self

    def build(self) -> Image:
        fmt = word_format(self.width)
        words, is_code, locations = [], [], {}
        entry = finish = None
        for pc, (what, payload, _) in enumerate(self.cells):
            if what == "data":
                (value,) = payload
                words.append(value & fmt.mask)
                is_code.append(False)
                text = f"DATA {value}"
            else:
                mnemonic, operands = payload
                ins = lookup(mnemonic)
                if ins is None:
                    raise ValueError(f"unknown mnemonic {mnemonic}")
                values = {}
                shown = []
                for name, kind, operand in zip(ins.operand_names, ins.operand_kinds, operands,
                                               strict=True):
                    if kind == "off":
                        target = self.labels[operand] if isinstance(operand, str) else operand
                        values[name] = target - pc
                        shown.append(str(operand))
                    elif isinstance(operand, str):  # an address: "label" or "-label"
                        negative = operand.startswith("-")
                        address = self.labels[operand.lstrip("-")]
                        values[name] = -address if negative else address
                        shown.append(operand)
                    else:
                        values[name] = operand
                        shown.append(f"${operand}" if kind == "reg" else str(operand))
                words.append(encode(ins, values))
                is_code.append(True)
                text = " ".join([ins.mnemonic, *shown])
                if ins.kind == "start" and entry is None:
                    entry = pc
                if ins.kind == "finish":
                    finish = pc
            names = [n for n, a in self.labels.items() if a == pc]
            prefix = f"{names[0]}: " if names else ""
            locations[pc] = SourceLocation(self.file, pc + 1, 1, prefix + text)
        return Image(width=self.width, words=words, is_code=is_code,
                     entry=entry if entry is not None else 0, finish=finish,
                     symbols=dict(self.labels), locations=locations)


@dataclass
class ProgramCase:
    """A generated program and the initial values a test loads before running it."""

    image: Image
    registers: dict[int, int] = field(default_factory=dict)
    memory: dict[int, int] = field(default_factory=dict)
    description: str = ""
    #: What the prologue leaves in the reserved registers (pointers, constant):
    #: a backward run from FINISH needs them, since it uncomputes the prologue last.
    prologue: dict[int, int] = field(default_factory=dict)

    def load(self, machine, *, at_finish: bool = False) -> None:
        """Put the initial values into a reference ``Machine`` (``registers``/``memory``
        lists) or any engine's lanes (``revasm.sim.engine.Lanes``: every lane alike).

        ``at_finish``: also the reserved registers' values, for a run that
        starts backward from FINISH.
        """
        mask = (1 << self.image.width) - 1
        registers = dict(self.registers)
        if at_finish:
            registers.update(self.prologue)
        if hasattr(machine, "set_bank_word"):
            for register, value in registers.items():
                machine.set_bank_word("R", register, value & mask)
            for address, value in self.memory.items():
                machine.set_bank_word("MEM", address, value & mask)
            return
        for register, value in registers.items():
            machine.registers[register] = value & mask
        for address, value in self.memory.items():
            machine.memory[address] = value & mask


# --- operands ---------------------------------------------------------------------------

def _word(width: int) -> st.SearchStrategy[int]:
    """Register/memory values: small, fixed-point-ish and arbitrary words."""
    fmt = word_format(width)
    return st.one_of(
        st.integers(-40, 40),
        st.integers(-8 * fmt.one, 8 * fmt.one),
        st.integers(fmt.min_signed, fmt.max_signed),
    )


def draw_data_instruction(draw, width: int, writable: tuple[int, ...],
                          readable: tuple[int, ...] = tuple(range(0, 32)),
                          instructions: tuple[Instruction, ...] = DATA_INSTRUCTIONS
                          ) -> tuple[str, tuple[int, ...]]:
    """One data instruction as (mnemonic, operands) that the table allows.

    Written registers come from ``writable``; EXCH exchanges with a DATA cell
    through a pointer register; divisors and function arguments are often the
    positive constant register, so that most programs do not fault.
    """
    ins = instructions[draw(st.integers(0, len(instructions) - 1))]
    fmt = word_format(width)
    operands: dict[str, int] = {}
    for name, kind in zip(ins.operand_names, ins.operand_kinds):
        if kind == "reg":
            # Registers already chosen that this one must differ from (``distinct``).
            taken = {operands[other] for pair in ins.distinct if name in pair
                     for other in pair if other != name and other in operands}
            if ins.mnemonic == "EXCH" and name == "b":
                choices = POINTERS
            elif name in ins.writes:
                choices = writable
            elif ins.extension and name in ("b", "c") and SAFE_POSITIVE not in taken and draw(
                    st.integers(0, 9)) < (8 if ins.mnemonic in PARTIAL else 3):
                choices = (SAFE_POSITIVE,)
            else:
                choices = readable
            operands[name] = draw(st.sampled_from([r for r in choices if r not in taken]))
        elif kind == "imm":
            operands[name] = draw(st.integers(-(1 << 15), (1 << 15) - 1))
        elif kind == "amt":
            operands[name] = draw(st.integers(0, fmt.width - 1))
        elif kind == "k":
            operands[name] = draw(st.integers(1, fmt.width // 16 - 1))
    return ins.mnemonic, tuple(operands[name] for name in ins.operand_names)


@st.composite
def data_instruction(draw, width: int, writable: tuple[int, ...] = GENERAL):
    """A strategy for one valid data instruction, as (mnemonic, operands)."""
    return draw_data_instruction(draw, width, writable)


def _prologue(builder: ProgramBuilder, width: int) -> None:
    """START, the pointer registers and the positive constant."""
    builder.op("START")
    builder.op("ADDI", POINTERS[0], 0)  # patched to the DATA area by _epilogue
    builder.op("ADDI", POINTERS[1], 0)
    builder.op("ADDIS", SAFE_POSITIVE, 1, 1)   # 1.0 at Q16.16; at Q32.32 it is 2^-16
    builder.op("ADDI", SAFE_POSITIVE, 0x1234)  # so it is positive and non-zero either way


def _finish(builder: ProgramBuilder, draw, width: int, *, finish: bool = True) -> dict[int, int]:
    """FINISH, the DATA area (with random initial contents); patch the pointers."""
    if finish:
        builder.op("FINISH")
    builder.label("data_area")
    base = builder.here()
    for _ in range(DATA_CELLS):
        builder.data(0)
    first, second = draw(st.integers(0, DATA_CELLS - 1)), draw(st.integers(0, DATA_CELLS - 1))
    builder.cells[1] = ("op", ("ADDI", (POINTERS[0], base + first)), None)
    builder.cells[2] = ("op", ("ADDI", (POINTERS[1], base + second)), None)
    values = draw(st.lists(_word(width), min_size=DATA_CELLS, max_size=DATA_CELLS))
    return {base + i: v for i, v in enumerate(values)}


def _prologue_values(image: Image) -> dict[int, int]:
    """Registers after START and the prologue, read off its ADDI/ADDIS words."""
    values: dict[int, int] = {}
    mask = (1 << image.width) - 1
    for pc in (1, 2, 3, 4):
        ins, operands = decode(image.words[pc])
        shift = 16 * operands.get("k", 0)
        values[operands["a"]] = (values.get(operands["a"], 0) + (operands["imm"] << shift)) & mask
    return values


def _initial_registers(draw, width: int) -> dict[int, int]:
    values = draw(st.lists(_word(width), min_size=len(GENERAL), max_size=len(GENERAL)))
    return dict(zip(GENERAL, values))


widths = st.sampled_from((32, 64))


@st.composite
def straight_line_programs(draw, width: int | None = None, max_length: int = 24):
    """START, a prologue, a random run of data instructions, FINISH, DATA cells."""
    width = width if width is not None else draw(widths)
    builder = ProgramBuilder(width)
    _prologue(builder, width)
    count = draw(st.integers(0, max_length))
    for _ in range(count):
        mnemonic, operands = draw_data_instruction(draw, width, GENERAL)
        builder.op(mnemonic, *operands)
    memory = _finish(builder, draw, width)
    image = builder.build()
    return ProgramCase(image, _initial_registers(draw, width), memory,
                       f"straight line of {count} instructions, W={width}",
                       _prologue_values(image))


# --- structured programs ---------------------------------------------------------------

@dataclass
class _Context:
    """What a statement being generated may do."""

    writable: tuple[int, ...]
    depth: int
    callable_from: int  # procedures with index >= this may be called
    instructions: tuple[Instruction, ...] = DATA_INSTRUCTIONS


class _Structure:
    """Shared state of one structured program being drawn."""

    def __init__(self, draw, width: int, builder: ProgramBuilder, procedures: int) -> None:
        self.draw = draw
        self.width = width
        self.builder = builder
        self.loop_registers = list(LOOP_REGISTERS)
        self.procedures = procedures
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def statements(self, ctx: _Context, budget: int) -> None:
        count = self.draw(st.integers(0, budget))
        for _ in range(count):
            self.statement(ctx)

    def statement(self, ctx: _Context) -> None:
        choices = ["data", "data", "data"]
        if ctx.depth < 3:
            choices += ["diamond"]
            if len(self.loop_registers) >= 2:
                choices += ["loop"]
        if ctx.callable_from < self.procedures:
            choices += ["call"]
        kind = self.draw(st.sampled_from(choices))
        if kind == "data":
            mnemonic, operands = draw_data_instruction(self.draw, self.width, ctx.writable,
                                                       instructions=ctx.instructions)
            self.builder.op(mnemonic, *operands)
        elif kind == "diamond":
            self.diamond(ctx)
        elif kind == "loop":
            self.loop(ctx)
        else:
            self.call(ctx)

    def diamond(self, ctx: _Context) -> None:
        """if P then A else B, with P on registers neither arm writes.

        ``p0: B[P] else; A; p1: BRA join; else: B[P] p0; B; join: B[not P] p1``.
        The jump from p0 lands on ``else``, whose own P (still true) cancels
        it; the jump from p1 lands on ``join``, whose not-P (still true, since
        A left the condition registers alone) cancels it.
        """
        branch = self.draw(st.sampled_from(sorted(NEGATION)))
        ins = lookup(branch)
        registers = tuple(self.draw(st.sampled_from((0,) + CONDITION_REGISTERS))
                          for name, kind in zip(ins.operand_names, ins.operand_kinds)
                          if kind == "reg")
        inner = _Context(tuple(r for r in ctx.writable if r not in registers), ctx.depth + 1,
                         ctx.callable_from, ctx.instructions)
        p0, p1 = self.fresh("if"), self.fresh("then_end")
        other, join = self.fresh("else"), self.fresh("join")
        b = self.builder
        b.label(p0).op(branch, *registers, other)
        self.statements(inner, 3)
        b.label(p1).op("BRA", join)
        b.label(other).op(branch, *registers, p0)
        self.statements(inner, 3)
        b.label(join).op(NEGATION[branch], *registers, p1)

    def loop(self, ctx: _Context) -> None:
        """A counted loop run ``trips`` times, leaving its counter and limit at zero.

        ``ADDI lim n; top: B[i != 0] bot; body; ADDI i 1; bot: BNE i lim top;
        SUB i lim; ADDI lim -n`` -- the entry branch is BNE or BGTZ (i >= 0).
        """
        counter, limit = self.loop_registers.pop(), self.loop_registers.pop()
        trips = self.draw(st.integers(1, 3))
        top, bottom = self.fresh("loop"), self.fresh("until")
        b = self.builder
        b.op("ADDI", limit, trips)
        b.label(top)
        if self.draw(st.booleans()):
            b.op("BNE", counter, 0, bottom)
        else:
            b.op("BGTZ", counter, bottom)
        self.statements(_Context(ctx.writable, ctx.depth + 1, ctx.callable_from,
                                 ctx.instructions), 3)
        b.op("ADDI", counter, 1)
        b.label(bottom).op("BNE", counter, limit, top)
        b.op("SUB", counter, limit)
        b.op("ADDI", limit, -trips)

    def call(self, ctx: _Context) -> None:
        index = self.draw(st.integers(ctx.callable_from, self.procedures - 1))
        how = self.draw(st.sampled_from(("BRA", "RBRA")))
        self.builder.op(how, f"proc{index}")

    def procedure(self, index: int) -> None:
        """ROOPL's portal: ``top: BRA bot; proc: SWAPBR $ro; NEG $ro; body; bot: BRA top``."""
        b = self.builder
        link = LINK_REGISTERS[index]
        b.label(f"proc{index}_top").op("BRA", f"proc{index}_bot")
        b.label(f"proc{index}").op("SWAPBR", link)
        b.op("NEG", link)
        self.statements(_Context(PROCEDURE_WRITES, 1, index + 1, PROCEDURE_INSTRUCTIONS), 4)
        b.label(f"proc{index}_bot").op("BRA", f"proc{index}_top")


@st.composite
def structured_programs(draw, width: int | None = None, max_procedures: int = len(LINK_REGISTERS),
                        statements: int = 6):
    """Loops, diamonds and calls/uncalls nested at random, with data instructions between
    (at most ``statements`` at the top level, ``max_procedures`` procedures)."""
    width = width if width is not None else draw(widths)
    builder = ProgramBuilder(width)
    procedures = draw(st.integers(0, max_procedures))
    structure = _Structure(draw, width, builder, procedures)
    _prologue(builder, width)
    structure.statements(_Context(GENERAL, 0, 0), statements)
    builder.op("FINISH")
    for index in range(procedures):
        structure.procedure(index)
    memory = _finish(builder, draw, width, finish=False)
    image = builder.build()
    return ProgramCase(image, _initial_registers(draw, width), memory,
                       f"structured program with {procedures} procedures, W={width}",
                       _prologue_values(image))


# --- many programs in one image -----------------------------------------------------------

#: The prologue's words that hold an absolute address (the EXCH pointers' ADDIs).
POINTER_PCS = (1, 2)


@dataclass
class ProgramBatch:
    """Several programs laid one after another in one image (one kernel build for all).

    Every program keeps its own START..FINISH region: branch offsets are relative, so
    only the prologue's pointer ADDIs and the DATA addresses move.  ``entries`` and
    ``finishes`` are each program's START and FINISH in the batch image; a run of
    program ``k`` starts there (``Lanes.run(direction, start=...)``) and halts at its
    own FINISH (forward) or START (backward), like the program alone.
    """

    image: Image
    cases: list[ProgramCase]
    offsets: list[int]
    entries: list[int]
    finishes: list[int | None]

    def relocated(self, k: int) -> ProgramCase:
        """Program ``k``'s case with its addresses as they are in the batch image."""
        case, offset = self.cases[k], self.offsets[k]
        prologue = dict(case.prologue)
        for pc in POINTER_PCS:
            _, operands = decode(case.image.words[pc])
            prologue[operands["a"]] = (prologue[operands["a"]] + offset) & (
                (1 << case.image.width) - 1)
        return ProgramCase(self.image, dict(case.registers),
                           {a + offset: v for a, v in case.memory.items()},
                           case.description, prologue)


def concatenate(cases: list[ProgramCase]) -> ProgramBatch:
    """One image holding every case's program (all of one width), in order."""
    width = cases[0].image.width
    words: list[int] = []
    is_code: list[bool] = []
    symbols: dict[str, int] = {}
    locations: dict[int, SourceLocation] = {}
    offsets, entries, finishes = [], [], []
    for k, case in enumerate(cases):
        image = case.image
        if image.width != width:
            raise ValueError(f"program {k} has W = {image.width}, the batch W = {width}")
        offset = len(words)
        program_words = list(image.words)
        for pc in POINTER_PCS:
            ins, operands = decode(program_words[pc])
            if ins.mnemonic != "ADDI" or operands["a"] not in POINTERS:
                raise ValueError(f"program {k}: pc {pc} is not a pointer's ADDI")
            operands["imm"] += offset
            if operands["imm"] >= 1 << 15:
                raise ValueError("the batch is too long for 16-bit DATA addresses")
            program_words[pc] = encode(ins, operands)
        words.extend(program_words)
        is_code.extend(image.is_code)
        symbols.update({f"p{k}_{name}": address + offset
                        for name, address in image.symbols.items()})
        for pc, where in image.locations.items():
            locations[pc + offset] = SourceLocation(where.file, pc + offset + 1, where.column,
                                                    f"p{k}: {where.text}")
        offsets.append(offset)
        entries.append(image.entry + offset)
        finishes.append(None if image.finish is None else image.finish + offset)
    batch = Image(width=width, words=words, is_code=is_code, entry=entries[0],
                  finish=finishes[-1], symbols=symbols, locations=locations)
    return ProgramBatch(batch, list(cases), offsets, entries, finishes)


def examples(strategy: st.SearchStrategy, count: int, seed: int = 0,
             distinct: bool = True) -> list:
    """``count`` examples hypothesis draws from ``strategy`` (reproducibly, by ``seed``),
    for tests that check many programs together rather than one example at a time;
    ``distinct``: no two with the same code (hypothesis favours small programs, so it
    draws the empty one, and other short ones, many times)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    found: list = []
    seen: set = set()

    @seeded(seed)
    @settings(max_examples=count * (10 if distinct else 1), database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example) -> None:
        if len(found) >= count:
            raise _Enough  # (hypothesis would go on drawing up to max_examples)
        if distinct:
            code = (example.image.width, tuple(example.image.words))
            if code in seen:
                return
            seen.add(code)
        found.append(example)

    with _without_local_constants():
        try:
            collect()
        except _Enough:
            pass
    return found


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis (>= 6.131) mixes into its draws the literal constants of every "local"
    module loaded so far -- the compiled engine's kernels among them, which load from
    the kernel cache as tests run -- so the same seed gave other programs after a kernel
    was compiled (measured: a sample lost ADDATAN).  :func:`examples` draws without them:
    the same programs whatever ran before in the process.  (A private hook: where it is
    missing, hypothesis has no such pool.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - an older hypothesis
        yield
        return
    hook = getattr(providers, "_get_local_constants", None)
    if hook is None:  # pragma: no cover
        yield
        return
    empty = type(providers._local_constants)()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = hook
        providers.CONSTANTS_CACHE.cache.clear()


class _Enough(Exception):
    """Stops :func:`examples` once it has its examples."""


# --- programs that fault -----------------------------------------------------------------

#: How :func:`faulting_programs` makes a program fault (on lane 0's inputs at least;
#: other lanes' random inputs fault or not): an arithmetic domain, an address that is not
#: data, a jump that lands on an instruction that does not catch it, a data cell on the
#: path, a jump onto a data cell (the compiled engine hands that step to the oracle), a
#: loop whose trip count is an input (the step limit).
FAULT_KINDS = ("divide-by-zero", "domain-error", "memory-address", "uncaught-jump",
               "illegal-instruction", "data-landing", "step-limit")


@st.composite
def faulting_programs(draw, width: int | None = None, max_length: int = 6):
    """A straight-line program with one fault planted among random data instructions."""
    width = width if width is not None else draw(widths)
    fmt = word_format(width)
    builder = ProgramBuilder(width)
    _prologue(builder, width)
    registers = _initial_registers(draw, width)
    kind = draw(st.sampled_from(FAULT_KINDS))

    def some(count: int, writable: tuple[int, ...] = GENERAL) -> None:
        for _ in range(draw(st.integers(0, count))):
            builder.op(*_flat(draw_data_instruction(draw, width, writable)))

    def registers_from(pool: tuple[int, ...], count: int) -> list[int]:
        return draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count,
                             unique=True))

    if kind in ("divide-by-zero", "domain-error"):
        if kind == "divide-by-zero":
            mnemonic = draw(st.sampled_from(("ADDDIV", "SUBDIV")))
        else:
            mnemonic = draw(st.sampled_from(("ADDLOG", "SUBLOG", "ADDSQRT", "SUBSQRT",
                                             "ADDPOW", "SUBPOW")))
        operands = registers_from(GENERAL, len(lookup(mnemonic).operand_names))
        if kind == "divide-by-zero":
            registers[operands[2]] = 0
        else:  # a negative argument (pow: a negative base)
            registers[operands[1]] = -draw(st.integers(1, 8 * fmt.one))
        builder.op(mnemonic, *operands)
        some(max_length)
    elif kind == "memory-address":
        value, pointer = registers_from(GENERAL, 2)
        registers[pointer] = draw(st.sampled_from((0, 1, 3, -1, -5, 1 << 20, fmt.max_signed)))
        some(max_length // 2, tuple(r for r in GENERAL if r != pointer))
        builder.op("EXCH", value, pointer)
        some(max_length // 2)
    elif kind == "uncaught-jump":
        first, second = registers_from(CONDITION_REGISTERS, 2)
        registers[second] = registers[first]
        builder.op("BEQ", first, second, "nowhere")
        some(max_length // 2, tuple(r for r in GENERAL if r not in (first, second)))
        builder.label("nowhere")
        builder.op(*_flat(draw_data_instruction(draw, width, GENERAL)))
        some(max_length // 2)
    elif kind in ("illegal-instruction", "data-landing"):
        some(max_length // 2)
        if kind == "data-landing":
            builder.op("BRA", "cell")
        builder.label("cell").data(draw(_word(width)))
        some(max_length // 2)
    else:  # step-limit: i counts up to an input; a limit of 0 or below wraps around 2^W
        counter, limit = LOOP_REGISTERS[:2]
        registers[limit] = draw(st.sampled_from((0, -1, 3, 1 << 40)))
        builder.label("top").op("BNE", counter, 0, "bottom")
        some(3, tuple(r for r in GENERAL if r != limit))
        builder.op("ADDI", counter, 1)
        builder.label("bottom").op("BNE", counter, limit, "top")
        builder.op("SUB", counter, limit)
    memory = _finish(builder, draw, width)
    image = builder.build()
    return ProgramCase(image, registers, memory, f"{kind} program, W={width}",
                       _prologue_values(image))


def _flat(instruction: tuple[str, tuple[int, ...]]) -> tuple:
    mnemonic, operands = instruction
    return (mnemonic, *operands)


def mnemonics(image: Image) -> set[str]:
    """The instructions an image's code cells hold."""
    return {decode(word)[0].mnemonic for word, code in zip(image.words, image.is_code)
            if code}
