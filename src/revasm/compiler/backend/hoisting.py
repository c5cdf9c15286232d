"""Bounds guards hoisted out of loops: an index checked once for the whole loop (-O2).

A bounds guard costs six instructions (the index into a scratch register, a branch to a
trap pad below zero, one at or above the extent, and the uncomputation) at every access
whose index the compiler cannot bound statically -- every iteration of ``theta[k]`` in
the Givens network, ``x[i, 0]`` in the GMM's inner loop.  When an access happens on
every iteration (a statement of the loop's body itself, not inside an ``if``, a
``while`` or an inner loop) and its index is affine in

* the loop's variable (which moves by the step each iteration),
* variables the body never writes, and
* variables the body changes only by constant steps at its own level (``k += 1``):
  they move by the same amount each iteration,

then its index moves by the same amount D every iteration, so over the loop's T
iterations it takes the values between its first one and its first plus (T - 1) * D:
checking those two ends once, at the loop's entry, is checking every access.  For a
loop with variable bounds (T may be 0) the check is skipped by a paired branch when the
range is empty.  An access whose guard was hoisted keeps no guard of its own
(``bounds_guard`` asks :meth:`HoistLowering.is_hoisted`).

A program whose index leaves its array still faults, with the same message at the same
source line, but at the loop's entry rather than at the iteration that would reach the
bad element: before the loop's body has run (docs/language.md, *Optimisation levels*).
Guards compute nothing the program keeps, so values and gradients do not change.  A
mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from .code import Instr
from .guards import index_nodes
from .lowering_state import FunctionLoweringState
from .pointers import affine, const_step, written

#: A hoisted check: (statement id, element id, dimension).
HoistKey = tuple[int, int, int]


def statement_exprs(s: ir.Stmt) -> list[ir.Expr]:
    """The expressions whose elements a statement's guards check (``statement_guards``)."""
    if isinstance(s, ir.Update):
        return [s.target, s.expr]
    if isinstance(s, ir.Swap):
        return [s.a, s.b]
    if isinstance(s, ir.Rot):
        return [s.a, s.b, s.theta]
    if isinstance(s, (ir.Alloc, ir.Free)):
        return [s.value]
    if isinstance(s, ir.Call):
        return list(s.args)
    if isinstance(s, ir.Show):
        return list(s.values)
    if isinstance(s, ir.If):
        return [s.pre]
    return []


def _every_iteration(body: list[ir.Stmt], steps: dict[str, int]
                     ) -> Iterator[tuple[ir.Stmt, dict[str, int]]]:
    """The simple statements ``body`` runs on every pass, in order, each with the constant
    steps its variables have taken before it in that pass (``steps`` is updated)."""
    for s in body:
        if isinstance(s, (ir.Routine, ir.Block)) and not getattr(s, "inverted", False):
            yield from _every_iteration(s.body, steps)
            continue
        if isinstance(s, ir.If):
            yield s, dict(steps)  # its condition, tested on every pass (not its branches)
            continue
        if isinstance(s, (ir.While, ir.For, ir.Unroutine, ir.Block)):
            continue
        yield s, dict(steps)
        step = const_step(s)
        if step is not None:
            steps[step[0]] = steps.get(step[0], 0) + step[1]


def _top_level_steps(body: list[ir.Stmt]) -> dict[str, int]:
    """Variable -> its constant steps per pass of ``body`` at the body's own level."""
    steps: dict[str, int] = {}
    for _ in _every_iteration(body, steps):
        pass
    return steps


def _nested_writes(body: list[ir.Stmt]) -> set[str]:
    """Variables written inside the compound statements of ``body`` (conditionally, or a
    number of times the pass does not fix)."""
    out: set[str] = set()
    for s in body:
        if isinstance(s, (ir.Routine, ir.Block)) and not getattr(s, "inverted", False):
            out |= _nested_writes(s.body)
        elif isinstance(s, (ir.If, ir.While, ir.For, ir.Unroutine, ir.Block)):
            inner = [getattr(s, a) for a in ("head", "body", "then", "orelse")
                     if isinstance(getattr(s, a, None), list)]
            for block in inner:
                stepped, other, _ = written(block)
                out |= stepped | other
            if isinstance(s, ir.For):
                out.add(s.var)
    return out


