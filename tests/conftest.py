"""Suite-wide test configuration."""
from __future__ import annotations

import gc
import os
import tempfile

import pytest

# The compiled engine's kernels go to a cache of this session's own, never the user's
# (~/.cache/revasm): a test run neither reads stale kernels nor leaves files behind.
_KERNEL_CACHE = tempfile.TemporaryDirectory(prefix="revasm-test-kernels-")
os.environ["REVASM_CACHE_DIR"] = _KERNEL_CACHE.name


@pytest.fixture(scope="module")
def fresh_kernel_cache(tmp_path_factory):
    """A module's kernels in a fresh directory of their own (compile times measured from
    nothing, no kernel shared with another module); the user's cache is left alone."""
    old = os.environ.get("REVASM_CACHE_DIR")
    os.environ["REVASM_CACHE_DIR"] = str(tmp_path_factory.mktemp("revasm-kernels"))
    yield
    if old is None:
        del os.environ["REVASM_CACHE_DIR"]
    else:
        os.environ["REVASM_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def _collect_rtl_garbage(request: pytest.FixtureRequest):
    """After each RTL test, collect its garbage at a safe point.

    Amaranth warns about unused elaboratables from ``__del__``; left to a random
    later collection, that callback can land inside CPython 3.11.7's AST
    constructor (any ``ast.parse`` of a later test) and break it.

    What survives is then frozen (``gc.freeze``): a full collection walks every object
    the suite has made so far -- about 6 s per test late in a whole run, 5 minutes in all
    -- and the next collection need only walk what the next test makes.
    """
    yield
    if request.module.__name__.startswith("test_rtl"):
        gc.collect()
        gc.freeze()
