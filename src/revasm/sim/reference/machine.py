"""The reference machine: state, the single-step path and the block-running fast path.

Execution model (``isa/table.py``, docs/simulator.md "Execution model"): each instruction runs its
table template for the current direction, ``forward`` when DIR = +1 and
``backward`` when DIR = -1; then, if BR = 0, PC += DIR, else PC += BR·DIR (the
next-PC rule, ``revasm.machine.next_pc``).
An instruction executed while the BR carried from the previous step is
non-zero was reached by a jump, and must leave BR = 0 (the come-from rule);
otherwise the machine faults *after* executing it, its effects kept.  A run
halts after FINISH executes with DIR = +1 or START executes with DIR = -1.
``cycles`` counts the RTL core's clock cycles of the run exactly (``isa/timing``): each
completed instruction's, its unit calls timed from their operands.
START and FINISH are the exception: a jump may land on them (PendVM's programs jump onto
FINISH); they keep BR, so such a run halts with BR = the jump's offset and the backward
run, which starts from that state, steps from FINISH straight back to the jump.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Literal, overload

from revasm.assembler.image import DeclaredName, Image, SourceLocation
from revasm.isa.adjoint import BANKS
from revasm.isa.elementary import DivideByZero
from revasm.isa.fixed_point import word_format
from revasm.isa.timing import timer_names
from revasm.isa.vocabulary import vocabulary
from revasm.machine.fault_messages import (
    illegal_message,
    overflow_detail,
    step_limit_message,
    uncaught_jump_message,
    where,
)
from revasm.machine.faults import ComeFromViolation, MachineFault, Trap
from revasm.machine.next_pc import halts, next_pc
from revasm.machine.snapshot import Snapshot
from revasm.machine.trace import TraceRecord
from revasm.machine.values import FIXED, kind_of, word_of
from revasm.sim.switches import ModeSwitches

from .blocks import (
    DYNAMIC_CYCLES,
    BlockFunctions,
    BlockPlace,
    CompiledBlocks,
    compile_blocks,
)
from .predecode import Decoded, decode_image

REGISTER_COUNT = 32

#: The gradient-mode banks, by their names in the templates (``isa/adjoint.py``).
BANK_NAMES = tuple(BANKS)
#: The memory banks (named ``...M``): indexed like ``MEM``.
MEMORY_BANK_NAMES = tuple(name for name in BANK_NAMES if name.endswith("M"))
#: Words kept dense at the bottom of memory (the image, then zeros); every other address
#: of [0, 2^W) gets its word on first touch (docs/simulator.md "Memory").
DEFAULT_MEMORY_WORDS = 65536


def dense_words(image: Image, memory_words: int) -> int:
    """The dense words of a machine for ``image``: ``memory_words``, or the image's length
    when it is longer (a 100 000-instruction program is a program, not an error: the
    words above the dense ones are there on first touch either way, so only speed
    differs; the RTL's memory, which is a real bound, is checked by ``rtl_sim``)."""
    return max(memory_words, len(image))

TraceCallback = Callable[[TraceRecord], object]


class Program:
    """An image decoded once, with its blocks compiled per direction on first use.

    Programs are cached by content, so many machines on one image (a
    property test, ``revasm check --random``) decode and compile it once.
    """

    _cache: dict[tuple, Program] = {}

    def __init__(self, image: Image) -> None:
        self.fmt = word_format(image.width)
        self.cells: list[Decoded] = decode_image(image)
        self._blocks: dict[tuple, CompiledBlocks] = {}

    @classmethod
    def of(cls, image: Image) -> Program:
        key = (image.width, tuple(image.words), tuple(image.is_code),
               tuple(sorted(image.symbols.items())), tuple(sorted(image.immediates.items())))
        program = cls._cache.get(key)
        if program is None:
            if len(cls._cache) > 256:
                cls._cache.clear()
            program = cls._cache[key] = cls(image)
        return program

    def cell(self, pc: int) -> Decoded | None:
        return self.cells[pc] if 0 <= pc < len(self.cells) else None

    def blocks(self, direction: int, bound_names: frozenset[str], gradient: bool = False,
               tangent: bool = False) -> CompiledBlocks:
        key = (direction, gradient, tangent)
        compiled = self._blocks.get(key)
        if compiled is None:
            compiled = self._blocks[key] = compile_blocks(self.cells, direction, bound_names,
                                                          gradient, tangent)
        return compiled


def run_start(image: Image, direction: int, registers: tuple[int, ...] = ()) -> int:
    """Where a run in ``direction`` starts: START forward, FINISH backward (a program
    without FINISH cannot run backward: a ``no-finish`` fault)."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, not {direction}")
    if direction > 0:
        return image.entry
    if image.finish is None:
        raise MachineFault("no-finish", "the program has no FINISH instruction to start a "
                                        "backward run from",
                           br=0, direction=-1, registers=registers, width=image.width)
    return image.finish


class Machine(ModeSwitches):
    """A reversible machine loaded with one program image.

    State: ``registers`` (32 unsigned W-bit words, ``registers[0]`` always 0),
    ``memory`` (the whole address space [0, 2^W): a list of ``memory_words`` dense words,
    the image at the bottom, then one word for each higher address a run touched, in
    the order it did, found through ``memory_index``),
    ``br`` (signed; Frank's convention, see ``isa/table.py``), ``direction``
    (+1/-1), ``pc``, ``emitted`` (the EMIT tape), ``output`` (every word SHOW
    or EMIT displayed, in order, either direction), ``steps`` and ``cycles``
    of the current run (``cycles``: the RTL core's clock cycles of the instructions
    completed, ``isa/timing``), and ``halted``.

    Gradient mode (docs/gradient.md): ``gradient=True`` switches
    on the gradient banks ``gradients`` / ``memory_gradients`` (``G``/``GM``
    in the templates), ``tangent=True`` the tangent banks ``tangents`` /
    ``memory_tangents`` (``T``/``TM``); with both, also ``gradient_tangents``
    / ``memory_gradient_tangents`` (``TG``/``TGM``).  Both switches can be
    flipped between runs (the host protocol runs forward with the gradient
    switch off, then backward with it on); every step then also applies the
    table's adjoint/tangent rules, and the generated blocks carry them.
    """

    def __init__(self, image: Image, *, memory_words: int = DEFAULT_MEMORY_WORDS,
                 max_steps: int | None = None, gradient: bool = False,
                 tangent: bool = False) -> None:
        memory_words = dense_words(image, memory_words)
        self.image = image
        self.fmt = word_format(image.width)
        self.width = image.width
        self.program = Program.of(image)
        self.memory_words = memory_words
        self.max_steps = max_steps
        mask = self.fmt.mask
        self.registers: list[int] = [0] * REGISTER_COUNT
        self.memory: list[int] = [word & mask for word in image.words]
        self.memory.extend([0] * (memory_words - len(image)))
        #: address -> its index in ``memory`` (and the memory banks), for addresses at or
        #: above ``memory_words``: the sparse part of the address space
        self._sparse: dict[int, int] = {}
        #: When set, called with an address above the dense words the first time a run
        #: touches it; a message it returns makes the access fault (``memory-address``):
        #: the RTL core's memory map, which its co-simulation mirrors (rtl/verification/cosim.py)
        self.memory_map: Callable[[int], str | None] | None = None
        self.br = 0
        self.direction = 1
        self.pc = image.entry
        #: ``OV``: the overflow counter (one W-bit word; the templates' ``OV[0]``)
        self.overflow_counter: list[int] = [0]
        self.output: list[int] = []
        #: When set, called with each word SHOW or EMIT appends to ``output``, as it does:
        #: output as the program runs (``revasm run``; sim/engine.py ``on_output``)
        self.on_output: Callable[[int], object] | None = None
        self.emitted: list[int] = []
        self.steps = 0
        self.cycles = 0
        self.halted = False
        self._code_cells = bytes(bool(flag) for flag in image.is_code)
        self._touched: list[tuple[int, int]] = []
        #: the operand-dependent cycles the generated blocks add up (``blocks.py``)
        self._dynamic_cycles: list[int] = [0]
        self._namespace = self._make_namespace(recording=False)
        self._step_namespace = self._make_namespace(recording=True)
        self._functions: dict[tuple, BlockFunctions] = {}
        self._gradient = False
        self._tangent = False
        for namespace in (self._namespace, self._step_namespace):
            namespace.update(dict.fromkeys(BANK_NAMES))
        self._bound_names = frozenset(name for name in self._namespace
                                      if not name.startswith("__"))
        self.gradient = gradient
        self.tangent = tangent

    # --- gradient mode -------------------------------------------------------

    def bank(self, name: str) -> list[int]:
        """A gradient-mode bank by its template name (``G``, ``GM``, ``T``, ...).

        Allocates it (zeroed) if no switch has needed it yet, so the host can
        seed it before switching on.
        """
        if name == "OV":
            return self.overflow_counter
        if name not in BANK_NAMES:
            raise KeyError(f"no bank {name!r} (banks: {', '.join(BANK_NAMES)})")
        if self._namespace[name] is None:
            size = len(self.memory) if name.endswith("M") else REGISTER_COUNT
            self._namespace[name] = self._step_namespace[name] = [0] * size
        return self._namespace[name]

    @property
    def gradients(self) -> list[int]:
        return self.bank("G")

    @property
    def memory_gradients(self) -> list[int]:
        return self.bank("GM")

    @property
    def tangents(self) -> list[int]:
        return self.bank("T")

    @property
    def memory_tangents(self) -> list[int]:
        return self.bank("TM")

    @property
    def gradient_tangents(self) -> list[int]:
        return self.bank("TG")

    @property
    def memory_gradient_tangents(self) -> list[int]:
        return self.bank("TGM")

    def has_bank(self, name: str) -> bool:
        """Whether the gradient-mode bank ``name`` exists (a switch or :meth:`bank` made it)."""
        if name not in BANK_NAMES:
            raise KeyError(f"no bank {name!r} (banks: {', '.join(BANK_NAMES)})")
        return self._namespace[name] is not None

    def replace_bank(self, name: str, words: list[int]) -> None:
        """Put ``words`` in place of the existing gradient-mode bank ``name``, for the
        generated blocks and single steps alike: the compiled engine's hand-off passes a
        list that records which words a run writes (``sim/compiled/machine.py``)."""
        if not self.has_bank(name):
            raise KeyError(f"bank {name!r} does not exist yet: make it with bank(name)")
        self._namespace[name] = self._step_namespace[name] = words

    def bank_snapshot(self) -> dict[str, tuple[int, ...]]:
        """Every allocated bank as a tuple (for reversibility checks of the gradient pass)."""
        return {name: tuple(self._namespace[name]) for name in BANK_NAMES
                if self._namespace[name] is not None}

    # --- devices the templates call ----------------------------------------

    def _make_namespace(self, *, recording: bool) -> dict[str, Any]:
        size = self.memory_words
        code_cells = self._code_cells
        code_length = len(code_cells)
        touched = self._touched
        machine = self

        sparse = self._sparse
        new_index = self._new_index

        def address_problem(word: int) -> Trap:
            return Trap("memory-address", f"address {word} holds an instruction "
                                          f"({self._where(word)}), not data", address=word)

        # An address is a W-bit word, so every address names a word of memory: the dense
        # words are their own index, the others get one on first touch.
        if recording:
            def addr(word: int) -> int:
                if word < size:
                    if word < code_length and code_cells[word]:
                        raise address_problem(word)
                    index = word
                else:
                    index = sparse.get(word) or new_index(word)
                touched.append((word, machine.memory[index]))
                return index
        else:
            def addr(word: int) -> int:
                if word < size:
                    if word < code_length and code_cells[word]:
                        raise address_problem(word)
                    return word
                return sparse.get(word) or new_index(word)

        def show(word: int) -> None:
            machine.output.append(word)
            if machine.on_output is not None:
                machine.on_output(word)

        def emit(word: int) -> None:
            machine.emitted.append(word)
            show(word)

        def unemit() -> int:
            if not machine.emitted:
                raise Trap("tape-empty", "the output tape is empty, so there is nothing "
                                         "to take back")
            word = machine.emitted.pop()
            show(word)
            return word

        strict_detail = overflow_detail(self.fmt.name)

        def overflow(flag: int) -> int:
            if flag and machine._strict:
                raise Trap("overflow", strict_detail)
            return flag

        namespace = dict(vocabulary(self.fmt))
        namespace.update(timer_names(self.width))
        namespace[DYNAMIC_CYCLES] = self._dynamic_cycles
        namespace.update(addr=addr, show=show, emit=emit, unemit=unemit, overflow=overflow,
                         OV=self.overflow_counter, ComeFromViolation=ComeFromViolation)
        return namespace

    def _new_index(self, address: int) -> int:
        """Give an address above the dense words its word (0) in memory and every bank."""
        problem = self.memory_map(address) if self.memory_map is not None else None
        if problem is not None:
            raise Trap("memory-address", problem, address=address)
        index = len(self.memory)
        self.memory.append(0)
        for name in MEMORY_BANK_NAMES:
            bank = self._namespace[name]
            if bank is not None:
                bank.append(0)
        self._sparse[address] = index
        return index

    @overload
    def memory_index(self, address: int, *, make: Literal[True]) -> int: ...

    @overload
    def memory_index(self, address: int, *, make: bool = False) -> int | None: ...

    def memory_index(self, address: int, *, make: bool = False) -> int | None:
        """Where ``address`` lives in ``memory`` (and the memory banks): None for a word
        never touched above the dense ones (it holds 0), unless ``make``."""
        if not 0 <= address <= self.fmt.mask:
            raise ValueError(f"address {address} is not a {self.width}-bit word "
                             f"(0..{self.fmt.mask})")
        if address < self.memory_words:
            return address
        index = self._sparse.get(address)
        if index is None and make:
            index = self._new_index(address)
        return index

    def word_addresses(self) -> Iterator[tuple[int, int]]:
        """Every (address, index in ``memory`` and the memory banks) of a word that
        exists: the dense words, then the words above them a run touched."""
        yield from ((address, address) for address in range(self.memory_words))
        yield from self._sparse.items()

    def sparse_indices(self) -> Mapping[int, int]:
        """address -> index in ``memory`` (and the memory banks) of each word above the
        dense ones a run touched, in the order it did: a read-only view."""
        return MappingProxyType(self._sparse)

    # --- running -------------------------------------------------------------

    def run(self, direction: int = 1, *, trace: TraceCallback | None = None) -> None:
        """Run forward from the entry (START) or backward from FINISH until halted.

        Registers, memory and the tape are kept; PC, BR, DIR, ``steps`` and
        ``cycles`` start afresh.  ``trace`` is called with a
        :class:`TraceRecord` after every instruction (single-step path).
        """
        self.begin(direction)
        self.resume(trace=trace)

    def begin(self, direction: int = 1) -> None:
        """Set up a run as :meth:`run` does, without executing anything (the caller goes
        on with :meth:`resume`, :meth:`step` or :meth:`advance`)."""
        start = run_start(self.image, direction, registers=tuple(self.registers))
        # A run that starts where the last one halted starts from that state, BR included:
        # a jump onto FINISH halts with BR = its offset, and the way back leads through it.
        resumed = self.halted and self.pc == start and self.direction == -direction
        self.pc = start
        self.br = self.br if resumed else 0
        self.direction = direction
        self.steps = 0
        self.cycles = 0
        self._dynamic_cycles[0] = 0
        self.halted = False

    def resume(self, *, trace: TraceCallback | None = None) -> None:
        """Go on from the current state until the machine halts or faults."""
        while not self.halted:
            if trace is None:
                self._run_blocks()
                if self.halted:
                    break
            self._step(trace)

    def step(self) -> TraceRecord:
        """Execute exactly one instruction (the single-step path); returns its record."""
        if self.halted:
            raise RuntimeError("the machine has halted; call run() to start a new run")
        records: list[TraceRecord] = []
        self._step(records.append)
        return records[0]

    def advance(self) -> tuple[list[tuple[int, int]], MachineFault | None]:
        """Execute exactly one instruction without building a :class:`TraceRecord`.

        For a caller that checks every step against another machine (the RTL
        co-simulation, ``rtl/verification/cosim.py``) at a fraction of :meth:`step`'s cost: it reads
        the registers, BR, DIR, OV and ``output`` itself, and gets here the memory words
        the step accessed, as ``(address, word before)`` in access order (a list reused by
        the next step), and the fault, returned rather than raised because a faulting
        step may have completed: :attr:`steps` tells (an uncaught jump keeps its effects).
        """
        if self.halted:
            raise RuntimeError("the machine has halted; call run() or begin() first")
        touched = self._touched
        touched.clear()
        try:
            self._step(None)
        except MachineFault as fault:
            return touched, fault
        return touched, None

    # --- the single-step path --------------------------------------------------

    def _step(self, trace: TraceCallback | None) -> None:
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise self._fault("step-limit",
                              step_limit_message(self.image, self.max_steps, self.pc))
        pc = self.pc
        br_in = self.br
        dir_in = self.direction
        cell = self.program.cell(pc)
        if cell is None or cell.illegal:
            raise self._illegal(pc, cell, br_in, dir_in)
        namespace = self._step_namespace
        namespace["R"] = self.registers
        namespace["MEM"] = self.memory
        namespace["BR"] = br_in
        namespace["DIR"] = dir_in
        recording = trace is not None
        if recording:
            registers_before = list(self.registers)
            output_before = len(self.output)
            self._touched.clear()
        try:
            exec(cell.code(dir_in, self._gradient, self._tangent), namespace)
        except (Trap, ArithmeticError) as exc:
            raise self._execution_fault(exc, cell) from None
        br = namespace["BR"]
        direction = namespace["DIR"]
        self.steps += 1
        fixed, timed = cell.cycles(dir_in, self._gradient)
        # the timed calls read registers the step does not write: the same after it
        self.cycles += fixed if timed is None else fixed + eval(timed, namespace)
        self.br = br
        self.direction = direction
        if trace is not None:
            trace(self._record(cell, dir_in, br_in, registers_before, output_before))
        kind = cell.kind
        if br_in and br and kind not in ("start", "finish"):
            # START and FINISH are not checked: they halt keeping BR (a jump onto FINISH,
            # docs/simulator.md) or pass it on, so the next landing must catch the jump.
            raise self._uncaught_jump(pc, br_in, dir_in)
        if halts(kind, direction):
            self.halted = True
            return
        self.pc = next_pc(pc, br, direction)

    def _record(self, cell: Decoded, dir_in: int, br_in: int, registers_before: list[int],
                output_before: int) -> TraceRecord:
        registers = tuple((i, old, new) for i, (old, new)
                          in enumerate(zip(registers_before, self.registers)) if old != new)
        first_seen = dict(reversed(self._touched))  # an address read twice (gradient mode)
        now = {address: self.get_memory(address, signed=False) for address in first_seen}
        memory = tuple((address, old, now[address]) for address, old in first_seen.items()
                       if now[address] != old)
        return TraceRecord(
            step=self.steps, pc=cell.pc, direction=dir_in, text=cell.text,
            location=self.image.location(cell.pc), registers=registers, memory=memory,
            br=(br_in, self.br) if br_in != self.br else None,
            dir_change=(dir_in, self.direction) if dir_in != self.direction else None,
            output=tuple(self.output[output_before:]), width=self.width)

    # --- the fast path: generated blocks ------------------------------------------

    def _compiled(self, direction: int) -> CompiledBlocks:
        return self.program.blocks(direction, self._bound_names, self._gradient, self._tangent)

    def _block_functions(self, direction: int) -> BlockFunctions:
        key = (direction, self._gradient, self._tangent)
        functions = self._functions.get(key)
        if functions is None:
            functions = self._functions[key] = self._compiled(direction).functions(
                self._namespace)
        return functions

    def _run_blocks(self) -> None:
        """Run whole blocks while they apply; leave the rest to :meth:`_step`."""
        forward = self._block_functions(1)
        backward = self._block_functions(-1)
        R = self.registers  # the templates' names
        MEM = self.memory
        pc, BR, DIR = self.pc, self.br, self.direction
        steps, cycles = self.steps, self.cycles
        dynamic = self._dynamic_cycles
        if self.max_steps is None:
            limit = float("inf")
        else:
            longest = max(self._compiled(1).max_length, self._compiled(-1).max_length)
            limit = self.max_steps - longest
        try:
            while steps <= limit:
                block = (forward if DIR > 0 else backward).get(pc)
                if block is None:
                    break
                result = block(R, MEM, BR, DIR)
                if result is None:
                    break
                pc, BR, DIR, executed, spent = result
                steps += executed
                cycles += spent
        except ComeFromViolation as violation:
            # a block's first instruction, a control one (no operand-dependent cycles)
            landing = self.program.cells[pc]
            self.pc, self.br, self.direction = pc, violation.br, violation.direction
            self.steps = steps + 1
            self.cycles = cycles + landing.fixed_cycles(DIR, self._gradient) + dynamic[0]
            dynamic[0] = 0
            raise self._uncaught_jump(pc, BR, DIR) from None
        except (Trap, ArithmeticError) as exc:
            compiled = self._compiled(DIR)
            place = _place_in_block(exc, compiled)
            if place is None:
                dynamic[0] = 0
                raise
            self.pc, self.br, self.direction = place.pc, 0, DIR
            self.steps = steps + place.index
            self.cycles = cycles + place.cycles_before + dynamic[0]
            dynamic[0] = 0
            raise self._execution_fault(exc, self.program.cells[place.pc]) from None
        self.pc, self.br, self.direction = pc, BR, DIR
        self.steps, self.cycles = steps, cycles + dynamic[0]
        dynamic[0] = 0

    # --- faults ----------------------------------------------------------------------

    def _where(self, pc: int) -> str:
        return where(self.image, pc)

    def _location(self, pc: int | None) -> SourceLocation | None:
        return self.image.location(pc) if pc is not None else None

    def _fault(self, kind: str, message: str, **extra: Any) -> MachineFault:
        cell = self.program.cell(self.pc)
        return MachineFault(kind, message, pc=self.pc, location=self._location(self.pc),
                            br=self.br, direction=self.direction,
                            registers=tuple(self.registers), step=self.steps,
                            width=self.width, instruction_text=cell.text if cell else "",
                            **extra)

    def _uncaught_jump(self, landing_pc: int, br_in: int, dir_in: int) -> MachineFault:
        message, extra = uncaught_jump_message(self.image, landing_pc, br_in, dir_in, self.br)
        return self._fault("uncaught-jump", message, **extra)

    def _illegal(self, pc: int, cell: Decoded | None, br_in: int, dir_in: int) -> MachineFault:
        message, extra = illegal_message(self.image, cell.illegal if cell else None, pc,
                                         br_in, dir_in)
        return self._fault("illegal-instruction", message, **extra)

    def _execution_fault(self, exc: BaseException, cell: Decoded) -> MachineFault:
        extra = {}
        if isinstance(exc, Trap):
            kind, detail = exc.kind, exc.message
            if exc.address is not None:
                extra["address"] = exc.address
        elif isinstance(exc, (DivideByZero, ZeroDivisionError)):
            kind, detail = "divide-by-zero", str(exc)
        else:
            kind, detail = "domain-error", str(exc)
        going = "" if self.direction > 0 else " running backward"
        if self._gradient or self._tangent:
            going += " in gradient mode"
        return self._fault(kind, f"{cell.text}{going} at {self._where(cell.pc)}: {detail}",
                           **extra)

    # --- snapshots and values ------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The architectural state as an immutable, comparable value."""
        memory = self.memory
        high = tuple(sorted((address, memory[index]) for address, index in self._sparse.items()
                            if memory[index]))
        return Snapshot(tuple(self.registers), tuple(memory[:self.memory_words]), self.br,
                        self.direction, self.pc, tuple(self.emitted),
                        self.fmt.signed(self.overflow_counter[0]), high_memory=high)

    @property
    def overflows(self) -> int:
        """The overflow counter ``OV``, read signed (overflow events of the runs so far:
        forward adds, backward takes away)."""
        return self.fmt.signed(self.overflow_counter[0])

    def get_register(self, register: int, *, signed: bool = True) -> int:
        word = self.registers[register]
        return self.fmt.signed(word) if signed else word

    def set_register(self, register: int, value: int) -> None:
        """Store an integer (signed or unsigned) as a W-bit word, wrapping mod 2^W."""
        word = value & self.fmt.mask
        if register == 0 and word:
            raise ValueError("$0 always reads zero and cannot be set")
        self.registers[register] = word

    def get_register_real(self, register: int, *, exact: bool = False) -> float | Fraction:
        return self._real(self.registers[register], exact)

    def set_register_real(self, register: int, value: float | Fraction | str) -> None:
        """Store a real as its fixed-point word; one that does not fit is refused
        (``ValueRuleError``, the one rule of machine/values.py), never wrapped."""
        self.set_register(register, word_of(value, self.fmt, FIXED, f"${register}"))

    def get_memory(self, address: int, *, signed: bool = True) -> int:
        index = self.memory_index(address)
        word = 0 if index is None else self.memory[index]
        return self.fmt.signed(word) if signed else word

    def set_memory(self, address: int, value: int) -> None:
        if address < len(self._code_cells) and self._code_cells[address]:
            raise ValueError(f"address {address} holds an instruction "
                             f"({self._where(address)})")
        self.memory[self.memory_index(address, make=True)] = value & self.fmt.mask

    def get_memory_real(self, address: int, *, exact: bool = False) -> float | Fraction:
        return self._real(self.get_memory(address, signed=False), exact)

    def set_memory_real(self, address: int, value: float | Fraction | str) -> None:
        """Store a real as its fixed-point word (refused when it does not fit)."""
        self.set_memory(address, word_of(value, self.fmt, FIXED, f"[{address}]"))

    def get(self, name: str, *, exact: bool = False) -> int | float | Fraction:
        """A declared name's value: a real if it is fixed point, else a signed integer."""
        declared = self._declared(name)
        if declared.register is not None:
            word = self.registers[declared.register]
        else:
            assert declared.address is not None  # a declared name is a register or a word
            word = self.get_memory(declared.address, signed=False)
        return self._real(word, exact) if declared.fixed else self.fmt.signed(word)

    def set(self, name: str, value: int | float | Fraction | str) -> None:
        """Set a declared name by the one rule (machine/values.py): a real for a fixed-point
        name, an integer otherwise, ``raw:N`` a raw word; raises ``ValueRuleError``."""
        declared = self._declared(name)
        word = word_of(value, self.fmt, kind_of(declared.fixed), name)
        if declared.register is not None:
            self.set_register(declared.register, word)
        else:
            assert declared.address is not None  # a declared name is a register or a word
            self.set_memory(declared.address, word)

    def _declared(self, name: str) -> DeclaredName:
        try:
            return self.image.names[name]
        except KeyError:
            known = ", ".join(sorted(self.image.names)) or "none"
            raise KeyError(f"{name!r} is not a declared name (declared: {known})") from None

    def _real(self, word: int, exact: bool) -> float | Fraction:
        return self.fmt.to_fraction(word) if exact else self.fmt.to_real(word)


def _place_in_block(exc: BaseException, compiled: CompiledBlocks) -> BlockPlace | None:
    """The instruction of a generated block that raised ``exc`` (by traceback line)."""
    place = None
    tb = exc.__traceback__
    while tb is not None:
        lines = compiled.line_maps.get(tb.tb_frame.f_code.co_filename)
        if lines is not None:
            place = lines.get(tb.tb_lineno, place)
        tb = tb.tb_next
    return place
