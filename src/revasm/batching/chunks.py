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
the caller merges the chunks' results in lane order (:mod:`revasm.batching.running`).
The Dask cluster itself is :mod:`revasm.batching.cluster`'s.
"""
from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from revasm.assembler.image import Image
from revasm.sim.engines import available

from .sinks import Sink
from .sources import Source

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
