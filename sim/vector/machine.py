"""The batched machine: one program, many lanes, bit for bit the reference on each.

State (every array has a lane axis of length ``lanes``): 32 register rows,
memory rows (made on first touch, ``banks.py``), ``pc``, ``br`` (BR),
``direction`` (DIR), ``steps``, ``cycles``, a per-lane EMIT tape and a
``status`` (running, halted, faulted).

SIMT scheduling (docs/vector.md): each round picks the lanes that share the
*first* (PC, DIR) in program order -- lanes running forward at the lowest PC,
else lanes running backward at the highest -- from a queue of waiting lanes
keyed by (DIR, PC), and runs them together through the instruction there and
on through the following straight-line ``data`` instructions.  A control instruction (branch, RBRA, SWAPBR, START, FINISH)
ends the round, so lanes that took different paths meet again at the next
jump target, where the come-from rule makes control flow merge.  Any order
of rounds gives every lane the reference's own sequence of instructions;
the order only decides how many lanes share each round.

Faults are per lane and never touch other lanes: the faulting lane stops with
the reference's fault kind, PC, BR, DIR, step count and message
(:meth:`VectorMachine.fault` builds the same :class:`MachineFault`), and the
other lanes run on.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy

from revasm.assembler.image import Image
from revasm.isa.adjoint import BANKS as GRADIENT_BANKS
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import DEFAULT_MEMORY_WORDS, MachineFault, Program, Snapshot
from revasm.sim.reference.faults import Trap
from revasm.sim.reference.machine import run_start
from revasm.sim.reference.predecode import Decoded
from revasm.sim.switches import ModeSwitches

from .banks import Group, MemoryBank, RegisterBank, TileRows, as_row
from .templates import compile_template, fusable, fused_code
from .vocabulary import GuardTripped, LaneContext, vector_vocabulary
from .words import Arithmetic, RowPool

REGISTER_COUNT = 32
RUNNING, HALTED, FAULTED, IDLE = 0, 1, 2, 3

#: Register-like banks (indexed by register number) and memory-like banks (by address):
#: the banks fused blocks touch, in the order their functions take them.
REGISTER_BANKS = ("R", "G", "T", "TG")
MEMORY_BANKS = ("MEM", "GM", "TM", "TGM")
FUSED_BANKS = REGISTER_BANKS + MEMORY_BANKS

#: Fused straight-line blocks shorter than this run instruction by instruction.
MIN_FUSED = 2

#: Lanes per tile when a fused block runs over a large batch (``_run_fused``): a
#: tile's rows stay in the 4 MB L2 cache through the block (chosen by measurement,
#: docs/vector.md "Tiles").
TILE_LANES = 1 << 14

#: The banks a template may index, in the order the compiled functions take them:
#: the values, then the gradient-mode banks of ``isa/adjoint.py`` (names ending in
#: ``M`` are memory-like).
BANKS = ("R", "MEM", *GRADIENT_BANKS)

Progress = Callable[[int], object]


class _Fault:
    """One fault event: a kind and a message maker for the lanes it stopped."""

    __slots__ = ("kind", "describe")

    def __init__(self, kind: str, describe: Callable[[int], tuple[str, dict]]) -> None:
        self.kind = kind
        self.describe = describe


class VectorMachine(ModeSwitches):
    """A reversible machine with a lane axis: ``lanes`` copies of one program.

    ``xp`` is the array namespace (default numpy); the engine uses numpy's
    array-API functions plus integer-array indexing, so a module with the
    same API can be dropped in.
    """

    def __init__(self, image: Image, lanes: int, *, memory_words: int = DEFAULT_MEMORY_WORDS,
                 max_steps: int | None = None, xp: Any = None) -> None:
        if lanes < 1:
            raise ValueError(f"a vector machine needs at least one lane, not {lanes}")
        if len(image) > memory_words:
            raise ValueError(f"the image has {len(image)} words but memory only "
                             f"{memory_words}")
        self.xp = xp = xp if xp is not None else numpy
        self.image = image
        self.fmt = WordFormat(image.width)
        self.width = image.width
        self.lanes = lanes
        self.memory_words = memory_words
        self.max_steps = max_steps
        self.cells: list[Decoded] = Program.of(image).cells
        mask = self.fmt.mask
        self._rows = [xp.zeros(lanes, dtype=xp.uint64) for _ in range(REGISTER_COUNT)]
        self.R = RegisterBank(self._rows, xp)
        self.MEM = MemoryBank([w & mask for w in image.words], lanes, xp)
        self._banks: dict[str, Any] = dict.fromkeys(BANKS)
        self._banks.update(R=self.R, MEM=self.MEM)
        self.R.statement = self.MEM.statement = self._statement
        self._gradient = False
        self._tangent = False
        self.pc = xp.full(lanes, image.entry, dtype=xp.int64)
        self.br = xp.zeros(lanes, dtype=xp.int64)
        self.direction = xp.ones(lanes, dtype=xp.int64)
        self.steps = xp.zeros(lanes, dtype=xp.int64)
        self.cycles = xp.zeros(lanes, dtype=xp.int64)
        self.status = xp.full(lanes, IDLE, dtype=xp.int8)
        self._tape = xp.zeros((0, lanes), dtype=xp.uint64)
        self._tape_length = xp.zeros(lanes, dtype=xp.int64)
        self._outputs: list[tuple[Any, Any]] = []
        self._fault_events: list[_Fault] = []
        self._fault_event = xp.full(lanes, -1, dtype=xp.int32)
        self._fault_position = xp.zeros(lanes, dtype=xp.int64)
        code = [bool(flag) for flag in image.is_code]
        self._code_cells = xp.asarray(code + [False], dtype=xp.bool)
        self._ctx = LaneContext(xp)
        self._pool = RowPool(lanes)
        self.R.pool = self.MEM.pool = self._pool
        self._uniform: tuple[int, int] | None = None
        self._pending: list[tuple[str, Any]] = []
        self._pops = 0
        self._namespace = self._make_namespace()
        self._functions: dict[str, Callable] = {}
        self._fused: dict[tuple, Any] = {}
        #: Lanes per tile of a fused block on a large batch (0: never tile).
        self.tile = TILE_LANES

    # --- the namespace templates run in --------------------------------------

    def _make_namespace(self) -> dict[str, Any]:
        xp, ctx, fmt = self.xp, self._ctx, self.fmt
        size = self.memory_words
        code_cells = self._code_cells
        code_length = len(self.image)
        namespace: dict[str, Any] = {}
        namespace.update(vector_vocabulary(fmt, xp, ctx))
        namespace.update(Arithmetic(xp, self._pool).namespace())

        def address_problem(word: int) -> str:
            if word >= size:
                signed = fmt.signed(word & fmt.mask)
                shown = f"{signed} (word {word:#x})" if signed < 0 else str(word)
                return f"address {shown} is outside memory (0..{size - 1})"
            return f"address {word} holds an instruction ({self._where(word)}), not data"

        def addr(word: Any) -> Any:
            words = as_row(word, ctx.n, xp)
            if ctx.strict:  # a fused block: one legal address for the whole tile, or stop
                first = int(words[0])
                if (first < size and not (first < code_length and code_cells[first])
                        and bool(xp.all(words == first))):
                    return first
                raise GuardTripped("memory-address")
            clipped = xp.where(words < code_length, words, xp.uint64(code_length))
            bad = (words >= size) | code_cells[xp.astype(clipped, xp.int64)]
            if bool(xp.any(bad)):
                listed = words.tolist()
                ctx.fault(bad, "memory-address", lambda j: address_problem(listed[j]))
                words = xp.where(bad, xp.uint64(code_length if code_length < size else 0),
                                 words)
            return words

        def show(word: Any) -> None:
            self._pending.append(("show", xp.asarray(as_row(word, ctx.n, xp), copy=True)))

        def emit(word: Any) -> None:
            self._pending.append(("emit", xp.asarray(as_row(word, ctx.n, xp), copy=True)))

        def unemit() -> Any:
            group = self._group
            depth = group.take(self._tape_length) - (self._pops + 1)
            empty = depth < 0
            if bool(xp.any(empty)):
                ctx.fault(empty, "tape-empty", lambda j: Trap(
                    "tape-empty", "the output tape is empty, so there is nothing to take "
                                  "back").message)
            depth = xp.where(empty, 0, depth)
            if self._tape.shape[0] == 0:
                value = xp.zeros(ctx.n, dtype=xp.uint64)
            else:
                lanes = xp.arange(self.lanes) if group.full else group.lanes
                value = self._tape[depth, lanes]
            self._pops += 1
            self._pending.append(("unemit", value))
            return value

        pool, lanes_shape, u64 = self._pool, (self.lanes,), xp.uint64
        ndarray = type(xp.zeros(1))

        def store(rows: list, register: int, value: Any) -> None:
            """A fused block's write: a whole row (or a tile of one: ``ctx.n`` lanes),
            never shared with another slot."""
            if rows[register] is value:  # updated in place
                return
            n = ctx.n
            if not (type(value) is ndarray and value.dtype == u64 and value.shape == (n,)):
                value = as_row(value, n, xp)
            if not isinstance(rows, dict):  # memory is stored by exchanges only
                for row in rows:
                    if row is value:
                        value = xp.asarray(value, copy=True)
                        break
            guard = ctx.guard
            if guard is not None:  # a template that may fault: keep what it replaces
                guard[1].append((rows, register, rows[register]))
            if n == self.lanes:
                pool.replace(rows, register, value)
            else:
                rows[register] = value

        namespace.update(addr=addr, show=show, emit=emit, unemit=unemit, _at=ctx.at,
                         _store=store, _snap=ctx.snap, _unsnap=ctx.unsnap)
        return namespace

    # --- gradient mode ------------------------------------------------------------

    def bank(self, name: str) -> Any:
        """A bank by its template name (``R``, ``MEM``, ``G``, ``GM``, ...), made zeroed
        on first use so the host can seed it before switching on."""
        if name not in self._banks:
            raise KeyError(f"no bank {name!r} (banks: {', '.join(BANKS)})")
        bank = self._banks[name]
        if bank is None:
            xp = self.xp
            if name.endswith("M"):
                bank = MemoryBank([], self.lanes, xp)
            else:
                bank = RegisterBank([xp.zeros(self.lanes, dtype=xp.uint64)
                                     for _ in range(REGISTER_COUNT)], xp)
            bank.statement = self._statement
            bank.pool = self._pool
            self._banks[name] = bank
        return bank

    def _statement(self) -> int:
        return self._ctx.statement

    def bank_word(self, name: str, index: int) -> Any:
        """Every lane's word of a bank at a register number or address (a copy)."""
        bank = self.bank(name)
        row = bank.rows[index] if isinstance(bank, RegisterBank) else bank.word(index)
        return self.xp.asarray(row, copy=True)

    def set_bank_word(self, name: str, index: int, values: Any) -> None:
        """Seed a bank word (e.g. ``G`` of the loss = 1.0) in every lane."""
        self.bank(name).rows[index] = self._lane_values(values)

    def _fused_block(self, pc: int, direction: int) -> Any:
        """(function, length, cycles before each template and after all) of the fused
        straight-line run starting at ``pc``, or None: consecutive data cells whose
        templates touch registers, and memory only through exchanges
        (``templates.fusable``)."""
        key = (pc, direction, self._gradient, self._tangent)
        if key in self._fused:
            return self._fused[key]
        statements, cycles, at = [], [0], pc
        while 0 <= at < len(self.cells) and self.cells[at].is_data:
            text = self.cells[at].statement(direction, self._gradient, self._tangent)
            if not fusable(text, FUSED_BANKS):
                break
            statements.append(text)
            cycles.append(cycles[-1] + self.cells[at].cycles)
            at += direction
        block = None
        if len(statements) >= MIN_FUSED:
            exec(fused_code(tuple(statements), FUSED_BANKS), self._namespace)  # noqa: S102
            block = (self._namespace.pop("_block"), len(statements), cycles)
        self._fused[key] = block
        return block

    def _function(self, cell: Decoded, direction: int) -> Callable:
        text = cell.statement(direction, self._gradient, self._tangent)
        function = self._functions.get(text)
        if function is None:
            exec(compile_template(text, BANKS), self._namespace)  # noqa: S102 - table text
            function = self._functions[text] = self._namespace.pop("_cell")
        return function

    # --- host access ---------------------------------------------------------

    def _lane_values(self, values: Any) -> Any:
        xp = self.xp
        if isinstance(values, int):
            return xp.full(self.lanes, values & self.fmt.mask, dtype=xp.uint64)
        if isinstance(values, (list, tuple)):
            values = xp.asarray([int(v) & self.fmt.mask for v in values], dtype=xp.uint64)
        array = xp.asarray(values)
        if array.shape not in ((self.lanes,), ()):
            raise ValueError(f"expected {self.lanes} lane values, got shape {array.shape}")
        if array.dtype == xp.uint64:
            words = array
        else:
            words = xp.astype(xp.astype(array, xp.int64), xp.uint64)
        return xp.asarray(xp.broadcast_to(words & xp.uint64(self.fmt.mask), (self.lanes,)),
                          copy=True)

    def set_register(self, register: int, values: Any) -> None:
        """Store integers (one per lane, or one for all; signed or unsigned), mod 2**W."""
        words = self._lane_values(values)
        if register == 0:
            if bool(self.xp.any(words != 0)):
                raise ValueError("$0 always reads zero and cannot be set")
            return
        self._rows[register] = words

    def register(self, register: int, *, signed: bool = False) -> Any:
        """Every lane's word in a register (a copy); ``signed`` reads two's complement."""
        row = self.xp.asarray(self._rows[register], copy=True)
        return self._signed(row) if signed else row

    @property
    def registers(self) -> Any:
        """All registers as one ``(32, lanes)`` array (a copy)."""
        return self.xp.stack(self._rows)

    def set_memory(self, address: int, values: Any) -> None:
        if not 0 <= address < self.memory_words:
            raise ValueError(f"address {address} is outside memory (0..{self.memory_words - 1})")
        if address < len(self.image) and self.image.is_code[address]:
            raise ValueError(f"address {address} holds an instruction ({self._where(address)})")
        self.MEM.rows[address] = self._lane_values(values)

    def memory(self, address: int, *, signed: bool = False) -> Any:
        row = self.xp.asarray(self.MEM.word(address), copy=True)
        return self._signed(row) if signed else row

    def _signed(self, row: Any) -> Any:
        xp = self.xp
        s = xp.astype(row, xp.int64)
        return s if self.width == 64 else s - ((s & (1 << 31)) << 1)

    # --- running --------------------------------------------------------------

    def run(self, direction: int = 1, *, progress: Progress | None = None) -> None:
        """Run every lane forward from START (or backward from FINISH) until each halts or faults."""
        start = run_start(self.image, direction)
        xp = self.xp
        self.pc = xp.full(self.lanes, start, dtype=xp.int64)
        self.br = xp.zeros(self.lanes, dtype=xp.int64)
        self.direction = xp.full(self.lanes, direction, dtype=xp.int64)
        self.steps = xp.zeros(self.lanes, dtype=xp.int64)
        self.cycles = xp.zeros(self.lanes, dtype=xp.int64)
        self.status = xp.full(self.lanes, RUNNING, dtype=xp.int8)
        self._fault_event = xp.full(self.lanes, -1, dtype=xp.int32)
        self._fault_events = []
        self.resume(progress=progress)

    def run_back(self, *, progress: Progress | None = None) -> None:
        """Turn the lanes that halted (at their FINISH) around and run them back to START.

        The host protocol's second pass (``sim/reference/gradient.py``): BR = 0,
        DIR = -1, fresh step counts; lanes that faulted stay stopped.
        """
        xp = self.xp
        halted = self.status == HALTED
        self.br = xp.where(halted, 0, self.br)
        self.direction = xp.where(halted, -1, self.direction)
        self.steps = xp.where(halted, 0, self.steps)
        self.cycles = xp.where(halted, 0, self.cycles)
        self.status = xp.where(halted, xp.int8(RUNNING), self.status)
        self.resume(progress=progress)

    def resume(self, *, progress: Progress | None = None) -> None:
        """Go on until every lane has halted or faulted.

        The waiting lanes are kept in a queue keyed by (DIR, PC) in scheduling order
        (forward lanes by lowest PC, then backward lanes by highest PC); a round pops
        the first key, runs those lanes, and files only them again under their new
        keys, so a round costs the size of its group, not of the whole batch.
        """
        xp = self.xp
        self._uniform = None
        queue: dict[int, list] = {}
        running = xp.nonzero(self.status == RUNNING)[0]
        waiting = self._file(queue, running, everything=len(running) == self.lanes)
        while queue:
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
        if progress is not None:
            progress(self.lanes)

    @property
    def halted(self) -> Any:
        return self.status == HALTED

    @property
    def faulted(self) -> Any:
        return self.status == FAULTED

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
        BR: Any = xp.asarray(br_in, copy=True) if landed else 0  # noqa: N806
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
                    function, count, cycles = block
                    stopped = self._run_fused(function, n)
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
                self._keep_done_statements(group, banks)
                self._execution_faults(group, cell, direction, executed, spent)
                if not bool(xp.any(ok)):
                    return
            self._commit(group, ok, banks)
            if ok is not None:
                lanes = xp.nonzero(ok)[0] if full else lanes[ok]
                full = False
                n = len(lanes)
                group = Group(lanes, False, n)
                br_in = br_in[ok]
                if hasattr(BR, "dtype"):
                    BR = BR[ok]  # noqa: N806
                if hasattr(br_out, "shape") and br_out.shape:
                    br_out = br_out[ok]
                if hasattr(dir_out, "shape") and dir_out.shape:
                    dir_out = dir_out[ok]
            executed += 1
            spent += cell.cycles
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
                      zip(banks, views, tiles) if rows is not None
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
            index, kept = ctx.guard
            for rows, register, row in reversed(kept):
                rows[register] = row
            return index
        finally:
            ctx.strict, ctx.guard = False, None

    def _keep_done_statements(self, group: Group, banks: list) -> None:
        """A lane that faults in a template's k-th statement keeps statements 0..k-1,
        as the reference's ``exec`` of the whole template does (gradient mode)."""
        for mask, _kind, _describe, statement in self._ctx.events:
            if statement == 0:
                continue
            target = mask if group.full else group.lanes[mask]
            for bank in banks:
                bank.commit_before(mask, statement, target)

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
            if ((cell.kind == "finish" and dir_out > 0)
                    or (cell.kind == "start" and dir_out < 0)):
                self.status[lanes] = HALTED
                return
            target = cell.pc + (br_out * dir_out if br_out else dir_out)
            self.pc[lanes] = target
            if group.full and br_out == 0:
                self._uniform = (target, dir_out)
            return
        if hasattr(br_out, "dtype") and br_out.shape == (n,):
            br_new = br_out if br_out.dtype == xp.int64 else xp.astype(br_out, xp.int64)
        else:
            br_new = xp.full(n, int(br_out), dtype=xp.int64)
        # DIR is usually one Python int for the whole group (only RBRA changes it).
        dir_new = dir_out if type(dir_out) is int else xp.astype(
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
                                  lambda lane, j, s=sources: self._uncaught_message(
                                      lane, pc, s[j], direction))
        if cell.kind in ("finish", "start") and type(dir_new) is int:
            dir_new = xp.full(n, dir_new, dtype=xp.int64)
        if cell.kind in ("finish", "start"):
            halt = (dir_new > 0) if cell.kind == "finish" else (dir_new < 0)
            if stopped is not None:
                halt = halt & ~stopped
            self.status[some(halt)] = HALTED
            stopped = halt if stopped is None else (stopped | halt)
        if type(dir_new) is int:
            step = br_new * dir_new if dir_new != 1 else br_new
            step = xp.where(br_new != 0, step, dir_new)
        else:
            step = xp.where(br_new != 0, br_new * dir_new, dir_new)
        if stopped is None:
            self.pc[lanes] = pc + step
        else:
            moving = ~stopped
            self.pc[some(moving)] = pc + step[moving]

    # --- faults -----------------------------------------------------------------

    def _absolute(self, group: Group, mask: Any) -> Any:
        xp = self.xp
        lanes = xp.arange(self.lanes) if group.full else group.lanes
        return lanes if mask is None else lanes[mask]

    def _lane_faults(self, lanes: Any, kind: str,
                     describe: Callable[[int, int], tuple[str, dict]]) -> None:
        """Stop ``lanes`` with a fault; ``describe(lane, position)`` makes its message."""
        xp = self.xp
        lanes = xp.asarray(lanes)
        listed = lanes.tolist()
        event = len(self._fault_events)
        self._fault_events.append(_Fault(kind, lambda j: describe(listed[j], j)))
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
        for mask, kind, detail, _statement in self._ctx.events:
            lanes = self._absolute(group, mask)
            positions = xp.nonzero(mask)[0].tolist()
            self._lane_faults(lanes, kind, lambda lane, j, p=positions, d=detail: (
                f"{cell.text}{going} at {where}: {d(p[j])}", {}))
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

    def _where(self, pc: int) -> str:
        location = self.image.location(pc)
        return f"line {location.line} (pc {pc})" if location else f"pc {pc}"

    def _step_limit_message(self, lane: int, j: int) -> tuple[str, dict]:
        pc = int(self.pc[lane])
        return (f"the run did not halt within {self.max_steps} steps; it was at "
                f"{self._where(pc)}", {})

    def _illegal_message(self, lane: int, j: int) -> tuple[str, dict]:
        pc, br, direction = int(self.pc[lane]), int(self.br[lane]), int(self.direction[lane])
        cell = self.cells[pc] if 0 <= pc < len(self.cells) else None
        if cell is None:
            what = f"pc {pc} is outside the program (0..{len(self.image) - 1})"
        else:
            what = f"{self._where(pc)} {cell.illegal}"
        extra: dict = {}
        if br:
            source = pc - br * direction
            what += f" (reached by the jump from {self._where(source)})"
            extra = dict(landing_pc=pc, jump_source_pc=source,
                         jump_source_location=self.image.location(source))
        elif cell is None:
            what += " (the program ran off its end: no FINISH/START stopped it)"
        return what, extra

    def _uncaught_message(self, lane: int, landing: int, br_in: int,
                          direction: int) -> tuple[str, dict]:
        source = landing - br_in * direction
        br = int(self.br[lane])
        message = (f"jump from {self._where(source)} landed on {self._where(landing)}, "
                   f"which does not catch it: BR is still {br} after the landing instruction")
        return message, dict(landing_pc=landing, jump_source_pc=source,
                             jump_source_location=self.image.location(source))

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
        pc = int(self.pc[lane])
        cell = self.cells[pc] if 0 <= pc < len(self.cells) else None
        return MachineFault(record.kind, message, pc=pc, location=self.image.location(pc),
                            br=int(self.br[lane]), direction=int(self.direction[lane]),
                            registers=tuple(int(r[lane]) for r in self._rows),
                            step=int(self.steps[lane]), width=self.width,
                            instruction_text=cell.text if cell else "", **extra)

    # --- per-lane views -----------------------------------------------------------

    def output(self, lane: int) -> list[int]:
        """Every word SHOW or EMIT displayed on ``lane``, in order."""
        xp = self.xp
        out = []
        for lanes, values in self._outputs:
            at = int(xp.searchsorted(lanes, lane))
            if at < len(lanes) and int(lanes[at]) == lane:
                out.append(int(values[at]))
        return out

    def emitted(self, lane: int) -> tuple[int, ...]:
        depth = int(self._tape_length[lane])
        return tuple(int(w) for w in self._tape[:depth, lane].tolist())

    def snapshot(self, lane: int) -> Snapshot:
        """One lane's architectural state, comparable with the reference's ``snapshot()``."""
        memory = tuple(int(self.MEM.rows[a][lane]) if a in self.MEM.rows
                       else (self.MEM.initial[a] if a < len(self.MEM.initial) else 0)
                       for a in range(self.memory_words))
        return Snapshot(tuple(int(r[lane]) for r in self._rows), memory, int(self.br[lane]),
                        int(self.direction[lane]), int(self.pc[lane]), self.emitted(lane))
