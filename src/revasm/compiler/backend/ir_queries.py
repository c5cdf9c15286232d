"""Questions the lowering asks of the IR: element indices of a shape, callees, zero, sameness."""
from __future__ import annotations

from collections.abc import Iterator

from ..ir import nodes as ir


def index_exprs(shape: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in index_exprs(shape[1:]):
            yield (i, *rest)


def callees_of(body: list[ir.Stmt]) -> Iterator[str]:
    for s in body:
        if isinstance(s, ir.Call):
            yield s.func
        for attr in ("head", "body", "then", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                yield from callees_of(inner)


def is_zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and e.value == 0


def same_expr(a: ir.Expr, b: ir.Expr) -> bool:
    return a == b
