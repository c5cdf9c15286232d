"""The values an ``Int`` parameter takes, from every call of its function (-O2).

A function that indexes arrays with its ``Int`` parameters guards every such access,
since the function alone cannot know what its callers pass: the GMM's ``main_term(...,
i, k)`` checks ``x[i, 0]`` against NPTS and ``means[k, 0]`` against K on every call,
though its only caller passes its own loop variable ``k`` (0..K-1) and the ``i`` it got
from ``gmm``'s loop (0..NPTS-1).  This pass walks the call graph from the entry function,
callers before callees, and gives a parameter the union of the values its arguments take
at every call, when every call's argument is known:

* a constant;
* a ``for`` loop's variable, over constant bounds, that its body does not write;
* a parameter of the caller with a known range that the caller never writes.

The parameter itself must not be written by its function (nor passed where a callee may
write it), and no other argument of the call may name the same variable (the callee could
change it through that one).  The entry function's parameters, and those of recursive
functions, stay unknown.  The lowering starts each function with these ranges
(``function_lowering.py``), so the bounds guards they prove go (``guards.bounds_guard``);
no guard that could fault is dropped, and nothing else changes.
"""
from __future__ import annotations

from collections.abc import Iterator

from ..ir import nodes as ir
from .pointers import written

#: function -> Int parameter -> its (lowest, highest) value
ParamRanges = dict[str, dict[str, tuple[int, int]]]


def param_ranges(module: ir.Module, entry: str,
                 changed: dict[str, set[str]] | None = None) -> ParamRanges:
    """The known ranges of every reachable function's ``Int`` parameters.  ``changed``:
    :func:`changed_variables` of the module when the caller has it (without recursion,
    which has no ranges, every order of callees first gives the same sets)."""
    order = _callers_first(module, entry)
    if order is None:
        return {}
    seen: dict[str, dict[str, tuple[int, int] | None]] = {}
    ranges: ParamRanges = {name: {} for name in order}
    changes: dict[str, set[str]] = {}
    for name in reversed(order):  # callees first: a call writes what its callee writes
        changes[name] = changed[name] if changed is not None else \
            _changed(module.functions[name].body, module, changes)
    for name in order:
        f = module.functions[name]
        if name != entry:
            ranges[name] = {p: r for p, r in seen.get(name, {}).items() if r is not None}
        env = {p: r for p, r in ranges[name].items() if p not in changes[name]}
        for call, known in _calls(f.body, env, module, changes):
            callee = module.functions.get(call.func)
            if callee is None:
                continue
            names = [a.name for a in call.args if isinstance(a, ir.Var)]
            record = seen.setdefault(call.func, {})
            for p, arg in zip(callee.params, call.args):
                if p.type != ir.INT:
                    continue
                value = _interval(arg, known)
                if p.name in changes[call.func] or (isinstance(arg, ir.Var) and
                                                     names.count(arg.name) > 1):
                    value = None
                if p.name in record and record[p.name] is None:
                    continue
                if value is None or p.name not in record:
                    record[p.name] = value
                else:
                    old = record[p.name]
                    assert old is not None
                    record[p.name] = (min(old[0], value[0]), max(old[1], value[1]))
    return ranges


def changed_variables(module: ir.Module, order: list[str]) -> dict[str, set[str]]:
    """Function -> the scalar variables its body may change (its parameters among them),
    computed in ``order`` (callees first: a callee not yet computed, in a cycle of calls,
    counts as changing every argument)."""
    changes: dict[str, set[str]] = {}
    for name in order:
        changes[name] = _changed(module.functions[name].body, module, changes)
    return changes


def call_writes(call: ir.Call, module: ir.Module, changes: dict[str, set[str]]) -> set[str]:
    """The variables ``call`` may change: its arguments bound to parameters its callee
    changes, and every variable it passes when one is passed twice."""
    callee = module.functions.get(call.func)
    names = [a.name for a in call.args if isinstance(a, ir.Var)]
    if callee is None or call.func not in changes or len(names) != len(set(names)):
        return set(names)
    return {a.name for p, a in zip(callee.params, call.args)
            if isinstance(a, ir.Var) and p.name in changes[call.func]}


def _interval(e: ir.Expr, known: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if isinstance(e, ir.Const) and e.value.denominator == 1:
        return int(e.value), int(e.value)
    if isinstance(e, ir.Var):
        return known.get(e.name)
    return None


def _changed(body: list[ir.Stmt], module: ir.Module, changes: dict[str, set[str]]
             ) -> set[str]:
    """The scalar variables ``body`` may change: what ``pointers.written`` finds outside
    calls, and of a call's arguments those bound to parameters its callee changes
    (``changes``; an unknown callee changes every argument)."""
    out: set[str] = set()
    for s in body:
        if isinstance(s, ir.Call):
            callee = module.functions.get(s.func)
            for p, arg in zip(callee.params if callee else [], s.args):
                if isinstance(arg, ir.Var) and p.name in changes.get(s.func, {p.name}):
                    out.add(arg.name)
            if callee is None:
                out |= {a.name for a in s.args if isinstance(a, ir.Var)}
            continue
        nested = [getattr(s, a) for a in ("head", "body", "then", "orelse")
                  if isinstance(getattr(s, a, None), list)]
        if not nested:
            stepped, other, _ = written([s])
            out |= stepped | other
            continue
        for inner in nested:
            out |= _changed(inner, module, changes)
    return out


def _calls(body: list[ir.Stmt], known: dict[str, tuple[int, int]], module: ir.Module,
           changes: dict[str, set[str]]
           ) -> Iterator[tuple[ir.Call, dict[str, tuple[int, int]]]]:
    """Every call in ``body``, with the ranges known where it is made."""
    for s in body:
        if isinstance(s, ir.Call):
            yield s, known
        elif isinstance(s, ir.For):
            inner = dict(known)
            inner.pop(s.var, None)
            constant = isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const)
            if constant and s.var not in _changed(s.body, module, changes):
                start, stop = int(s.start.value), int(s.stop.value)  # type: ignore[attr-defined]
                if (stop - start) * s.step > 0:
                    inner[s.var] = (start, stop - 1) if s.step > 0 else (stop + 1, start)
            yield from _calls(s.body, inner, module, changes)
        else:
            for attr in ("head", "body", "then", "orelse"):
                nested = getattr(s, attr, None)
                if isinstance(nested, list):
                    yield from _calls(nested, known, module, changes)


def _callers_first(module: ir.Module, entry: str) -> list[str] | None:
    """The functions reachable from ``entry``, each after every function that calls it;
    None when the calls have a cycle (recursion)."""
    callees: dict[str, set[str]] = {}
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in callees or name not in module.functions:
            continue
        callees[name] = {c.func for c, _ in _calls(module.functions[name].body, {}, module,
                                                   {})}
        todo += list(callees[name])
    order: list[str] = []
    if not _visit_callees(entry, callees, {}, order):
        return None
    return list(reversed(order))


def _visit_callees(name: str, callees: dict[str, set[str]], state: dict[str, int],
                   order: list[str]) -> bool:
    """Depth-first, callees first; False on a cycle (a function, not a recursive closure:
    docs/decisions.md, "No cyclic garbage")."""
    if state.get(name) == 1:
        return False
    if state.get(name) == 2 or name not in callees:
        return True
    state[name] = 1
    for callee in callees[name]:
        if not _visit_callees(callee, callees, state, order):
            return False
    state[name] = 2
    order.append(name)
    return True
