"""Main's variables as jana prints its final store: arrays as (nested) lists, stacks as lists.

The compiled program declares each word by name (``x``, ``a.0.1`` for an array element,
``s.3`` and ``s__len`` for a stack's words and depth, compiler/frontend/janus/lowering.py);
this regroups them under the Janus names.
"""
from __future__ import annotations

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
            out[name] = items[:depth] if depth is not None else items
        else:
            out[name] = value
    return out


def _lists(node: dict) -> list:
    return [(_lists(v) if isinstance(v, dict) else v) for _, v in sorted(node.items())]
