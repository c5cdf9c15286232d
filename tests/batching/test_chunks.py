"""Batches in chunks, in this process and on executors: the one-process bits, streaming
files in and out, resuming, and every bad input named by file, column and row."""
from __future__ import annotations

import concurrent.futures
import json
import re
import subprocess
import sys
from pathlib import Path

import batch_programs
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zarr
from batch_programs import SOURCE, assert_same, image, inputs
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import revasm
from revasm.batching import sinks
from revasm.batching.chunks import BatchOptions
from revasm.batching.inputs import BatchInputError, to_words
from revasm.batching.sources import CSV_STRIDE, open_source
from revasm.cli.main import cli
from revasm.isa.fixed_point import WordFormat


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("program") / "lanes.pal"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize("grad", [False, True])
def test_chunks_here_and_on_a_thread_pool_give_the_one_process_bits(grad):
    columns = inputs(200)
    whole = revasm.batch(image(), columns, grad=grad)
    assert whole.faulted and np.any(whole.overflows)  # every kind of lane is there
    here = revasm.batch(image(), columns, grad=grad, chunk_lanes=37, engine="vector")
    assert_same(whole, here)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pooled = revasm.batch(image(), columns, grad=grad, chunk_lanes=64, executor=pool)
    assert_same(whole, pooled)


@settings(max_examples=25, deadline=None)
@given(lanes=st.integers(1, 60), chunk_lanes=st.integers(1, 70), seed=st.integers(0, 2**16),
       grad=st.booleans())
def test_any_cut_into_chunks_gives_the_one_batch_bits(lanes, chunk_lanes, seed, grad):
    columns = inputs(lanes, seed)
    whole = revasm.batch(image(), columns, grad=grad, engine="vector")
    chunked = revasm.batch(image(), columns, grad=grad, engine="vector",
                           chunk_lanes=chunk_lanes)
    assert_same(whole, chunked)


def test_chunks_read_back_only_the_columns_asked_for_as_one_machine_does():
    columns = inputs(150)
    whole = revasm.batch(image(), columns, grad=True, engine="vector", columns=["x", "$3"])
    chunked = revasm.batch(image(), columns, grad=True, engine="vector", columns=["x", "$3"],
                           chunk_lanes=40)
    assert set(whole.named) == {"x"} and set(whole.registers) == {"$3"}
    assert_same(whole, chunked)


@pytest.mark.parametrize("grad", [False, True])
def test_a_batch_of_more_than_stream_lanes_runs_in_parts_with_the_one_machine_bits(
        monkeypatch, grad):
    """Past ``STREAM_LANES`` lanes a batch runs here in parts, each on a machine of its own:
    the same columns, faults numbered by the batch's lanes, progress counting up to every
    lane, on each engine (auto picks per part)."""
    from revasm.batching import running

    columns = inputs(1200)
    columns["y"][:1050] = 0.0  # more faults than are described, across the parts
    whole = revasm.batch(image(), columns, grad=grad, engine="vector")
    assert whole.machine is not None and len(whole.faults) == running.FAULTS_DESCRIBED
    monkeypatch.setattr(running, "STREAM_LANES", 97)
    for engine in ("vector", "reference", "auto"):
        seen: list[int] = []
        parts = revasm.batch(image(), columns, grad=grad, engine=engine,
                             progress=seen.append)
        assert_same(whole, parts)
        assert parts.machine is None and parts.lanes == 1200
        assert seen[-1] == 1200 and max(seen) == 1200 and seen[0] <= 97
    # auto chooses once, for all the lanes: a part's 97 would weigh too little work (at 10^6
    # J2 lanes, parts of 2^17 went to the vector engine, 2x slower than the tile engine)
    asked: list[int] = []

    def auto_engine(image, lanes, memory_words=None):
        asked.append(lanes)
        return "vector"
    monkeypatch.setattr(running, "auto_engine", auto_engine)
    assert_same(whole, revasm.batch(image(), columns, grad=grad, engine="auto"))
    assert asked == [1200]


