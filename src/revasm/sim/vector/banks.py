"""Registers and memory as the templates see them on a group of lanes.

``R[3]`` reads register 3 of every lane in the group; ``MEM[i]`` reads, for
each lane, the word at that lane's address ``i[j]``.  Writes are *buffered*
until the instruction has finished on every lane: the engine then commits
them only for the lanes that did not fault, which is how a faulting lane is
left exactly as the reference leaves it (the instruction without effect)
while the others go on.

When the group is every lane of the machine (converged SIMT, the common case)
reads return the stored rows themselves and a commit rebinds the row, so a
straight-line instruction costs its arithmetic and nothing else.  Rows are
never changed in place while shared: a committed array that is also stored
elsewhere (``SWAP``, ``EXCH``) is copied first.
"""
from __future__ import annotations

from typing import Any

from revasm.isa.adjoint import BANKS as GRADIENT_BANKS

from .words import MASK64

#: The banks a template may index, in the order the compiled functions take them:
#: the values, then the gradient-mode banks of ``isa/adjoint.py`` (names ending in
#: ``M`` are memory-like), then ``OV``, the overflow counter (a bank of one row).
BANKS = ("R", "MEM", *GRADIENT_BANKS, "OV")


class Group:
    """The lanes one instruction runs on: every lane (``full``) or an index array."""

    __slots__ = ("lanes", "full", "n", "reads")

    def __init__(self, lanes: Any, full: bool, n: int) -> None:
        self.lanes = lanes
        self.full = full
        self.n = n
        self.reads: set[int] = set()

    def take(self, row: Any) -> Any:
        if self.full:
            self.reads.add(id(row))
            return row
        return row[self.lanes]


def as_row(value: Any, n: int, xp: Any) -> Any:
    """A template result as a ``uint64`` array of the group's length."""
    if not hasattr(value, "dtype"):
        return xp.full(n, int(value) & MASK64, dtype=xp.uint64)
    if value.dtype != xp.uint64:
        value = xp.astype(value, xp.uint64)
    if value.shape != (n,):
        value = xp.broadcast_to(value, (n,))
        value = xp.asarray(value, copy=True)
    return value


def _copy(value: Any, xp: Any) -> Any:
    return xp.asarray(value, copy=True) if hasattr(value, "dtype") else value


class RegisterBank:
    """A register-like bank (``R``, and later the gradient banks): rows indexed by number."""

    def __init__(self, rows: list, xp: Any) -> None:
        self.rows = rows
        self.xp = xp
        self.group: Group | None = None
        self.writes: dict[int, Any] = {}
        self.pool: Any = None

    def bind(self, group: Group) -> None:
        self.group = group
        self.writes = {}

    def __getitem__(self, register: int) -> Any:
        value = self.writes.get(register)
        if value is not None:
            return value
        group = self.group
        assert group is not None, "bind(group) first"
        return group.take(self.rows[register])

    def __setitem__(self, register: int, value: Any) -> None:
        self.writes[register] = value

    def own_values(self) -> None:
        """Copy every buffered value: a value may be a stored row itself (``R[1]`` read by
        ``R[1], MEM[i] = MEM[i], R[1]``), which a scatter into that row would change."""
        self.writes = {register: _copy(value, self.xp)
                       for register, value in self.writes.items()}

    def commit(self, ok: Any, target: Any, seen: set[int] | None) -> None:
        """Store the buffered writes: rebind (``seen`` given) or scatter into ``target``."""
        group, xp = self.group, self.xp
        assert group is not None, "bind(group) first"
        for register, value in self.writes.items():
            value = as_row(value, group.n, xp)
            if seen is not None:
                if id(value) in seen:
                    value = xp.asarray(value, copy=True)
                seen.add(id(value))
                if self.pool is not None:
                    self.pool.replace(self.rows, register, value)
                else:
                    self.rows[register] = value
            else:
                self.rows[register][target] = value if ok is None else value[ok]


