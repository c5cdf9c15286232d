"""Batches in chunks of lanes, run where an executor puts them: in process, a pool, Dask.

A batch of N lanes is cut into chunks of ``chunk_lanes`` consecutive lanes; each chunk
is a :class:`ChunkJob` -- the image, the options, a picklable input source and an
optional output sink -- that a worker turns into results with ``work`` (a module-level
function, so it pickles by name).  The jobs go to:

* a ``distributed.Client``: through ``client.get_executor()``, Dask's own
  ``concurrent.futures`` face; Dask places the jobs, moves them off a lost worker and
  runs them again (a job is idempotent: it writes its chunk whole or not at all);
* any ``concurrent.futures.Executor`` (a process or thread pool, or another framework's);
* nobody: the chunks run one after the other in this process.

Lanes are independent, so a chunk's lanes give exactly the bits they give in one batch;
the caller merges the chunks' results in lane order (``revasm.batching``).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from revasm.assembler.image import Image
from revasm.sim.batch_sinks import Sink
from revasm.sim.batch_sources import Source
from revasm.sim.engines import available

#: Lanes per chunk unless the caller says: ~0.05-0.5 s of J2 gradients on one core, far
#: above Dask's per-task cost (~1 ms), and ~40 MB of result columns.
DEFAULT_CHUNK_LANES = 100_000

R = TypeVar("R")


@dataclass(frozen=True)
class Chunk:
    """Lanes ``[start, stop)`` of a batch, its ``index``-th chunk."""

    index: int
    start: int
    stop: int

    @property
    def lanes(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class BatchOptions:
    """What every lane runs: ``revasm.batch``'s keyword arguments."""

    grad: bool = False
    loss: str | None = None
    wrt: tuple[str, ...] | None = None
    engine: str = "auto"
    max_steps: int | None = None
    strict: bool = False
    #: the result columns a file output keeps (None: every one)
    columns: tuple[str, ...] | None = None

    def describe(self) -> dict[str, Any]:
        """The options as JSON (an output's record of its run)."""
        return {"grad": self.grad, "loss": self.loss,
                "wrt": list(self.wrt) if self.wrt is not None else None,
                "max_steps": self.max_steps, "strict": self.strict,
                "columns": list(self.columns) if self.columns is not None else None}

    def kept(self, columns: dict[str, Any]) -> dict[str, Any]:
        """The result columns a file output keeps, in the order :attr:`columns` names them."""
        if self.columns is None:
            return columns
        return {name: columns[name] for name in self.columns}


@dataclass(frozen=True)
class ChunkJob:
    """One chunk's work, sent to a worker: read its inputs, run, write or return."""

    chunk: Chunk
    image: Image
    options: BatchOptions
    #: the whole batch's inputs (a file source; read there) or the chunk's (in memory)
    source: Source
    #: the chunk's rows of ``source`` (``chunk``'s lanes, or all of an in-memory slice)
    rows: tuple[int, int]
    sink: Sink | None = None

    def inputs(self) -> dict[str, Any]:
        return self.source.read(*self.rows)


def plan(lanes: int, chunk_lanes: int) -> list[Chunk]:
    """The chunks of a batch of ``lanes`` lanes."""
    if chunk_lanes < 1:
        raise ValueError(f"chunk_lanes must be at least 1, not {chunk_lanes}")
    return [Chunk(i, start, min(start + chunk_lanes, lanes))
            for i, start in enumerate(range(0, lanes, chunk_lanes))]


def worker_engine(name: str) -> str:
    """The engine a chunk runs on: ``name``, or for ``auto`` the fastest engine that runs
    on this worker (the compiled one where numba does: a chunked batch is large, and the
    disk cache makes the kernel's compilation once per machine; docs/decisions.md)."""
    if name != "auto":
        return name
    return available()[0]


def run_chunks(work: Callable[[ChunkJob], R], jobs: list[ChunkJob], *, client: Any = None,
               executor: concurrent.futures.Executor | None = None,
               progress: Callable[[int], object] | None = None) -> Iterator[tuple[Chunk, R]]:
    """``work(job)`` for every job, on ``client`` (Dask), ``executor``, or here; yields
    (chunk, result) as each finishes and calls ``progress(lanes done)``.  An exception of
    a job (or Ctrl-C) cancels the jobs not yet started and is raised here."""
    if client is not None and executor is not None:
        raise ValueError("give a Dask client or an executor, not both")
    done = 0
    if client is None and executor is None:
        for job in jobs:
            result = work(job)
            done += job.chunk.lanes
            if progress is not None:
                progress(done)
            yield job.chunk, result
        return
    pool = client.get_executor(pure=False) if client is not None else executor
    assert pool is not None
    futures = {pool.submit(work, job): job.chunk for job in jobs}
    try:
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            chunk = futures[future]
            done += chunk.lanes
            if progress is not None:
                progress(done)
            yield chunk, result
    finally:
        for future in futures:
            future.cancel()


#: A local worker's environment: one thread for the kernels (numba's pool, OpenMP).
ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


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
                 "distributed.worker.memory.monitor-interval": "1s"}


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
            with client:
                yield client
            return
        with _kept_environment(ONE_THREAD), _one_thread_cluster(workers or 1) as cluster, \
                Client(cluster) as client:
            yield client
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
