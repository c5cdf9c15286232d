"""Inlining every call of a small non-recursive function (-O2).

A portal call costs the push of each of the caller's registers, the argument moves
through the stack and the portal itself, in each direction (docs/abi.md): a hundred
instructions and more around a body of ten, and a call in a loop pays it every
iteration.  At -O2 a call of a function that is not recursive and holds at most
``MAX_STATEMENTS`` statements is replaced by the function's body (its inverse for an
uncall) with

* each parameter replaced by its argument: a variable or an array by the caller's
  name, an element passed by reference (``sqd[p]``) by that element;
* each of the function's own variables (ancillas, loop variables) renamed
  ``name__fLINE_COL`` after the call's place, so none meets a caller's variable (the
  copy of a routine's call that ``~routine`` holds gets the same names).

A call is inlined only when the substitution means what the call means: arguments of
the parameters' types, no two arguments naming one variable or array (the call's alias
guard would fault on those) unless they are elements at different constant indices, no
element argument whose index reads a variable passed where the function writes (it could
change it), no table element passed where the function writes.  A constant argument
keeps the call: the portal passes it through a scratch register whose gradient word the
function's adjoints then add to, and a gradient pass rounds products of such words, so
the call and its substituted body could differ in the last bit of a gradient
(docs/decisions.md, "Inlining and the gradient bank").

The statements keep the function's source positions, so the source map, faults and
``--by-line`` name the function's lines.  What the static checks proved about the
function's ancillas is carried over to their new names (:func:`carry_proofs`), so their
run-time guards stay away.  The body computes the same operations in the same order on
the same words: values and gradients are bit for bit the call's.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, replace
from typing import Any, Protocol

from ..errors import SourcePos
from . import nodes as ir
from .inverse import invert_block

#: A function with at most this many statements (nested ones counted) is inlined.
MAX_STATEMENTS = 64
#: Inlining stops growing a function past this many statements.
MAX_GROWTH = 2000


class ProofSets(Protocol):
    """The sets of ``frontend/checks.py``'s Proofs that name ancillas."""

    proven: set
    unproven: set
    unproven_names: set


def inline_functions(module: ir.Module, writes: dict[str, set[int]],
                     proofs: ProofSets | None = None) -> ir.Module:
    """A copy of ``module`` with every call of a small non-recursive function inlined,
    innermost first.  ``writes``: function -> the parameters it may change
    (``frontend.checks.written_params``)."""
    graph = {name: set(_callees(f.body)) for name, f in module.functions.items()}
    if not any(graph.values()):
        return module  # no call to inline (and no walk of a long program for nothing)
    recursive = _recursive(graph)
    counter = [0]
    done: dict[str, ir.Function] = {}
    sizes: dict[str, int] = {}  # an inlined function's statements, counted once
    functions = {name: _inlined(name, module, done, recursive, writes, counter, proofs, sizes)
                 for name in module.functions}
    return replace(module, functions=functions)


def _inlined(name: str, module: ir.Module, done: dict[str, ir.Function], recursive: set[str],
             writes: dict[str, set[int]], counter: list[int],
             proofs: ProofSets | None, sizes: dict[str, int]) -> ir.Function:
    """Function ``name`` with its callees inlined (a function, not a closure: a recursive
    closure is a reference cycle, and this one held the module)."""
    if name not in done:
        f = module.functions[name]
        for callee in _callees(f.body):
            if callee not in recursive and callee != name:
                _inlined(callee, module, done, recursive, writes, counter, proofs, sizes)
        body = _block(f.body, module, done, recursive, writes, counter, f, proofs,
                      ir.declared_types(f, module), sizes)
        done[name] = replace(f, body=body)
    return done[name]


def _callees(body: list[ir.Stmt]) -> Iterator[str]:
    for s in body:
        if isinstance(s, ir.Call):
            yield s.func
        for inner in _nested(s):
            yield from _callees(inner)


