"""Step budgets that cut a compiled run into short kernel calls, for output as it runs.

A kernel call runs its lanes until they halt, fault or pause; the words they show wait in
the per-lane log (``OUT``) until the call returns.  So that ``on_output`` hears of a word
within :data:`~revasm.sim.engine.LIVE_OUTPUT_SECONDS` (``sim/engine.py``), a run with a
listener passes the kernel a step limit a *slice* ahead instead of ``max_steps``: the kernel
stops each lane there exactly as at ``max_steps`` -- between two instructions, nothing of
the next one done (fault code ``F_STEPS``, or ``HANDOFF`` before a block that no longer
fits) -- and the host resumes the lane in the next call
(``machine.CompiledLanes.run_until_stopped``).

The budget is steps, the goal time: it starts at :data:`FIRST_SLICE_STEPS` and after every
call is set from the steps a second that call ran, so that a call takes about half the
latency bound (a fast kernel runs 10^8-10^9 steps a second, a slow one -- the function
unit, gradient mode, a loaded machine -- 100x fewer).  The rate, not the call's time:
calls that pause to grow a table end early, and scaling by their time alone let the
budget run away (a 0.9 s wait measured on the 10^8-step run).
*Rejected:* a time check inside the kernels (``generate.py``, the lead's): a clock read per
block costs every run, with or without a listener; the limit is already there.
"""
from __future__ import annotations

from typing import Any

from revasm.sim.engine import LIVE_OUTPUT_SECONDS

#: The first slice's steps: small enough that the first words arrive at once, large enough
#: for almost any block (a lane whose next block does not fit is given a wider slice).
FIRST_SLICE_STEPS = 1 << 16
#: A slice grows at most this many times from one call to the next (a rate measured on a
#: short call is rough); it shrinks at once.
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

    def timed(self, seconds: float, advanced: int, stuck: bool) -> None:
        """After a call of ``seconds`` in which the furthest lane ran ``advanced`` steps:
        aim the budget at half the latency bound at that rate (a call that ended early --
        a pause to grow a table, a halt -- says as much about the rate as a whole slice),
        growing at most :data:`MOST_CHANGE` times a call; and widen the next call's room
        if a lane did not get through (``stuck``) -- repeated, its limit reaches the run's
        own and the lane is handed off for real -- else narrow it again."""
        self.calls += 1
        self.longest = max(self.longest, seconds)
        if advanced > 0:
            rate = advanced / max(seconds, 1e-9)  # steps a second, the call's overhead in
            wanted = rate * LIVE_OUTPUT_SECONDS / 2
            self.budget = int(min(MOST_SLICE_STEPS, self.budget * MOST_CHANGE,
                                  max(FIRST_SLICE_STEPS, wanted)))
        self.room = self.room * 16 if stuck else 1