def test_more_than_a_chunk_of_faults_are_described_as_in_one_process():
    columns = inputs(3000)
    columns["y"][:] = 0.0  # every lane faults: 1000 are described
    whole = revasm.batch(image(), columns, engine="vector")
    chunked = revasm.batch(image(), columns, chunk_lanes=700, engine="vector")
    assert len(whole.faults) == 1000
    assert_same(whole, chunked)


def test_a_file_batch_describes_the_first_faults_by_lane_whatever_the_chunks(tmp_path):
    columns = inputs(3000)
    columns["y"][:] = 0.0  # every lane faults
    source = tmp_path / "in.npz"
    np.savez(source, **columns)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        summary = revasm.batch_file(image(), str(source), str(tmp_path / "out.zarr"),
                                    chunk_lanes=400, executor=pool,
                                    options=BatchOptions(engine="vector"))
    assert summary.faulted == 3000
    assert [fault["lane"] for fault in summary.faults] == list(range(1000))


def _write_inputs(folder, columns, kind):
    if kind == "csv":
        path = folder / "in.csv"
        path.write_text("x,y\n" + "".join(f"{x!r},{y!r}\n" for x, y in
                                           zip(columns["x"].tolist(), columns["y"].tolist())))
    elif kind == "npz":
        path = folder / "in.npz"
        np.savez(path, **columns)
    elif kind == "parquet":
        path = folder / "in.parquet"
        pq.write_table(pa.table(columns), path, row_group_size=50)
    else:
        path = folder / "in.zarr"
        group = zarr.open_group(str(path), mode="w")
        for name, values in columns.items():
            group.create_array(name, data=values, chunks=(64,))
    return path


@pytest.mark.parametrize("kind", ["csv", "npz", "parquet", "zarr"])
def test_every_input_format_streams_to_parquet_and_zarr_with_the_one_process_bits(
        tmp_path, program, kind):
    columns = inputs(300, seed=3)
    whole = revasm.batch(image(), columns, grad=True)
    source = _write_inputs(tmp_path, columns, kind)
    for out in ("out.parquet", "out.zarr", "out.npz"):
        result = invoke("batch", program, "--inputs", source, "--grad", "-o", tmp_path / out,
                        "--chunk-lanes", 128, "--engine", "vector", "--all-registers")
        assert result.exit_code == 1, result.output  # lanes faulted
        assert "300 lanes" in result.stderr and "faulted" in result.stderr
    written = {"npz": dict(np.load(tmp_path / "out.npz")),
               "parquet": {k: v.to_numpy(zero_copy_only=False) for k, v in zip(
                   *(lambda t: (t.column_names, t.columns))(pq.read_table(tmp_path /
                                                                           "out.parquet")))},
               "zarr": {k: v[:] for k, v in zarr.open_group(str(tmp_path / "out.zarr"),
                                                            mode="r").arrays()}}
    for name, values in whole.columns().items():
        for fmt, output in written.items():
            got = np.asarray(output[name])
            assert np.array_equal(got.astype(values.dtype), values,
                                  equal_nan=values.dtype.kind == "f"), (fmt, name)


def test_a_parquet_output_folder_is_an_input_of_the_next_batch(tmp_path, program):
    columns = inputs(250, seed=4)
    columns["y"][columns["y"] == 0.0] = 1.0  # no lane faults: each row is a next input
    source = _write_inputs(tmp_path, columns, "npz")
    first = tmp_path / "xy.parquet"
    result = invoke("batch", program, "--inputs", source, "-o", first, "--columns", "x,y",
                    "--chunk-lanes", 60, "--engine", "vector")
    assert result.exit_code == 0 and len(list(first.glob("part-*.parquet"))) == 5
    stored_x = revasm.batch(image(), columns).named["x"]  # x as a Q32.32 word
    assert open_source(str(first)).read(55, 65)["x"].tolist() == stored_x[55:65].tolist()
    again = tmp_path / "again.npz"
    result = invoke("batch", program, "--inputs", first, "-o", again, "--grad",
                    "--chunk-lanes", 100, "--engine", "vector")
    assert result.exit_code == 0, result.output
    whole = revasm.batch(image(), columns, grad=True).columns()
    for name, values in np.load(again).items():
        assert np.array_equal(values, whole[name], equal_nan=values.dtype.kind == "f"), name


