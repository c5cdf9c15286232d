"""Batches: one program over many inputs, one lane per row -- the whole feature in one place.

``revasm.batch`` (columns in memory) and ``revasm.batch_file`` (an inputs file to an
output, in chunks, here or on Dask) are this package's; ``revasm batch`` is a thin
command over them (``revasm.cli.commands_batch``).  Its modules, in the order a batch
meets them:

* :mod:`~revasm.batching.inputs` -- what an input value means: columns named by a
  register or a declared name, to lane words (a CSV or ``.npz`` file read whole);
* :mod:`~revasm.batching.sources` -- input files read a chunk at a time (CSV, NPZ,
  Parquet, Zarr);
* :mod:`~revasm.batching.chunks` -- cutting a batch into chunks and running them here,
  on an executor or on a Dask client;
* :mod:`~revasm.batching.cluster` -- the Dask cluster (a local one, or a scheduler's);
* :mod:`~revasm.batching.running` -- running lanes on an engine, a chunk's outcome,
  joining chunks (:class:`~revasm.batching.running.BatchResult`, ``batch``);
* :mod:`~revasm.batching.sinks` -- result columns written chunk by chunk (Parquet, Zarr);
* :mod:`~revasm.batching.files` -- a file batch from end to end (``batch_file``).

The package sits above the simulators (it runs any engine of ``revasm.sim``) and below
the Python API, the command line and the benchmarks; it never imports them.  (The
package is not called ``batch``: ``revasm.batch`` is the API's function.)
"""
