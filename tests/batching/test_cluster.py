"""Batches on a Dask cluster: a LocalCluster of 2 worker processes gives the in-process
bits (values, gradients, faults, op counts), also when one worker is killed mid-run."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zarr
from batch_programs import SOURCE, assert_same, image, inputs
from click.testing import CliRunner

import revasm
from revasm.batching import sinks
from revasm.batching.chunks import BatchOptions, worker_engine
from revasm.batching.cluster import ClusterError, dask_client
from revasm.cli.main import cli
from revasm.sim.engines import available

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def client():
    """One cluster for the module: 2 worker processes, one thread each."""
    with dask_client(workers=2) as client:
        yield client


def _stored(path: str) -> dict[str, np.ndarray]:
    if path.endswith(".zarr"):
        return {name: array[:] for name, array in zarr.open_group(path, mode="r").arrays()}
    table = pq.read_table(path)
    return {name: table.column(name).to_numpy(zero_copy_only=False)
            for name in table.column_names}


def _assert_stored(path: str, result: revasm.BatchResult) -> None:
    stored = _stored(path)
    assert stored.keys() == result.columns().keys()
    for name, values in result.columns().items():
        assert np.array_equal(stored[name].astype(values.dtype), values,
                              equal_nan=values.dtype.kind == "f"), name


def test_a_chunk_runs_on_the_fastest_engine_of_its_worker(client):
    engines = client.run(worker_engine, "auto")
    assert len(engines) == 2 and set(engines.values()) == {available()[0]}
    assert worker_engine("vector") == "vector"


def _start_environment() -> dict[str, str]:
    """This process's environment as it was when it started (Linux: /proc/self/environ)."""
    raw = Path("/proc/self/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_local_workers_start_with_one_thread_and_this_process_keeps_its_environment(client):
    # One thread from the process's start, before its first import: a worker that
    # learns it later may already have numba's pool of one thread per core.
    for environ in client.run(_start_environment).values():
        assert environ["NUMBA_NUM_THREADS"] == "1" and environ["OMP_NUM_THREADS"] == "1"
    assert set(client.run(lambda: __import__("numba").config.NUMBA_NUM_THREADS).values()) == {1}
    # ... while this process keeps its own (numba here reads them at each compile)
    names = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
    before = {name: os.environ.get(name) for name in names}
    with dask_client(workers=1) as one:
        assert {name: os.environ.get(name) for name in names} == before
        assert all(env["NUMBA_NUM_THREADS"] == "1"
                   for env in one.run(_start_environment).values())
    assert {name: os.environ.get(name) for name in names} == before


def _profiling() -> bool:
    import dask

    return bool(dask.config.get("distributed.worker.profile.enabled"))


def test_local_workers_skip_dask_s_periodic_profiling_and_this_process_keeps_its_config(
        client):
    import dask

    assert set(client.run(_profiling).values()) == {False}
    assert _profiling() and dask.config.get("distributed.admin.tick.interval") == "20ms"
    with dask_client(workers=1) as one:  # a second cluster, after the first one's config
        assert set(one.run(_profiling).values()) == {False}
    assert _profiling() and dask.config.get("distributed.comm.require-encryption") is None


def test_a_local_cluster_leaves_port_8787_to_whoever_has_it(client):
    """Dask's default HTTP port held by someone else (here a socket; else a user's
    dashboard): the cluster starts without Dask's 'Port 8787 is already in use'."""
    import socket
    import warnings

    holder = socket.socket()
    try:
        holder.bind(("", 8787))
        holder.listen()
    except OSError:
        pass  # someone else has it: the same situation
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with dask_client(workers=1) as one:
                assert one.submit(sum, [1, 2]).result() == 3
    finally:
        holder.close()
    assert not [w for w in caught if "8787" in str(w.message)], \
        [str(w.message) for w in caught]


@pytest.mark.parametrize("grad", [False, True])
def test_two_worker_processes_give_the_in_process_bits(client, grad):
    columns = inputs(600, seed=11)
    here = revasm.batch(image(), columns, grad=grad)
    assert here.faulted and np.any(here.overflows)
    there = revasm.batch(image(), columns, grad=grad, client=client, chunk_lanes=100)
    assert_same(here, there)


def test_a_worker_killed_mid_run_is_survived_and_the_output_is_the_same(client, tmp_path):
    j2 = revasm.assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    xs = np.linspace(-3.0, 3.0, 1500)
    source = tmp_path / "xs.parquet"
    pq.write_table(pa.table({"x": xs}), source, row_group_size=400)
    before = client.run(os.getpid)
    victim = next(iter(before.values()))
    killed = []

    def kill_one_worker(done: int) -> None:
        if not killed:  # after the first chunk: the others are queued or running
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    out = str(tmp_path / "out.zarr")
    # the reference engine: slow enough (~0.25 s a chunk) for the kill to land mid-run
    options = BatchOptions(grad=True, engine="reference")
    summary = revasm.batch_file(j2, str(source), out, options=options, client=client,
                                chunk_lanes=150, progress=kill_one_worker)
    assert killed and killed[0] < 1500
    assert summary.written == 10 and summary.faulted == 0
    client.wait_for_workers(2, timeout=60)
    after = client.run(os.getpid)
    assert victim not in after.values()  # the nanny started a new worker process
    _assert_stored(out, revasm.batch(j2, {"x": xs}, grad=True, engine="vector"))


def test_the_command_line_runs_on_a_scheduler_and_on_workers_it_starts(client, tmp_path):
    program = tmp_path / "lanes.pal"
    program.write_text(SOURCE)
    columns = inputs(400, seed=2)
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table(columns), source)
    here = revasm.batch(image(), columns, grad=True)
    runs = {"out.parquet": ["--scheduler", client.scheduler.address],
            "out.zarr": ["--workers", "1"]}
    for name, where in runs.items():
        out = tmp_path / name
        result = CliRunner().invoke(cli, ["batch", str(program), "--inputs", str(source),
                                          "--grad", "-o", str(out), "--chunk-lanes", "64",
                                          "--all-registers", "--json", *where],
                                    catch_exceptions=False)
        assert result.exit_code == 1, result.output  # some lanes fault
        summary = json.loads(result.stdout)
        assert summary["lanes"] == 400 and summary["faulted"] == here.faulted
        assert summary["chunks"] == summary["chunks_written"] == 7
        assert [f["lane"] for f in summary["faults"]] == [f["lane"] for f in here.faults]
        _assert_stored(str(out), here)


