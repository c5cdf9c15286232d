"""An image decoded once on the host into the flat arrays the tile interpreter reads.

The compiled engine's interpreter kernel decodes an image into ``PROG[field, pc]`` (each
cell's table entry, operands, cycles and START/FINISH/illegal flags), the immediates, the
code-cell map and the DATA cells' dense indices (``sim/compiled/interpreter.py``:
``program_arrays``).  The tile interpreter reads one instruction's fields together, once per
tile, so here they are ``PROG[pc, field]``: one cell's fields side by side (one cache line)
instead of nine rows apart.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy

from revasm.assembler.image import Image
from revasm.sim.compiled.interpreter import program_arrays

#: Each image's arrays while it lives, by ``id`` (an image is not hashable): a batch's
#: parts and a program's repeated runs decode it once.  (The kernels only read them; they
#: stay writeable, since numba compiles a read-only array's signature anew.)
_DECODED: dict[int, tuple[Any, tuple[Any, ...]]] = {}


def decode(image: Image) -> tuple[Any, ...]:
    """``(PROG, IMM, CODE, DENSE, dense_words)`` of an image, ``PROG`` by PC then field
    (the fields of ``sim/compiled/interpreter.py``: ``OP``, ``A``, ... ``FLAGS``)."""
    key = id(image)
    known = _DECODED.get(key)
    if known is not None and known[0]() is image:
        return known[1]
    prog, imm, code, dense, dense_words = program_arrays(image)
    decoded = (numpy.ascontiguousarray(prog.T), imm, code, dense, dense_words)
    _DECODED[key] = (weakref.ref(image, lambda _: _DECODED.pop(key, None)), decoded)
    return decoded
