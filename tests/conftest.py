"""Suite-wide test configuration."""
from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True)
def _collect_rtl_garbage(request: pytest.FixtureRequest):
    """After each RTL test, collect its garbage at a safe point.

    Amaranth warns about unused elaboratables from ``__del__``; left to a random
    later collection, that callback can land inside CPython 3.11.7's AST
    constructor (any ``ast.parse`` of a later test) and break it.
    """
    yield
    if request.module.__name__.startswith("test_rtl"):
        gc.collect()