def test_a_csv_source_reads_any_range_of_rows(tmp_path):
    rows = CSV_STRIDE * 2 + 10
    path = tmp_path / "big.csv"
    path.write_text("n,x\n" + "".join(f"{i},{i / 4}\n" + ("\n" if i % 1000 == 0 else "")
                                       for i in range(rows)))
    source = open_source(str(path))
    assert source.lanes == rows and source.names == ("n", "x")
    for start, stop in [(0, 3), (CSV_STRIDE - 1, CSV_STRIDE + 2), (rows - 5, rows)]:
        chunk = source.read(start, stop)
        assert chunk["n"].tolist() == list(range(start, stop))
        assert chunk["x"].dtype == np.float64 and chunk["x"][0] == start / 4
        part = source.part(start, stop)  # what a chunk's job carries: one mark
        assert len(part.marks) == 1
        assert part.read(start, stop)["n"].tolist() == chunk["n"].tolist()


def test_an_interrupted_run_resumed_writes_only_the_missing_chunks(tmp_path, monkeypatch):
    columns = inputs(500, seed=5)
    source = tmp_path / "in.npz"
    np.savez(source, **columns)
    out = str(tmp_path / "out.zarr")
    options = BatchOptions(grad=True, engine="vector")
    writes: list[int] = []
    write = sinks.ZarrSink.write_chunk

    def counted(self, index, start, values):
        writes.append(index)
        write(self, index, start, values)

    monkeypatch.setattr(sinks.ZarrSink, "write_chunk", counted)

    def interrupt(done):
        if done >= 200:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        revasm.batch_file(image(), str(source), out, options=options, chunk_lanes=100,
                          progress=interrupt)
    assert writes == [0, 1]
    # a chunk written but not recorded (a worker killed between the two) is written again
    columns_of_2 = revasm.batch(image(), {k: v[200:300] for k, v in columns.items()},
                                grad=True).columns()
    sinks.ZarrSink(out).write_chunk(2, 200, columns_of_2)
    writes.clear()
    summary = revasm.batch_file(image(), str(source), out, options=options, chunk_lanes=100)
    assert sorted(writes) == [2, 3, 4]
    assert (summary.written, summary.skipped, summary.lanes) == (3, 2, 500)
    writes.clear()
    again = revasm.batch_file(image(), str(source), out, options=options, chunk_lanes=100)
    assert writes == [] and again.skipped == 5 and again.faulted == summary.faulted > 0
    stored = zarr.open_group(out, mode="r")
    whole = revasm.batch(image(), columns, grad=True)
    for name, values in whole.columns().items():
        assert np.array_equal(stored[name][:].astype(values.dtype), values,
                              equal_nan=values.dtype.kind == "f"), name


def test_an_output_of_another_batch_or_not_of_a_batch_is_refused(tmp_path, program):
    source = tmp_path / "in.npz"
    np.savez(source, **inputs(50))
    out = tmp_path / "out.parquet"
    first = invoke("batch", program, "--inputs", source, "-o", out, "--chunk-lanes", 20,
                   "--engine", "vector")
    assert first.exit_code == 1 and (out / "part-000002.parquet").exists()
    other = invoke("batch", program, "--inputs", source, "--grad", "-o", out,
                   "--chunk-lanes", 20, "--engine", "vector", "--json")
    assert other.exit_code == 1
    error = json.loads(other.stdout)["error"]
    assert error["kind"] == "output" and "another batch" in error["message"]
    assert "options" in error["message"] and "remove it" in error["message"]
    nowhere = tmp_path / "no" / "such" / "out.zarr"
    refused = invoke("batch", program, "--inputs", source, "-o", nowhere, "--engine", "vector")
    assert refused.exit_code == 1 and "cannot write: no folder" in refused.stderr
    assert not (tmp_path / "no").exists()
    stranger = tmp_path / "mine.zarr"
    stranger.mkdir()
    refused = invoke("batch", program, "--inputs", source, "-o", stranger, "--engine", "vector")
    assert refused.exit_code == 1 and "not a revasm batch output" in refused.stderr
    assert list(stranger.iterdir()) == []