def _nested(s: ir.Stmt) -> list[list[ir.Stmt]]:
    return [getattr(s, a) for a in ("head", "body", "then", "orelse")
            if isinstance(getattr(s, a, None), list)]


def _recursive(graph: dict[str, set[str]]) -> set[str]:
    """Functions that can reach themselves through calls (``graph``: function -> the
    functions it calls)."""
    out = set()
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            name = todo.pop()
            if name == start:
                out.add(start)
                break
            if name in seen or name not in graph:
                continue
            seen.add(name)
            todo += graph[name]
    return out


def count_statements(body: list[ir.Stmt]) -> int:
    return sum(1 + sum(count_statements(inner) for inner in _nested(s)) for s in body)


def _block(body: list[ir.Stmt], module: ir.Module, done: dict[str, ir.Function],
           recursive: set[str], writes: dict[str, set[int]], counter: list[int],
           caller: ir.Function, proofs: ProofSets | None,
           types: dict[str, ir.ScalarType | ir.ArrayType],
           sizes: dict[str, int]) -> list[ir.Stmt]:
    """``body`` with its calls of small functions inlined.  ``types``: the caller's
    declared variables (found once per function, and the statements of ``out`` counted as
    they come: each had been found again at every call, quadratic in the calls)."""
    out: list[ir.Stmt] = []
    size = 0  # count_statements(out)
    for s in body:
        if isinstance(s, ir.Call) and s.func in done and s.func not in recursive:
            callee = done[s.func]
            names = _bindings(s, callee, types, module, writes.get(s.func, set()))
            if names is not None and _size(callee, sizes) <= MAX_STATEMENTS \
                    and size < MAX_GROWTH and gradient_neutral(callee):
                counter[0] += 1
                # named by the call's place: the copy of a routine's call that ~routine
                # holds gets the same names, as the variables it undoes
                suffix = f"__{s.func}{s.pos.line}_{s.pos.column}"
                local = {name: name + suffix for name in _own_names(callee.body)}
                if proofs is not None:
                    carry_proofs(proofs, callee.name, caller.name, local)
                copies = _int_copies(callee, names, writes.get(s.func, set()), suffix, s.pos)
                for name, (alloc, _free) in copies.items():
                    names[name] = ir.Var(s.pos, name=alloc.name)
                    if proofs is not None:
                        proofs.proven.add((caller.name, alloc.name, s.pos.line, s.pos.column))
                code = [_substitute_stmt(x, names, local) for x in callee.body]
                code = invert_block(code) if s.uncall else code
                inlined = [a for a, _ in copies.values()] + code + \
                    [f for _, f in reversed(list(copies.values()))]
                out += inlined
                size += count_statements(inlined)
                continue
        changes: dict[str, Any] = {
            a: _block(getattr(s, a), module, done, recursive, writes, counter, caller, proofs,
                      types, sizes)
            for a in ("head", "body", "then", "orelse") if isinstance(getattr(s, a, None), list)}
        out.append(replace(s, **changes) if changes else s)
        size += count_statements(out[-1:])
    return out


def _size(f: ir.Function, sizes: dict[str, int]) -> int:
    """``count_statements(f.body)`` of an inlined function, counted once."""
    if f.name not in sizes:
        sizes[f.name] = count_statements(f.body)
    return sizes[f.name]


def _linear(e: ir.Expr) -> bool:
    """Whether ``e`` is added into its target by ADD and SUB alone (no product)."""
    if isinstance(e, (ir.Const, ir.Var, ir.Index)):
        return True
    if isinstance(e, ir.Unary) and e.op == "-":
        return _linear(e.operand)
    return isinstance(e, ir.BinOp) and e.op in ("+", "-") and _linear(e.left) and \
        _linear(e.right)


