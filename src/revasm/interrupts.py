"""Ctrl-C, however it arrives: a KeyboardInterrupt, or an exception Python raised because of
one.  Imports nothing, so the entry point (``launch.py``) can use it before anything loads.
"""
from __future__ import annotations


def caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C's KeyboardInterrupt or was raised because of one: Python
    wraps an exception raised while a class is made (``__set_name__``, as a dataclass's
    fields are) in a RuntimeError, so Ctrl-C during a lazy import reached the command line
    as "internal error: RuntimeError: Error calling __set_name__ ..." (found by the
    signals campaign)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
