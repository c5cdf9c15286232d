"""A tiny program and inputs for the chunked-batch tests: every lane's kind of outcome.

``z += x / y; w += x * x; z += sin(w)``: lanes with y = 0 fault (divide-by-zero), lanes
with a large x count an overflow event (x * x does not fit Q32.32), the others finish;
with ``grad`` the loss is z.  Two modes (value, gradient) of a 4-instruction kernel
compile in about a second each on the compiled engine.
"""
from __future__ import annotations

import numpy as np

from revasm.assembler import assemble

SOURCE = """\
;; pendulum pal file
.width  64
.input  x $1 fixed
.input  y $2 fixed
.loss   z $3
        start
        adddiv $3 $1 $2      ; z += x / y: y = 0 faults
        addmul $4 $1 $1      ; w += x * x: an overflow event for |x| > 2^16
        addsin $3 $4         ; z += sin(w)
        finish
"""


def image():
    return assemble(SOURCE, "lanes.pal", width=64)


def inputs(lanes: int, seed: int = 0) -> dict[str, np.ndarray]:
    """x, y per lane: every 7th lane divides by zero, every 11th overflows."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3.0, 3.0, lanes)
    y = rng.uniform(0.5, 2.0, lanes)
    y[::7] = 0.0
    x[5::11] = 1e6
    return {"x": x, "y": y}


def assert_same(one, other) -> None:
    """Two batch results hold the same bits: every column (NaN where a lane faulted),
    and the faults described."""
    a, b = one.columns(), other.columns()
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype.kind == b[name].dtype.kind, name
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"), name
    assert one.faults == other.faults