def _fixed_locals(body: list[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in body:
        if isinstance(s, ir.Alloc) and (s.type == ir.FIXED or isinstance(s.type, ir.ArrayType)
                                        and s.type.element == ir.FIXED):
            out.add(s.name)
        for inner in _nested(s):
            out |= _fixed_locals(inner)
    return out


def gradient_neutral(f: ir.Function) -> bool:
    """Whether inlining ``f`` leaves every gradient word as its portal call does.

    In gradient mode an ancilla's gradient word starts each call from what the previous
    user of its register (or, for a register the caller pushes, of its stack slot) left
    there, and the adjoint of a product into the ancilla rounds that word with the real
    contributions.  Inlined, the ancilla takes a register of the caller: another history.
    Only additions read such a word exactly (what they add in, they take out again), so a
    function whose Fixed ancillas are only added to -- never the target of a product, a
    quotient, a function, a rotation, nor passed to a call -- is inlined; the others stay
    calls (docs/decisions.md, "Inlining and the gradient bank")."""
    own = _fixed_locals(f.body)
    if not own:
        return True

    def named(e: ir.Expr) -> bool:
        return isinstance(e, (ir.Var, ir.Index)) and e.name in own

    for s in _walk_all(f.body):
        if isinstance(s, ir.Update) and named(s.target) and not _linear(s.expr):
            return False
        if isinstance(s, (ir.Alloc, ir.Free)) and s.name in own and not _linear(s.value):
            return False
        if isinstance(s, ir.Rot) and (named(s.a) or named(s.b)):
            return False
        if isinstance(s, ir.Call) and any(named(a) for a in s.args):
            return False
    return True


def _walk_all(body: list[ir.Stmt]) -> Iterator[ir.Stmt]:
    for s in body:
        yield s
        for inner in _nested(s):
            yield from _walk_all(inner)


def carry_proofs(proofs: ProofSets, callee: str, caller: str, renamed: dict[str, str]) -> None:
    """What was proven (or not) about the callee's ancillas, for their inlined names."""
    for keys in (proofs.proven, proofs.unproven):
        for key in list(keys):
            if key[0] == callee and key[1] in renamed:
                keys.add((caller, renamed[key[1]], *key[2:]))
    for key in list(proofs.unproven_names):
        if key[0] == callee and key[1] in renamed:
            proofs.unproven_names.add((caller, renamed[key[1]]))


def _reads(e: ir.Expr) -> set[str]:
    out = {e.name} if isinstance(e, (ir.Var, ir.Index)) else set()
    for child in ir.children(e):
        out |= _reads(child)
    return out


def _bindings(s: ir.Call, callee: ir.Function,
              types: dict[str, ir.ScalarType | ir.ArrayType], module: ir.Module,
              written: set[int]) -> dict[str, ir.Expr] | None:
    """Parameter -> the expression that replaces it, or None when the call must stay one
    (``types``: the caller's variables)."""
    if len(s.args) != len(callee.params):
        return None
    bases: list[str] = []
    names: dict[str, ir.Expr] = {}
    for k, (param, arg) in enumerate(zip(callee.params, s.args)):
        if isinstance(arg, ir.Var):
            if types.get(arg.name) != param.type:
                return None
            if arg.name in module.tables and k in written:
                return None
            bases.append(arg.name)
        elif isinstance(arg, ir.Index):
            array = types.get(arg.name)
            if not (isinstance(array, ir.ArrayType) and array.element == param.type
                    and len(arg.indices) == len(array.shape)):
                return None
            if arg.name in module.tables and k in written:
                return None
            bases.append(arg.name)
        else:
            return None
        names[param.name] = arg
    if len(set(bases)) != len(bases) and not _distinct_elements(s.args):
        return None
    passed = {a.name for k, a in enumerate(s.args) if isinstance(a, ir.Var) and k in written}
    for arg in s.args:
        if isinstance(arg, ir.Index) and any(_reads(i) & passed for i in arg.indices):
            return None
    return names


def _int_copies(callee: ir.Function, names: dict[str, ir.Expr], written: set[int],
                suffix: str, pos: SourcePos) -> dict[str, tuple[ir.Alloc, ir.Free]]:
    """An Int parameter bound to an element the function only reads (``u`` of
    ``sqdistance(d, x, PAIR_U[p], PAIR_V[p])``) is copied into an ancilla around the
    body: read as an index, the element would be loaded, checked and multiplied at every
    access.  Integers carry no gradient, so the copy changes no gradient word."""
    out: dict[str, tuple[ir.Alloc, ir.Free]] = {}
    for k, param in enumerate(callee.params):
        bound = names.get(param.name)
        if param.type == ir.INT and isinstance(bound, ir.Index) and k not in written:
            name = f"{param.name}{suffix}"
            out[param.name] = (ir.Alloc(pos, name=name, type=ir.INT, value=bound),
                               ir.Free(pos, name=name, type=ir.INT, value=bound))
    return out


def _distinct_elements(args: tuple[ir.Expr, ...]) -> bool:
    """Whether the arguments that share an array are all its elements at constant, different
    indices (``g(x[0], x[1])``): places that never meet, as distinct variables."""
    seen: dict[str, set[tuple]] = {}
    whole = {a.name for a in args if isinstance(a, ir.Var)}
    for a in args:
        if not isinstance(a, ir.Index):
            continue
        if a.name in whole or not all(isinstance(i, ir.Const) for i in a.indices):
            return False
        key = tuple(i.value for i in a.indices if isinstance(i, ir.Const))
        if key in seen.setdefault(a.name, set()):
            return False
        seen[a.name].add(key)
    return len(whole) == sum(isinstance(a, ir.Var) for a in args)


def _own_names(body: list[ir.Stmt]) -> set[str]:
    """The variables a function allocates: ancillas and loop variables."""
    out: set[str] = set()
    for s in body:
        if isinstance(s, (ir.Alloc, ir.Free)):
            out.add(s.name)
        elif isinstance(s, ir.For):
            out.add(s.var)
        for inner in _nested(s):
            out |= _own_names(inner)
    return out


def _substitute_stmt(s: ir.Stmt, names: dict[str, ir.Expr], local: dict[str, str]) -> ir.Stmt:
    changes: dict[str, Any] = {}
    for f in fields(s):
        value = getattr(s, f.name)
        if isinstance(value, ir.Expr):
            changes[f.name] = _substitute(value, names, local)
        elif isinstance(value, tuple) and value and all(isinstance(v, ir.Expr) for v in value):
            changes[f.name] = tuple(_substitute(v, names, local) for v in value)
        elif isinstance(value, list) and f.name in ("head", "body", "then", "orelse"):
            changes[f.name] = [_substitute_stmt(x, names, local) for x in value]
    if isinstance(s, (ir.Alloc, ir.Free)) and s.name in local:
        changes["name"] = local[s.name]
    if isinstance(s, ir.For) and s.var in local:
        changes["var"] = local[s.var]
    return replace(s, **changes)


def _substitute(e: ir.Expr, names: dict[str, ir.Expr], local: dict[str, str]) -> ir.Expr:
    if isinstance(e, ir.Var):
        if e.name in local:
            return replace(e, name=local[e.name])
        bound = names.get(e.name)
        return bound if bound is not None else e
    changes: dict[str, Any] = {}
    for f in fields(e):
        value = getattr(e, f.name)
        if isinstance(value, ir.Expr):
            changes[f.name] = _substitute(value, names, local)
        elif isinstance(value, tuple) and value and all(isinstance(v, ir.Expr) for v in value):
            changes[f.name] = tuple(_substitute(v, names, local) for v in value)
    if isinstance(e, ir.Index):
        if e.name in local:
            changes["name"] = local[e.name]
        elif e.name in names:
            bound = names[e.name]
            if not isinstance(bound, ir.Var):  # an array parameter is bound to an array
                raise ValueError(f"array parameter {e.name} bound to {bound}")
            changes["name"] = bound.name
    return replace(e, **changes) if changes else e
