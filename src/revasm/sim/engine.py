"""The one engine interface: every simulator engine loads an image onto lanes the same way.

An *engine* turns an assembled image into :class:`Lanes`: ``lanes`` independent copies of the
machine (one program, many inputs; a scalar run is one lane).  The host writes words into the
value and gradient-mode banks, runs the lanes forward from START or backward from FINISH (or
back from where they halted: the host protocol's second pass), and reads words, faults, step
and cycle counts, the output log and snapshots back -- per lane.  A machine fault never raises
out of :meth:`Lanes.run`: the lane stops with it and :meth:`Lanes.fault` reports it exactly
as the reference machine raises it (kind, PC, BR, DIR, step, message).

The engines (``revasm.sim.engines`` names them):

- ``reference`` -- the scalar oracle, one :class:`~revasm.sim.reference.Machine` per lane;
  the only engine that can trace every step;
- ``vector``    -- numpy lanes in SIMT groups (portable to array libraries with numpy's API);
- ``compiled``  -- the image translated to native code (numba), lanes over the cores;
- ``tile``      -- lanes in tiles that share a PC, each instruction one loop over a tile
  (numba, vector code), one interpreter for every image.

Every user of engines -- the Python API (``revasm.api``), the command line, reports,
benchmarks and the RTL co-simulation -- goes through this interface and the registry, so
adding an engine is one module and one registry line.  Bank names are the templates' names
(``isa/adjoint.py``): ``R``/``MEM`` values, ``G``/``GM`` gradients, ``T``/``TM`` tangents,
``TG``/``TGM`` gradient tangents; a name ending in ``M`` is indexed by address; ``OV`` (one
word, index 0) is the overflow counter.  ``strict`` is the third switch (with ``gradient`` and
``tangent``): an overflow event then faults (kind ``overflow``) instead of being counted.

Output as it runs: ``run`` and ``run_back`` take ``on_output(lane, words)``, called with each
lane's new SHOW/EMIT words, in order, while the run goes on -- at most
:data:`LIVE_OUTPUT_SECONDS` after the program showed them -- and with the last ones before
the run returns, so a fault is reported after every word that preceded it.  The words it is
handed, in order, are exactly what ``output(lane)`` gains over the run.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from revasm.assembler.image import Image
from revasm.machine import MachineFault, Snapshot

#: The value banks and the gradient-mode banks, by their template names.
BANK_NAMES = ("R", "MEM", "G", "GM", "T", "TM", "TG", "TGM")

#: ``on_output(lane, words)``: a lane's new output words (unsigned W-bit), as the run shows them.
OutputListener = Callable[[int, list[int]], object]

#: The longest an engine keeps a shown word from ``on_output`` while a run goes on: the
#: reference and vector engines hand each word over as it is shown, the compiled engine
#: between slices of its kernel calls of about this length (``sim/compiled/machine.py``).
LIVE_OUTPUT_SECONDS = 0.05


@runtime_checkable
class Lanes(Protocol):
    """A program loaded on an engine: ``lanes`` copies of the machine state.

    Arrays are numpy arrays with one entry per lane (words as ``uint64``, counts as
    ``int64``).  ``gradient`` and ``tangent`` are the mode switches of docs/gradient.md:
    flipping one on allocates the banks its rules need, zeroed, so the host can seed
    them before a pass.
    """

    image: Image
    lanes: int
    width: int
    max_steps: int | None
    gradient: bool
    tangent: bool
    strict: bool

    def set_bank_word(self, name: str, index: int, values: Any) -> None:
        """Store one word (every lane the same) or one word per lane at a register
        number or address of a bank; values wrap mod 2^W."""

    def bank_word(self, name: str, index: int) -> Any:
        """Every lane's word of a bank at a register number or address (a copy)."""

    def run(self, direction: int = 1, *, progress: Callable[[int], object] | None = None,
            start: Any = None, on_output: OutputListener | None = None) -> None:
        """Run every lane from START (``+1``) or FINISH (``-1``) until it halts or faults;
        ``progress(lanes done)`` is called now and then on long runs; ``on_output(lane,
        words)`` with the words each lane shows, as it shows them (the module's doc).

        ``start`` (the reference and compiled engines): each lane's first PC instead --
        one for every lane or one per lane -- so lanes can run different programs laid
        side by side in one image (each halts at the FINISH or START it reaches)."""

    def run_back(self, *, progress: Callable[[int], object] | None = None,
                 on_output: OutputListener | None = None) -> None:
        """Turn the lanes that halted around (BR = 0, DIR reversed, counts reset) and run
        them on; lanes that faulted stay stopped.  The host protocol's second pass;
        ``on_output`` as for :meth:`run`."""

    @property
    def steps(self) -> Any:
        """Instructions each lane executed in its current run."""

    @property
    def cycles(self) -> Any:
        """Clock cycles the RTL core takes for each lane's current run (``isa/timing``:
        every engine counts them exactly, unit calls timed from their operands)."""

    @property
    def halted(self) -> Any:
        """Lanes that stopped at FINISH (forward) or START (backward)."""

    @property
    def faulted(self) -> Any:
        """Lanes that stopped with a machine fault."""

    def fault(self, lane: int) -> MachineFault | None:
        """The fault that stopped ``lane``, as the reference machine reports it."""

    def output(self, lane: int) -> list[int]:
        """Every word SHOW or EMIT displayed on ``lane``, in order, either direction."""

    def snapshot(self, lane: int) -> Snapshot:
        """One lane's architectural state, comparable across engines."""


