"""The SIMT scheduler: which lanes run together, round after round.

Each round picks the lanes that share the *first* (PC, DIR) in program order --
lanes running forward at the lowest PC, else lanes running backward at the
highest -- from a queue of waiting lanes keyed by (DIR, PC), and runs them as
one group (``groups.py``).  Lanes whose PC left the program, or that used up
their steps, fault here.  A mixin of
:class:`~revasm.sim.vector.machine.VectorMachine` (``machine.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from revasm.sim.engine import OutputListener

from .groups import GroupRunner
from .lane_status import RUNNING

#: Called with the number of lanes that have stopped (halted or faulted) so far.
Progress = Callable[[int], object]


class Scheduler(GroupRunner):
    """``resume``: the queue of waiting lanes and the rounds that empty it."""

    def resume(self, *, progress: Progress | None = None,
               on_output: OutputListener | None = None) -> None:
        """Go on until every lane has halted or faulted.

        The waiting lanes are kept in a queue keyed by (DIR, PC) in scheduling order
        (forward lanes by lowest PC, then backward lanes by highest PC); a round pops
        the first key, runs those lanes, and files only them again under their new
        keys, so a round costs the size of its group, not of the whole batch.  The words
        a round shows go to ``on_output`` before the next round.
        """
        xp = self.xp
        self._uniform = None
        queue: dict[int, list] = {}
        running = xp.nonzero(self.status == RUNNING)[0]
        waiting = self._file(queue, running, everything=len(running) == self.lanes)
        announced = len(self._outputs)
        while queue:
            if on_output is not None and len(self._outputs) > announced:
                announced = self._announce_output(on_output, announced)
            if progress is not None:
                progress(self.lanes - waiting)
            key = min(queue)
            parts = queue.pop(key)
            if len(parts) == 1:
                lanes = parts[0]
            else:
                lanes = xp.sort(xp.concat(parts))
            waiting -= len(lanes)
            length = len(self.cells)
            pc, direction = (key, 1) if key < length else (2 * length - 1 - key, -1)
            if self.max_steps is not None:
                over = self.steps[lanes] >= self.max_steps
                if bool(xp.any(over)):
                    self._lane_faults(lanes[over], "step-limit", self._step_limit_message)
                    lanes = lanes[~over]
                    if len(lanes) == 0:
                        continue
            full = len(lanes) == self.lanes
            self._uniform = None
            self._run_group(slice(None) if full else lanes, pc, direction)
            if self._uniform is not None and full:
                following, going = self._uniform
                self._uniform = None
                if 0 <= following < length:
                    key = following if going > 0 else 2 * length - 1 - following
                    queue.setdefault(key, []).append(lanes)
                    waiting += len(lanes)
                    continue
            alive = lanes[self.status[lanes] == RUNNING]
            waiting += self._file(queue, alive)
        if on_output is not None:
            self._announce_output(on_output, announced)
        if progress is not None:
            progress(self.lanes)

    def _announce_output(self, on_output: OutputListener, since: int) -> int:
        """Hand the output log's entries from ``since`` on to ``on_output``, each lane's
        words together and in order; returns the log's length."""
        words: dict[int, list[int]] = {}
        for lanes, values in self._outputs[since:]:
            for lane, word in zip(lanes.tolist(), values.tolist()):
                words.setdefault(int(lane), []).append(int(word))
        for lane, shown in words.items():
            on_output(lane, shown)
        return len(self._outputs)

    def _file(self, queue: dict[int, list], lanes: Any, everything: bool = False) -> int:
        """Put running ``lanes`` in the queue under their (DIR, PC) keys; lanes whose PC
        left the program fault here (step limit first, as the reference checks it
        first).  Returns how many were queued."""
        xp = self.xp
        if len(lanes) == 0:
            return 0
        length = len(self.cells)
        pcs = self.pc if everything else self.pc[lanes]
        dirs = self.direction if everything else self.direction[lanes]
        outside = (pcs < 0) | (pcs >= length)
        if bool(xp.any(outside)):
            lost = lanes[outside]
            if self.max_steps is not None:
                over = self.steps[lost] >= self.max_steps
                if bool(xp.any(over)):
                    self._lane_faults(lost[over], "step-limit", self._step_limit_message)
                    lost = lost[~over]
            if len(lost):
                self._lane_faults(lost, "illegal-instruction", self._illegal_message)
            keep = ~outside
            lanes, pcs, dirs = lanes[keep], pcs[keep], dirs[keep]
            if len(lanes) == 0:
                return 0
        keys = xp.where(dirs > 0, pcs, 2 * length - 1 - pcs)
        low, high = int(xp.min(keys)), int(xp.max(keys))
        if low == high:
            queue.setdefault(low, []).append(lanes)
        else:
            values, inverse = xp.unique_inverse(keys)
            for i, key in enumerate(values.tolist()):
                queue.setdefault(int(key), []).append(lanes[inverse == i])
        return len(lanes)
