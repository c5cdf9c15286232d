"""The tile engine's lanes: the compiled engine's host, with the tile interpreter as kernel.

:class:`TileLanes` keeps the compiled engine's per-lane state and host protocol
(``sim/compiled/machine.py``: ``CTL``, the memory banks' DATA cells, window and per-lane
tables, the output log and tape, pauses to grow them, faults and their messages,
snapshots) and changes two things:

* the banks are stored lane-innermost: a bank of ``(lanes, k)`` words is the transpose of
  a C-ordered ``(k, lanes)`` array, so the host's ``bank[:, register]`` is a contiguous row
  of the kernel's ``R[register, lane]`` and the lanes of a tile sit side by side for
  vector loads and stores;
* runs go through the tile interpreter (``source.py``), compiled once per width and mode
  for every image and cached with the compiled engine's kernels (``kernel.py``), so a new
  program never waits for a compiler.

Lanes run in tiles of :attr:`TileLanes.tile` consecutive lanes that share a PC and run in
lockstep (``source.py``).  With :attr:`TileLanes.regroup` on, a tile whose lanes have
parted returns, and the host packs the running lanes, in order of their (DIR, PC), into
the first tiles (every lane's state moved with it), then runs those; the lanes are put
back in order before the run returns (:mod:`.regroup`).
"""
from __future__ import annotations

import time
from typing import Any

import numba
import numpy
from numba import njit

from revasm.assembler.image import Image
from revasm.sim.compiled import cache, control
from revasm.sim.compiled import translate as tr
from revasm.sim.compiled.generate import (
    DIR,
    FAULTED,
    FCODE,
    NEEDS_ROOM,
    RUNNING,
    STATUS,
    STEPS,
)
from revasm.sim.compiled.machine import MEMORY_BANKS, REGISTER_BANKS, CompiledLanes
from revasm.sim.compiled.slices import Slices
from revasm.sim.compiled.vocab import JIT
from revasm.sim.engine import OutputListener
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

from . import kernel, program, ready, regroup

#: Lanes per tile by default, at least and at most (:func:`tile_lanes`): measured on the J2
#: gradient and the NiLang workloads (``revasm bench tile_speed``, docs/decisions.md).
TILE_LANES = 256
TILE_MAX = 2048
#: A tile's lanes are a multiple of this (a whole number of vector registers).
TILE_ALIGN = 64
#: Whether tiles regroup by default (``TileLanes.regroup``).
REGROUP = False
#: Fewer running tiles than this run on one thread (no pool start-up).
PARALLEL_TILES = 2
#: How runs use a program's own tile kernel (``fused.py``: straight runs of its data
#: instructions fused into one loop over the tile): ``"cached"`` -- when numba's cache
#: holds it, else the interpreter, the kernel compiled by a background process for the
#: next runs (a run of at least ``FUSE_LANES`` lanes asks for one); ``"build"`` -- compiled
#: first (blocking); ``"off"``, the default: measured on J2, the fused blocks ran no faster
#: than the interpreter's loops (docs/decisions.md).  ``$REVASM_TILE_FUSE`` overrides it.
FUSE = "off"
FUSE_LANES = 4096
#: A value-mode run of at least this many lanes records its steps per lane for ``auto``.
RECORD_LANES = 64


@njit(**JIT)
def tiles_of(active: Any, tile: int) -> Any:
    """The tiles holding the lanes of ``active`` (ascending, as ``control.running`` gives
    them), each once: a binary search past each tile's lanes (``numpy.unique`` sorted 10^5
    lanes again, 1.1 ms a run; a division per lane took 0.2 ms)."""
    out = numpy.empty(active.shape[0], dtype=numpy.int64)
    count = 0
    k = 0
    while k < active.shape[0]:
        t = active[k] // tile
        out[count] = t
        count += 1
        k = numpy.searchsorted(active, (t + 1) * tile)
    return out[:count]


def lane_major(rows: int, lanes: int) -> Any:
    """A zeroed bank of ``lanes`` x ``rows`` uint64 words stored lane-innermost: the
    transpose of a C-ordered ``(rows, lanes)`` array."""
    return numpy.zeros((rows, lanes), dtype=numpy.uint64).T


def kernel_view(bank: Any) -> Any:
    """The ``[row, lane]`` C-ordered array behind a lane-major bank (made so if a bank
    arrived in another order: the kernel is compiled for C-ordered arguments)."""
    return numpy.ascontiguousarray(bank.T)


