"""Janus integers on the machine: W = 32 two's-complement words, every operation wrapped.

The rule (docs/janus.md): every ``int`` is a 32-bit word, and every operation's result
is reduced to one -- ``+ - *`` modulo 2^32, as PISA's ADD and SUB (and a 32-bit CPU)
do; ``/`` and ``%`` are floor division and its remainder (Haskell's ``div`` and ``mod``,
which jana uses) of the two words, the quotient wrapped (-2^31 / -1 is -2^31); division
by zero is a fault.  The interpreter and the compiled program follow the same rule, so
they agree bit for bit; where it differs from jana's unbounded integers (a result beyond
32 bits), the difference is this documented wrap, never an accident of the machine.
"""
from __future__ import annotations

WIDTH = 32
_MODULUS = 1 << WIDTH
_HALF = 1 << (WIDTH - 1)
MIN_INT = -_HALF
MAX_INT = _HALF - 1


def wrap(value: int) -> int:
    """``value`` reduced to a signed 32-bit word."""
    return (value + _HALF) % _MODULUS - _HALF


def floor_div(a: int, b: int) -> int:
    """``a / b`` in Janus: the floor of the quotient, wrapped (b != 0)."""
    return wrap(a // b)


def floor_mod(a: int, b: int) -> int:
    """``a % b`` in Janus: the remainder of floor division, the sign of b (b != 0)."""
    return a % b
