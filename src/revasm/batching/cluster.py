"""A Dask cluster to run a batch's chunks on: a local one of one-thread workers, or a
scheduler's (``revasm batch --workers N`` / ``--scheduler tcp://HOST:PORT``).

:func:`dask_client` gives the ``distributed.Client`` that :func:`~revasm.batching.chunks.
run_chunks` hands the jobs to; Dask (the ``dist`` extra) is imported only here, and only
when a cluster is asked for.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

#: A local worker's environment: one thread for the kernels (numba's pool, OpenMP).
ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
#: The most worker processes a local cluster starts: each is a Python process (~150 MB) on
#: a core of its own.  Unbounded, ``--workers 99999999999`` had Dask build a spec for each
#: until the machine ran out of memory (found by the cli campaign); a larger cluster is
#: one of your own (``--scheduler``).
MAX_LOCAL_WORKERS = 256


#: Dask's periodic work in a local cluster's processes, made rare: each worker's
#: statistical profiler (a stack sample every 10 ms), every server's event-loop health
#: check (every 20 ms), the system and memory monitors (0.5 s, 0.1 s).  Measured on an
#: idle 2-worker cluster over 10 s: 1.9 CPU-s with Dask's defaults (0.7 in this process,
#: 0.6 in each worker), 0.26 with these -- a tenth of a core taken from the chunks when
#: the workers have every core.  Nothing here is needed to run a batch; the nanny still
#: restarts a worker past its memory limit, within a second.
QUIET_CLUSTER = {"distributed.worker.profile.enabled": False,
                 "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "2s",
                 "distributed.worker.memory.monitor-interval": "1s",
                 # Each worker ignores Ctrl-C and keeps its shutdown quiet (worker_setup.py).
                 "distributed.worker.preload": ["revasm.batching.worker_setup"]}


@contextmanager
def _quiet_shutdown() -> Iterator[list[bool]]:
    """While the block runs, Dask's log records below CRITICAL in this process are dropped
    once ``flag[0]`` is set: set it when the work is done (or interrupted), before the
    client and the cluster close.  The scheduler, the nannies and the client live in this
    process; as they close they may log connections going away (``CommClosedError``), a
    worker removed with its tasks, tasks cancelled -- the close the user asked for, not a
    problem.  Errors while the chunks run are raised, not logged, and are untouched."""
    from .worker_setup import ShutdownFilter, distributed_handlers

    flag = [False]
    shutdown = ShutdownFilter(lambda: flag[0])
    handlers = distributed_handlers()
    for handler in handlers:
        handler.addFilter(shutdown)
    try:
        yield flag
    finally:
        for handler in handlers:
            handler.removeFilter(shutdown)


@contextmanager
def _kept_environment(names: Iterable[str]) -> Iterator[None]:
    """This process's environment variables ``names`` as they were, when the block ends."""
    saved = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _one_thread_cluster(workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` processes of one thread each, whose workers start
    with :data:`ONE_THREAD` in their environment *before* Python starts, not only once
    the worker runs (``LocalCluster(env=)``): a spawned process first imports its parent's
    main module, which may import numba, which reads its thread count then.  Measured
    when it did (``revasm bench dask_batches``' own main module): each worker ran its
    kernels on two OpenMP threads, so one worker took ~1.3 cores and two workers fought
    over two.  Dask's ``distributed.nanny.pre-spawn-environ`` sets them in this process
    while the nannies spawn the workers; this process's own values come back as soon as
    they are up -- numba here would take them at its next compile (one thread, or an
    error once its pool runs).  A nanny that restarts a lost worker sets them here again
    (Dask's way); :func:`dask_client` restores them when the cluster stops."""
    import dask
    from distributed import LocalCluster

    spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ", default={}),
             **ONE_THREAD}
    # One set (nested sets of dotted keys lose keys when they end: dask 2025.x).
    with _kept_environment(ONE_THREAD), \
            dask.config.set({"distributed.nanny.pre-spawn-environ": spawn, **QUIET_CLUSTER}):
        # No dashboard: it is a web server in this process, updating while the cores
        # are the workers' (with bokeh installed); a cluster of one's own has one.  The
        # scheduler's small HTTP server (health, metrics) stays, on a free port: on its
        # default, 8787, it would warn whenever another cluster or dashboard has that.
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, env=dict(ONE_THREAD),
                            scheduler_kwargs={"dashboard_address": ":0"})


class ClusterError(RuntimeError):
    """A Dask cluster that cannot be had: the extra not installed, a scheduler unreachable."""


#: How long a scheduler has to greet a new connection, and the largest greeting taken
#: (a Dask scheduler's is a few hundred bytes).
GREETING_SECONDS = 10.0
GREETING_BYTES = 1 << 20


def check_scheduler(address: str, seconds: float | None = None) -> None:
    """Raise :class:`ClusterError` unless the server at ``address`` (``tcp://HOST:PORT`` or
    ``HOST:PORT``) greets a new connection as a Dask scheduler does: it writes its
    handshake first, a frame whose first 8 bytes are its length (little-endian).  A web
    server waits for a request (the client would then wait for ever) or answers text that
    Dask would read as a length of exabytes (``MemoryError``); both are refused here.
    Other schemes (``tls://``, ``inproc://``) are left to Dask.  ``seconds``: how long
    to wait for the greeting (:data:`GREETING_SECONDS`)."""
    seconds = GREETING_SECONDS if seconds is None else seconds
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return
    host, _, port_text = rest.rpartition(":")
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ClusterError(f"{address}: a scheduler address is tcp://HOST:PORT")
    try:
        with socket.create_connection((host, int(port_text)), timeout=seconds) as connection:
            greeting = b""
            while len(greeting) < 8:
                part = connection.recv(8 - len(greeting))
                if not part:
                    break
                greeting += part
    except TimeoutError:
        raise ClusterError(f"{address} accepted a connection but did not greet it as a Dask "
                           f"scheduler does within {seconds:g} s: is it one?") from None
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: "
                           f"{exc.strerror or exc}") from None
    if len(greeting) < 8:
        raise ClusterError(f"{address} closed the connection without the greeting of a Dask "
                           "scheduler: is it one?")
    length = int.from_bytes(greeting, "little")
    if not 0 < length <= GREETING_BYTES:
        raise ClusterError(f"{address} is not a Dask scheduler: it began with "
                           f"{greeting!r}, not a Dask frame")


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: of the scheduler at ``scheduler`` (``tcp://HOST:PORT``),
    or of a ``LocalCluster`` of ``workers`` worker processes, started here and stopped
    when the block ends.  Each local worker runs one chunk at a time on one core (one
    thread, ``NUMBA_NUM_THREADS=1``), so N workers use N cores."""
    if workers is not None and not 1 <= workers <= MAX_LOCAL_WORKERS:
        raise ClusterError(f"a local cluster has 1 to {MAX_LOCAL_WORKERS} worker processes, "
                           f"not {workers}: for more, start a Dask cluster and give its "
                           "scheduler")
    try:
        from distributed import Client, KilledWorker
    except ImportError:
        raise ClusterError("running on Dask needs dask and distributed, which are not "
                           "installed: pip install 'revasm[dist]'") from None
    client = None
    # The client logs a lost scheduler with a traceback; we say it in one line (below).
    client_log = logging.getLogger("distributed.client")
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        if scheduler is not None:
            check_scheduler(scheduler)
            try:
                client = Client(scheduler, timeout="10s")
            except MemoryError:  # a length read from a server that is not a scheduler
                raise ClusterError(f"{scheduler} is not a Dask scheduler (its answer is not "
                                   "Dask's protocol)") from None
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}"
                                   ) from None
            with _quiet_shutdown() as closing, client:
                try:
                    yield client
                finally:
                    closing[0] = True
            return
        # Exits in reverse: the client closes, then the cluster (its workers first, then
        # the scheduler), then the shutdown filter goes.
        with _kept_environment(ONE_THREAD), _quiet_shutdown() as closing, \
                _one_thread_cluster(workers or 1) as cluster, Client(cluster) as client:
            try:
                yield client
            finally:
                closing[0] = True
    except KilledWorker as exc:  # Dask gave up on a chunk after its workers died
        raise ClusterError(f"a chunk killed every worker that ran it ({exc}): out of memory? "
                           "a smaller --chunk-lanes needs less; the chunks written are "
                           "kept, the same command resumes") from None
    except (OSError, TimeoutError, asyncio.CancelledError,
            concurrent.futures.CancelledError) as exc:
        if client is None or client.status == "running":
            raise  # not the cluster's doing: an output that cannot be written, ...
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise ClusterError(f"lost the Dask scheduler ({why}): the chunks written are kept, "
                           "the same command resumes") from None
    finally:
        client_log.setLevel(level)
