"""The vector machine's state, declared once for every mixin that works on it.

:class:`~revasm.sim.vector.machine.VectorMachine` sets these attributes in its
``__init__``; the mixins (``devices.py``, ``lane_faults.py``, ``fused.py``,
``groups.py``, ``scheduler.py``) inherit this class, so each of them, and the type
checker, knows the state it reads and writes without restating it.  Only
annotations: the class holds no values and adds no behaviour.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from revasm.sim.switches import ModeSwitches

if TYPE_CHECKING:
    from revasm.assembler.image import Image
    from revasm.isa.fixed_point import WordFormat
    from revasm.sim.reference.predecode import Decoded

    from .banks import Group, MemoryBank, RegisterBank
    from .vocabulary import LaneContext
    from .words import RowPool


class FaultEvent:
    """One fault event: a kind and a message maker for the lanes it stopped."""

    __slots__ = ("kind", "describe")

    def __init__(self, kind: str, describe: Callable[[int], tuple[str, dict]]) -> None:
        self.kind = kind
        self.describe = describe


class VectorState(ModeSwitches):
    """Every lane's state (arrays with a lane axis of length ``lanes``, in the array
    namespace ``xp``), and the machine's compiled code and scratch."""

    # --- the program and the batch
    xp: Any
    image: Image
    fmt: WordFormat
    width: int
    lanes: int
    memory_words: int
    max_steps: int | None
    cells: list[Decoded]
    #: the image's instruction cells as a bool row (and one ``False`` past the end)
    _code_cells: Any

    # --- architectural state, per lane
    _rows: list[Any]
    R: RegisterBank
    MEM: MemoryBank
    #: every bank by its template name (``R``, ``MEM``, ``G``, ...; None until made)
    _banks: dict[str, Any]
    pc: Any
    br: Any
    direction: Any
    steps: Any
    cycles: Any
    status: Any
    #: the EMIT tape: ``(depth, lanes)`` words, and each lane's depth
    _tape: Any
    _tape_length: Any
    #: the output log: (lanes, words) per SHOW/EMIT/UNEMIT, in order
    _outputs: list[tuple[Any, Any]]

    # --- faults (``lane_faults.py``)
    _fault_events: list[FaultEvent]
    _fault_event: Any
    _fault_position: Any

    # --- running a round (``devices.py``, ``groups.py``, ``scheduler.py``)
    _ctx: LaneContext
    _pool: RowPool
    #: the group the current template runs on
    _group: Group
    #: the (PC, DIR) every lane of a whole-batch round leaves for, when it is one
    _uniform: tuple[int, int] | None
    #: output a template queued, committed with its writes
    _pending: list[tuple[str, Any]]
    _pops: int

    # --- compiled code
    _namespace: dict[str, Any]
    _functions: dict[str, Callable[..., Any]]
    _fused: dict[tuple[int, int, bool, bool], Any]
    _entered: set[tuple]
    _timing_namespace: dict[str, Any] | None
    #: lanes per tile of a fused block on a large batch (0: never tile)
    tile: int
