"""The compiled engine's lanes: per-lane state in numpy arrays, runs in generated kernels.

State (one row per lane): ``R`` and, when switched on, ``G``/``T``/``TG`` as
``(lanes, 32)`` uint64; memory banks ``MEM``/``GM``/``TM``/``TGM`` as
``(lanes, data + window + capacity)``: the image's DATA cells dense, then a window of the
words just above the image (where compiled code keeps its stacks: a word there is one
index away, as a DATA cell is), then a per-lane open-addressing table for every other
address a lane touches (``KEYS``, shared by the memory banks) -- so 10**6 lanes never
hold 65536 words each; ``CTL`` (PC, BR, DIR, steps, cycles, status,
fault code and values), the SHOW/EMIT log and the EMIT tape.  ``CTL`` alone is
``(fields, lanes)``: the host resets and reads whole fields between runs, a contiguous pass
each (a field of a ``(lanes, fields)`` array is a pass over all of it: at 10**6 lanes the
host's part of a J2 gradient was about a quarter of its time).

Capacity: the tables start small and double whenever a lane fills one; the window starts
empty and doubles whenever a lane touches a word at most ``vocab.WINDOW_REACH`` words
above its end (so its words are never sparser than that).  A full table or window pauses
the lane *before* the instruction that needs room (status ``NEEDS_ROOM``, nothing of that
instruction done); :meth:`CompiledLanes.run_until_stopped` grows it and resumes the paused lanes,
until every lane has halted or faulted.  No lane is ever cut short or
silently wrong; the only limit is host memory.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy

from revasm.assembler.image import Image
from revasm.isa.adjoint import BANKS as GRADIENT_BANKS
from revasm.isa.fixed_point import word_format
from revasm.machine import MachineFault, Snapshot
from revasm.machine.fault_messages import (
    illegal_message,
    overflow_detail,
    step_limit_message,
    uncaught_jump_message,
    where,
)
from revasm.machine.next_pc import pc_from_register, pc_register
from revasm.sim.engine import OutputListener, step_limit
from revasm.sim.reference import DEFAULT_MEMORY_WORDS, Program
from revasm.sim.reference.machine import dense_words, run_start
from revasm.sim.switches import ModeSwitches

from ..terminal_notice import to_terminal
from . import control, generate
from . import translate as tr
from .cache import (
    PARALLEL_LANES,
    compiling,
    is_compiled,
    load_module,
    module_is_compiled,
    record_run,
    run_record,
)
from .generate import (
    BR,
    CONTROL_COLUMNS,
    CYCLES,
    DIR,
    FAULTED,
    FAUX,
    FAUX2,
    FCODE,
    HALTED,
    HANDOFF,
    IDLE,
    NEEDS_ROOM,
    OVERFLOWS,
    PC,
    RUNNING,
    STATUS,
    STEPS,
    STRICT,
    kernel_source,
)
from .interpreter import interpreter_source, program_arrays
from .slices import Slices

REGISTER_COUNT = 32
REGISTER_BANKS = ("R", "G", "T", "TG")
MEMORY_BANKS = ("MEM", "GM", "TM", "TGM")
BANKS = ("R", "MEM", *GRADIENT_BANKS)
EMPTY = numpy.uint64(0xFFFFFFFFFFFFFFFF)
FIRST_CAPACITY = 16


def runner_for(lanes: int) -> str:
    """The kernel entry that runs ``lanes`` active lanes: ``run_parallel`` (a ``prange``
    over numba's thread pool) for many lanes when numba may use more than one thread,
    else ``run_serial``.  With one thread (a Dask worker, ``NUMBA_NUM_THREADS=1``) the
    pool only costs: called from a thread other than the one that started it, libgomp
    runs a team of its own, measured at 0.3-0.4 extra CPU seconds per 5 * 10^5-lane J2
    gradient chunk in a worker (docs/decisions.md)."""
    if lanes < PARALLEL_LANES:
        return "run_serial"
    import numba

    return "run_parallel" if numba.get_num_threads() > 1 else "run_serial"


#: The window's words from the start in a program that addresses memory.
FIRST_WINDOW = 16

_EXECUTION_KINDS = {tr.F_MEMORY: "memory-address", tr.F_TAPE: "tape-empty",
                    tr.F_OVERFLOW: "overflow",
                    **{code: fault.kind for code, (_, fault) in tr.PRIMITIVE_FAULTS.items()}}


#: Where a compile is announced ("compiling kernel for fib.pal (15 instructions)... done
#: in 1.3 s"): a first run whose kernel is not in the cache (a second run loads it).  The
#: default shows it on stderr when that is a terminal, with the seconds so far while it
#: compiles (``sim/terminal_notice.py``); None announces nothing.
COMPILE_NOTICE: Callable[[str], None] | None = to_terminal

#: Loaded kernel modules by (program, mode, memory size), for machines on one program;
#: the interpreter's by ("interpreter", width, mode).
_MODULES: dict[tuple, Any] = {}
#: Program kernels' sources by (program, mode, memory size) (``auto`` measures them).
_SOURCES: dict[tuple, str] = {}
KERNEL_CHOICES = ("auto", "program", "interpreter")
#: Under ``auto``, a program whose own kernel is longer than this many lines (and not in
#: the cache) runs on the interpreter kernel: numba compiles ~100 lines a CPU second, and
#: the interpreter is compiled once for every program (sim/compiled/README.md).
PROGRAM_KERNEL_LINES = 4000
#: A program with more instructions than this many times ``PROGRAM_KERNEL_LINES`` runs on
#: the interpreter under ``auto`` without its source being generated (an instruction is a
#: line or more of it).
LONG_PROGRAM_FACTOR = 4


class _Written(list[int]):
    """A memory bank list that records the addresses written into it."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(words)
        self.written: set[int] = set()

    # one word at a time (list's slice form is never used on a bank)
    def __setitem__(self, address: int, word: int) -> None:  # type: ignore[override]
        self.written.add(address)
        super().__setitem__(address, word)


class CompiledLanes(ModeSwitches):
    """``lanes`` copies of the machine on one image, run by compiled kernels
    (:class:`revasm.sim.engine.Lanes`).

    Override points, for an engine that keeps this host (its state, pauses, hand-offs,
    faults and snapshots) and runs other kernels -- the tile engine's
    :class:`~revasm.sim.tile.lanes.TileLanes`: :attr:`BANK_ORDER` (how banks are stored),
    :meth:`kernel_module` and :meth:`kernel_source` (which kernels), :meth:`uses_interpreter`,
    :meth:`run_until_stopped` (the loop of kernel calls between :meth:`run` or
    :meth:`run_back` and the lanes' stop) and :meth:`call_kernel` (one call).
    """

    #: numpy's order of the ``(lanes, words)`` banks and memory keys: ``C`` (a lane's
    #: words side by side); the tile engine's subclass stores them lane-innermost (``F``).
    BANK_ORDER: Literal["C", "F"] = "C"

    def __init__(self, image: Image, lanes: int = 1, *, max_steps: int | None = None,
                 memory_words: int = DEFAULT_MEMORY_WORDS, kernel: str = "auto") -> None:
        if kernel not in KERNEL_CHOICES:
            raise ValueError(f"kernel must be one of {', '.join(KERNEL_CHOICES)}, "
                             f"not {kernel!r}")
        if lanes < 1:
            raise ValueError(f"an engine needs at least one lane, not {lanes}")
        memory_words = dense_words(image, memory_words)  # the image is always dense
        self.image = image
        self.lanes = lanes
        self.width = image.width
        self.fmt = word_format(image.width)
        self.max_steps = step_limit(max_steps)  # 2^62 .. 2^64 - 1: no limit (sim/engine.py)
        self.memory_words = memory_words
        self.cells = Program.of(image).cells
        mask = self.fmt.mask
        self._code = [bool(flag) for flag in image.is_code]
        self._dense_index: dict[int, int] = {}
        data_words: list[int] = []
        for address, (word, code) in enumerate(zip(image.words, self._code)):
            if not code:
                self._dense_index[address] = len(data_words)
                data_words.append(word & mask)
        self._data_words = numpy.array(data_words, dtype=numpy.uint64)
        self.dense = len(data_words)
        # A program that addresses memory starts with a table and a first window (no
        # first pause: a pause and relaunch took half of ibesselj's 2.3 ms for 256 lanes,
        # whose stack sits just above the image; bench sparse_memory).
        uses_memory = any("addr(" in cell.forward for cell in self.cells if not cell.illegal)
        self.capacity = FIRST_CAPACITY if uses_memory else 0
        self.KEYS = numpy.full((lanes, self.capacity), EMPTY, dtype=numpy.uint64,
                               order=self.BANK_ORDER)
        #: The words of the window above the image (vocab.window_slot), every lane's.
        self.window = FIRST_WINDOW if uses_memory else 0
        self._banks: dict[str, Any] = dict.fromkeys(BANKS)
        self._banks["R"] = numpy.zeros((lanes, REGISTER_COUNT), dtype=numpy.uint64,
                                        order=self.BANK_ORDER)
        memory = numpy.zeros((lanes, self._row), dtype=numpy.uint64, order=self.BANK_ORDER)
        memory[:, :self.dense] = self._data_words
        self._banks["MEM"] = memory
        self.CTL = numpy.zeros((CONTROL_COLUMNS, lanes), dtype=numpy.int64)
        self.CTL[PC] = image.entry
        self.CTL[DIR] = 1
        self.CTL[STATUS] = IDLE
        self.OUT = numpy.zeros((lanes, 0), dtype=numpy.uint64)
        self.OUTLEN = numpy.zeros(lanes, dtype=numpy.int64)
        self.TAPE = numpy.zeros((lanes, 0), dtype=numpy.uint64)
        self.TAPELEN = numpy.zeros(lanes, dtype=numpy.int64)
        self._dummy_registers = numpy.zeros((1, REGISTER_COUNT), dtype=numpy.uint64)
        self._dummy_memory = numpy.zeros((1, 1), dtype=numpy.uint64)
        self._kernels: dict[tuple[bool, bool], Any] = {}
        self._run_mode = (False, False)
        self._no_finish: MachineFault | None = None
        self._faults: dict[int, MachineFault] = {}
        #: Whether each lane's last run had a gradient-mode switch on (its fault says so).
        self._lane_mode = numpy.zeros(lanes, dtype=bool)
        self._record_path: Path | None = None
        self._recorded: tuple[Any, float] | None = None
        #: Seconds spent inside kernels (compile time of a first call included).
        self.kernel_seconds = 0.0
        self._gradient = False
        self._tangent = False
        #: Which kernels run: ``program`` (the program's own, generated and compiled for
        #: it), ``interpreter`` (one compiled kernel for every program, ``interpreter.py``)
        #: or ``auto`` (the program's own unless it is long and not compiled yet).
        self.kernel = kernel
        self._choice: dict[tuple[bool, bool], bool] = {}
        self._program: tuple | None = None

    # --- banks --------------------------------------------------------------------------

    def bank(self, name: str) -> Any:
        """A bank's array, made zeroed on first use (``R``/``G``/... by register,
        memory banks by slot)."""
        if name not in self._banks:
            raise KeyError(f"no bank {name!r} (banks: {', '.join(BANKS)})")
        bank = self._banks[name]
        if bank is None:
            if name.endswith("M"):
                bank = numpy.zeros((self.lanes, self._row), dtype=numpy.uint64,
                                   order=self.BANK_ORDER)
            else:
                bank = numpy.zeros((self.lanes, REGISTER_COUNT), dtype=numpy.uint64,
                                   order=self.BANK_ORDER)
            self._banks[name] = bank
        return bank

    @property
    def _row(self) -> int:
        """A memory bank's words per lane: DATA cells, window, table."""
        return self.dense + self.window + self.capacity

    def _lane_values(self, values: Any) -> Any:
        mask = self.fmt.mask
        if numpy.ndim(values) == 0:
            return numpy.full(self.lanes, int(values) & mask, dtype=numpy.uint64)
        array = numpy.asarray(values)
        if array.shape != (self.lanes,):
            raise ValueError(f"expected {self.lanes} lane values, got shape {array.shape}")
        if array.dtype == numpy.uint64:
            words = array.copy()
        elif array.dtype.kind in "iub":
            words = array.astype(numpy.int64).astype(numpy.uint64)
        else:
            words = numpy.array([int(v) & mask for v in array.tolist()], dtype=numpy.uint64)
        return words & numpy.uint64(mask)

    def _slots(self, address: int, insert: bool) -> Any:
        """Every lane's slot of a memory address (-1 where absent and not inserted)."""
        if not 0 <= address <= self.fmt.mask:
            raise ValueError(f"address {address} is not a {self.width}-bit word "
                             f"(0..{self.fmt.mask})")
        if address < len(self._code):
            if self._code[address]:
                raise ValueError(f"address {address} holds an instruction; the compiled "
                                 "engine keeps code cells out of its memory banks")
            return numpy.full(self.lanes, self._dense_index[address], dtype=numpy.int64)
        from .vocab import slots_of
        while True:
            if insert and self._grows_window(address):
                self._grow_memory(window=True)
                continue
            slots = slots_of(self.KEYS, numpy.uint64(address), len(self._code), self.dense,
                             self.window, insert)
            if not insert or bool(numpy.all(slots >= 0)):
                return slots
            self._grow_memory()

    def _grows_window(self, address: int) -> bool:
        """Whether a word at ``address`` (at or above the image) grows the window."""
        from .vocab import WINDOW_REACH
        return self.window <= address - len(self._code) < self.window + WINDOW_REACH

    def set_bank_word(self, name: str, index: int, values: Any) -> None:
        words = self._lane_values(values)
        if name == "OV":  # the overflow counter lives in CTL (one word per lane)
            self.CTL[OVERFLOWS] = words.view(numpy.int64)
            return
        bank = self.bank(name)
        if name in REGISTER_BANKS:
            if name == "R" and index == 0 and bool(numpy.any(words)):
                raise ValueError("$0 always reads zero and cannot be set")
            bank[:, index] = words
            return
        slots = self._slots(index, insert=True)
        bank = self.bank(name)  # (the table may have grown)
        bank[numpy.arange(self.lanes), slots] = words

    def bank_word(self, name: str, index: int) -> Any:
        if name == "OV":
            return self.CTL[OVERFLOWS].view(numpy.uint64) & numpy.uint64(self.fmt.mask)
        bank = self.bank(name)
        if name in REGISTER_BANKS:
            return bank[:, index].copy()
        slots = self._slots(index, insert=False)
        found = slots >= 0
        out = numpy.zeros(self.lanes, dtype=numpy.uint64)
        lanes = numpy.arange(self.lanes)
        out[found] = bank[lanes[found], slots[found]]
        return out

    def set_register(self, register: int, values: Any) -> None:
        self.set_bank_word("R", register, values)

    def register(self, register: int) -> Any:
        return self.bank_word("R", register)

    # --- growing the per-lane tables -------------------------------------------------------

    def _grow_memory(self, window: bool = False) -> None:
        """Double the table, or (``window``) the window above the image: the table's
        words the window now covers move into it."""
        from .vocab import rehash
        capacity = self.capacity if window else max(FIRST_CAPACITY, 2 * self.capacity)
        grown_window = max(FIRST_WINDOW, 2 * self.window) if window else self.window
        keys = numpy.full((self.lanes, capacity), EMPTY, dtype=numpy.uint64,
                          order=self.BANK_ORDER)
        kept = self.dense + self.window  # the DATA cells and the window stay where they are
        grown = {}
        for name in MEMORY_BANKS:
            old = self._banks[name]
            if old is not None:
                new = numpy.zeros((self.lanes, self.dense + grown_window + capacity),
                                  dtype=numpy.uint64, order=self.BANK_ORDER)
                new[:, :kept] = old[:, :kept]
                grown[name] = (old, new)
        for old, new in grown.values():  # every bank finds or inserts the same keys
            rehash(self.KEYS, keys, old, new, len(self._code), self.dense, self.window,
                   grown_window)
        self.KEYS = keys
        self.capacity = capacity
        self.window = grown_window
        for name, (_old, new) in grown.items():
            self._banks[name] = new

    def _grow(self, attribute: str) -> None:
        old = getattr(self, attribute)
        size = max(FIRST_CAPACITY, 2 * old.shape[1])
        new = numpy.zeros((self.lanes, size), dtype=numpy.uint64)
        new[:, :old.shape[1]] = old
        setattr(self, attribute, new)

    # --- running ---------------------------------------------------------------------------

    def kernel_module(self) -> Any:
        """The loaded kernel module this machine runs in its current mode (an override
        point: the class docstring)."""
        mode = (self._gradient, self._tangent)
        module = self._kernels.get(mode)
        if module is None:
            if self.uses_interpreter(mode):
                key: tuple = ("interpreter", self.width, mode)
                module = _MODULES.get(key)
                if module is None:
                    module = _MODULES[key] = load_module(interpreter_source(self.width, *mode))
            else:
                # Machines on one program share its kernels (the source is generated once).
                key = (Program.of(self.image), mode, self.memory_words)
                module = _MODULES.get(key)
                if module is None:
                    module = _MODULES[key] = load_module(self._program_source(mode))
            self._kernels[mode] = module
        return module

    def uses_interpreter(self, mode: tuple[bool, bool] | None = None) -> bool:
        """Whether this machine runs the interpreter kernel in a mode (default: the current
        one): as :attr:`kernel` says, and under ``auto`` when the program's own kernel is
        not compiled yet and would be longer than :data:`PROGRAM_KERNEL_LINES`."""
        if self.kernel != "auto":
            return self.kernel == "interpreter"
        mode = (self._gradient, self._tangent) if mode is None else mode
        found = self._choice.get(mode)
        if found is None:
            if sum(self.image.is_code) > LONG_PROGRAM_FACTOR * PROGRAM_KERNEL_LINES:
                # surely too long: not worth generating its source to find out (18 s for a
                # 289 000-instruction program); its own kernel only on request
                found = True
            else:
                source = self._program_source(mode)
                found = (source.count("\n") > PROGRAM_KERNEL_LINES
                         and not is_compiled(source, "run_serial"))
            self._choice[mode] = found
        return found

    def _program_source(self, mode: tuple[bool, bool]) -> str:
        # (the generator's limits are in the key: tests lower them to split small kernels)
        key = (Program.of(self.image), mode, self.memory_words, generate.WHOLE_LINES,
               generate.REGION_LINES, generate.CHAINED_PAUSES)
        source = _SOURCES.get(key)
        if source is None:
            source = _SOURCES[key] = kernel_source(self.image, *mode,
                                                   memory_words=self.memory_words)
        return source

    def kernel_source(self) -> str:
        """The generated module this machine runs in its current mode."""
        if self.uses_interpreter():
            return interpreter_source(self.width, self._gradient, self._tangent)
        return self._program_source((self._gradient, self._tangent))

    def run(self, direction: int = 1, *, progress: Callable[[int], object] | None = None,
            start: Any = None, on_output: OutputListener | None = None) -> None:
        self._no_finish = None
        try:
            if start is None:
                start = run_start(self.image, direction)
            elif direction not in (1, -1):
                raise ValueError(f"direction must be +1 or -1, not {direction}")
        except MachineFault as fault:
            self._no_finish = fault
            self.CTL[STATUS] = FAULTED
            self.CTL[FCODE] = 0
            return
        starts = numpy.asarray(start, dtype=numpy.int64).reshape(-1)
        if len(starts) not in (1, self.lanes):
            raise ValueError(f"start: one PC or one per lane ({self.lanes}), not {len(starts)}")
        # Lanes that halted where this run starts keep BR (a jump onto FINISH halts with it).
        control.begin(self.CTL, starts, numpy.int64(direction))
        self.run_until_stopped(on_output)
        if progress is not None:
            progress(self.lanes)

    def run_back(self, *, progress: Callable[[int], object] | None = None,
                 on_output: OutputListener | None = None) -> None:
        control.turn_back(self.CTL)  # the halted lanes, BR as they halted (onto FINISH)
        self.run_until_stopped(on_output)
        if progress is not None:
            progress(self.lanes)

    def run_until_stopped(self, on_output: OutputListener | None = None) -> None:
        """Run the running lanes to a halt or fault: kernel calls, with the pauses (a table
        to grow) and hand-offs between them; with ``on_output``, calls of a slice of steps
        each (``slices.py``), the new output words handed over after every call.  :meth:`run`
        and :meth:`run_back` set the lanes going and call it (an override point)."""
        active = control.running(self.CTL, self._lane_mode, self._gradient or self._tangent)
        if self._faults:
            for lane in active.tolist():
                self._faults.pop(lane, None)
        module = self.kernel_module()
        self.CTL[STRICT] = int(self._strict)
        self._run_mode = (self._gradient, self._tangent)
        run_limit = self.max_steps if self.max_steps is not None else 1 << 62
        # slices for a listener, and for a run with no step limit: Ctrl-C (Python's SIGINT
        # handler) takes effect only between kernel calls, at most a slice's time apart
        slices = Slices(run_limit) if on_output is not None or self.max_steps is None else None
        # the words of the log before this run are not new
        announced = self.OUTLEN.copy() if on_output is not None else None
        ran = active
        while len(active):
            limit = run_limit if slices is None else slices.limit(self.CTL[STEPS, active])
            steps_before = self.CTL[STEPS, active] if slices is not None else None
            banks = [self._banks[name] for name in ("G", "T", "TG")]
            memories = [self._banks[name] for name in MEMORY_BANKS]
            args = (self._banks["R"],
                    *[b if b is not None else self._dummy_registers for b in banks],
                    *[m if m is not None else self._dummy_memory for m in memories],
                    self.KEYS, self.CTL, self.OUT, self.OUTLEN, self.TAPE, self.TAPELEN,
                    numpy.int64(limit))
            if getattr(module, "INTERPRETER", False):  # it reads the program at run time
                if self._program is None:
                    self._program = program_arrays(self.image)
                args = (*args, *self._program)
            runner = runner_for(len(active))
            started = time.perf_counter()
            self.call_kernel(module, runner, active, args)
            seconds = time.perf_counter() - started
            self.kernel_seconds += seconds
            stuck = False
            if slices is not None:
                advanced = int((self.CTL[STEPS, active] - steps_before).max())  # the kernel's
                if slices.sliced(limit):
                    stuck = self._end_slice(active, steps_before)
            handed_count, paused_count, still = control.stopped(self.CTL, active)
            if handed_count:  # the oracle finishes these lanes' runs (they halt or fault)
                for lane in control.select(self.CTL, active, HANDOFF, handed_count).tolist():
                    self._hand_off(lane, on_output)
                    if announced is not None:
                        announced[lane] = self.OUTLEN[lane]  # the oracle handed its words over
            if paused_count:
                self._make_room(control.select(self.CTL, active, NEEDS_ROOM, paused_count))
            if on_output is not None:
                self._announce(on_output, active, announced)
            if slices is not None:
                slices.timed(seconds, advanced, stuck)
            # the paused lanes run again; a lane the oracle finished is counted anew
            again = control.stopped(self.CTL, active)[2] if handed_count else \
                still + paused_count
            active = control.select(self.CTL, active, RUNNING, again) if again else active[:0]
        if len(ran) and self._run_mode == (False, False):
            steps = self.CTL[STEPS] if len(ran) == self.lanes else self.CTL[STEPS, ran]
            self._record(module, float(steps.mean()))

    def _make_room(self, paused: Any) -> None:
        """Grow what the ``paused`` lanes need (memory table or window, output log, tape)
        and set them running again: they resume at the instruction that paused them."""
        from .vocab import GROW_WINDOW

        codes = self.CTL[FCODE, paused]
        needs = {code - 100 for code in codes.tolist()}
        if tr.ROOM_MEMORY in needs:  # FAUX: which (vocab.window_slot's answer)
            answers = set(self.CTL[FAUX, paused[codes == 100 + tr.ROOM_MEMORY]].tolist())
            if GROW_WINDOW in answers:
                self._grow_memory(window=True)
            if answers - {GROW_WINDOW}:
                self._grow_memory()
        if tr.ROOM_OUTPUT in needs:
            self._grow("OUT")
        if tr.ROOM_TAPE in needs:
            self._grow("TAPE")
        self.CTL[STATUS, paused] = RUNNING
        self.CTL[FCODE, paused] = 0

    def _end_slice(self, active: Any, steps_before: Any) -> bool:
        """After a call with a slice's step limit: the lanes it stopped there -- a step-limit
        fault, or a hand-off before a block past the limit after some progress -- go on
        (running again: nothing of their next instruction was done).  A lane handed off
        without progress is before a data cell (the oracle's) or a block longer than the
        slice: it stays handed off, and True asks for a wider next slice."""
        ctl = self.CTL
        status = ctl[STATUS, active]
        moved = ctl[STEPS, active] > steps_before
        ended = (((status == FAULTED) & (ctl[FCODE, active] == tr.F_STEPS))
                 | ((status == HANDOFF) & moved))
        stopped = active[ended]
        ctl[STATUS, stopped] = RUNNING
        ctl[FCODE, stopped] = 0
        stuck = (status == HANDOFF) & ~moved
        if not bool(numpy.any(stuck)):
            return False
        ctl[STATUS, active[stuck]] = RUNNING  # tried again with a wider slice
        return True

    def _announce(self, on_output: OutputListener, lanes: Any, announced: Any) -> None:
        """Hand each lane's words past ``announced`` to ``on_output``; move the mark."""
        fresh = lanes[self.OUTLEN[lanes] > announced[lanes]]
        for lane in fresh.tolist():
            start, end = int(announced[lane]), int(self.OUTLEN[lane])
            on_output(lane, self.OUT[lane, start:end].tolist())  # uint64 -> Python ints
            announced[lane] = end

    def _record(self, module: Any, steps: float) -> None:
        """Record a value-mode run's steps per lane beside its kernel: ``auto`` goes by
        them (``sim/engines.py``).  Written when they change."""
        if self._recorded == (module, steps):
            return
        if self._record_path is None:
            self._record_path = run_record(self.image, self.memory_words)
        record_run(self._record_path, module, steps)
        self._recorded = (module, steps)

    def call_kernel(self, module: Any, name: str, active: Any, args: tuple) -> None:
        """Run a kernel's ``run_serial`` or ``run_parallel``; a first call that will compile
        it (not in numba's cache) is announced through :data:`COMPILE_NOTICE` (an override
        point)."""
        runner = getattr(module, name)
        if runner.signatures or module_is_compiled(module, name):
            runner(active, *args)
            return
        with compiling(module, name):
            self._first_call(module, name, runner, active, args)

    def _first_call(self, module: Any, name: str, runner: Any, active: Any, args: tuple
                    ) -> None:
        notice = COMPILE_NOTICE
        if notice is None or module_is_compiled(module, name):  # (compiled meanwhile)
            runner(active, *args)
            return
        modes = [switch for switch, on in (("gradient", self._gradient),
                                       ("tangent", self._tangent)) if on]
        mode = f", {' and '.join(modes)} mode" if modes else ""
        if getattr(module, "INTERPRETER", False):
            notice(f"compiling the interpreter kernel (W = {self.width}{mode}; once for "
                   "every program)... ")
        else:
            instructions = sum(1 for cell in self._code if cell)
            notice(f"compiling kernel for {Path(self.image.source_file).name} "
                   f"({instructions} instructions{mode})... ")
        started = time.perf_counter()
        try:
            runner(active, *args)
        finally:
            notice(f"done in {time.perf_counter() - started:.1f} s\n")

    # --- the oracle finishes a lane's run --------------------------------------------------

    def _hand_off(self, lane: int, on_output: OutputListener | None = None) -> None:
        """Finish ``lane``'s run on the reference machine (the kernel stopped it where
        only single steps apply: a landing on a data cell, the last steps before
        ``max_steps``), then take its state back; ``on_output`` hears the words the
        oracle shows as it shows them."""
        from revasm.sim.reference import Machine

        machine = Machine(self.image, memory_words=self.memory_words, max_steps=self.max_steps)
        if on_output is not None:
            machine.on_output = lambda word: on_output(lane, [word])
        machine.gradient, machine.tangent = self._run_mode
        machine.strict = self._strict
        machine.registers[:] = [int(w) for w in self._banks["R"][lane].tolist()]
        for address, word in self.memory_of(lane).items():
            machine.memory[machine.memory_index(address, make=True)] = word
        for name in ("G", "T", "TG"):
            if self._banks[name] is not None:
                machine.bank(name)[:] = [int(w) for w in self._banks[name][lane].tolist()]
        for name in ("GM", "TM", "TGM"):
            if self._banks[name] is not None:
                bank = machine.bank(name)
                for address, word in self.memory_of(lane, name).items():
                    bank[machine.memory_index(address, make=True)] = word
        ctl = self.CTL[:, lane]
        machine.pc, machine.br, machine.direction = int(ctl[PC]), int(ctl[BR]), int(ctl[DIR])
        machine.steps, machine.cycles = int(ctl[STEPS]), int(ctl[CYCLES])
        machine.overflow_counter[0] = int(ctl[OVERFLOWS]) & self.fmt.mask
        machine.emitted = list(self.emitted(lane))
        # Memory banks that remember which words the oracle writes (EXCH is the only writer).
        tracked = {"MEM": _Written(machine.memory)}
        machine.memory = tracked["MEM"]
        for name in ("GM", "TM", "TGM"):
            if machine.has_bank(name):
                tracked[name] = _Written(machine.bank(name))
                machine.replace_bank(name, tracked[name])
        try:
            machine.resume()
            ctl[STATUS] = HALTED
        except MachineFault as fault:
            self._faults[lane] = fault
            ctl[STATUS] = FAULTED
        ctl[PC], ctl[BR], ctl[DIR] = pc_register(machine.pc), machine.br, machine.direction
        ctl[STEPS], ctl[CYCLES] = machine.steps, machine.cycles
        ctl[OVERFLOWS] = numpy.uint64(machine.overflow_counter[0]).view(numpy.int64)
        self._banks["R"][lane] = numpy.array(machine.registers, dtype=numpy.uint64)
        for name in ("G", "T", "TG"):
            if self._banks[name] is not None:
                self._banks[name][lane] = numpy.array(machine.bank(name), dtype=numpy.uint64)
        # the oracle's memory indices -> addresses (its words above the dense ones)
        addresses = {index: address for address, index in machine.sparse_indices().items()}
        for name, memory in tracked.items():
            if self._banks[name] is None:
                continue
            for index in sorted(memory.written):
                self._store(lane, name, addresses.get(index, index), memory[index])
        for word in machine.output:
            self._append(lane, "OUT", "OUTLEN", word)
        self.TAPELEN[lane] = 0
        for word in machine.emitted:
            self._append(lane, "TAPE", "TAPELEN", word)

    def _store(self, lane: int, name: str, address: int, word: int) -> None:
        if address in self._dense_index:
            self._banks[name][lane, self._dense_index[address]] = word
            return
        from .vocab import GROW_WINDOW, window_slot
        while True:
            slot = window_slot(self.KEYS, lane, numpy.uint64(address), len(self._code),
                               self.dense, self.window)
            if slot >= 0:
                break
            self._grow_memory(window=slot == GROW_WINDOW)
        self._banks[name][lane, slot] = word

    def _append(self, lane: int, attribute: str, length: str, word: int) -> None:
        lengths = getattr(self, length)
        if lengths[lane] >= getattr(self, attribute).shape[1]:
            self._grow(attribute)
        getattr(self, attribute)[lane, lengths[lane]] = word
        lengths[lane] += 1

    # --- results ------------------------------------------------------------------------------

    @property
    def steps(self) -> Any:
        return self.CTL[STEPS].copy()

    @property
    def cycles(self) -> Any:
        return self.CTL[CYCLES].copy()

    @property
    def halted(self) -> Any:
        return self.CTL[STATUS] == HALTED

    @property
    def faulted(self) -> Any:
        return self.CTL[STATUS] == FAULTED

    def output(self, lane: int) -> list[int]:
        return [int(w) for w in self.OUT[lane, :int(self.OUTLEN[lane])].tolist()]

    def emitted(self, lane: int) -> tuple[int, ...]:
        return tuple(int(w) for w in self.TAPE[lane, :int(self.TAPELEN[lane])].tolist())

    def memory_of(self, lane: int, name: str = "MEM") -> dict[int, int]:
        """``lane``'s words of a memory bank that it holds (DATA cells, the window above
        the image, touched addresses), by address."""
        words = {}
        memory = self._banks[name]
        for address, index in self._dense_index.items():
            words[address] = int(memory[lane, index])
        above = len(self._code)
        for offset, word in enumerate(memory[lane, self.dense:self.dense + self.window].tolist()):
            words[above + offset] = int(word)
        base = self.dense + self.window
        for j, key in enumerate(self.KEYS[lane].tolist()):
            if key != int(EMPTY):  # the top word of W = 64 is kept under 0 (vocab.table_key)
                words[key or int(EMPTY)] = int(memory[lane, base + j])
        return words

    def snapshot(self, lane: int) -> Snapshot:
        mask = self.fmt.mask
        memory = [word & mask for word in self.image.words]
        memory.extend([0] * (self.memory_words - len(memory)))
        high = []
        for address, word in self.memory_of(lane).items():
            if address < self.memory_words:
                memory[address] = word
            elif word:
                high.append((address, word))
        ctl = self.CTL[:, lane]
        overflows = self.fmt.signed(int(ctl[OVERFLOWS]) & self.fmt.mask)
        return Snapshot(tuple(int(r) for r in self._banks["R"][lane].tolist()), tuple(memory),
                        int(ctl[BR]), int(ctl[DIR]), self.lane_pc(lane), self.emitted(lane),
                        overflows, high_memory=tuple(sorted(high)))

    # --- faults ---------------------------------------------------------------------------------

    def _where(self, pc: int) -> str:
        return where(self.image, pc)

    def lane_pc(self, lane: int) -> int:
        """``lane``'s PC, as the next-PC rule gives it (the kernels' int64 PC wraps on a jump
        far outside the program: ``revasm.machine.next_pc.pc_from_register``)."""
        ctl = self.CTL[:, lane]
        return pc_from_register(int(ctl[PC]), int(ctl[BR]), int(ctl[DIR]), len(self.cells))

    def fault(self, lane: int) -> MachineFault | None:
        ctl = self.CTL[:, lane]
        if int(ctl[STATUS]) != FAULTED:
            return None
        if lane in self._faults:
            return self._faults[lane]
        registers = tuple(int(r) for r in self._banks["R"][lane].tolist())
        if self._no_finish is not None:
            f = self._no_finish
            return MachineFault(f.kind, f.message, br=0, direction=-1, registers=registers,
                                width=self.width)
        pc, br, direction = self.lane_pc(lane), int(ctl[BR]), int(ctl[DIR])
        code, aux, aux2 = int(ctl[FCODE]), int(ctl[FAUX]), int(ctl[FAUX2])
        cell = self.cells[pc] if 0 <= pc < len(self.cells) else None
        extra: dict = {}
        if code == tr.F_STEPS:
            kind = "step-limit"
            message = step_limit_message(self.image, self.max_steps, pc)
        elif code == tr.F_ILLEGAL:
            kind = "illegal-instruction"
            message, extra = illegal_message(self.image, cell.illegal if cell else None, pc,
                                             br, direction)
        elif code == tr.F_JUMP:
            kind = "uncaught-jump"  # the jump's BR and DIR are in FAUX and FAUX2
            message, extra = uncaught_jump_message(self.image, pc, aux, aux2, br)
        else:
            kind = _EXECUTION_KINDS[code]
            detail = self._detail(code, aux)
            going = "" if direction > 0 else " running backward"
            if self._lane_mode[lane]:
                going += " in gradient mode"
            assert cell is not None  # an execution fault stops at an instruction
            message = f"{cell.text}{going} at {self._where(pc)}: {detail}"
        return MachineFault(kind, message, pc=pc, location=self.image.location(pc), br=br,
                            direction=direction, registers=registers,
                            step=int(ctl[STEPS]), width=self.width,
                            instruction_text=cell.text if cell else "", **extra)

    def _detail(self, code: int, aux: int) -> str:
        if code in tr.PRIMITIVE_FAULTS:  # the row's message (isa/primitives.py)
            return tr.PRIMITIVE_FAULTS[code][1].detail(aux)
        if code == tr.F_TAPE:
            return "the output tape is empty, so there is nothing to take back"
        if code == tr.F_OVERFLOW:
            return overflow_detail(self.fmt.name)
        word = aux & ((1 << 64) - 1)
        return f"address {word} holds an instruction ({self._where(word)}), not data"
