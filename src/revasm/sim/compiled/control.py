"""The host's bookkeeping of a run over the control array ``CTL[field, lane]``, one pass each.

Before a kernel call the host resets every lane's PC, BR, DIR, counts and status; after it,
it sorts the lanes the call stopped into halted or faulted, handed off, paused for room and
still running.  As numpy expressions that was a dozen passes over 10^6-lane rows per run
(~45 ns a lane, three times the kernel's own time on a two-instruction program); here each
is one loop over the lanes.  The field numbers are ``generate.py``'s.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .generate import (
    BR,
    CYCLES,
    DIR,
    FCODE,
    HALTED,
    HANDOFF,
    NEEDS_ROOM,
    PC,
    RUNNING,
    STATUS,
    STEPS,
)
from .vocab import JIT


@njit(**JIT)
def begin(ctl, start, direction):
    """Set every lane running from ``start`` (one PC, or one per lane) in ``direction``:
    PC, DIR, the counts and the fault code reset; BR to 0, except on a lane that halted
    where this run starts, facing it (a jump onto FINISH halts with BR set)."""
    one = start.shape[0] == 1
    for lane in range(ctl.shape[1]):
        pc = start[0] if one else start[lane]
        resumed = (ctl[STATUS, lane] == HALTED and ctl[PC, lane] == pc
                   and ctl[DIR, lane] == -direction)
        ctl[PC, lane] = pc
        if not resumed:
            ctl[BR, lane] = 0
        ctl[DIR, lane] = direction
        ctl[STEPS, lane] = 0
        ctl[CYCLES, lane] = 0
        ctl[STATUS, lane] = RUNNING
        ctl[FCODE, lane] = 0


@njit(**JIT)
def turn_back(ctl):
    """``run_back``: every halted lane turns around (BR as it halted) and runs again."""
    for lane in range(ctl.shape[1]):
        if ctl[STATUS, lane] == HALTED:
            ctl[DIR, lane] = -ctl[DIR, lane]
            ctl[STEPS, lane] = 0
            ctl[CYCLES, lane] = 0
            ctl[STATUS, lane] = RUNNING
            ctl[FCODE, lane] = 0


@njit(**JIT)
def running(ctl, lane_mode, mode):
    """The running lanes (int64 indices, ascending), each marked in ``lane_mode`` with
    ``mode`` (whether this run has a derivative switch on)."""
    lanes = ctl.shape[1]
    out = np.empty(lanes, dtype=np.int64)
    count = 0
    for lane in range(lanes):
        if ctl[STATUS, lane] == RUNNING:
            out[count] = lane
            lane_mode[lane] = mode
            count += 1
    return out[:count]


@njit(**JIT)
def stopped(ctl, active):
    """How the lanes of a kernel call stopped: (handed off, paused for room, still
    running) counts, in one pass; the lanes themselves only when some are (``select``)."""
    handed = paused = still = 0
    for lane in active:
        status = ctl[STATUS, lane]
        if status == HANDOFF:
            handed += 1
        elif status == NEEDS_ROOM:
            paused += 1
        elif status == RUNNING:
            still += 1
    return handed, paused, still


@njit(**JIT)
def select(ctl, active, status, count):
    """The lanes of ``active`` whose status is ``status``, in order (at most ``count``:
    ``stopped``'s count of them)."""
    out = np.empty(count, dtype=np.int64)
    k = 0
    for lane in active:
        if k < count and ctl[STATUS, lane] == status:
            out[k] = lane
            k += 1
    return out[:k]
