"""Running one group of lanes: an instruction and the straight-line run after it.

A group is the lanes at one (PC, DIR) (``banks.Group``: every lane, or an index
array).  ``_run_group`` runs them through the instruction there and on through
the following data instructions -- as fused blocks (``fused.py``) while every
lane is in the group and none landed by a jump, else one template at a time,
committing each instruction's writes for the lanes that did not fault (a step's
template checks every fault before its first write, ``isa/step_order.py``, so a lane
that faults keeps nothing of the instruction).  A control instruction ends
the group's round: ``_control`` sets BR, DIR, halts, checks the come-from rule
and moves the PC.  Cycles are the RTL core's (``isa/timing``): each instruction's fixed
cycles, and for a unit call whose cycles depend on its operands, its cycles per lane from
the registers the step does not write (``timing.py``), added once the step is committed
(a fused block adds them after the block, ``fused.py``).  A mixin of
:class:`~revasm.sim.vector.machine.VectorMachine` (``machine.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from revasm.machine.next_pc import halts, next_pc, pc_register
from revasm.sim.reference.predecode import Decoded

from .banks import BANKS, Group
from .fused import FusedBlocks
from .lane_faults import LaneFaults
from .lane_status import HALTED
from .templates import compile_template
from .timing import lane_timer_names


class LaneRows:
    """``R`` for a timing expression: register ``i``'s words of the group's lanes (rows
    as stored, without recording reads)."""

    __slots__ = ("rows", "lanes")

    def __init__(self, rows: list, lanes: Any) -> None:
        self.rows = rows
        self.lanes = lanes

    def __getitem__(self, register: int) -> Any:
        row = self.rows[register]
        return row if self.lanes is None else row[self.lanes]


class GroupRunner(FusedBlocks, LaneFaults):
    """One group's round: templates run, writes committed, control applied."""

    def _function(self, cell: Decoded, direction: int) -> Callable:
        text = cell.statement(direction, self._gradient, self._tangent)
        function = self._functions.get(text)
        if function is None:
            exec(compile_template(text, BANKS), self._namespace)  # table text
            function = self._functions[text] = self._namespace.pop("_cell")
        return function

    def _lane_cycles(self, code: Any, lanes: Any) -> Any:
        """The operand-dependent cycles of a step (``Decoded.cycles``' code) per lane of
        ``lanes`` (``None``: every lane), over the registers as they are now."""
        namespace = self._timing_namespace
        if namespace is None:
            namespace = self._timing_namespace = {
                **self._namespace, **lane_timer_names(self.width, self.xp)}
        self._ctx.reset(self.lanes if lanes is None else len(lanes))
        return eval(code, namespace, {"R": LaneRows(self._rows, lanes)})

    def _run_group(self, lanes: Any, pc: int, direction: int) -> None:
        """Run the lanes at (pc, direction) through one instruction and the data run after it."""
        xp = self.xp
        full = isinstance(lanes, slice)
        n = self.lanes if full else len(lanes)
        group = Group(lanes, full, n)
        br_in = self.br if full else self.br[lanes]
        landed = bool(xp.any(br_in != 0))
        if landed and full:
            br_in = xp.asarray(br_in, copy=True)
        BR: Any = xp.asarray(br_in, copy=True) if landed else 0
        room = float("inf")
        if self.max_steps is not None:
            room = self.max_steps - int(xp.max(group.take(self.steps)))
        cells, length = self.cells, len(self.cells)
        executed = spent = 0
        ctx = self._ctx
        while True:
            if full and type(BR) is int and cells[pc].is_data:  # no lane landed by a jump
                block = self._fused_block(pc, direction)
                if block is not None and executed + block[1] <= room:
                    function, count, cycles, timed = block
                    stopped = self._run_fused(function, n)
                    for index, code in timed:  # the registers they read: untouched since
                        extra = self._lane_cycles(code, None)
                        for first, last, at in stopped:
                            if at <= index:  # this tile stopped before the step
                                extra[first:last] = 0
                        self.cycles += extra
                    if stopped:
                        # A guarded template faulted on some lane of these tiles: the
                        # other tiles finished the block; a stopped tile's lanes stand
                        # before the template that faulted, and the first such tile runs
                        # on from there one instruction at a time (its lanes fault there).
                        self.pc[:] = pc + count * direction
                        self.steps += executed + count
                        self.cycles += spent + cycles[-1]
                        for first, last, index in stopped[1:]:
                            self.pc[first:last] = pc + index * direction
                            self.steps[first:last] -= count - index
                            self.cycles[first:last] -= cycles[-1] - cycles[index]
                        first, last, index = stopped[0]
                        self.steps[first:last] -= executed + count
                        self.cycles[first:last] -= spent + cycles[-1]
                        lanes = xp.arange(first, last)
                        n, full = last - first, False
                        group = Group(lanes, False, n)
                        br_in = br_in[lanes]
                        executed += index
                        spent += cycles[index]
                        pc += index * direction
                        continue
                    executed += count
                    spent += cycles[-1]
                    following = pc + count * direction
                    if executed < room and 0 <= following < length and cells[following].is_data:
                        pc = following
                        continue
                    self._advance(group, executed, spent)
                    self.pc = xp.full(self.lanes, following, dtype=xp.int64)
                    self._uniform = (following, direction)
                    return
            cell = cells[pc]
            if cell.illegal:
                self._lane_faults(self._absolute(group, None), "illegal-instruction",
                                  self._illegal_message)
                return
            function = self._function(cell, direction)
            ctx.reset(n)
            group.reads.clear()
            self._group = group
            banks = [bank for bank in self._banks.values() if bank is not None]
            for bank in banks:
                bank.bind(group)
            self._pending = []
            self._pops = 0
            br_out, dir_out = function(*self._banks.values(), BR, direction)
            failed = ctx.failed
            ok = None
            if failed is not None:
                ok = ~failed
                self._execution_faults(group, cell, direction, executed, spent)
                if not bool(xp.any(ok)):
                    return
            self._commit(group, ok, banks)
            fixed, timed = cell.cycles(direction, self._gradient)
            extra = None
            if timed is not None:
                extra = self._lane_cycles(timed, None if group.full else group.lanes)
                if ok is not None:
                    extra = extra[ok]
            if ok is not None:
                lanes = xp.nonzero(ok)[0] if full else lanes[ok]
                full = False
                n = len(lanes)
                group = Group(lanes, False, n)
                br_in = br_in[ok]
                if hasattr(BR, "dtype"):
                    BR = BR[ok]
                if hasattr(br_out, "shape") and br_out.shape:
                    br_out = br_out[ok]
                if hasattr(dir_out, "shape") and dir_out.shape:
                    dir_out = dir_out[ok]
            if extra is not None:
                if full:
                    self.cycles += extra
                else:
                    self.cycles[lanes] += extra
            executed += 1
            spent += fixed
            if (cell.kind == "data" and type(br_out) is int and br_out == 0
                    and type(dir_out) is int and dir_out == direction):
                following = pc + direction
                if executed < room and 0 <= following < length and cells[following].is_data:
                    pc = following
                    landed = False
                    continue
                self._advance(group, executed, spent)
                if full:
                    self.pc = xp.full(self.lanes, following, dtype=xp.int64)
                    self._uniform = (following, direction)
                else:
                    self.pc[lanes] = following
                return
            self._control(group, cell, direction, br_in if landed else None, br_out,
                          dir_out, executed, spent)
            return

    def _advance(self, group: Group, executed: int, spent: int) -> None:
        if group.full:
            self.steps += executed
            self.cycles += spent
        else:
            self.steps[group.lanes] += executed
            self.cycles[group.lanes] += spent

    def _commit(self, group: Group, ok: Any, banks: list) -> None:
        xp = self.xp
        if ok is None:
            target = group.lanes
            seen = set(group.reads) if group.full else None
        else:
            target = ok if group.full else group.lanes[ok]
            seen = None
            if group.full:  # scatters go into the stored rows the values may be
                for bank in banks:
                    bank.own_values()
        for bank in banks:
            bank.commit(ok, target, seen)
        if not self._pending:
            return
        lanes = xp.arange(self.lanes) if group.full else group.lanes
        if ok is not None:
            lanes = lanes[ok]
        for what, value in self._pending:
            if ok is not None:
                value = value[ok]
            if what == "unemit":
                self._tape_length[lanes] -= 1
            elif what == "emit":
                depth = self._tape_length[lanes]
                if len(depth) and int(xp.max(depth)) >= self._tape.shape[0]:
                    grown = xp.zeros((max(4, 2 * self._tape.shape[0]), self.lanes),
                                     dtype=xp.uint64)
                    grown[: self._tape.shape[0]] = self._tape
                    self._tape = grown
                self._tape[depth, lanes] = value
                self._tape_length[lanes] += 1
            self._outputs.append((lanes, value))

    def _control(self, group: Group, cell: Decoded, direction: int, br_in: Any, br_out: Any,
                 dir_out: Any, executed: int, spent: int) -> None:
        """After a control instruction (or a landing): BR, DIR, halts, come-from, next PC."""
        xp = self.xp
        n = group.n
        if cell.kind in ("start", "finish"):
            br_in = None  # not checked: they halt keeping BR (a jump onto FINISH) or pass it on
        if br_in is not None and type(br_out) is int and br_out == 0:
            br_in = None  # every landed lane was caught
        if type(dir_out) is int and hasattr(br_out, "shape") and br_out.shape == (n,) and n:
            low = int(xp.min(br_out))  # a condition that came out the same on every lane
            if low == int(xp.max(br_out)) and (br_in is None or low == 0):
                br_in, br_out = None, low
        if br_in is None and type(br_out) is int and type(dir_out) is int:
            # Every lane leaves with the same BR and DIR (START, FINISH, BRA, RBRA, a
            # branch whose condition is uniform): no per-lane arrays needed.
            lanes = group.lanes
            self._advance(group, executed, spent)
            self.br[lanes] = br_out
            self.direction[lanes] = dir_out
            if halts(cell.kind, dir_out):
                self.status[lanes] = HALTED
                return
            target = next_pc(cell.pc, br_out, dir_out)
            self.pc[lanes] = pc_register(target)
            if group.full and br_out == 0:
                self._uniform = (target, dir_out)
            return
        if hasattr(br_out, "dtype") and br_out.shape == (n,):
            br_new = br_out if br_out.dtype == xp.int64 else xp.astype(br_out, xp.int64)
        else:
            br_new = xp.full(n, int(br_out), dtype=xp.int64)
        # DIR is usually one Python int for the whole group (only RBRA changes it).
        dir_new: Any = dir_out if type(dir_out) is int else xp.astype(
            xp.broadcast_to(xp.asarray(dir_out, dtype=xp.int64), (n,)), xp.int64)
        lanes = group.lanes
        full = group.full

        def some(mask: Any) -> Any:
            return mask if full else lanes[mask]

        self._advance(group, executed, spent)
        self.br[lanes] = br_new
        self.direction[lanes] = dir_new
        pc = cell.pc
        stopped = None
        if br_in is not None:
            uncaught = (br_in != 0) & (br_new != 0)
            if bool(xp.any(uncaught)):
                stopped = uncaught
                sources = br_in[uncaught].tolist()
                self._lane_faults(self._absolute(group, uncaught), "uncaught-jump",
                                  lambda lane, j: self._uncaught_message(
                                      lane, pc, sources[j], direction))
        if cell.kind in ("finish", "start") and type(dir_new) is int:
            dir_new = xp.full(n, dir_new, dtype=xp.int64)
        if cell.kind in ("finish", "start"):
            halt = halts(cell.kind, dir_new)
            if stopped is not None:
                halt = halt & ~stopped
            self.status[some(halt)] = HALTED
            stopped = halt if stopped is None else (stopped | halt)
        # int64 arithmetic: a jump far outside the program wraps (``pc_from_register``)
        if stopped is None:
            self.pc[lanes] = next_pc(pc, br_new, dir_new)
        else:
            moving = ~stopped
            self.pc[some(moving)] = next_pc(pc, br_new[moving],
                                            dir_new if type(dir_new) is int else dir_new[moving])
