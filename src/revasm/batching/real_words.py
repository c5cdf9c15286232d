"""A large column of reals as fixed-point lane words, in one compiled pass.

``inputs._real_words`` reads a float column for a fixed-point name with numpy: ten passes,
each a fresh array the size of the column.  On 10^6 J2 inputs that took 45-265 ms, most of
it faulting in those arrays' pages; this loop writes only the words (2-22 ms).  It computes
the same rule (``machine/values.py``, and ``tests/batching/test_inputs.py`` holds the two to
the same words and the same refusals): the magnitude times 2^F rounded half away from zero,
negated for a negative value, refused when not finite or beyond the word.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def real_words(values: Any, scale: float, limit: float, mask: Any, out: Any
               ) -> tuple[int, int]:
    """Write each value's word into ``out``; return the first row that is not finite and
    the first beyond the word (-1: none).  ``scale`` is 2^F, ``limit`` 2^(W-1): a magnitude
    of ``limit`` fits only as the most negative word."""
    not_finite = -1
    too_large = -1
    for row in range(values.shape[0]):
        value = values[row]
        if not np.isfinite(value):
            if not_finite < 0:
                not_finite = row
            out[row] = 0
            continue
        scaled = abs(value) * scale  # exact: a power of two
        whole = np.floor(scaled)
        rounded = whole + (1.0 if scaled - whole >= 0.5 else 0.0)
        if rounded > limit or (rounded == limit and value > 0):
            if too_large < 0:
                too_large = row
            out[row] = 0
            continue
        magnitude = np.uint64(rounded)
        out[row] = ((np.uint64(0) - magnitude) if value < 0 else magnitude) & mask
    return not_finite, too_large