class _Rows(dict):
    """A memory bank's rows by address; an address read for the first time gets its
    row made (the image's word in every lane), as fused blocks index rows directly."""

    def __init__(self, bank: MemoryBank) -> None:
        super().__init__()
        self.bank = bank

    def __missing__(self, address: int) -> Any:
        return self.bank.row(address)


class TileRows(dict):
    """A memory bank's rows seen through the lanes ``start:stop`` of one tile: a fused
    block reads views and stores whole tile rows, which ``written`` lists for the copy
    back into the bank's rows."""

    def __init__(self, rows: dict, start: int, stop: int) -> None:
        super().__init__()
        self.rows, self.start, self.stop = rows, start, stop
        self.viewed: dict[int, Any] = {}

    def __missing__(self, address: int) -> Any:
        view = self.viewed[address] = self.rows[address][self.start:self.stop]
        self[address] = view
        return view

    def written(self) -> list[tuple[Any, Any]]:
        """(full row, tile value) for every address whose tile row was replaced."""
        return [(self.rows[address], value) for address, value in self.items()
                if value is not self.viewed.get(address)]


class MemoryBank:
    """A memory-like bank (``MEM``): one row per address, made when first touched.

    Addresses never touched keep the image's word in every lane without
    storage, so a 65536-word memory costs only the words a program uses.
    """

    def __init__(self, initial: list[int], lanes: int, xp: Any) -> None:
        self.initial = initial
        self.lanes = lanes
        self.xp = xp
        self.rows: dict[int, Any] = _Rows(self)
        self.group: Group | None = None
        self.writes: list[tuple[Any, Any]] = []
        self.pool: Any = None

    def row(self, address: int) -> Any:
        row = self.rows.get(address)
        if row is None:
            word = self.initial[address] if address < len(self.initial) else 0
            row = self.rows[address] = self.xp.full(self.lanes, word, dtype=self.xp.uint64)
        return row

    def word(self, address: int) -> Any:
        """Every lane's word at ``address`` (read-only view or broadcast)."""
        row = self.rows.get(address)
        if row is not None:
            return row
        word = self.initial[address] if address < len(self.initial) else 0
        return self.xp.full(self.lanes, word, dtype=self.xp.uint64)

    def bind(self, group: Group) -> None:
        self.group = group
        self.writes = []

    def _uniform(self, index: Any) -> int | None:
        if not hasattr(index, "dtype"):
            return int(index)
        first = int(index[0])
        return first if bool(self.xp.all(index == first)) else None

    def __getitem__(self, index: Any) -> Any:
        group, xp = self.group, self.xp
        assert group is not None, "bind(group) first"
        address = self._uniform(index)
        if address is not None:
            value = group.take(self.row(address))
        else:
            value = xp.empty(group.n, dtype=xp.uint64)
            for a in xp.unique_values(index).tolist():
                here = index == a
                value[here] = group.take(self.row(int(a)))[here]
        for written_index, written in self.writes:  # this instruction's own earlier writes
            same = written_index == index
            value = xp.where(same, as_row(written, group.n, xp), value)
        return value

    def __setitem__(self, index: Any, value: Any) -> None:
        self.writes.append((index, value))

    def own_values(self) -> None:
        """Copy every buffered value (see ``RegisterBank.own_values``)."""
        self.writes = [(index, _copy(value, self.xp)) for index, value in self.writes]

    def commit(self, ok: Any, target: Any, seen: set[int] | None) -> None:
        group, xp = self.group, self.xp
        assert group is not None, "bind(group) first"
        for index, value in self.writes:
            value = as_row(value, group.n, xp)
            address = self._uniform(index)
            if address is not None:
                if seen is not None:
                    if id(value) in seen:
                        value = xp.asarray(value, copy=True)
                    seen.add(id(value))
                    if self.pool is not None:
                        self.pool.replace(self.rows, address, value)
                    else:
                        self.rows[address] = value
                else:
                    self.row(address)[target] = value if ok is None else value[ok]
                continue
            for a in xp.unique_values(index).tolist():
                here = index == a
                if ok is not None:
                    here = here & ok
                if group.full:
                    self.row(int(a))[here] = value[here]
                else:
                    self.row(int(a))[group.lanes[here]] = value[here]
