"""Suite-wide test configuration."""
from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from revasm.rtl.tools import cache_dir

# The compiled and tile engines' kernels go to the test suite's own cache, never the user's
# (~/.cache/revasm/kernels): a test run neither fills the user's cache with random programs'
# kernels nor reads what the user compiled.  It is kept between runs, as the Verilator
# builds are (~/.cache/revasm/verilator): numba's compiles are most of a cold run's time
# (docs/decisions.md, "make test keeps its kernels between runs"), and a kernel's file name
# hashes its text and the engines' sources, so a changed engine never loads a stale one.
# ``$REVASM_TEST_KERNEL_CACHE`` names another directory; at a session's start a cache grown
# past TEST_CACHE_BYTES is emptied.  One cache for the whole run: pytest's main process
# settles it (this file is loaded there first, ``testpaths``) and the xdist workers inherit
# its name, so a kernel one worker compiled the other loads, as two processes of a user's
# share ~/.cache/revasm (the cache is written by atomic renames, numba's files too).
_SHARED = "REVASM_TEST_KERNEL_CACHE"
#: The size past which a session starts the test kernel cache afresh.
TEST_CACHE_BYTES = 2 << 30


def _settle_test_cache() -> None:
    """Name the run's kernel cache (``$REVASM_TEST_KERNEL_CACHE``), emptied if too large."""
    if _SHARED in os.environ:
        return
    root = cache_dir("test-kernels")
    if root.is_dir():
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        if size > TEST_CACHE_BYTES:
            shutil.rmtree(root, ignore_errors=True)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache: this run's own, as before
        root = Path(tempfile.mkdtemp(prefix="revasm-test-kernels-"))
    os.environ[_SHARED] = str(root)


_settle_test_cache()
os.environ["REVASM_CACHE_DIR"] = os.environ[_SHARED]

# The collector runs after 50 000 new objects instead of 700: numba's compiles make
# hundreds of thousands of short-lived objects, and at the default threshold a kernel's
# compile spent about 16 % of its CPU time in collections (5.3 of 33.3 s for make test's
# structured W = 32 sample, 0.9 s at this threshold); what survives a test is collected
# and frozen after it (``_collect_garbage``).
gc.set_threshold(50_000, 20, 100)


#: The files that take a minute or more, by their paths under tests/ (``make test``'s
#: ``--durations``, 2026-12-06, less what the bounded samples of docs/decisions.md "make test
#: in 8 minutes" took off), longest first, the numba-heavy and the RTL ones alternating (so
#: that the two workers' first files do not both compile the kernels' vocabulary: the
#: second finds it in numba's cache).
#: ``make test`` hands whole files to its workers in collection order
#: (``--dist loadfile --no-loadscope-reorder``), so these go first and the short files
#: fill in around them: both workers finish together.  (xdist's default order, files with
#: the most tests first, left these few-test files to the end, one worker running them
#: while the other idled.)  A file not named here keeps its place after them.
LONGEST_FILES = (
    "sim/test_engines.py",
    "cli/test_commands_rtl.py",
    "sim/compiled/test_differential_faults.py",
    "rtl/hardware/test_units.py",
    "sim/compiled/test_differential.py",
    "rtl/verification/test_unit_exhaustive.py",
    # after sim/test_engines.py, whose example and J2 kernels it loads from the shared cache
    "sim/compiled/test_engine.py",
    "rtl/verification/test_formal.py",
    "sim/test_pal_conformance.py",
    "rtl/verification/test_verilator.py",
    "sim/compiled/test_differential_structured.py",
    "cli/test_commands_bench.py",
    "sim/test_overflow.py",
    "rtl/synthesis/test_synth.py",
    "sim/compiled/test_rotations.py",
    "sim/vector/test_nilang_workloads.py",
    "rtl/verification/test_cosim.py",
    "sim/compiled/test_generate.py",
    "isa/test_semantics.py",
    "batching/test_chunks.py",
    "cli/test_waveforms.py",
    "sim/compiled/test_interpreter.py",
    "batching/test_cluster.py",
    "sim/test_step_faults.py",
    "test_readme.py",
    "bench/test_fuzz.py",
)


#: The folder of the test tree: LONGEST_FILES names files by their paths under it.
TESTS = Path(__file__).resolve().parent


def _place(item: pytest.Item) -> str:
    """A test's file as :data:`LONGEST_FILES` names it: its path under tests/."""
    try:
        return item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return item.path.name


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first (:data:`LONGEST_FILES`), every file's tests in their order."""
    rank = {name: index for index, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(_place(item), len(rank)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that selects no test fails and says why, never a quiet "no tests ran" (pytest's
    exit code 5, which a CI script may take for a pass or a run without tests): a ``-m`` or
    ``-k`` expression, or a path, that matches nothing is a mistake in the command."""
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    if getattr(session.config, "workerinput", None) is not None:
        return  # an xdist worker: its controller reports the whole run
    option = session.config.option
    sys.stderr.write(f"ERROR: no test selected (-m {option.markexpr!r}, -k {option.keyword!r}, "
                     f"paths {session.config.args}); make test runs -m 'not long', make "
                     "test-long -m long\n")
    session.exitstatus = pytest.ExitCode.USAGE_ERROR


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
def _collect_garbage():
    """After each test, collect its garbage at a safe point, then freeze what survives.

    A full collection walks every object the worker holds; late in a run that is the
    whole suite's heap (numba's compiled kernels and their IR, Amaranth designs, hypothesis'
    data), and allocation-heavy tests (hypothesis, the reference machine, the Janus
    interpreter) set off full collections again and again: a short property test took
    10 s late in a whole run and 0.3 s alone.  ``gc.freeze`` moves what survives out of
    the collector's reach, so the next collection walks only what the next test makes
    (frozen objects are still freed when nothing refers to them; only a cycle of them
    that becomes garbage later stays until the worker ends).

    Collecting here also keeps Amaranth's warnings about unused elaboratables (raised
    from ``__del__``) out of a random later collection, which could land inside CPython
    3.11.7's AST constructor (any ``ast.parse`` of a later test) and break it.
    """
    yield
    gc.collect()
    gc.freeze()
