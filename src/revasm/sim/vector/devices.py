"""The namespace templates run in: the lane vocabulary and the machine's devices.

Every instruction's template and every fused block is compiled into one
namespace per machine: the lane vocabulary (``vocabulary.py``), the word
arithmetic (``words.py``) and the devices the templates call -- ``addr`` (a
memory address per lane, checked; a fused block stops on a bad one), ``show``,
``emit`` and ``unemit`` (output queued until the commit, ``groups.py``), ``overflow``
(an overflow event per lane: a fault when the machine is strict) and
``_store`` (a fused block's write of a whole row).  A mixin of
:class:`~revasm.sim.vector.machine.VectorMachine` (``machine.py``).
"""
from __future__ import annotations

from typing import Any

from revasm.machine.fault_messages import overflow_detail, where
from revasm.machine.faults import Trap

from .banks import as_row
from .state import VectorState
from .vocabulary import GuardTripped, vector_vocabulary
from .words import Arithmetic


class DeviceNamespace(VectorState):
    """The namespace every template and fused block is compiled in."""

    def _make_namespace(self) -> dict[str, Any]:
        xp, ctx, fmt = self.xp, self._ctx, self.fmt
        code_cells = self._code_cells
        code_length = len(self.image)
        namespace: dict[str, Any] = {}
        namespace.update(vector_vocabulary(fmt, xp, ctx))
        namespace.update(Arithmetic(xp, self._pool).namespace())

        def address_problem(word: int) -> str:
            return f"address {word} holds an instruction ({where(self.image, word)}), not data"

        def addr(word: Any) -> Any:
            words = as_row(word, ctx.n, xp)
            if ctx.strict:  # a fused block: one legal address for the whole tile, or stop
                first = int(words[0])
                if (not (first < code_length and code_cells[first])
                        and bool(xp.all(words == first))):
                    return first
                raise GuardTripped("memory-address")
            # Every W-bit word is an address (memory rows are made on first touch); only
            # the image's instruction cells are not data.
            clipped = xp.where(words < code_length, words, xp.uint64(code_length))
            bad = code_cells[xp.astype(clipped, xp.int64)]
            if bool(xp.any(bad)):
                listed = words.tolist()
                ctx.fault(bad, "memory-address", lambda j: address_problem(listed[j]))
                words = xp.where(bad, xp.uint64(code_length), words)
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

        overflow_message = overflow_detail(fmt.name)

        def overflow(flag: Any) -> Any:
            """An overflow event per lane: counted (the flag back), or a fault when strict."""
            if self._strict:
                bad = as_row(flag, ctx.n, xp) != 0
                if bool(xp.any(bad)):
                    ctx.fault(bad, "overflow", lambda j: overflow_message)
            return flag

        pool, u64 = self._pool, xp.uint64
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

        namespace.update(addr=addr, show=show, emit=emit, unemit=unemit, overflow=overflow,
                         _store=store, _snap=ctx.snap, _unsnap=ctx.unsnap)
        return namespace