def overflow_counts(machine: Lanes) -> Any:
    """Every lane's overflow counter ``OV`` (``isa/table.py``), read signed (``int64``):
    the overflow events its runs counted, forward adding and backward taking away."""
    import numpy

    width = machine.width
    words = numpy.asarray(machine.bank_word("OV", 0), dtype=numpy.uint64)
    if width == 64:
        return words.view(numpy.int64).copy()
    signed = words.astype(numpy.int64)
    return numpy.where(signed >= 1 << (width - 1), signed - (1 << width), signed)


def read_place(machine: Lanes, register: int | None, address: int | None,
               bank: str = "") -> Any:
    """Every lane's word at a register or memory word, of the values (``bank=""``) or
    of a gradient-mode bank (``"G"``, ``"T"``, ``"TG"``)."""
    if register is not None:
        return machine.bank_word(bank or "R", register)
    return machine.bank_word(bank + "M" if bank else "MEM", address)  # type: ignore[arg-type]


def write_place(machine: Lanes, register: int | None, address: int | None, values: Any,
                bank: str = "") -> None:
    """Store words at a register or memory word of the values or of a gradient-mode bank."""
    if register is not None:
        machine.set_bank_word(bank or "R", register, values)
    else:
        machine.set_bank_word(bank + "M" if bank else "MEM", address, values)  # type: ignore[arg-type]


#: A step limit from here up is no limit: no run reaches 2^62 steps (146 years at 10^9
#: steps a second), and the engines' step counters (int64) hold it.
NO_STEP_LIMIT = 1 << 62
#: The largest step limit an engine takes (a user's "no limit": 2^64 - 1).
MAX_STEP_LIMIT = (1 << 64) - 1


def step_limit(max_steps: int | None) -> int | None:
    """``max_steps`` as every engine keeps it: None (no limit) for None or anything from
    :data:`NO_STEP_LIMIT` up to :data:`MAX_STEP_LIMIT`; raises ``ValueError`` outside
    1 .. 2^64 - 1 (an int64 step counter would overflow comparing with a larger one)."""
    if max_steps is None:
        return None
    if isinstance(max_steps, bool) or not 1 <= int(max_steps) <= MAX_STEP_LIMIT:
        raise ValueError(f"max_steps is an integer from 1 to 2^64 - 1 = {MAX_STEP_LIMIT} "
                         f"(None: no limit), not {max_steps!r}")
    return None if max_steps >= NO_STEP_LIMIT else int(max_steps)


Loader = Callable[..., Lanes]


@dataclass(frozen=True)
class Engine:
    """An engine: its name, a one-line summary, whether it can trace every step, and how
    to load an image onto lanes (``load(image, lanes, *, max_steps, memory_words)``)."""

    name: str
    summary: str
    load: Loader
    traces: bool = False
    available: Callable[[], str | None] = lambda: None  # None, or why it cannot run here
