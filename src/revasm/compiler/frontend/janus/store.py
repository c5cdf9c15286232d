"""Main's variables as jana prints its final store: arrays as (nested) lists, stacks as lists.

The compiled program declares each word by name (``x``, ``a.0.1`` for an array element,
``s.3`` and ``s__len`` for a stack's words and depth, compiler/frontend/janus/lowering.py);
this regroups them under the Janus names.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .lowering import DEPTH


def janus_store(named: dict[str, int]) -> dict[str, object]:
    """Declared name -> value, regrouped: ``a.i.j`` into nested lists, a stack ``s`` into
    the list of its ``s__len`` elements (bottom first), scalars as they are."""
    grouped: dict[str, Any] = {}
    for name, value in named.items():
        base, _, rest = name.partition(".")
        if not rest:
            if not name.endswith(DEPTH):
                grouped[name] = value
            continue
        grouped.setdefault(base, {})
        node: dict = grouped[base]
        keys = [int(k) for k in rest.split(".")]
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    out: dict[str, object] = {}
    for name, value in grouped.items():
        if isinstance(value, dict):
            items = _lists(value)
            depth = named.get(name + DEPTH)
            # a fault inside push or pop may leave the depth one past either end: the
            # stack shows the elements that are there (never a slice from the end)
            out[name] = items[:min(max(depth, 0), len(items))] if depth is not None else items
        else:
            out[name] = value
    return out


def _lists(node: dict) -> list:
    return [(_lists(v) if isinstance(v, dict) else v) for _, v in sorted(node.items())]


def janus_words(values: Mapping[str, object], declared: Collection[str]) -> dict[str, object]:
    """The inverse of :func:`janus_store`: Janus variables (arrays and stacks as lists, as
    `revasm run --json` shows them) as the compiled program's declared names (``a.0.1``;
    a stack ``s`` as ``s.0`` .. ``s.63`` with zeros above its top and ``s__len``).  Values
    are left as given (the value rule reads them); a list that does not fit its variable
    is a ValueError naming it."""
    out: dict[str, object] = {}
    for name, value in values.items():
        if not isinstance(value, (list, tuple)):
            out[name] = value
            continue
        if name + DEPTH in declared:
            capacity = sum(1 for d in declared if d.startswith(name + ".")
                           and d[len(name) + 1:].isdigit())
            if len(value) > capacity:
                raise ValueError(f"the stack {name} holds at most {capacity} elements, "
                                 f"not {len(value)}")
            for k in range(capacity):
                out[f"{name}.{k}"] = value[k] if k < len(value) else 0
            out[name + DEPTH] = len(value)
            continue
        todo: list[tuple[str, object]] = [(name, value)]
        while todo:
            prefix, item = todo.pop()
            if isinstance(item, (list, tuple)):
                todo += [(f"{prefix}.{i}", x) for i, x in enumerate(item)]
            elif prefix not in declared:
                raise ValueError(f"{name} has no element {prefix[len(name) + 1:]} "
                                 f"(the list is longer than the array)")
            else:
                out[prefix] = item
        sizes = sum(1 for d in declared if d.startswith(name + "."))
        given = sum(1 for d in out if d.startswith(name + "."))
        if given != sizes:
            raise ValueError(f"{name} has {sizes} elements; the list gives {given}")
    return out
