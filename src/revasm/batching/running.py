"""One program over many inputs: what ``revasm batch`` does, as a Python call.

Every row of the inputs is a lane; each lane gives exactly what :func:`revasm.run` (with
``grad=True``, :func:`revasm.grad`) gives for that row, on any engine.  A lane that faults
stops alone; the others finish.
"""
from __future__ import annotations

import concurrent.futures
import gc
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat, word_format
from revasm.machine import fault_json
from revasm.sim.engine import Lanes, overflow_counts, read_place, write_place
from revasm.sim.engines import auto_engine, choose
from revasm.sim.host import batch_gradient, named_columns, signed, to_reals

from .chunks import DEFAULT_CHUNK_LANES, BatchOptions, ChunkJob, plan, run_chunks, worker_engine
from .inputs import (
    BatchInputError,
    check_column,
    check_inputs_given,
    column_words,
    resolve_columns,
)
from .sinks import record_chunk
from .sources import ArraySource

#: At most this many lanes' faults are described in full (every lane has its kind).
FAULTS_DESCRIBED = 1000
#: A batch of more lanes than this, run in this process, runs in parts of this many lanes,
#: one after the other, each on a machine of its own: the engine's banks (J2's gradient:
#: ~1 KB a lane) are then a part's, not the whole batch's -- at 10^6 lanes 0.43 GB at
#: the peak instead of 1.12 GB, and none of the seconds of system time that faulting in
#: a gigabyte of fresh pages cost on this machine (docs/decisions.md).
STREAM_LANES = 1 << 17


@dataclass
class BatchResult:
    """Per-lane columns: ``status`` ("finished"/"fault"), ``fault_kind`` ("" if none),
    ``steps``, ``cycles``, ``named`` (declared name -> reals or signed integers),
    ``registers`` ($i -> signed integers); with ``grad``: ``loss_name``, ``loss``,
    ``gradient`` (name -> reals), ``forward_steps``.  ``faults`` describes the first
    :data:`FAULTS_DESCRIBED` faulted lanes (lane, kind, pc, line, message).

    A faulted lane has no result: its reals (fixed-point names, loss, gradient) are NaN
    (``null`` in :meth:`to_json`), never a number a finished lane could have given; its
    integers (integer names, registers, steps) are what the lane held when it stopped,
    and ``status`` says to ignore them."""

    lanes: int
    status: np.ndarray
    fault_kind: np.ndarray
    faults: list[dict]
    steps: np.ndarray
    cycles: np.ndarray
    named: dict[str, np.ndarray]
    registers: dict[str, np.ndarray]
    loss_name: str | None = None
    loss: np.ndarray | None = None
    gradient: dict[str, np.ndarray] = field(default_factory=dict)
    forward_steps: np.ndarray | None = None
    machine: Lanes | None = field(default=None, repr=False)
    #: overflow events per lane (``isa/table.py``: OV; with ``grad``, the forward pass's)
    overflows: np.ndarray | None = None

    @property
    def faulted(self) -> int:
        return int(np.sum(self.status == "fault"))

    def columns(self) -> dict[str, np.ndarray]:
        """Every result column by its output name (``x``, ``$3``, ``loss``, ``grad_x``, ...)."""
        out = {"status": self.status, "fault_kind": self.fault_kind, "steps": self.steps,
               "cycles": self.cycles, **self.named, **self.registers}
        if self.overflows is not None:
            out["overflows"] = self.overflows
        if self.loss is not None:
            out["loss"] = self.loss
            out["forward_steps"] = self.forward_steps  # type: ignore[assignment]
            out.update({f"grad_{k}": v for k, v in self.gradient.items()})
        return out

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "lanes": self.lanes, "status": self.status.tolist(),
            "fault_kind": self.fault_kind.tolist(), "faults": self.faults,
            "steps": self.steps.tolist(), "cycles": self.cycles.tolist(),
            "named": {k: _json_list(v) for k, v in self.named.items()},
            "registers": {k: v.tolist() for k, v in self.registers.items()}}
        if self.overflows is not None:
            out["overflows"] = self.overflows.tolist()
        if self.loss is not None:
            out["loss_name"] = self.loss_name
            out["loss"] = _json_list(self.loss)
            out["gradient"] = {k: _json_list(v) for k, v in self.gradient.items()}
            out["forward_steps"] = self.forward_steps.tolist()  # type: ignore[union-attr]
        return out