class HoistLowering(FunctionLoweringState):
    """Guards of a loop's every-iteration accesses, checked once at its entry."""

    #: the checks hoisted out of the loops being lowered
    hoisted: set[HoistKey]
    #: the statement whose guards are being made (``function_lowering.stmt``)
    current: ir.Stmt | None

    def is_hoisted(self, e: ir.Index, dim: int) -> bool:
        current = self.current
        return current is not None and (id(current), id(e), dim) in self.hoisted

    def hoisted_guards(self, s: ir.For, stop: ir.Expr) -> list[Instr]:
        """The bounds guards of ``s``'s every-iteration accesses, for its first and last
        iteration, to run once the counter holds its start (``stop``: the bound as the
        loop tests it, maybe held in a register)."""
        if self.p.level < 2 or not self.p.check("bounds"):
            return []
        stepped, other, _ = written(s.body)
        if s.var in other or s.var in stepped:
            return []
        moving = {v: d for v, d in _top_level_steps(s.body).items()
                  if v in stepped and v not in _nested_writes(s.body)}
        fixed = lambda name: name not in stepped and name not in other  # noqa: E731
        trips = None
        if isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const):
            trips = int((s.stop.value - s.start.value) / s.step)
            if trips <= 0:
                return []
        elif abs(s.step) != 1:
            return []
        checks: list[tuple[ir.Expr, ir.Expr, ir.Index, int, int]] = []
        keys: list[HoistKey] = []
        for stmt, before in _every_iteration(s.body, {}):
            for e in (n for x in statement_exprs(stmt) for n in index_nodes(x)):
                shape = self.shape_of(e.name)
                if shape is None:
                    continue
                for dim, (index, extent) in enumerate(zip(e.indices, shape)):
                    if isinstance(index, ir.Const):
                        continue
                    form = affine(index)
                    if form is None or not all(
                            v == s.var or v in moving or (fixed(v) and v in self.lay.scalars)
                            for v in form if v):
                        continue
                    known = self.interval(index)
                    if known is not None and known[0] >= 0 and known[1] <= extent - 1:
                        continue  # proven: bounds_guard drops it anyway
                    per_pass = form.get(s.var, 0) * s.step + sum(
                        c * moving.get(v, 0) for v, c in form.items() if v and v != s.var)
                    offset = sum(c * before.get(v, 0) for v, c in form.items()
                                 if v and v != s.var)
                    first = _plus(index, offset)
                    if trips is not None:
                        last = _plus(index, offset + (trips - 1) * per_pass)
                    else:  # T = (stop - start) * step
                        span = ir.BinOp(index.pos, op="-", left=stop, right=s.start)
                        last = ir.BinOp(index.pos, op="+", left=_plus(index, offset - per_pass),
                                        right=ir.BinOp(index.pos, op="*", left=span,
                                                       right=_const(index.pos,
                                                                    per_pass * s.step)))
                    low, high = (first, last) if per_pass >= 0 else (last, first)
                    checks.append((low, high, e, dim, extent))
                    keys.append((id(stmt), id(e), dim))
        if not checks:
            return []

        def emit() -> list[Instr]:
            code: list[Instr] = []
            for low, high, e, dim, extent in checks:
                code += self.value_guard(low, e, dim, extent, low=True, high=False)
                code += self.value_guard(high, e, dim, extent, low=False, high=True)
            return code
        mark = self.scratch_top
        try:
            code = emit() if trips is not None else self.unless_empty(s, stop, emit)
        except CompileError:  # out of scratch registers (spilled variables): check in place
            self.scratch_top = mark
            return []
        self.hoisted.update(keys)
        return code

    def unless_empty(self, s: ir.For, stop: ir.Expr,
                     build: Callable[[], list[Instr]]) -> list[Instr]:
        """``build()``'s code, skipped when the loop runs no iteration (the counter, at
        its start, equals ``stop``): a paired branch over it (docs/abi.md).  A counter or
        bound kept in memory is in a register only for the two branches, so that the
        guards in between, which read it by its place, find it there."""
        mark = self.scratch_top
        try:
            bound, setup, teardown = self.operand(stop, ir.INT)
            counter, counter_setup, counter_teardown = self.place(ir.Var(s.pos, name=s.var))
            skip, back = self.label("skip"), self.label("guards")
            pos = s.pos
            jump = self.i("BEQ", counter, bound, skip, pos=pos, role="check", label=back,
                          note="no iteration: no index to check")
            land = self.i("BEQ", counter, bound, back, pos=pos, role="check", label=skip)
            # the guards read the counter and the bound where they live: one kept in
            # memory goes back there around them (it is moved out only for the branches)
            held, released = setup + counter_setup, counter_teardown + teardown
            return held + [jump] + released + build() + held + [land] + released
        finally:
            self.scratch_top = mark


def _const(pos: SourcePos, value: int) -> ir.Const:
    return ir.Const(pos, value=Fraction(value), is_int=True)


def _plus(e: ir.Expr, value: int) -> ir.Expr:
    return e if value == 0 else ir.BinOp(e.pos, op="+", left=e, right=_const(e.pos, value))
