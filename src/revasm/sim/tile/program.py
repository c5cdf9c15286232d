"""An image decoded once on the host into the flat arrays the tile interpreter reads.

The compiled engine's interpreter kernel decodes an image into ``PROG[field, pc]`` (each
cell's table entry, operands, cycles and START/FINISH/illegal flags), the immediates, the
code-cell map and the DATA cells' dense indices (``sim/compiled/interpreter.py``:
``program_arrays``).  The tile interpreter reads one instruction's fields together, once per
tile, so here they are ``PROG[pc, field]``: one cell's fields side by side (one cache line)
instead of nine rows apart.
"""
from __future__ import annotations

from typing import Any

import numpy

from revasm.assembler.image import Image
from revasm.sim.compiled.interpreter import CYC, CYC_BACK, GCYC, GCYC_BACK, program_arrays


def decode(image: Image) -> tuple[Any, ...]:
    """``(PROG, IMM, CODE, DENSE, dense_words)`` of an image, ``PROG`` by PC then field
    (the fields of ``sim/compiled/interpreter.py``: ``OP``, ``A``, ... ``FLAGS``)."""
    prog, imm, code, dense, dense_words = program_arrays(image)
    return numpy.ascontiguousarray(prog.T), imm, code, dense, dense_words


def cycle_row(gradient: bool, direction: int | None) -> int | None:
    """The field of a cell's cost for a run whose lanes all go ``direction`` (value or
    gradient mode: the tangent banks have no hardware, they add no cycles), or None for a
    run whose lanes go both ways."""
    if direction is None:
        return None
    if gradient:
        return GCYC if direction > 0 else GCYC_BACK
    return CYC if direction > 0 else CYC_BACK


def with_costs(prog: Any, row: int) -> Any:
    """``PROG`` with field ``row``'s costs in the ``CYC`` field, which the tile kernels read
    for every step (``source.cycle_count``): the costs of the run's direction and mode."""
    costed = prog.copy()
    costed[:, CYC] = prog[:, row]
    return costed