def batch(image: Image, inputs: Mapping[str, Any], *, grad: bool = False,
          loss: str | None = None, wrt: Iterable[str] | None = None, engine: str = "auto",
          max_steps: int | None = None,
          progress: Callable[[int], object] | None = None,
          strict: bool = False, client: Any = None,
          executor: concurrent.futures.Executor | None = None,
          chunk_lanes: int | None = None,
          columns: Iterable[str] | None = None) -> BatchResult:
    """Run ``image`` once per row of ``inputs`` (name -> one value per lane), all at once.

    Names are registers (``$3``) or declared names.  ``revasm batch``'s rule
    (:mod:`revasm.batching.inputs`): a column feeding a fixed-point name is read as reals (3 is
    3.0), one feeding an integer name as integers; a register's float column is reals,
    its integer column raw words.  Every declared input without a default needs a
    column.  Raises :class:`~revasm.batching.inputs.BatchInputError` for unusable columns
    (naming the column and row) and :class:`~revasm.sim.host.GradientError` for an
    unusable loss/wrt.  A faulted lane's reals are NaN (see :class:`BatchResult`).
    Each lane counts its overflow events (``overflows``); ``strict`` makes a lane's first
    one a fault of that lane.

    ``client`` (a ``distributed.Client``) or ``executor`` (a ``concurrent.futures``
    executor) runs the batch in chunks of ``chunk_lanes`` lanes on their workers, each
    on the fastest engine there (``engine="auto"``); ``chunk_lanes`` alone runs the
    chunks here, one after the other.  The result is bit for bit the one-process result
    (:mod:`revasm.batching.chunks`), without ``machine``.

    ``columns`` names the declared names and registers whose result columns are read
    back (default: every one); status, counts, loss and gradients always are.  A file
    output that keeps a few columns of a large batch skips reading the rest (at 5 * 10^5
    lanes, reading all 32 registers twice cost more than the gradient kernels).

    More than :data:`STREAM_LANES` lanes run here in parts of that many, one after the
    other (the result bit for bit the same, without ``machine``).
    """
    wrt = tuple(wrt) if wrt is not None else None
    if client is not None or executor is not None or chunk_lanes is not None:
        return _chunked(image, inputs, BatchOptions(
            grad, loss, wrt, engine, max_steps, strict,
            tuple(columns) if columns is not None else None),
            client=client, executor=executor, chunk_lanes=chunk_lanes, progress=progress)
    fmt = word_format(image.width)
    places = resolve_columns(inputs, image)
    check_inputs_given(image, places.values())
    words = {name: column_words(places[name], np.asarray(values), fmt)
             for name, values in inputs.items()}
    lengths = {len(column) for column in words.values()}
    if len(lengths) > 1 or 0 in lengths:
        shown = ", ".join(f"{name}: {len(column)}" for name, column in words.items())
        raise BatchInputError(f"every input column needs the same, non-zero number of lanes "
                              f"({shown})")
    if not lengths:
        raise BatchInputError("no input columns: the number of lanes is the length of a "
                              "column")
    (lanes,) = lengths
    keep = frozenset(columns) if columns is not None else None
    if lanes > STREAM_LANES and engine == "auto":  # chosen once, for every lane of the batch
        engine = auto_engine(image, lanes)  # (a part's lanes alone would weigh less work)
    chooser = choose(engine, lanes=lanes)
    if lanes <= STREAM_LANES:
        return _run_lanes(image, chooser, words, places, grad=grad, loss=loss, wrt=wrt,
                          max_steps=max_steps, strict=strict, keep=keep, progress=progress)
    parts = []
    for start in range(0, lanes, STREAM_LANES):
        stop = min(start + STREAM_LANES, lanes)
        done = None if progress is None else \
            (lambda count, start=start: progress(start + count))
        part = _run_lanes(image, chooser, {name: column[start:stop]
                                           for name, column in words.items()},
                          places, grad=grad, loss=loss, wrt=wrt, max_steps=max_steps,
                          strict=strict, keep=keep, progress=done)
        parts.append(replace(part, machine=None,
                             faults=[{**fault, "lane": fault["lane"] + start}
                                     for fault in part.faults]))
        del part
    return merge(parts)


