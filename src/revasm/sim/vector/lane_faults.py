"""Per-lane faults: the events that stopped lanes, and the reference's messages.

A fault stops only its lanes: they get the fault's kind, PC, BR, DIR and step
count, and the other lanes run on.  Messages are made lazily, per lane, when
``fault(lane)`` asks for one, so a batch where a million lanes fault pays only
for the ones read; ``fault(lane)`` builds the same :class:`MachineFault` as the
reference machine.  A mixin of
:class:`~revasm.sim.vector.machine.VectorMachine` (``machine.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from revasm.machine import MachineFault
from revasm.machine.fault_messages import (
    illegal_message,
    step_limit_message,
    uncaught_jump_message,
    where,
)
from revasm.machine.next_pc import pc_from_register
from revasm.sim.reference.predecode import Decoded

from .banks import Group
from .lane_status import FAULTED
from .state import FaultEvent, VectorState


def _execution_message(place: str, positions: list[int], detail: Callable[[int], str],
                       lane: int, j: int) -> tuple[str, dict[str, Any]]:
    """An execution fault's message for the ``j``-th lane it stopped: the instruction and
    where (``place``), then the detail of that lane (its position in the group)."""
    return f"{place}: {detail(positions[j])}", {}


class LaneFaults(VectorState):
    """Fault events per lane, and the messages the reference would give."""

    def _lane_faults(self, lanes: Any, kind: str,
                     describe: Callable[[int, int], tuple[str, dict]]) -> None:
        """Stop ``lanes`` with a fault; ``describe(lane, position)`` makes its message."""
        xp = self.xp
        lanes = xp.asarray(lanes)
        listed = lanes.tolist()
        event = len(self._fault_events)
        self._fault_events.append(FaultEvent(kind, lambda j: describe(listed[j], j)))
        self.status[lanes] = FAULTED
        self._fault_event[lanes] = event
        self._fault_position[lanes] = xp.arange(len(listed))

    def _execution_faults(self, group: Group, cell: Decoded, direction: int,
                          executed: int, spent: int) -> None:
        xp = self.xp
        going = "" if direction > 0 else " running backward"
        if self._gradient or self._tangent:
            going += " in gradient mode"
        where = self._where(cell.pc)
        for mask, kind, detail in self._ctx.events:
            lanes = self._absolute(group, mask)
            positions = xp.nonzero(mask)[0].tolist()
            self._lane_faults(lanes, kind, partial(_execution_message,
                                                   f"{cell.text}{going} at {where}",
                                                   positions, detail))
            if group.full:
                self.steps[mask] += executed
                self.cycles[mask] += spent
            else:
                self.steps[lanes] += executed
                self.cycles[lanes] += spent
            if group.full:
                self.pc[mask] = cell.pc
            else:
                self.pc[lanes] = cell.pc

    def _absolute(self, group: Group, mask: Any) -> Any:
        """The lanes of ``group`` (where ``mask`` is set, unless it is None) as indices
        into the batch."""
        xp = self.xp
        lanes = xp.arange(self.lanes) if group.full else group.lanes
        return lanes if mask is None else lanes[mask]

    def _where(self, pc: int) -> str:
        return where(self.image, pc)

    def lane_pc(self, lane: int) -> int:
        """``lane``'s PC, as the next-PC rule gives it (the int64 PC wraps on a jump far
        outside the program: ``revasm.machine.next_pc.pc_from_register``)."""
        return pc_from_register(int(self.pc[lane]), int(self.br[lane]),
                                int(self.direction[lane]), len(self.cells))

    def _step_limit_message(self, lane: int, j: int) -> tuple[str, dict]:
        return step_limit_message(self.image, self.max_steps, self.lane_pc(lane)), {}

    def _illegal_message(self, lane: int, j: int) -> tuple[str, dict]:
        pc = self.lane_pc(lane)
        cell = self.cells[pc] if 0 <= pc < len(self.cells) else None
        return illegal_message(self.image, cell.illegal if cell else None, pc,
                               int(self.br[lane]), int(self.direction[lane]))

    def _uncaught_message(self, lane: int, landing: int, br_in: int,
                          direction: int) -> tuple[str, dict]:
        return uncaught_jump_message(self.image, landing, br_in, direction,
                                     int(self.br[lane]))

    def fault_kinds(self) -> list[str]:
        """Each lane's fault kind, or ``""`` for a lane that did not fault."""
        events = self._fault_events
        return [events[e].kind if e >= 0 else "" for e in self._fault_event.tolist()]

    def fault(self, lane: int) -> MachineFault | None:
        """The fault that stopped ``lane``, exactly as the reference machine reports it."""
        event = int(self._fault_event[lane])
        if event < 0 or int(self.status[lane]) != FAULTED:
            return None
        record = self._fault_events[event]
        message, extra = record.describe(int(self._fault_position[lane]))
        pc = self.lane_pc(lane)
        cell = self.cells[pc] if 0 <= pc < len(self.cells) else None
        return MachineFault(record.kind, message, pc=pc, location=self.image.location(pc),
                            br=int(self.br[lane]), direction=int(self.direction[lane]),
                            registers=tuple(int(r[lane]) for r in self._rows),
                            step=int(self.steps[lane]), width=self.width,
                            instruction_text=cell.text if cell else "", **extra)
