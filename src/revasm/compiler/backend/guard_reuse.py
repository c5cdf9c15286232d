"""Bounds guards made once per stretch of straight-line code (-O2).

A bounds guard costs six instructions, and a function that reads several arrays at one
index guards that index at every access: the GMM's ``main_term`` checks ``k`` against
K eleven times per call (``means[k, 0]``, ``qd[k, 1]``, ``icf[k, 2]``, ``alphas[k]``
... in the routine, and again in its uncomputation).  Between two guards of the same
index expression against the same extent, where no statement writes a variable the
index reads, the index has the same value: a guard in between can never fault where
the two around it pass.  So in each run of such guards -- straight-line statements
(updates, swaps, rotations, allocations and releases, through routines, their
uncomputation and blocks), ended by any statement that writes a variable of the index
and by any other statement (a call, an ``if``, a loop) -- only the first and the last
guard are made: the first is the one a forward run meets first, the last the one a
backward run meets first, so in either direction the run still faults before its first
access, with the message and the source line it has at -O0.  An index that reads an
array element (which a statement may change without naming it) is left alone.

Guards compute nothing the program keeps (their scratch register is cleared again, and
its gradient word gets back what it gave), so values and gradients do not change.  A
mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Iterator

from ..ir import nodes as ir
from ..ir.inverse import invert_block
from .lowering_state import FunctionLoweringState
from .pointers import written

#: A guard's identity within a run: (the index expression, the extent it is checked
#: against).
GuardKey = tuple[ir.Expr, int]
_STRAIGHT = (ir.Update, ir.Swap, ir.Rot, ir.Alloc, ir.Free)


def _names(e: ir.Expr) -> Iterator[str]:
    """The scalar variables an index expression reads (Index: yields ``""``)."""
    if isinstance(e, ir.Var):
        yield e.name
    elif isinstance(e, ir.Index):
        yield ""
    elif isinstance(e, (ir.BinOp, ir.Compare)):
        yield from _names(e.left)
        yield from _names(e.right)
    elif isinstance(e, ir.Unary):
        yield from _names(e.operand)
    elif isinstance(e, (ir.BoolOp, ir.FuncCall)):
        for value in (e.values if isinstance(e, ir.BoolOp) else e.args):
            yield from _names(value)


def _writes(s: ir.Stmt) -> set[str]:
    """The scalar variables a straight-line statement may change."""
    if isinstance(s, ir.Update):
        return {s.target.name} if isinstance(s.target, ir.Var) else set()
    if isinstance(s, (ir.Swap, ir.Rot)):
        return {x.name for x in (s.a, s.b) if isinstance(x, ir.Var)}
    if isinstance(s, (ir.Alloc, ir.Free)):
        return {s.name}
    return set()


class GuardReuse(FunctionLoweringState):
    """Which bounds guards repeat one made just before and after them."""

    #: statement id -> the guards of that statement made elsewhere in its run
    repeated_guards: dict[int, set[GuardKey]]
    #: Unroutine / inverted Block id -> its body as lowered (one inversion, so the
    #: statements the analysis sees are the ones lowered)
    inverted_bodies: dict[int, list[ir.Stmt]]
    #: the statement whose guards are being made (``function_lowering.stmt``)
    current: ir.Stmt | None
    #: the guards the statement being lowered has made so far
    made_in_statement: set[GuardKey]

    def inverted_body(self, s: ir.Unroutine | ir.Block) -> list[ir.Stmt]:
        """``invert_block(s.body)``, the same statements every time it is asked for."""
        if id(s) not in self.inverted_bodies:
            self.inverted_bodies[id(s)] = invert_block(s.body)
        return self.inverted_bodies[id(s)]

    def find_repeated_guards(self, body: list[ir.Stmt]) -> None:
        """Mark, in every run of ``body``, the guards between the run's first and last."""
        if self.p.level < 2 or not self.p.check("bounds"):
            return
        runs: dict[GuardKey, list[int]] = {}  # key -> ids of the statements in its run
        self._visit_runs(body, runs)
        for key in list(runs):
            self._close_run(key, runs)

    # methods, not closures: a recursive closure is a reference cycle, and one that holds
    # ``self`` kept a whole compilation's objects alive until the cyclic collector ran
    def _close_run(self, key: GuardKey, runs: dict[GuardKey, list[int]]) -> None:
        for sid in runs.pop(key, [])[1:-1]:
            self.repeated_guards.setdefault(sid, set()).add(key)

    def _visit_runs(self, statements: list[ir.Stmt], runs: dict[GuardKey, list[int]]) -> None:
        for s in statements:
            if isinstance(s, ir.Routine) or isinstance(s, ir.Block) and not s.inverted:
                self._visit_runs(s.body, runs)
            elif isinstance(s, (ir.Unroutine, ir.Block)):
                self._visit_runs(self.inverted_body(s), runs)
            elif isinstance(s, _STRAIGHT):
                for key in self._guard_keys(s):
                    runs.setdefault(key, []).append(id(s))
                if not runs:
                    continue  # no run to end (what ``s`` writes is not asked)
                changed = _writes(s)
                for key in [k for k in runs if changed & set(_names(k[0]))]:
                    self._close_run(key, runs)
            elif runs:  # a call, an if, a loop: it ends the runs of what it may write
                # (only while a run is open: ``written`` walks all that is nested in ``s``)
                stepped, other, _ = written([s])
                for key in [k for k in runs if (stepped | other) & set(_names(k[0]))]:
                    self._close_run(key, runs)

    def _guard_keys(self, s: ir.Stmt) -> set[GuardKey]:
        keys: set[GuardKey] = set()
        # (a straight statement's guarded expressions are its ``statement_exprs``)
        for node in self.statement_elements(s):
            if node.name not in self.p.module.tables and node.name not in self.lay.arrays:
                continue
            for index, extent in zip(node.indices, self._shape_of(node.name)):
                if not isinstance(index, ir.Const) and "" not in set(_names(index)):
                    keys.add((index, extent))
        return keys

    def guard_is_repeated(self, e: ir.Index, dim: int) -> bool:
        """Whether the guard of ``e``'s index ``dim`` in the statement being lowered is
        made by the guards at its run's ends, or by an earlier element of the same
        statement (its guards run one after the other, before it)."""
        current = self.current
        if self.p.level < 2 or not isinstance(current, _STRAIGHT):
            return False
        key = (e.indices[dim], self._shape_of(e.name)[dim])
        if key in self.repeated_guards.get(id(current), ()):
            return True
        if key in self.made_in_statement:
            return True
        self.made_in_statement.add(key)
        return False

    def _shape_of(self, name: str) -> tuple[int, ...]:
        if name in self.p.module.tables:
            return self.p.module.tables[name].type.shape
        return self.lay.arrays[name].type.shape