def test_a_lost_scheduler_is_one_clear_error_and_the_same_command_resumes(tmp_path):
    from distributed import LocalCluster

    columns = inputs(1000, seed=9)
    source = tmp_path / "in.npz"
    np.savez(source, **columns)
    out = str(tmp_path / "out.parquet")
    options = BatchOptions(grad=True, engine="reference")  # ~0.1 s a chunk
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0")

    def lose_the_scheduler(done: int) -> None:
        cluster.close()

    with pytest.raises(ClusterError, match="lost the Dask scheduler.*the same command resumes"):
        with dask_client(scheduler=cluster.scheduler_address) as client:
            revasm.batch_file(image(), str(source), out, options=options, client=client,
                              chunk_lanes=100, progress=lose_the_scheduler)
    summary = revasm.batch_file(image(), str(source), out, options=options, chunk_lanes=100)
    assert summary.skipped >= 1 and summary.written + summary.skipped == 10
    _assert_stored(out, revasm.batch(image(), columns, grad=True))


def _revasm_batch(tmp_path: Path, lanes: int, out: str, *options: str) -> list[str]:
    """`revasm batch` of J2 gradients over ``lanes`` lanes on 2 local workers, as a user
    types it (a process of its own, for signals and for what reaches stderr)."""
    source = tmp_path / "xs.npz"
    if not source.exists():
        np.savez(source, x=np.linspace(0.1, 3.0, lanes))
    return [sys.executable, "-m", "revasm", "batch", str(EXAMPLES / "bessel_j2.pal"),
            "--inputs", str(source), "--grad", "-o", out, "--workers", "2", *options]


@pytest.mark.slow
def test_runs_on_two_workers_end_with_nothing_but_the_summary_on_stderr(tmp_path):
    """A bounded repeat: each run's stderr is the one summary line, no Dask log, no
    traceback (an orderly, quiet shutdown: client, workers, scheduler)."""
    for run in range(3):
        out = str(tmp_path / f"out{run}.zarr")
        done = subprocess.run(_revasm_batch(tmp_path, 20_000, out, "--chunk-lanes", "2000"),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 2 and lines[1].startswith(f"wrote {out}: 20000 lanes"), lines
        assert lines[0].startswith("a local Dask cluster of 2 workers started in"), lines


@pytest.mark.slow
def test_ctrl_c_says_the_same_command_resumes_exits_130_and_prints_nothing_else(tmp_path):
    """Ctrl-C on a terminal signals the whole process group, the workers too: they ignore
    it, the command closes the cluster and says what it kept; the same command resumes."""
    out = str(tmp_path / "out.zarr")
    command = _revasm_batch(tmp_path, 400_000, out, "--chunk-lanes", "10000")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while not sinks.recorded_chunks(out) and process.poll() is None:
        assert time.monotonic() < deadline, "no chunk written in 240 s"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 2, stderr  # no traceback, no Dask log, no "Aborted!"
    assert lines[0].startswith("a local Dask cluster of 2 workers started in"), stderr
    assert lines[1] == (f"revasm: interrupted: the chunks written so far are kept in {out}; "
                        "the same command resumes from them")
    written = len(sinks.recorded_chunks(out))
    assert 1 <= written < 40
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{written} of 40 chunks already written" in resumed.stderr


def test_a_local_cluster_has_a_bounded_number_of_workers(tmp_path):
    """`--workers 99999999999` had Dask build a worker spec for each until the machine ran
    out of memory (the cli campaign's processes were killed at 20 GB)."""
    from revasm.batching.cluster import MAX_LOCAL_WORKERS

    for workers in (0, MAX_LOCAL_WORKERS + 1, 99_999_999_999):
        with pytest.raises(ClusterError, match=f"1 to {MAX_LOCAL_WORKERS} worker processes"):
            with dask_client(workers=workers):
                pass
    root = Path(__file__).resolve().parents[2]
    result = CliRunner().invoke(cli, ["batch", str(root / "examples" / "multiply.pal"),
                                      "--inputs", str(root / "examples" / "ab.csv"),
                                      "--workers", "99999999999"])
    assert result.exit_code == 2 and "1<=x<=256" in result.output
