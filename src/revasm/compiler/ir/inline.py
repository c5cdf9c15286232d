"""Inlining small straight-line functions at their call sites (before lowering).

A portal call costs two register saves per caller variable, the argument moves
and the portal itself (docs/abi.md) -- about 90 instructions for NiLang's
three-instruction ``imul``.  A callee whose body is a few updates, SWAPs and
ROTs (no ancillas, calls or control flow) is instead substituted at the call:
its parameters renamed to the caller's argument variables, and an uncall
``~f(args)`` becomes the inverted body.  The instructions are the callee's,
positioned at the callee's lines, so the source map and faults are unchanged.

Only calls whose arguments are distinct variables of exactly the parameter's
type are inlined (a portal moves raw words, so an ``Int`` passed as ``Fixed``
would read differently when substituted); everything else stays a call.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from . import nodes as ir
from .inverse import invert_block

#: A callee with at most this many statements is inlined.
MAX_INLINE_STATEMENTS = 8
_STRAIGHT = (ir.Update, ir.Swap, ir.Rot)


def inline_calls(module: ir.Module) -> ir.Module:
    """A copy of ``module`` with calls of small straight-line functions inlined."""
    small = {name: f for name, f in module.functions.items()
             if len(f.body) <= MAX_INLINE_STATEMENTS and
             all(isinstance(s, _STRAIGHT) for s in f.body)}
    if not small:
        return module
    functions = {}
    for name, f in module.functions.items():
        types = ir.declared_types(f, module)
        functions[name] = replace(f, body=_block(f.body, small, types))
    return replace(module, functions=functions)


def _block(body: list[ir.Stmt], small: dict[str, ir.Function],
           types: Mapping[str, object]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Call) and s.func in small and _inlinable(s, small[s.func], types):
            callee = small[s.func]
            names = {p.name: a.name for p, a in zip(callee.params, s.args)
                     if isinstance(a, ir.Var)}  # every argument is (_inlinable)
            code = [_substitute_stmt(x, names) for x in callee.body]
            out += invert_block(code) if s.uncall else code
            continue
        changes: dict[str, Any] = {attr: _block(getattr(s, attr), small, types)
                   for attr in ("head", "body", "then", "orelse")
                   if isinstance(getattr(s, attr, None), list)}
        out.append(replace(s, **changes) if changes else s)
    return out


def _inlinable(s: ir.Call, callee: ir.Function, types: Mapping[str, object]) -> bool:
    if len(s.args) != len(callee.params):
        return False
    names = [a.name for a in s.args if isinstance(a, ir.Var)]
    if len(names) != len(s.args) or len(set(names)) != len(names):
        return False
    return all(isinstance(a, ir.Var) and types.get(a.name) == p.type
               for a, p in zip(s.args, callee.params))


def _substitute_stmt(s: ir.Stmt, names: dict[str, str]) -> ir.Stmt:
    changes: dict[str, Any] = {f.name: _substitute(getattr(s, f.name), names)
                               for f in fields(s) if isinstance(getattr(s, f.name), ir.Expr)}
    return replace(s, **changes)


def _substitute(e: ir.Expr, names: dict[str, str]) -> ir.Expr:
    """``e`` with every parameter name replaced by the caller's variable."""
    if isinstance(e, ir.Var):
        return replace(e, name=names.get(e.name, e.name))
    changes: dict[str, Any] = {}  # field -> its new value (an Expr, a tuple of them, a name)
    for f in fields(e):
        value = getattr(e, f.name)
        if isinstance(value, ir.Expr):
            changes[f.name] = _substitute(value, names)
        elif isinstance(value, tuple) and value and all(isinstance(v, ir.Expr) for v in value):
            changes[f.name] = tuple(_substitute(v, names) for v in value)
    if isinstance(e, ir.Index):
        changes["name"] = names.get(e.name, e.name)
    return replace(e, **changes) if changes else e
