"""J2 gradients from a Parquet input to a Zarr output on a local Dask cluster.

    revasm bench dask_batches [--quick]

Three measurements (docs/bench.md "dask_batches"):

* the run: ``LANES`` lanes of examples/bessel_j2.pal's gradient (x from -3 to 3) read
  from a Parquet file and written (status, loss, grad_x) to a Zarr group, on a
  ``LocalCluster`` of 2 worker processes of one thread each: total time, lanes/s, and
  each worker's peak resident memory (``ru_maxrss``: the workers are fresh processes);
* scaling: the same run on 1 worker and on 2 (on a 2-core machine the target is 1.7x);
* the Dask path's cost per chunk: one chunk of 10^4 and of 10^6 lanes (10^4 only with
  --quick) written to Zarr by ``revasm.batch_file`` here (one thread) and on a warm
  1-worker cluster; the difference is what Dask adds to a chunk.

The kernels are compiled before anything is timed (a first batch in this process fills
the disk cache the workers load from, and each worker runs a small batch before the
clock starts: ``startup_s`` is the cluster's start and that warm-up).  A full run (10^8
lanes) takes tens of minutes and ~2 GB of disk; --quick runs 4 * 10^4 lanes.
"""
from __future__ import annotations

import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .common import EXAMPLES

LANES = 10**8
QUICK_LANES = 40_000
CHUNK_LANES = 500_000
QUICK_CHUNK_LANES = 5_000
OVERHEAD_LANES = (10**4, 10**6)
QUICK_OVERHEAD_LANES = (10**4,)
COLUMNS = ("status", "loss", "grad_x")


def _peak_rss_mb() -> float:
    """This process's peak resident memory (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _write_inputs(path: Path, lanes: int, row_group: int) -> None:
    """x from -3 to 3 over ``lanes`` rows, written a row group at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("x", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, lanes, row_group):
            stop = min(start + row_group, lanes)
            xs = -3.0 + 6.0 * np.arange(start, stop, dtype=np.float64) / max(lanes - 1, 1)
            writer.write_table(pa.table({"x": xs}, schema=schema))


def _run(image: Any, source: Path, out: Path, options: Any, chunk_lanes: int,
         workers: int | None) -> dict[str, Any]:
    import revasm
    from revasm.batching.cluster import dask_client

    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out.with_name(out.name + ".revasm"), ignore_errors=True)
    if workers is None:
        started = time.perf_counter()
        summary = revasm.batch_file(image, str(source), str(out), options=options,
                                    chunk_lanes=chunk_lanes)
        return {"seconds": time.perf_counter() - started, "faulted": summary.faulted}
    began = time.perf_counter()
    with dask_client(workers=workers) as client:
        client.run(_warm, image)  # each worker loads the kernels (compiled: the disk cache)
        ready = time.perf_counter()
        started = time.perf_counter()
        summary = revasm.batch_file(image, str(source), str(out), options=options,
                                    client=client, chunk_lanes=chunk_lanes)
        seconds = time.perf_counter() - started
        peaks = sorted(client.run(_peak_rss_mb).values())
    return {"seconds": seconds, "faulted": summary.faulted, "lanes_per_s": summary.lanes / seconds,
            "startup_s": ready - began, "peak_rss_mb_per_worker": [round(p, 1) for p in peaks]}


def _warm(image: Any) -> None:
    """On a worker: a small batch on the compiled engine, so that its kernels (value and
    gradient mode, the parallel runner) are loaded before the timed run."""
    import pyarrow.parquet  # noqa: F401
    import zarr  # noqa: F401

    import revasm

    revasm.batch(image, {"x": np.linspace(-1.0, 1.0, 256)}, grad=True, engine="compiled")


def _overhead(image: Any, folder: Path, options: Any, lanes: int) -> dict[str, Any]:
    """One chunk of ``lanes`` lanes here and on a warm 1-worker cluster, best of 2."""
    import numba

    import revasm
    from revasm.batching.cluster import dask_client

    source = folder / f"overhead_{lanes}.parquet"
    _write_inputs(source, lanes, lanes)
    out = folder / f"overhead_{lanes}.zarr"
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # as a worker runs it: one thread
    try:
        here = min(_run(image, source, out, options, lanes, None)["seconds"] for _ in range(2))
    finally:
        numba.set_num_threads(threads)
    with dask_client(workers=1) as client:
        times = []
        for _ in range(3):  # the first warms the worker (imports, kernels loaded)
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out.with_name(out.name + ".revasm"), ignore_errors=True)
            started = time.perf_counter()
            revasm.batch_file(image, str(source), str(out), options=options, client=client,
                              chunk_lanes=lanes)
            times.append(time.perf_counter() - started)
    dask = min(times[1:])
    return {"lanes": lanes, "in_process_s": here, "dask_s": dask,
            "overhead_s_per_chunk": dask - here, "overhead_ratio": dask / here}


def run(quick: bool) -> dict:
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
        import zarr  # noqa: F401
    except ImportError as exc:
        return {"status": "not available", "reason": f"needs the dist extra ({exc.name})"}
    import revasm
    from revasm.batching.chunks import BatchOptions
    from revasm.sim.engines import available

    if "compiled" not in available():
        return {"status": "not available", "reason": "the compiled engine cannot run here"}
    lanes = QUICK_LANES if quick else LANES
    chunk_lanes = QUICK_CHUNK_LANES if quick else CHUNK_LANES
    image = revasm.assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    options = BatchOptions(grad=True, engine="compiled", columns=COLUMNS)
    _warm(image)  # compiled once, here: the workers load the kernels from the disk cache
    with tempfile.TemporaryDirectory(prefix="revasm-dask-batches-") as scratch:
        folder = Path(scratch)
        source = folder / "xs.parquet"
        _write_inputs(source, lanes, chunk_lanes)
        out = folder / "out.zarr"
        two = _run(image, source, out, options, chunk_lanes, 2)
        one = _run(image, source, out, options, chunk_lanes, 1)
        overheads = [_overhead(image, folder, options, n)
                     for n in (QUICK_OVERHEAD_LANES if quick else OVERHEAD_LANES)]
    return {"status": "measured", "program": "examples/bessel_j2.pal (gradient, W = 64)",
            "input": "parquet", "output": "zarr", "columns": list(COLUMNS), "lanes": lanes,
            "chunk_lanes": chunk_lanes, "two_workers": two, "one_worker": one,
            "speedup_two_workers": one["seconds"] / two["seconds"],
            "overhead_per_chunk": overheads}