def _run_lanes(image: Image, chooser: Any, words: Mapping[str, np.ndarray],
               places: Mapping[str, Any], *, grad: bool, loss: str | None,
               wrt: Iterable[str] | None, max_steps: int | None, strict: bool,
               keep: frozenset[str] | None,
               progress: Callable[[int], object] | None) -> BatchResult:
    """:func:`batch` on one machine: ``words`` (name -> the lanes' words, checked) loaded
    onto the engine ``chooser`` picks, run, and read back."""
    fmt = word_format(image.width)
    lanes = len(next(iter(words.values())))
    machine = chooser.load(image, lanes, max_steps=max_steps)
    machine.strict = strict
    for declared in image.names.values():
        if declared.default is not None:
            write_place(machine, declared.register, declared.address, declared.default)
    for name, place in places.items():
        write_place(machine, place.register, place.address, words[name])
    if not grad:
        machine.run(1, progress=progress)
        return _results(machine, fmt, keep)
    forward: list[BatchResult] = []
    grads = batch_gradient(machine, loss=loss, wrt=wrt, progress=progress,
                           after_forward=lambda m: forward.append(_results(m, fmt, keep)))
    result = _results(machine, fmt, frozenset())  # the values are the forward pass's
    # Values as the forward pass left them (the backward pass uncomputes them);
    # status, faults, steps and cycles cover both passes.
    result.named, result.registers = forward[0].named, forward[0].registers
    result.overflows = forward[0].overflows
    result.loss_name = grads.loss_name
    faulted = np.asarray(machine.faulted)  # (result.status == "fault", without the strings)
    result.loss = _unless_faulted(to_reals(grads.loss, fmt), faulted)
    result.gradient = {name: _unless_faulted(to_reals(g, fmt), faulted)
                       for name, g in grads.gradient.items()}
    result.forward_steps = grads.forward_steps
    # A lane that faulted in the backward pass has no result either.
    fixed = {name for name, d in image.names.items() if d.fixed}
    result.named = {name: _unless_faulted(v, faulted) if name in fixed else v
                    for name, v in result.named.items()}
    return result


def _chunked(image: Image, inputs: Mapping[str, Any], options: BatchOptions, *, client: Any,
             executor: concurrent.futures.Executor | None, chunk_lanes: int | None,
             progress: Callable[[int], object] | None) -> BatchResult:
    """:func:`batch` in chunks: the inputs checked here, whole, then the chunks run and
    their results joined in lane order."""
    columns = {name: np.asarray(values) for name, values in inputs.items()}
    check_batch_inputs(image, ArraySource(columns), chunk_lanes=None)
    lanes = len(next(iter(columns.values())))
    jobs = [ChunkJob(chunk, image, options,
                     ArraySource({k: v[chunk.start:chunk.stop] for k, v in columns.items()}),
                     (0, chunk.lanes))
            for chunk in plan(lanes, chunk_lanes or DEFAULT_CHUNK_LANES)]
    outcomes = dict(run_chunks(run_chunk, jobs, client=client, executor=executor,
                               progress=progress))
    return merge([outcomes[job.chunk].result for job in jobs])  # type: ignore[misc]


def check_batch_inputs(image: Image, source: Any, chunk_lanes: int | None) -> None:
    """Every problem of a batch's inputs, found before any lane runs: unknown or missing
    names, ragged columns, unusable values (naming the column and row).  ``source`` is
    read ``chunk_lanes`` rows at a time (all at once for None)."""
    places = resolve_columns(source.names, image)
    check_inputs_given(image, places.values())
    if not places:
        raise BatchInputError("no input columns: the number of lanes is the length of a "
                              "column")
    lengths = {len(values) for values in getattr(source, "columns", {}).values()}
    if len(lengths) > 1 or 0 in lengths:
        shown = ", ".join(f"{name}: {len(values)}" for name, values in source.columns.items())
        raise BatchInputError(f"every input column needs the same, non-zero number of lanes "
                              f"({shown})")
    fmt = word_format(image.width)
    step = chunk_lanes or source.lanes
    for start in range(0, source.lanes, step):
        for name, values in source.read(start, min(start + step, source.lanes)).items():
            check_column(places[name], values, fmt, first_row=start + 1)


#: A chunk of at least this many lanes whose lanes outlive their last reference is
#: followed by a collection of cycles (:func:`run_chunk`).
COLLECT_MIN_LANES = 4096


@dataclass
class ChunkOutcome:
    """What a worker returns for a chunk: its ``record`` (lanes, faulted lanes, the faults
    described, overflow counts: JSON) and, unless it wrote them, its results."""

    record: dict[str, Any]
    result: BatchResult | None = None


