"""Step budgets that cut a compiled run into short kernel calls, for output as it runs.

A kernel call runs its lanes until they halt, fault or pause; the words they show wait in
the per-lane log (``OUT``) until the call returns.  So that ``on_output`` hears of a word
within :data:`~revasm.sim.engine.LIVE_OUTPUT_SECONDS` (``sim/engine.py``), a run with a
listener passes the kernel a step limit a *slice* ahead instead of ``max_steps``: the kernel
stops each lane there exactly as at ``max_steps`` -- between two instructions, nothing of
the next one done (fault code ``F_STEPS``, or ``HANDOFF`` before a block that no longer
fits) -- and the host resumes the lane in the next call (``machine.CompiledLanes._go``).

The budget is steps, the goal time: it starts at :data:`FIRST_SLICE_STEPS` and is scaled
after every call so that a call takes about half the latency bound (a fast kernel runs
10^8-10^9 steps a second, a slow one -- the function unit, gradient mode -- 100x fewer).
*Rejected:* a time check inside the kernels (``generate.py``, the lead's): a clock read per
block costs every run, with or without a listener; the limit is already there.
"""
from __future__ import annotations

from typing import Any

from revasm.sim.engine import LIVE_OUTPUT_SECONDS

#: The first slice's steps: small enough that the first words arrive at once, large enough
#: for almost any block (a lane whose next block does not fit is given a wider slice).
FIRST_SLICE_STEPS = 1 << 16
#: A slice never grows or shrinks by more than this factor from one call to the next (the
#: first call's time includes loading or compiling the kernel).
MOST_CHANGE = 8
#: The most steps a slice takes (then the run's own limit rules).
MOST_SLICE_STEPS = 1 << 50


class Slices:
    """The step limits of one run's kernel calls, with a listener for its output."""

    def __init__(self, run_limit: int) -> None:
        self.run_limit = run_limit
        self.budget = FIRST_SLICE_STEPS
        #: how many budgets the next call gets: above 1 after a lane stopped before a block
        #: longer than the slice (``widen``)
        self.room = 1
        #: kernel calls made, and the seconds of the longest
        self.calls = 0
        self.longest = 0.0

    def limit(self, steps: Any) -> int:
        """The step limit of the next call, for lanes at ``steps`` (an array, one per lane):
        a slice beyond the furthest, never past the run's own limit."""
        return min(self.run_limit, int(steps.max()) + self.budget * self.room)

    def sliced(self, limit: int) -> bool:
        """Whether a call with this limit stops lanes short of the run's own limit."""
        return limit < self.run_limit

    def timed(self, seconds: float, stuck: bool) -> None:
        """After a call of ``seconds``: scale the budget toward half the latency bound, and
        widen the next call's room if a lane did not get through (``stuck``) -- repeated,
        its limit reaches the run's own and the lane is handed off for real -- else
        narrow it again."""
        self.calls += 1
        self.longest = max(self.longest, seconds)
        goal = LIVE_OUTPUT_SECONDS / 2
        factor = goal / seconds if seconds > 0 else MOST_CHANGE
        factor = min(MOST_CHANGE, max(1 / MOST_CHANGE, factor))
        self.budget = int(min(MOST_SLICE_STEPS, max(FIRST_SLICE_STEPS, self.budget * factor)))
        self.room = self.room * 16 if stuck else 1
