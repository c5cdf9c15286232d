"""sqrt: digit-by-digit (shift-and-subtract) integer square root, correctly rounded."""
from __future__ import annotations

from ..fixed_point import WordFormat
from .cordic import tables
from .errors import DomainError


def fx_sqrt(x: int, fmt: WordFormat) -> int:
    """sqrt(x) correctly rounded: digit-by-digit integer square root of ``x * 2**F``.

    Fixed ``ceil((W - 1 + F) / 2)`` iterations of shift-and-subtract; the result is
    rounded up iff the final remainder exceeds the root.  Raises
    :class:`DomainError` for ``x < 0``.
    """
    if x < 0:
        raise DomainError(f"sqrt of negative value (raw {x})")
    t = tables(fmt)
    n = x << t.frac
    rem = 0
    root = 0
    for i in range(2 * t.sqrt_bits - 2, -1, -2):
        rem = (rem << 2) | ((n >> i) & 3)
        trial = (root << 2) | 1
        root <<= 1
        if rem >= trial:
            rem -= trial
            root |= 1
    return root + 1 if rem > root else root
