"""The batched machine: one program, many lanes, bit for bit the reference on each.

State (every array has a lane axis of length ``lanes``): 32 register rows,
memory rows (made on first touch, ``banks.py``), ``pc``, ``br`` (BR),
``direction`` (DIR), ``steps``, ``cycles``, a per-lane EMIT tape and a
``status`` (running, halted, faulted: ``lane_status.py``).

This module holds :class:`VectorMachine`: its state, the host's access to it
(registers, memory, banks, one lane's output and snapshot) and the run entry
points.  The rest of the machine is in mixins it inherits, one job each, on
``state.py``'s :class:`~revasm.sim.vector.state.VectorState` (the state's declarations,
once for them all; each mixin inherits the mixins whose methods it calls):

* ``devices.py`` -- the namespace templates run in (addr, show, emit, unemit, store);
* ``scheduler.py`` -- SIMT scheduling: each round picks the lanes that share the
  *first* (PC, DIR) in program order -- lanes running forward at the lowest PC,
  else lanes running backward at the highest -- and runs them together;
* ``groups.py`` -- a round: the instruction there and the straight-line ``data``
  instructions after it; a control instruction (branch, RBRA, SWAPBR, START,
  FINISH) ends the round, so lanes that took different paths meet again at the
  next jump target, where the come-from rule makes control flow merge;
* ``fused.py`` -- straight-line runs fused into one function, run tile by tile;
* ``lane_faults.py`` -- per-lane faults and their messages.

Any order of rounds gives every lane the reference's own sequence of
instructions; the order only decides how many lanes share each round.

Faults are per lane and never touch other lanes: the faulting lane stops with
the reference's fault kind, PC, BR, DIR, step count and message
(:meth:`VectorMachine.fault` builds the same :class:`MachineFault`), and the
other lanes run on.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.machine import Snapshot
from revasm.sim.engine import OutputListener
from revasm.sim.reference import DEFAULT_MEMORY_WORDS, Program
from revasm.sim.reference.machine import dense_words, run_start
from revasm.sim.reference.predecode import Decoded

from .banks import BANKS, MemoryBank, RegisterBank
from .devices import DeviceNamespace
from .fused import FUSED_BANKS, MEMORY_BANKS, MIN_FUSED, REGISTER_BANKS, TILE_LANES
from .lane_status import FAULTED, HALTED, IDLE, RUNNING
from .scheduler import Progress, Scheduler
from .vocabulary import LaneContext
from .words import RowPool

# The constants the mixins hold stay importable from here, where they were defined.
__all__ = ["BANKS", "FAULTED", "FUSED_BANKS", "HALTED", "IDLE", "MEMORY_BANKS", "MIN_FUSED",
           "REGISTER_BANKS", "REGISTER_COUNT", "RUNNING", "TILE_LANES", "Progress",
           "VectorMachine"]

REGISTER_COUNT = 32


class VectorMachine(DeviceNamespace, Scheduler):
    """A reversible machine with a lane axis: ``lanes`` copies of one program.

    ``xp`` is the array namespace (default numpy); the engine uses numpy's
    array-API functions plus integer-array indexing, so a module with the
    same API can be dropped in.
    """

    def __init__(self, image: Image, lanes: int, *, memory_words: int = DEFAULT_MEMORY_WORDS,
                 max_steps: int | None = None, xp: Any = None) -> None:
        if lanes < 1:
            raise ValueError(f"a vector machine needs at least one lane, not {lanes}")
        memory_words = dense_words(image, memory_words)  # the image is always dense
        self.xp = xp = xp if xp is not None else numpy
        self.image = image
        self.fmt = word_format(image.width)
        self.width = image.width
        self.lanes = lanes
        self.memory_words = memory_words
        self.max_steps = max_steps
        self.cells: list[Decoded] = Program.of(image).cells
        mask = self.fmt.mask
        self._rows = [xp.zeros(lanes, dtype=xp.uint64) for _ in range(REGISTER_COUNT)]
        self.R = RegisterBank(self._rows, xp)
        self.MEM = MemoryBank([w & mask for w in image.words], lanes, xp)
        self._banks: dict[str, Any] = dict.fromkeys(BANKS)
        self._banks.update(R=self.R, MEM=self.MEM)
        self._gradient = False
        self._tangent = False
        self.pc = xp.full(lanes, image.entry, dtype=xp.int64)
        self.br = xp.zeros(lanes, dtype=xp.int64)
        self.direction = xp.ones(lanes, dtype=xp.int64)
        self.steps = xp.zeros(lanes, dtype=xp.int64)
        self.cycles = xp.zeros(lanes, dtype=xp.int64)
        self.status = xp.full(lanes, IDLE, dtype=xp.int8)
        self._tape = xp.zeros((0, lanes), dtype=xp.uint64)
        self._tape_length = xp.zeros(lanes, dtype=xp.int64)
        self._outputs: list[tuple[Any, Any]] = []
        self._fault_events = []
        self._fault_event = xp.full(lanes, -1, dtype=xp.int32)
        self._fault_position = xp.zeros(lanes, dtype=xp.int64)
        code = [bool(flag) for flag in image.is_code]
        self._code_cells = xp.asarray(code + [False], dtype=xp.bool)
        self._ctx = LaneContext(xp)
        self._pool = RowPool(lanes)
        self.R.pool = self.MEM.pool = self._pool
        self._uniform: tuple[int, int] | None = None
        self._pending: list[tuple[str, Any]] = []
        self._pops = 0
        self._namespace = self._make_namespace()
        self.bank("OV")  # the overflow counter: every template that counts reads it
        self._functions: dict[str, Callable] = {}
        self._fused: dict[tuple, Any] = {}
        self._entered: set[tuple] = set()  # blocks entered once, not fused yet (fused.py)
        #: the namespace timing expressions run in (``groups.py``), made on first use
        self._timing_namespace: dict[str, Any] | None = None
        #: Lanes per tile of a fused block on a large batch (0: never tile).
        self.tile = TILE_LANES

    # --- gradient mode ------------------------------------------------------------

    def bank(self, name: str) -> Any:
        """A bank by its template name (``R``, ``MEM``, ``G``, ``GM``, ...), made zeroed
        on first use so the host can seed it before switching on."""
        if name not in self._banks:
            raise KeyError(f"no bank {name!r} (banks: {', '.join(BANKS)})")
        bank = self._banks[name]
        if bank is None:
            xp = self.xp
            if name.endswith("M"):
                bank = MemoryBank([], self.lanes, xp)
            else:
                rows = 1 if name == "OV" else REGISTER_COUNT
                bank = RegisterBank([xp.zeros(self.lanes, dtype=xp.uint64)
                                     for _ in range(rows)], xp)
            bank.pool = self._pool
            self._banks[name] = bank
        return bank

    def bank_word(self, name: str, index: int) -> Any:
        """Every lane's word of a bank at a register number or address (a copy)."""
        bank = self.bank(name)
        row = bank.rows[index] if isinstance(bank, RegisterBank) else bank.word(index)
        return self.xp.asarray(row, copy=True)

    def set_bank_word(self, name: str, index: int, values: Any) -> None:
        """Seed a bank word (e.g. ``G`` of the loss = 1.0) in every lane."""
        self.bank(name).rows[index] = self._lane_values(values)

    # --- host access ---------------------------------------------------------

    def _lane_values(self, values: Any) -> Any:
        xp = self.xp
        if isinstance(values, int):
            return xp.full(self.lanes, values & self.fmt.mask, dtype=xp.uint64)
        if isinstance(values, (list, tuple)):
            values = xp.asarray([int(v) & self.fmt.mask for v in values], dtype=xp.uint64)
        array = xp.asarray(values)
        if array.shape not in ((self.lanes,), ()):
            raise ValueError(f"expected {self.lanes} lane values, got shape {array.shape}")
        if array.dtype == xp.uint64:
            words = array
        else:
            words = xp.astype(xp.astype(array, xp.int64), xp.uint64)
        return xp.asarray(xp.broadcast_to(words & xp.uint64(self.fmt.mask), (self.lanes,)),
                          copy=True)

    def set_register(self, register: int, values: Any) -> None:
        """Store integers (one per lane, or one for all; signed or unsigned), mod 2**W."""
        words = self._lane_values(values)
        if register == 0:
            if bool(self.xp.any(words != 0)):
                raise ValueError("$0 always reads zero and cannot be set")
            return
        self._rows[register] = words

    def register(self, register: int, *, signed: bool = False) -> Any:
        """Every lane's word in a register (a copy); ``signed`` reads two's complement."""
        row = self.xp.asarray(self._rows[register], copy=True)
        return self._signed(row) if signed else row

    @property
    def registers(self) -> Any:
        """All registers as one ``(32, lanes)`` array (a copy)."""
        return self.xp.stack(self._rows)

    def set_memory(self, address: int, values: Any) -> None:
        if not 0 <= address <= self.fmt.mask:
            raise ValueError(f"address {address} is not a {self.width}-bit word "
                             f"(0..{self.fmt.mask})")
        if address < len(self.image) and self.image.is_code[address]:
            raise ValueError(f"address {address} holds an instruction ({self._where(address)})")
        self.MEM.rows[address] = self._lane_values(values)

    def memory(self, address: int, *, signed: bool = False) -> Any:
        row = self.xp.asarray(self.MEM.word(address), copy=True)
        return self._signed(row) if signed else row

    def _signed(self, row: Any) -> Any:
        xp = self.xp
        s = xp.astype(row, xp.int64)
        return s if self.width == 64 else s - ((s & (1 << 31)) << 1)

    # --- running --------------------------------------------------------------

    def run(self, direction: int = 1, *, progress: Progress | None = None,
            start: Any = None, on_output: OutputListener | None = None) -> None:
        """Run every lane forward from START (or backward from FINISH) until it halts or
        faults; ``on_output(lane, words)`` gets the words each round shows.  ``start``
        (lanes' own first PCs, :meth:`revasm.sim.engine.Lanes.run`) is refused: the
        vector engine starts every lane at START or FINISH."""
        if start is not None:
            raise TypeError("the vector engine runs every lane from START or FINISH; "
                            "start= is for the reference and compiled engines")
        start = run_start(self.image, direction)
        xp = self.xp
        # Lanes that halted where this run starts keep BR (a jump onto FINISH halts with it).
        resumed = ((self.status == HALTED) & (self.pc == start)
                   & (self.direction == -direction))
        self.pc = xp.full(self.lanes, start, dtype=xp.int64)
        self.br = xp.where(resumed, self.br, 0)
        self.direction = xp.full(self.lanes, direction, dtype=xp.int64)
        self.steps = xp.zeros(self.lanes, dtype=xp.int64)
        self.cycles = xp.zeros(self.lanes, dtype=xp.int64)
        self.status = xp.full(self.lanes, RUNNING, dtype=xp.int8)
        self._fault_event = xp.full(self.lanes, -1, dtype=xp.int32)
        self._fault_events = []
        self.resume(progress=progress, on_output=on_output)

    def run_back(self, *, progress: Progress | None = None,
                 on_output: OutputListener | None = None) -> None:
        """Turn the lanes that halted (at their FINISH) around and run them back to START.

        The host protocol's second pass (``sim/reference/gradient.py``): BR as the lane
        halted (0, or a jump's offset onto FINISH), DIR = -1, fresh step counts; lanes that
        faulted stay stopped.
        """
        xp = self.xp
        halted = self.status == HALTED
        self.direction = xp.where(halted, -1, self.direction)
        self.steps = xp.where(halted, 0, self.steps)
        self.cycles = xp.where(halted, 0, self.cycles)
        self.status = xp.where(halted, xp.int8(RUNNING), self.status)
        self.resume(progress=progress, on_output=on_output)

    @property
    def halted(self) -> Any:
        return self.status == HALTED

    @property
    def faulted(self) -> Any:
        return self.status == FAULTED

    # --- per-lane views -----------------------------------------------------------

    def output(self, lane: int) -> list[int]:
        """Every word SHOW or EMIT displayed on ``lane``, in order."""
        xp = self.xp
        out = []
        for lanes, values in self._outputs:
            at = int(xp.searchsorted(lanes, lane))
            if at < len(lanes) and int(lanes[at]) == lane:
                out.append(int(values[at]))
        return out

    def emitted(self, lane: int) -> tuple[int, ...]:
        depth = int(self._tape_length[lane])
        return tuple(int(w) for w in self._tape[:depth, lane].tolist())

    def snapshot(self, lane: int) -> Snapshot:
        """One lane's architectural state, comparable with the reference's ``snapshot()``."""
        memory = tuple(int(self.MEM.rows[a][lane]) if a in self.MEM.rows
                       else (self.MEM.initial[a] if a < len(self.MEM.initial) else 0)
                       for a in range(self.memory_words))
        overflows = self.fmt.signed(int(self.bank("OV").rows[0][lane]))
        high = tuple(sorted((a, int(row[lane])) for a, row in self.MEM.rows.items()
                            if a >= self.memory_words and int(row[lane])))
        return Snapshot(tuple(int(r[lane]) for r in self._rows), memory, int(self.br[lane]),
                        int(self.direction[lane]), self.lane_pc(lane), self.emitted(lane),
                        overflows, high_memory=high)