def run_chunk(job: ChunkJob) -> ChunkOutcome:
    """Run one chunk (on a worker): read its inputs, run its lanes on the fastest engine
    here, and write its columns to the job's sink and record them, or return them."""
    options = job.options
    result = batch(job.image, job.inputs(), grad=options.grad, loss=options.loss,
                   wrt=options.wrt, engine=worker_engine(options.engine),
                   max_steps=options.max_steps, strict=options.strict,
                   columns=options.columns)
    start = job.chunk.start
    faults = [{**fault, "lane": fault["lane"] + start} for fault in result.faults]
    machine = weakref.ref(result.machine) if result.machine is not None else None
    result = replace(result, faults=faults, machine=None)
    if machine is not None and machine() is not None and job.chunk.lanes >= COLLECT_MIN_LANES:
        # The engine's lanes hold reference cycles (closures over the machine), which only
        # the cycle collector frees -- and it runs by object counts, not bytes: without
        # this, a worker holds several chunks' lanes at once (measured: 8x the lanes, +120
        # MB at 10^4 lanes a chunk on the vector engine).  The compiled engine's lanes
        # are freed on the spot and skip it; so do small chunks (a collection, ~50 ms,
        # would cost more than their lanes take).
        gc.collect()
    overflows = result.overflows if result.overflows is not None else np.zeros(0, np.int64)
    overflowed = np.nonzero(overflows)[0]
    record = {"index": job.chunk.index, "start": start, "lanes": result.lanes,
              "faulted": result.faulted, "faults": faults,
              "overflow_lanes": int(len(overflowed)),
              "first_overflow": ([int(overflowed[0]) + start, int(overflows[overflowed[0]])]
                                 if len(overflowed) else None)}
    if job.sink is None:
        return ChunkOutcome(record, result)
    job.sink.write_chunk(job.chunk.index, start, options.kept(result.columns()))
    record_chunk(job.sink.path, job.chunk.index, record)
    return ChunkOutcome(record)


def merge(results: list[BatchResult]) -> BatchResult:
    """The results of consecutive chunks (lane numbers already the batch's) as one."""
    first = results[0]

    def joined(columns: list[Any]) -> Any:
        return np.concatenate(columns)

    faults = [fault for r in results for fault in r.faults][:FAULTS_DESCRIBED]
    return BatchResult(
        lanes=sum(r.lanes for r in results), status=joined([r.status for r in results]),
        fault_kind=joined([r.fault_kind for r in results]), faults=faults,
        steps=joined([r.steps for r in results]), cycles=joined([r.cycles for r in results]),
        named={k: joined([r.named[k] for r in results]) for k in first.named},
        registers={k: joined([r.registers[k] for r in results]) for k in first.registers},
        loss_name=first.loss_name,
        loss=joined([r.loss for r in results]) if first.loss is not None else None,
        gradient={k: joined([r.gradient[k] for r in results]) for k in first.gradient},
        forward_steps=(joined([r.forward_steps for r in results])
                       if first.forward_steps is not None else None),
        overflows=(joined([r.overflows for r in results])
                   if first.overflows is not None else None))


def _unless_faulted(reals: np.ndarray, faulted: np.ndarray) -> np.ndarray:
    """The reals, NaN in every faulted lane (``faulted``: a lane's flag); the same array
    when no lane faulted (the common case: no pass over the lanes' status strings)."""
    if not faulted.any():
        return reals
    return np.where(faulted, np.nan, reals)


def _json_list(values: np.ndarray) -> list:
    """A column for JSON: NaN (a faulted lane's real) is null, so the JSON stays valid."""
    if values.dtype.kind != "f":
        return values.tolist()
    return [None if v != v else v for v in values.tolist()]


def _results(machine: Lanes, fmt: WordFormat, keep: frozenset[str] | None = None
             ) -> BatchResult:
    """The lanes' results; of the names and registers only those in ``keep`` (all for
    None)."""
    kinds: dict[int, str] = {}  # only the faulted lanes: no per-lane Python work else
    faults: list[dict[str, Any]] = []
    faulted = np.asarray(machine.faulted)
    for lane in np.nonzero(faulted)[0].tolist():
        fault = machine.fault(lane)
        assert fault is not None
        kinds[lane] = fault.kind
        if len(faults) < FAULTS_DESCRIBED:
            faults.append({"lane": lane, **fault_json(fault)})
    fault_kind = np.zeros(machine.lanes, dtype=f"<U{max(map(len, kinds.values()), default=1)}")
    if kinds:
        fault_kind[list(kinds)] = list(kinds.values())
    status = np.where(faulted, "fault", "finished")
    named = {name: _unless_faulted(column, faulted) if column.dtype.kind == "f" else column
             for name, column in named_columns(machine, keep=keep).items()}
    return BatchResult(
        lanes=machine.lanes, status=status,
        fault_kind=fault_kind, faults=faults, steps=np.asarray(machine.steps),
        cycles=np.asarray(machine.cycles), named=named,
        registers={f"${i}": signed(read_place(machine, i, None), fmt) for i in range(32)
                   if keep is None or f"${i}" in keep},
        machine=machine, overflows=overflow_counts(machine))