def _bad_parquet(folder, table):
    path = folder / "bad.parquet"
    pq.write_table(table, path)
    return path


def _bad_zarr(folder, name, values):
    path = folder / "bad.zarr"
    group = zarr.open_group(str(path), mode="w")
    group.create_array(name, data=values, chunks=(2,) * values.ndim)
    group.create_array("y", data=np.ones(len(values)), chunks=(2,))
    return path


def _corrupt_zarr(folder):
    path = _bad_zarr(folder, "x", np.ones(4))
    (path / "x" / "zarr.json").write_text("{not json")
    return path


BAD_INPUTS = {
    "csv, not a number": (lambda d: _text(d / "bad.csv", "x,y\n1.0,2.0\n1.0,abc\n"),
                          ["bad.csv:3", "column 'y'", "'abc' is not a number"]),
    "csv, NaN": (lambda d: _text(d / "bad.csv", "x,y\n1.0,2.0\n3.0,2.0\nnan,1.0\n"),
                 ["bad.csv", "column 'x', row 3", "not a finite number"]),
    "csv, a row too long": (lambda d: _text(d / "bad.csv", "x,y\n1.0,2.0,3.0\n"),
                            ["bad.csv:2", "3 values, but the header names 2 columns"]),
    "csv, not text": (lambda d: _bytes(d / "bad.csv", b"x,y\n\xff\xfe,1\n"),
                      ["bad.csv:2", "not UTF-8"]),
    "npz, strings": (lambda d: _npz(d, x=np.array(["a", "b"]), y=np.ones(2)),
                     ["bad.npz", "column 'x'", "not numbers"]),
    "npz, out of range": (lambda d: _npz(d, x=np.array([1.0, 1e30]), y=np.ones(2)),
                          ["bad.npz", "column 'x', row 2", "does not fit Q32.32"]),
    "npz, corrupt": (lambda d: _bytes(d / "bad.npz", b"PK\x03\x04 not a zip at all"),
                     ["bad.npz", "not a valid .npz file"]),
    "npz, ragged": (lambda d: _npz(d, x=np.ones(3), y=np.ones(2)),
                    ["bad.npz", "differ in length", "x: 3", "y: 2"]),
    "parquet, strings": (lambda d: _bad_parquet(d, pa.table({"x": ["a"], "y": [1.0]})),
                         ["bad.parquet", "column 'x'", "string", "not numbers"]),
    "parquet, null": (lambda d: _bad_parquet(d, pa.table({"x": [1.0, 2.0, None],
                                                          "y": [1.0, 1.0, 1.0]})),
                      ["bad.parquet", "column 'x', row 3", "null"]),
    "parquet, NaN": (lambda d: _bad_parquet(d, pa.table({"x": [1.0, float("nan")],
                                                         "y": [1.0, 1.0]})),
                     ["bad.parquet", "column 'x', row 2", "not a finite number"]),
    "parquet, corrupt": (lambda d: _bytes(d / "bad.parquet", b"PAR1 garbage PAR1"),
                         ["bad.parquet", "not a valid Parquet file"]),
    "parquet, unknown column": (lambda d: _bad_parquet(d, pa.table({"x": [1.0], "y": [1.0],
                                                                    "q": [1.0]})),
                                ["bad.parquet", "'q'"]),
    "zarr, NaN": (lambda d: _bad_zarr(d, "x", np.array([1.0, 2.0, 3.0, np.nan])),
                  ["bad.zarr", "column 'x', row 4", "not a finite number"]),
    "zarr, two-dimensional": (lambda d: _bad_zarr(d, "x", np.ones((2, 2))),
                              ["bad.zarr", "one-dimensional", "x"]),
    "zarr, corrupt": (_corrupt_zarr, ["bad.zarr"]),
    "zarr, unknown column": (lambda d: _bad_zarr(d, "q", np.ones(2)),
                             ["bad.zarr", "column 'q'", "neither a register"]),
    "parquet, missing input": (lambda d: _bad_parquet(d, pa.table({"y": [1.0]})),
                               ["bad.parquet", "no column for the input 'x'"]),
    "missing file": (lambda d: d / "absent.parquet", ["absent.parquet", "no such file"]),
}


