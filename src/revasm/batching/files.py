"""A batch from an inputs file to an output, in chunks: what ``revasm batch -o`` runs.

The inputs (CSV, NPZ, Parquet, Zarr: :mod:`revasm.batching.sources`) are checked first,
a chunk at a time, so a bad value stops the batch before any output exists.  Then the
chunks run (:mod:`revasm.batching.chunks`: here, on an executor, or on a Dask cluster of
:mod:`revasm.batching.cluster`) and either write their columns where they run (a
``.parquet`` or ``.zarr`` output, :mod:`revasm.batching.sinks`: memory bounded by the
chunk, resumable) or come back to be joined (no output, or ``.npz``: small batches).  A
run into an output that already holds some of the same batch's chunks writes only the
missing ones.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from revasm.assembler.image import Image

from . import sinks
from .chunks import DEFAULT_CHUNK_LANES, BatchOptions, ChunkJob, plan, run_chunks
from .cluster import dask_client
from .running import (
    FAULTS_DESCRIBED,
    BatchResult,
    ChunkOutcome,
    batch,
    check_batch_inputs,
    merge,
    run_chunk,
)
from .sinks import BatchOutputError
from .sources import open_source


@dataclass
class BatchSummary:
    """What a file batch did: its lanes, how many faulted (and the first faults, as
    :class:`~revasm.batching.running.BatchResult` describes them), how many counted overflow
    events, and its chunks -- written by this run, or found written by an earlier one.
    ``result`` holds every column when they came back (no streaming output)."""

    lanes: int
    faulted: int
    faults: list[dict[str, Any]]
    overflow_lanes: int
    first_overflow: list[int] | None
    chunks: int
    written: int
    skipped: int
    seconds: float
    #: lanes this run computed (those of the chunks it wrote)
    lanes_run: int = 0
    output: str | None = None
    result: BatchResult | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"status": "ok", "output": self.output, "lanes": self.lanes,
                "finished": self.lanes - self.faulted, "faulted": self.faulted,
                "faults": self.faults, "overflow_lanes": self.overflow_lanes,
                "chunks": self.chunks, "chunks_written": self.written,
                "chunks_skipped": self.skipped, "lanes_run": self.lanes_run,
                "seconds": round(self.seconds, 3)}


def streams(output: str | None) -> bool:
    """Whether ``output`` is written chunk by chunk (a ``.parquet`` or ``.zarr`` folder)."""
    return output is not None and Path(output).suffix.lower() in sinks.FORMATS


def batch_file(image: Image, inputs: str, output: str | None = None, *,
               options: BatchOptions | None = None, client: Any = None,
               executor: concurrent.futures.Executor | None = None,
               workers: int | None = None, scheduler: str | None = None,
               chunk_lanes: int | None = None,
               progress: Callable[[int], object] | None = None,
               on_start: Callable[[int, int], object] | None = None) -> BatchSummary:
    """Run ``image`` once per row of the file ``inputs``, in chunks of ``chunk_lanes``.

    The chunks run here, on ``executor``, on the Dask ``client``, or on a Dask cluster
    this call starts (``workers`` local worker processes) or joins (``scheduler``,
    ``tcp://HOST:PORT``) and leaves when the batch ends.  With a ``.parquet`` or ``.zarr``
    ``output`` each chunk is written where it runs; otherwise the chunks' results come
    back and are joined (``summary.result``; the caller writes an ``.npz``).
    ``on_start(lanes, lanes already written)`` is called once the inputs are checked.
    Raises ``BatchInputError`` (inputs), ``BatchOutputError`` (an output of another
    batch) and ``GradientError`` (loss, wrt) before any lane runs, ``ClusterError`` for a
    cluster that cannot be had or is lost."""
    if workers is not None or scheduler is not None:
        if client is not None or executor is not None:
            raise ValueError("give a Dask client, an executor, or workers/a scheduler, "
                             "not two of them")
        with dask_client(scheduler, workers) as started:
            return batch_file(image, inputs, output, options=options, client=started,
                              chunk_lanes=chunk_lanes, progress=progress, on_start=on_start)
    began = time.perf_counter()
    options = options or BatchOptions()
    source = open_source(inputs)
    step = chunk_lanes or DEFAULT_CHUNK_LANES
    check_batch_inputs(image, source, chunk_lanes=step)
    chunks = plan(source.lanes, step)
    sink = None
    recorded: dict[int, dict[str, Any]] = {}
    schema = result_schema(image, source.read(0, 1), options)
    if streams(output):
        assert output is not None
        sink = sinks.prepare(output, _identity(image, inputs, options), schema,
                                   source.lanes, step)
        recorded = sinks.recorded_chunks(output)
    todo = [c for c in chunks if c.index not in recorded]
    already = sum(c.lanes for c in chunks if c.index in recorded)
    if on_start is not None:
        on_start(source.lanes, already)
    # Workers read and write by absolute path: they may run in another folder (a shared
    # file system on a real cluster, docs/distributed.md).
    remote_source = replace(source, path=os.path.abspath(source.path))  # type: ignore[type-var]
    remote_sink = None
    if sink is not None:
        remote_sink = replace(sink, path=os.path.abspath(sink.path))  # type: ignore[type-var]
    jobs = [ChunkJob(chunk, image, options, remote_source.part(chunk.start, chunk.stop),
                     (chunk.start, chunk.stop), remote_sink) for chunk in todo]
    report = (lambda done: progress(already + done)) if progress is not None else None
    outcomes: dict[int, ChunkOutcome] = {}
    records = dict(recorded)
    _trim_faults(records)
    for chunk, outcome in run_chunks(run_chunk, jobs, client=client, executor=executor,
                                     progress=report):
        if sink is None:
            outcomes[chunk.index] = outcome
        records[chunk.index] = outcome.record
        if outcome.record["faults"]:
            _trim_faults(records)
    if sink is not None:
        sinks.remove_temporaries(sink.path)
    in_order = [records[c.index] for c in chunks]
    first_overflow = next((r["first_overflow"] for r in in_order if r["first_overflow"]), None)
    result = (merge([outcomes[c.index].result for c in chunks])  # type: ignore[misc]
              if sink is None else None)
    return BatchSummary(
        lanes=source.lanes, faulted=sum(r["faulted"] for r in in_order),
        faults=[f for r in in_order for f in r["faults"]][:FAULTS_DESCRIBED],
        overflow_lanes=sum(r["overflow_lanes"] for r in in_order),
        first_overflow=first_overflow, chunks=len(chunks), written=len(todo),
        skipped=len(chunks) - len(todo), seconds=time.perf_counter() - began,
        lanes_run=sum(c.lanes for c in todo),
        output=output, result=result)


def _trim_faults(records: dict[int, dict[str, Any]]) -> None:
    """Forget the fault descriptions no summary will show: those of the chunks after the
    first ones (in lane order) that already describe :data:`FAULTS_DESCRIBED` faults.
    Chunks complete in any order, but one after such a chunk can never come first, so
    what the client holds stays bounded (the records on disk keep every description)."""
    if sum(len(r["faults"]) for r in records.values()) <= 2 * FAULTS_DESCRIBED:
        return
    described = 0
    for index in sorted(records):
        if described >= FAULTS_DESCRIBED:
            records[index] = {**records[index], "faults": []}
        described += len(records[index]["faults"])


def result_schema(image: Image, first_row: dict[str, Any], options: BatchOptions
                  ) -> list[tuple[str, str]]:
    """The result columns of a batch, as (name, ``str`` or a numpy dtype): those of one
    lane stopped after one step (the same columns and types as any run of the batch)."""
    probe = batch(image, first_row, grad=options.grad, loss=options.loss, wrt=options.wrt,
                  engine="reference", max_steps=1, strict=options.strict).columns()
    unknown = [name for name in options.columns or () if name not in probe]
    if unknown:
        raise BatchOutputError(f"no result column {', '.join(map(repr, unknown))} (the "
                               f"columns: {', '.join(probe)})")
    return [(name, "str" if values.dtype.kind == "U" else values.dtype.str)
            for name, values in options.kept(probe).items()]


def _identity(image: Image, inputs: str, options: BatchOptions) -> dict[str, Any]:
    """What makes two runs the same batch: the program's words, the inputs file (its
    place, size and modification time) and the options."""
    program = hashlib.sha256(f"W{image.width}\n".encode())
    program.update(bytes(bool(flag) for flag in image.is_code))
    program.update(",".join(str(word) for word in image.words).encode())
    if image.immediates:  # PendVM-compatibility mode's wide immediates: not in the words
        program.update(f"\n{sorted(image.immediates.items())}".encode())
    stat = os.stat(inputs)
    return {"program": program.hexdigest()[:24],
            "inputs": {"path": os.path.abspath(inputs), "bytes": stat.st_size,
                       "modified_ns": stat.st_mtime_ns},
            "options": options.describe()}