def tile_lanes(lanes: int, threads: int) -> int:
    """The default lanes per tile of a batch: as few tiles as :data:`TILE_MAX` allows, their
    count a multiple of ``threads`` so that no thread waits for the last one, rounded up to
    :data:`TILE_ALIGN`, and never under :data:`TILE_LANES`.  Larger tiles pay an
    instruction's dispatch over more lanes; a tile of 2 048 lanes of ~30 words each still
    sits in one core's 1 MB L2."""
    threads = max(threads, 1)
    rounds = -(-lanes // (threads * TILE_MAX))  # tiles per thread
    size = -(-lanes // (threads * max(rounds, 1)))
    size = -(-size // TILE_ALIGN) * TILE_ALIGN
    return max(TILE_LANES, min(size, TILE_MAX))


class TileLanes(CompiledLanes):
    """``lanes`` copies of the machine on one image, run by the tile interpreter
    (:class:`revasm.sim.engine.Lanes`)."""

    #: Banks and memory keys lane-innermost: ``bank[:, register]`` is contiguous.
    BANK_ORDER = "F"

    def __init__(self, image: Image, lanes: int = 1, *, max_steps: int | None = None,
                 memory_words: int = DEFAULT_MEMORY_WORDS, tile: int | None = None,
                 regroup: bool | None = None) -> None:
        tile = tile_lanes(lanes, numba.get_num_threads()) if tile is None else tile
        if tile < 1:
            raise ValueError(f"a tile holds at least one lane, not {tile}")
        super().__init__(image, lanes, max_steps=max_steps, memory_words=memory_words,
                         kernel="interpreter")
        #: Lanes per tile (the last tile may hold fewer).
        self.tile = tile
        #: Whether thinning tiles return for the host to pack the running lanes.
        self.regroup = REGROUP if regroup is None else regroup
        #: Kernel calls of the last run, and how many of them followed a regrouping.
        self.calls = 0
        self.regroupings = 0
        #: Instructions fetched for a group in the last run, summed over the tiles: its
        #: lane-steps over this is how many lanes an instruction ran on, on average.
        self.dispatches = 0
        #: Whether the last run started on the program's own tile kernel (``fused.py``).
        self.fused = False
        #: Whether runs use the program's own tile kernel (``FUSE``; see ``_fused_module``).
        self.fuse = FUSE
        #: The direction every running lane of this run has (None: mixed), and the
        #: decoded program with each direction's and mode's costs in the cost column.
        self._dummy_registers = lane_major(32, 1)
        self._dummy_memory = lane_major(1, 1)

    # --- the kernel -------------------------------------------------------------------------

    def uses_interpreter(self, mode: tuple[bool, bool] | None = None) -> bool:
        return True

    def kernel_module(self) -> Any:
        return kernel.module(self.width, self._gradient, self._tangent)

    def kernel_source(self) -> str:
        """The tile interpreter module this machine runs in its current mode."""
        return kernel.source(self.width, self._gradient, self._tangent)

    def _arguments(self, limit: int, regrouping: bool) -> tuple:
        banks = [self._banks[name] if self._banks[name] is not None else
                 self._dummy_registers for name in REGISTER_BANKS]
        memories = [self._banks[name] if self._banks[name] is not None else
                    self._dummy_memory for name in MEMORY_BANKS]
        if self._program is None:
            self._program = program.decode(self.image)
        decoded = self._program
        return (*[kernel_view(bank) for bank in banks + memories], kernel_view(self.KEYS),
                self.CTL, self.OUT, self.OUTLEN, self.TAPE, self.TAPELEN, numpy.int64(limit),
                *decoded, numpy.int64(self._strict), numpy.int64(regrouping))

    def run_until_stopped(self, on_output: OutputListener | None = None) -> None:
        """Run the running lanes to a halt or fault: tile kernel calls, with the pauses
        (a table to grow) between them; with ``on_output``, calls of a slice of steps each
        (the compiled engine's ``Slices``), the new output words handed over after every
        call; with :attr:`regroup`, the running lanes packed into full tiles between calls."""
        active = control.running(self.CTL, self._lane_mode, self._gradient or self._tangent)
        if self._faults:
            for lane in active.tolist():
                self._faults.pop(lane, None)
        module = self.kernel_module()
        self._run_mode = (self._gradient, self._tangent)
        run_limit = self.max_steps if self.max_steps is not None else 1 << 62
        slices = Slices(run_limit) if on_output is not None else None
        announced = self.OUTLEN.copy() if on_output is not None else None
        self.calls = self.regroupings = 0
        self.fused = False
        stats = numpy.zeros(-(-self.lanes // self.tile), dtype=numpy.int64)
        order: Any = None  # position -> lane, while the lanes are regrouped
        regrouping = self.regroup and slices is None  # (a listener hears lanes in order)
        while len(active):
            limit = run_limit if slices is None else slices.limit(self.CTL[STEPS, active])
            steps_before = self.CTL[STEPS, active] if slices is not None else None
            tiles = tiles_of(active, self.tile)
            runner = "run_parallel" if len(tiles) >= PARALLEL_TILES else "run_serial"
            started = time.perf_counter()
            fused = self._fused_module(active) if self.calls == 0 and slices is None else None
            self.call_kernel(module if fused is None else fused, runner, tiles,
                             (numpy.int64(self.tile), numpy.int64(self.lanes),
                              *self._arguments(limit, regrouping), stats),
                             interpreter=fused is None)
            self.fused = self.fused or fused is not None
            seconds = time.perf_counter() - started
            self.kernel_seconds += seconds
            self.calls += 1
            if slices is not None:
                advanced = int((self.CTL[STEPS, active] - steps_before).max())
                if slices.sliced(limit):
                    self._resume_sliced(active)
                slices.timed(seconds, advanced, False)
            handed, paused, still = control.stopped(self.CTL, active)
            if paused:
                self._make_room(control.select(self.CTL, active, NEEDS_ROOM, paused))
            if on_output is not None:  # (no regrouping with a listener: lanes in order)
                self._announce(on_output, active, announced)
            active = control.running(self.CTL, self._lane_mode,
                                     self._gradient or self._tangent)
            if regrouping and len(active) and not paused:
                packed = regroup.pack(self, active)
                if packed is None:
                    regrouping = False  # packing gains nothing: the tiles run to the end
                else:
                    order = packed if order is None else order[packed]
                    self.regroupings += 1
                    active = control.running(self.CTL, self._lane_mode,
                                             self._gradient or self._tangent)
        if order is not None:
            regroup.restore(self, order)
        self.dispatches = int(stats.sum())
        if not (self._gradient or self._tangent) and self.lanes >= RECORD_LANES:
            ready.record_steps(self.image, self.memory_words, float(self.CTL[STEPS].mean()))

    def fuse_policy(self) -> str:
        """``self.fuse``, or ``$REVASM_TILE_FUSE`` when set (``cached``, ``build``, ``off``)."""
        import os

        policy = os.environ.get("REVASM_TILE_FUSE") or self.fuse
        if policy not in ("cached", "build", "off"):
            raise ValueError(f"REVASM_TILE_FUSE is cached, build or off, not {policy!r}")
        return policy

    def _fused_module(self, active: Any) -> Any:
        """The program's own tile kernel for this run (every running lane in one direction,
        not strict), when the policy and numba's cache allow; else None (the interpreter
        runs), after asking a background process for it when the run is large."""
        policy = self.fuse_policy()
        if policy == "off" or self._strict or not len(active):
            return None
        directions = self.CTL[DIR, active]
        direction = int(directions[0])
        if not bool(numpy.all(directions == direction)):
            return None
        loaded = kernel.program_module(self.image, self._gradient, self._tangent, direction)
        if loaded is None:
            return None
        if kernel.program_ready(loaded):
            return loaded
        if policy == "build":
            self.build_fused(direction)
            return loaded
        if self.lanes >= FUSE_LANES:
            kernel.build_in_background(self.image, self._gradient, self._tangent,
                                             direction, self.memory_words)
        return None

    def build_fused(self, direction: int) -> bool:
        """Compile the program's own tile kernel for this mode and direction (both entry
        points, into numba's cache); False when the program has none."""
        loaded = kernel.program_module(self.image, self._gradient, self._tangent, direction)
        if loaded is None:
            return False
        if kernel.program_ready(loaded):
            return True
        stats = numpy.zeros(1, dtype=numpy.int64)
        none = numpy.zeros(0, dtype=numpy.int64)
        for runner in ("run_serial", "run_parallel"):
            getattr(loaded, runner)(none, numpy.int64(self.tile), numpy.int64(self.lanes),
                                    *self._arguments(0, False), stats)
        return True

    def call_kernel(self, module: Any, name: str, tiles: Any, args: tuple, *,
                    interpreter: bool = True) -> None:
        """Run a tile kernel entry; a first call that compiles the tile interpreter (not in
        numba's cache) is announced through the compiled engine's ``COMPILE_NOTICE``."""
        from revasm.sim.compiled import machine

        runner = getattr(module, name)
        if runner.signatures or kernel.is_compiled(module, name):
            runner(tiles, *args)
        else:
            with cache.compiling(module, name):  # one process compiles, the others wait
                notice = machine.COMPILE_NOTICE
                if notice is None or kernel.is_compiled(module, name) or not interpreter:
                    runner(tiles, *args)
                else:
                    modes = [switch for switch, on in (("gradient", self._gradient),
                                                       ("tangent", self._tangent)) if on]
                    mode = f", {' and '.join(modes)} mode" if modes else ""
                    notice(f"compiling the tile interpreter (W = {self.width}{mode}; once "
                           "for every program)... ")
                    started = time.perf_counter()
                    try:
                        runner(tiles, *args)
                    finally:
                        notice(f"done in {time.perf_counter() - started:.1f} s\n")
        if interpreter:
            ready.mark_ready(self.width, self._gradient, self._tangent)

    def _resume_sliced(self, active: Any) -> None:
        """After a call with a slice's step limit: the lanes it stopped there go on (they
        stand between two instructions, nothing of the next one done)."""
        ctl = self.CTL
        stopped = active[(ctl[STATUS, active] == FAULTED) & (ctl[FCODE, active] == tr.F_STEPS)]
        ctl[STATUS, stopped] = RUNNING
        ctl[FCODE, stopped] = 0