def _text(path, text):
    path.write_text(text)
    return path


def _bytes(path, data):
    path.write_bytes(data)
    return path


def _npz(folder, **columns):
    path = folder / "bad.npz"
    np.savez(path, **columns)
    return path


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_every_bad_input_names_its_file_column_and_row_and_writes_nothing(
        tmp_path, program, case):
    make, expected = BAD_INPUTS[case]
    source = make(tmp_path)
    out = tmp_path / "out.zarr"
    result = invoke("batch", program, "--inputs", source, "-o", out, "--chunk-lanes", 2,
                    "--engine", "vector")
    assert result.exit_code == 1, result.output
    message = result.stderr
    assert "Traceback" not in result.output
    for part in expected:
        assert part in message, (part, message)
    assert not out.exists() and not (tmp_path / "out.zarr.revasm").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    as_json = invoke("batch", program, "--inputs", source, "-o", out, "--chunk-lanes", 2,
                     "--engine", "vector", "--json")
    error = json.loads(as_json.stdout)
    assert error["status"] == "error" and error["error"]["kind"] == "input"
    assert error["error"]["message"] == message.strip()


def test_a_missing_extra_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = tmp_path / "in.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(BatchInputError, match=r"needs pyarrow.*pip install 'revasm\[dist\]'"):
        open_source(str(path))


def test_a_missing_extra_for_an_output_or_a_cluster_says_how_to_install_it(
        monkeypatch, tmp_path, program):
    source = tmp_path / "in.npz"
    np.savez(source, **inputs(4))
    for module in ("pyarrow", "pyarrow.parquet", "zarr", "distributed"):
        monkeypatch.setitem(sys.modules, module, None)
    for out, more in (("out.parquet", []), ("out.zarr", []), ("out.npz", ["--workers", "2"])):
        result = invoke("batch", program, "--inputs", source, "-o", tmp_path / out,
                        "--engine", "vector", *more)
        assert result.exit_code == 1 and "pip install 'revasm[dist]'" in result.stderr, out
        assert not (tmp_path / out).exists()


def test_workers_and_scheduler_together_are_a_usage_error(program, tmp_path):
    source = tmp_path / "in.npz"
    np.savez(source, **inputs(4))
    result = invoke("batch", program, "--inputs", source, "--workers", 2, "--scheduler",
                    "tcp://127.0.0.1:1")
    assert result.exit_code == 2 and "choose one of --workers and --scheduler" in result.stderr


def test_a_terminal_shows_lanes_done_lanes_per_second_and_time_left(program, tmp_path,
                                                                    monkeypatch):
    source = tmp_path / "in.npz"
    np.savez(source, **inputs(300))
    runner = CliRunner()
    with runner.isolation() as (_, err, _):
        monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
        with pytest.raises(SystemExit):  # lanes faulted: exit 1
            cli.main(["batch", str(program), "--inputs", str(source), "-o",
                      str(tmp_path / "out.zarr"), "--chunk-lanes", "100", "--engine", "vector"])
        shown = err.getvalue().decode()
    assert "300/300" in shown and "0:00:00" in shown  # the bar: lanes done, time left
    assert re.search(r"\d lanes/s.*300/300|300/300.*\d lanes/s", shown, re.S)
    assert "wrote" in shown and "3 chunks, 300 lanes run" in shown
    plain = invoke("batch", program, "--inputs", source, "-o", tmp_path / "plain.zarr",
                   "--chunk-lanes", 100, "--engine", "vector")  # not a terminal: one line
    assert "300/300" not in plain.stderr and "3 chunks, 300 lanes run" in plain.stderr


