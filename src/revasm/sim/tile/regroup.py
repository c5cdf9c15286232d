"""Regrouping: the running lanes packed into the first tiles, in order of their (DIR, PC).

A tile runs as long as its slowest lane: once its lanes have parted (a loop that some
leave before others), each instruction runs on a fraction of the tile's width.  With
``TileLanes.regroup`` on, a tile returns to the host when its groups have been thin for a
while (``source.THIN_STEPS``), and :func:`pack` permutes the
lanes -- every per-lane array: registers and memory of every bank, the memory tables'
keys, ``CTL``, output log and tape -- so that the running lanes fill the first tiles,
ordered by where they are (lanes at one PC side by side, so they share a group), the
stopped ones after them -- when that gathers them into a quarter fewer groups or better;
else the host lets the tiles run on to the end.  :func:`restore` puts every lane back in
its place before the run returns, so the host's view of the lanes never changes.
"""
from __future__ import annotations

from typing import Any

import numpy

from revasm.sim.compiled.generate import DIR, PC, RUNNING, STATUS


def permute(machine: Any, order: Any) -> None:
    """Move lane ``order[i]``'s state to lane ``i``, for every per-lane array."""
    banks = machine._banks
    for name, bank in banks.items():
        if bank is not None:
            banks[name] = numpy.ascontiguousarray(bank.T[:, order]).T
    machine.KEYS = numpy.ascontiguousarray(machine.KEYS.T[:, order]).T
    machine.CTL = numpy.ascontiguousarray(machine.CTL[:, order])
    for name in ("OUT", "OUTLEN", "TAPE", "TAPELEN", "_lane_mode"):
        setattr(machine, name, numpy.ascontiguousarray(getattr(machine, name)[order]))


def pack(machine: Any, running: Any) -> Any:
    """Permute the lanes so that the ``running`` ones fill the first tiles, by (DIR, PC);
    returns the permutation (position -> previous position), or None when that would not
    gather them into fewer groups -- (tile, DIR, PC) places -- than they form now."""
    tile = machine.tile
    ctl = machine.CTL
    keys = numpy.where(ctl[DIR, running] > 0, ctl[PC, running], -1 - ctl[PC, running])
    sort = numpy.argsort(keys, kind="stable")
    groups_now = len(numpy.unique(numpy.stack([running // tile, keys]), axis=1)[0])
    packed = numpy.arange(len(running)) // tile
    groups_then = len(numpy.unique(numpy.stack([packed, keys[sort]]), axis=1)[0])
    if 4 * groups_then > 3 * groups_now:
        return None
    rest = numpy.flatnonzero(ctl[STATUS] != RUNNING)
    order = numpy.concatenate([running[sort], rest])
    permute(machine, order)
    return order


def restore(machine: Any, order: Any) -> None:
    """Undo the permutations of a run (``order``: position -> the lane's own number)."""
    inverse = numpy.empty_like(order)
    inverse[order] = numpy.arange(len(order))
    permute(machine, inverse)
