"""Registers a call leaves alone (-O2): loop bounds held across calls.

A ``for`` loop at -O2 keeps a bound that is not already in a register (``range(K)``'s
5) in a spare register for the whole loop, and then tests once per iteration
(``control_flow.held_bounds``, ``counted_loop``).  A loop whose body calls a function
could not: the callee might use that register.  Lowering callees first answers the
question exactly: a function's *registers* are those its final code names, with those
of everything it calls, and a register outside them keeps its value across the call --
the caller's own registers are pushed and restored around it, a register the callee
never names is simply not touched.  So the loop over the GMM's components, whose body
calls ``main_term``, keeps its stop in a register ``main_term`` does not name, and tests
with two branches instead of the while form's four (and two ``addi`` of the bound).

The held bound is an integer, set and cleared by ``addi``: no fixed-point value, no
gradient word changes.  Recursion (a function in a cycle of calls) has no known register
set; its callers keep the plain form.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ir import nodes as ir
from .code import Instr
from .ir_queries import callees_of


def named_registers(code: Iterable[Instr]) -> frozenset[int]:
    """Every register an instruction of ``code`` names (read, written or tested)."""
    words: set[str] = set().union(*(instr.operands for instr in code))  # each word once
    return frozenset(int(o[1:]) for o in words if o.startswith("$") and o[1:].isdigit())


def callee_first(module: ir.Module, reachable: set[str]) -> list[str]:
    """The functions of ``reachable`` in an order where each comes after the functions
    it calls (a cycle's members after the rest of their callees, in module order)."""
    order: list[str] = []
    state: dict[str, str] = {}
    for name in module.functions:
        if name in reachable:
            _visit_callees_first(name, module, state, order)
    return order


def _visit_callees_first(name: str, module: ir.Module, state: dict[str, str],
                         order: list[str]) -> None:
    # a function, not a recursive closure: that is a reference cycle, and it held the
    # module until the cyclic collector ran (docs/decisions.md, "No cyclic garbage")
    if state.get(name) or name not in module.functions:
        return
    state[name] = "open"
    for callee in callees_of(module.functions[name].body):
        _visit_callees_first(callee, module, state, order)
    state[name] = "done"
    order.append(name)


def registers_with_callees(module: ir.Module, name: str,
                           own: Callable[[str], frozenset[int] | None]
                           ) -> frozenset[int] | None:
    """The registers ``name`` and everything it calls name (``own(f)``: f's code's, None
    while f is not lowered yet); None when one of them is not known (a cycle)."""
    seen: set[str] = set()
    todo = [name]
    out: set[int] = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        registers = own(f)
        if registers is None or f not in module.functions:
            return None
        out |= registers
        todo += list(callees_of(module.functions[f].body))
    return frozenset(out)


def registers_of_calls(module: ir.Module, body: list[ir.Stmt],
                       own: Callable[[str], frozenset[int] | None]) -> frozenset[int] | None:
    """The registers the calls in ``body`` may change (None: not known)."""
    out: set[int] = set()
    for callee in set(callees_of(body)):
        registers = registers_with_callees(module, callee, own)
        if registers is None:
            return None
        out |= registers
    return frozenset(out)
