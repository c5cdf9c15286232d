"""Suite-wide test configuration."""
from __future__ import annotations

import gc
import os
import tempfile

import pytest

# The compiled engine's kernels go to a cache of this session's own, never the user's
# (~/.cache/revasm): a test run neither reads stale kernels nor leaves files behind.  One
# cache for the whole run: pytest's main process makes it (this file is loaded there
# first, ``testpaths``) and the xdist workers inherit its name, so a kernel one worker
# compiled the other loads, as two processes of a user's share ~/.cache/revasm (the cache
# is written by atomic renames, numba's files too).
_SHARED = "REVASM_TEST_KERNEL_CACHE"
if _SHARED not in os.environ:
    _KERNEL_CACHE = tempfile.TemporaryDirectory(prefix="revasm-test-kernels-")
    os.environ[_SHARED] = _KERNEL_CACHE.name
os.environ["REVASM_CACHE_DIR"] = os.environ[_SHARED]


#: The files that take minutes (``make test``'s ``--durations``, 2026-12-01), longest first.
#: ``make test`` hands whole files to its workers in collection order
#: (``--dist loadfile --no-loadscope-reorder``), so these go first and the short files
#: fill in around them: both workers finish together.  (xdist's default order, files with
#: the most tests first, left these few-test files to the end, one worker running them
#: while the other idled.)  A file not named here keeps its place after them.
LONGEST_FILES = (
    "test_rtl_cosim.py",
    "test_compiled_differential.py",
    "test_rtl_cli.py",
    "test_compiled_engine.py",
    "test_compiled_differential_faults.py",
    "test_rtl_verilator.py",
    "test_compiled_differential_structured.py",
    "test_compiled_interpreter.py",
    "test_compiler_checks.py",
    "test_bench_cli.py",
    "test_step_faults.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first (:data:`LONGEST_FILES`), every file's tests in their order."""
    rank = {name: index for index, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


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
