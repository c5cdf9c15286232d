"""Fused straight-line blocks: many data instructions as one function, tile by tile.

A run of consecutive data instructions whose templates touch registers, and
memory only through exchanges (``templates.fusable``), is compiled into one
function (``templates.fused_code``) and run over every lane at once; on a large
batch it runs over tiles of ``TILE_LANES`` lanes so a tile's rows stay in cache
through the block (docs/vector.md "Tiles").  Templates that may fault are
guarded: a tile where one trips is put back before that template and runs on
one instruction at a time.  A mixin of
:class:`~revasm.sim.vector.machine.VectorMachine` (``machine.py``).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .banks import TileRows
from .state import VectorState
from .templates import fusable, fused_code
from .vocabulary import GuardTripped

#: Register-like banks (indexed by register number) and memory-like banks (by address):
#: the banks fused blocks touch, in the order their functions take them.
REGISTER_BANKS = ("R", "G", "T", "TG", "OV")
MEMORY_BANKS = ("MEM", "GM", "TM", "TGM")
FUSED_BANKS = REGISTER_BANKS + MEMORY_BANKS

#: Fused straight-line blocks shorter than this run instruction by instruction.
MIN_FUSED = 2
#: The longest fused block: a longer run is several blocks, one after the other (a
#: 289 000-instruction straight line had been one block: its source transformed and
#: compiled whole took 70 s and 2.8 GB before the first step).
MAX_FUSED = 512
#: A program longer than this, on fewer lanes than ``FUSE_LANES``, fuses a block only when
#: a run enters it a second time: building a block costs about 0.2 ms a template, far more
#: than running a template once on a few lanes, and a long straight line runs each once
#: (a 289 000-instruction program on one lane: 68 s building blocks; shorter programs,
#: every benchmark's, fuse at once as before).
LONG_PROGRAM = 20_000
FUSE_LANES = 4_096

#: Lanes per tile when a fused block runs over a large batch (``_run_fused``): a
#: tile's rows stay in the 4 MB L2 cache through the block (chosen by measurement,
#: docs/vector.md "Tiles").
TILE_LANES = 1 << 14


class FusedBlocks(VectorState):
    """Fused blocks: built once per (PC, DIR, mode), run over tiles, guarded."""

    def _fused_block(self, pc: int, direction: int) -> Any:
        """(function, length, fixed cycles before each template and after all, timed
        steps) of the fused straight-line run starting at ``pc``, or None: consecutive
        data cells whose templates touch registers, and memory only through exchanges
        (``templates.fusable``).  A timed step (a unit call whose cycles depend on its
        operands) is ``(its index, its timing code)``: its cycles are counted after the
        block, from registers no later step of the block writes (the run ends before one
        that would)."""
        key = (pc, direction, self._gradient, self._tangent)
        if key in self._fused:
            return self._fused[key]
        if len(self.cells) > LONG_PROGRAM and self.lanes < FUSE_LANES and \
                key not in self._entered:
            self._entered.add(key)  # the first time: instruction by instruction
            return None
        statements: list[str] = []
        cycles = [0]
        timed: list[tuple[int, Any]] = []
        at = pc
        timing_reads: set[int] = set()  # registers the timed steps so far read
        while 0 <= at < len(self.cells) and self.cells[at].is_data and \
                len(statements) < MAX_FUSED:
            cell = self.cells[at]
            assert cell.instruction is not None  # a data cell is an instruction
            text = cell.statement(direction, self._gradient, self._tangent)
            if not fusable(text, FUSED_BANKS):
                break
            written = {cell.operands[name] for name in cell.instruction.writes}
            if written & timing_reads:
                break
            fixed, code = cell.cycles(direction, self._gradient)
            if code is not None:
                expression = cell.cycles_expression(direction, self._gradient) or ""
                timing_reads |= {int(n) for n in re.findall(r"\bR\[(\d+)\]", expression)}
                timed.append((len(statements), code))
            statements.append(text)
            cycles.append(cycles[-1] + fixed)
            at += direction
        block = None
        if len(statements) >= MIN_FUSED:
            exec(fused_code(tuple(statements), FUSED_BANKS), self._namespace)
            block = (self._namespace.pop("_block"), len(statements), cycles, timed)
        self._fused[key] = block
        return block

    def _run_fused(self, function: Callable, n: int) -> list[tuple[int, int, int]]:
        """Run a fused block over every lane, in tiles of ``self.tile`` lanes when the
        batch is larger: a tile's rows stay in cache through the whole block, where
        whole rows of a large batch would stream from memory once per instruction.

        Returns the tiles ``(first, last, i)`` where a guarded template ``i`` faulted on
        some lane (empty when none did): such a tile is left as it was before template
        ``i``; every other tile has run the whole block."""
        xp = self.xp
        banks = [None if self._banks[name] is None else self._banks[name].rows
                 for name in FUSED_BANKS]
        registers = len(REGISTER_BANKS)
        tile = self.tile
        if not tile or n < 2 * tile:
            self._ctx.reset(n)
            index = self._guarded(function, banks)
            return [] if index < 0 else [(0, n, index)]
        spans = [(start, min(start + tile, n)) for start in range(0, n, tile)]

        def run(span: tuple[int, int]) -> int:
            start, stop = span
            views = [None if rows is None else [row[start:stop] for row in rows]
                     for rows in banks[:registers]]
            memories = [None if rows is None else TileRows(rows, start, stop)
                        for rows in banks[registers:]]
            tiles = [None if rows is None else list(rows) for rows in views] + memories
            self._ctx.reset(stop - start)
            index = self._guarded(function, tiles)
            # Rows replaced rather than updated in place go back into the tile.  A
            # replacement may itself be another row's view (SWAP, EXCH move views), so
            # every view is copied before any tile is overwritten.
            writes = [(rows[register], value) for rows, viewed, written in
                      zip(banks, views, tiles)
                      if rows is not None and viewed is not None and written is not None
                      for register, (view, value) in enumerate(zip(viewed, written))
                      if value is not view]
            writes += [write for memory in memories if memory is not None
                       for write in memory.written()]
            writes = [(row, value if getattr(value, "base", True) is None
                       else xp.asarray(value, copy=True)) for row, value in writes]
            for row, value in writes:
                row[start:stop] = value
            return index

        indexes = [run(span) for span in spans]
        self._ctx.reset(n)
        return [(start, stop, index) for (start, stop), index in zip(spans, indexes)
                if index >= 0]

    def _guarded(self, function: Callable, banks: list) -> int:
        """Run a fused block with faults raised (``LaneContext.strict``): -1 when it ran
        through, else the index of the template that tripped its guard, with the rows
        that template replaced put back."""
        ctx = self._ctx
        ctx.strict, ctx.guard = True, None
        try:
            function(*banks)
            return -1
        except GuardTripped:
            assert ctx.guard is not None  # the template that tripped snapped it
            index, kept = ctx.guard
            for rows, register, row in reversed(kept):
                rows[register] = row
            return index
        finally:
            ctx.strict, ctx.guard = False, None