@settings(max_examples=60, deadline=None)
@given(width=st.sampled_from([32, 64]),
       dtype=st.sampled_from(["int8", "int32", "int64", "uint16", "uint32", "uint64"]),
       data=st.data())
def test_an_integer_column_reads_the_same_words_as_an_array_or_as_python_ints(width, dtype,
                                                                            data):
    """The vectorised path of a numpy integer column (a large chunk) against the Python
    integers' (a CSV column): the same words, or the same error naming the row."""
    info = np.iinfo(dtype)
    values = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1,
                                max_size=20))
    fmt = WordFormat(width)
    outcomes = []
    for column in (np.array(values, dtype=dtype), np.array(values, dtype=object)):
        try:
            outcomes.append(to_words(column, fmt, name="n", first_row=7).tolist())
        except BatchInputError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_peak_memory_follows_the_chunk_not_the_batch(tmp_path):
    """Parquet in, Zarr out, chunks of 5000 lanes, each batch in a fresh process: 8x the
    lanes (the whole result 49 MB more), about the same peak resident memory."""
    peaks = {}
    for lanes in (20_000, 160_000):
        source = tmp_path / f"in{lanes}.parquet"
        pq.write_table(pa.table(inputs(lanes, seed=1)), source, row_group_size=5000)
        child = subprocess.run(
            [sys.executable, "-c", _PEAK_CHILD, str(Path(batch_programs.__file__).parent),
             str(source),
             str(tmp_path / f"out{lanes}.zarr")], capture_output=True, text=True, check=True)
        peaks[lanes] = int(child.stdout.split()[-1]) * 1024  # ru_maxrss: KiB
    whole = (160_000 - 20_000) * 44 * 8
    assert peaks[160_000] - peaks[20_000] < whole / 4, peaks


_PEAK_CHILD = """
import resource, sys
sys.path.insert(0, sys.argv[1])
import revasm
from batch_programs import image
from revasm.batching.chunks import BatchOptions
summary = revasm.batch_file(image(), sys.argv[2], sys.argv[3], chunk_lanes=5000,
                            options=BatchOptions(grad=True, engine="vector"))
assert summary.result is None and summary.chunks == summary.written
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_json_of_a_chunked_run_is_the_json_of_one_batch(tmp_path, program):
    source = _write_inputs(tmp_path, inputs(90, seed=8), "csv")
    one = invoke("batch", program, "--inputs", source, "--grad", "--json", "--engine", "vector")
    chunked = invoke("batch", program, "--inputs", source, "--grad", "--json", "--engine",
                     "vector", "--chunk-lanes", 25)
    assert one.exit_code == chunked.exit_code == 1  # some lanes fault
    assert json.loads(chunked.stdout) == json.loads(one.stdout)


def test_a_zarr_member_without_readable_metadata_is_an_error_not_left_out(tmp_path):
    """zarr leaves such a member out of a group's arrays with a warning; were it a column the
    program reads, the program would take that input's default: a silent wrong answer."""
    from revasm.batching.inputs import BatchInputError
    from revasm.batching.sources import ZarrSource

    path = _write_inputs(tmp_path, inputs(10), "zarr")
    assert ZarrSource.scan(str(path)).names == ("x", "y")
    metadata = [p for p in (path / "y").iterdir() if p.name in ("zarr.json", ".zarray")]
    assert metadata
    for p in metadata:
        p.unlink()
    with pytest.raises(BatchInputError, match="'y' is neither an array nor a group"):
        ZarrSource.scan(str(path))
