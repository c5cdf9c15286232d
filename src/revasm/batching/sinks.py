"""Batch outputs written chunk by chunk: a Parquet dataset or a Zarr group, resumable.

A chunked batch (:mod:`revasm.batching.chunks`) hands each chunk's result columns to the sink on
the worker that computed them, so no process ever holds more than a chunk of results:

* Parquet: ``OUT.parquet/`` is a dataset folder with one file per chunk
  (``part-000042.parquet``), each written to a temporary file and renamed whole;
  ``pyarrow.parquet.read_table("OUT.parquet")`` (or pandas, or dask.dataframe) reads
  the lanes in order;
* Zarr: ``OUT.zarr/`` is a Zarr (format 2) group with one 1-D array per column, chunked
  as the batch is, so that each chunk's write touches its own zarr chunk files only.

Nothing lost: after a chunk's data is in place, a record of it
(``chunk-000042.json``: its lanes, faults and overflow counts) is written atomically
to the output's record folder; a chunk without a record is written again by the next
run of the same command, and a chunk with one is skipped.  ``run.json`` there says what
the output holds (the program, the inputs, the options, the columns): a later run into
the same output must be the same batch, or it is refused.  The record folder is
``OUT.parquet/_revasm`` (Parquet readers skip names starting with ``_``) and
``OUT.zarr.revasm`` beside a Zarr group (zarr warns about any folder in a group that
is not an array or a group).
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from revasm.assembler.files import atomic_open, atomic_path, write_atomic
from revasm.machine import FAULT_KINDS

#: The record folder inside an output, and its description of the run.
RECORDS = "_revasm"
RUN_FILE = "run.json"
#: What a revasm batch output says it is (in ``run.json``).
OUTPUT_KIND = "revasm batch output, version 1"
#: Output formats written chunk by chunk.
FORMATS = (".parquet", ".zarr")
#: The width of the string columns in Zarr (``status``, ``fault_kind``).
STRING_WIDTH = max(len("finished"), *(len(kind) for kind in FAULT_KINDS))


class BatchOutputError(ValueError):
    """An output the batch cannot write (another run's, not a folder of ours, unwritable)."""


class Sink(Protocol):
    """Where a chunked batch writes its result columns, a chunk at a time."""

    @property
    def path(self) -> str:
        """The output folder."""
        ...

    def write_chunk(self, index: int, start: int, columns: dict[str, np.ndarray]) -> None:
        """Store the columns of lanes ``[start, start + lanes)`` (chunk ``index``)."""
        ...


def write_npz(path: str, arrays: dict[str, Any]) -> None:
    """Result columns to ``path`` as one .npz, whole or not at all (a temporary file,
    renamed): ``revasm batch -o OUT.npz``'s writer.  Raises ``OSError``."""
    with atomic_open(path, "wb") as stream:
        np.savez(stream, **arrays)


def chunk_name(index: int) -> str:
    return f"chunk-{index:06d}.json"


def records_folder(path: str) -> Path:
    """Where the records of the output at ``path`` are (see the module's docstring)."""
    target = Path(path)
    if target.suffix.lower() == ".zarr":
        return target.with_name(target.name + ".revasm")
    return target / RECORDS


def record_chunk(path: str, index: int, record: dict[str, Any]) -> None:
    """Mark chunk ``index`` of the output at ``path`` written (atomically)."""
    write_atomic(records_folder(path) / chunk_name(index), json.dumps(record))


def recorded_chunks(path: str) -> dict[int, dict[str, Any]]:
    """The chunks of the output at ``path`` already written: index -> record."""
    folder = records_folder(path)
    records = {}
    for file in folder.glob("chunk-*.json"):
        try:
            records[int(file.stem.split("-")[1])] = json.loads(file.read_text())
        except (OSError, ValueError):
            continue  # unreadable: the chunk is written again
    return records


def prepare(path: str, run: dict[str, Any], schema: list[tuple[str, str]], lanes: int,
            chunk_lanes: int) -> Sink:
    """The sink of ``path`` (by suffix), created, or reopened to resume the same run.

    ``run`` identifies the batch (program, inputs, options); ``schema`` lists the result
    columns as (name, numpy dtype string).  Raises :class:`BatchOutputError` for a path
    that holds something else."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise BatchOutputError(f"{path}: a chunked output is a .parquet or .zarr folder")
    if suffix == ".parquet":
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise BatchOutputError("writing .parquet outputs needs pyarrow, which is not "
                                   "installed: pip install 'revasm[dist]'") from None
    description = json.loads(json.dumps(  # as read back: lists, not tuples
        {"kind": OUTPUT_KIND, "run": run, "columns": schema, "lanes": lanes,
         "chunk_lanes": chunk_lanes}))
    target = Path(path)
    run_file = records_folder(path) / RUN_FILE
    if not target.parent.is_dir():  # as every output of revasm: no folder made on the way
        raise BatchOutputError(f"{path}: cannot write: no folder {target.parent}")
    if target.exists():
        try:
            existing = json.loads(run_file.read_text())
        except (OSError, ValueError):
            raise BatchOutputError(f"{path}: exists and is not a revasm batch output: remove "
                                   "it or choose another -o") from None
        if existing != description:
            theirs = {**existing.get("run", {}), **existing}
            ours = {**description["run"], **description}
            differ = sorted(k for k in ours if k != "run" and theirs.get(k) != ours[k])
            raise BatchOutputError(f"{path}: holds the results of another batch (its "
                                   f"{', '.join(differ)} differ): remove it or choose another "
                                   "-o")
    else:
        _create(target, suffix, schema, lanes, chunk_lanes, description)
    if suffix == ".parquet":
        return ParquetSink(path)
    return ZarrSink(path)


def _create(target: Path, suffix: str, schema: list[tuple[str, str]], lanes: int,
            chunk_lanes: int, description: dict[str, Any]) -> None:
    """A new output folder, built beside the target and renamed into place whole."""
    building = target.with_name(f".{target.name}.building")
    shutil.rmtree(building, ignore_errors=True)
    records = records_folder(str(target))
    if suffix == ".zarr":  # a stale one of an output removed since
        shutil.rmtree(records, ignore_errors=True)
    try:
        if suffix == ".zarr":
            zarr = _zarr()
            group = zarr.open_group(str(building), mode="w", zarr_format=2)
            for name, dtype in schema:
                kind = np.dtype(dtype)
                if kind.kind == "U":
                    kind = np.dtype(f"<U{STRING_WIDTH}")
                group.create_array(name, shape=(lanes,), chunks=(chunk_lanes,), dtype=kind,
                                   fill_value="" if kind.kind == "U" else 0)
            records.mkdir()
        else:
            building.mkdir()
            (building / RECORDS).mkdir()
        write_atomic((records if suffix == ".zarr" else building / RECORDS) / RUN_FILE,
                     json.dumps(description))
        os.replace(building, target)
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise BatchOutputError(f"{target}: cannot write ({exc.strerror or exc})") from None


def remove_temporaries(path: str) -> None:
    """Delete what a killed worker left half-written (its hidden temporary files)."""
    for file in [*Path(path).rglob(".*.tmp*"), *records_folder(path).glob(".*.tmp*")]:
        try:
            file.unlink()
        except OSError:
            pass


@dataclass(frozen=True)
class ParquetSink:
    """One Parquet file per chunk in a dataset folder."""

    path: str

    def write_chunk(self, index: int, start: int, columns: dict[str, np.ndarray]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({name: pa.array(values) for name, values in columns.items()})
        with atomic_path(Path(self.path) / f"part-{index:06d}.parquet") as temporary:
            pq.write_table(table, temporary)


@dataclass(frozen=True)
class ZarrSink:
    """A Zarr group of 1-D arrays, chunked as the batch."""

    path: str

    def write_chunk(self, index: int, start: int, columns: dict[str, np.ndarray]) -> None:
        group = _zarr().open_group(self.path, mode="r+")
        for name, values in columns.items():
            group[name][start:start + len(values)] = values


def _zarr() -> Any:
    try:
        import zarr
    except ImportError:
        raise BatchOutputError("writing .zarr outputs needs zarr, which is not installed: "
                               "pip install 'revasm[dist]'") from None
    return zarr
