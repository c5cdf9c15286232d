"""External inputs bounded before they are trusted (issue #40): ``--max-steps`` up to
2^64 - 1 on every engine, a program longer than the dense memory, a ``--scheduler`` that is
not a Dask scheduler, batch inputs whose columns repeat a name or a place."""
from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import revasm
from revasm.cli.main import cli
from revasm.sim.engine import MAX_STEP_LIMIT, NO_STEP_LIMIT, step_limit
from revasm.sim.engines import available, load

ROOT = Path(__file__).resolve().parents[2]
MULTIPLY = ROOT / "examples" / "multiply.pal"
AB = ROOT / "examples" / "ab.csv"


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_step_limit_from_2_to_the_62_up_is_no_limit_and_beyond_2_to_the_64_an_error():
    assert step_limit(None) is None and step_limit(7) == 7
    assert step_limit(NO_STEP_LIMIT - 1) == NO_STEP_LIMIT - 1
    assert step_limit(NO_STEP_LIMIT) is None and step_limit(1 << 63) is None
    assert step_limit(MAX_STEP_LIMIT) is None
    for bad in (0, -1, MAX_STEP_LIMIT + 1):
        with pytest.raises(ValueError, match="from 1 to 2\\^64 - 1"):
            step_limit(bad)


@pytest.mark.parametrize("engine", available())
@pytest.mark.parametrize("limit", [1 << 63, MAX_STEP_LIMIT])
def test_every_engine_runs_with_a_users_no_limit(engine, limit):
    image = revasm.load(MULTIPLY)
    expected = revasm.batch(image, {"a": [3, 5], "b": [7, 9]}, engine="reference")
    got = revasm.batch(image, {"a": [3, 5], "b": [7, 9]}, engine=engine, max_steps=limit)
    assert list(got.status) == ["finished", "finished"]
    assert got.named["c"].tolist() == expected.named["c"].tolist() == [21, 45]


@pytest.mark.parametrize("engine", [e for e in ("compiled", "tile", "vector")
                                    if e in available()])
def test_a_parquet_batch_with_max_steps_2_to_the_63_finishes(engine, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out.parquet"
    result = invoke("batch", MULTIPLY, "--inputs", AB, "--engine", engine, "--max-steps",
                    1 << 63, "-o", out)
    assert result.exit_code == 0, result.output
    assert "4 finished, 0 faulted" in result.output


def test_a_max_steps_above_2_to_the_64_is_a_usage_error():
    result = invoke("run", MULTIPLY, "--max-steps", 1 << 64)
    assert result.exit_code == 2
    assert "1<=x<=18446744073709551615" in result.output


# tile's lanes are the compiled engine's (TileLanes(CompiledLanes)), whose constructor
# makes the memory dense: its 75 s kernel build for one more image is left out here
@pytest.mark.parametrize("engine", [e for e in available() if e != "tile"])
def test_a_program_longer_than_the_dense_memory_runs_on_every_engine(engine):
    image = revasm.assemble(";; pendulum pal file\n        start\n" + "        addi $1 1\n" * 300
                            + "        finish\n")
    machine = load(image, 2, engine_name=engine, memory_words=256)
    machine.run(1)
    assert machine.fault(0) is None and machine.fault(1) is None
    assert [machine.snapshot(lane).registers[1] for lane in (0, 1)] == [300, 300]


def test_a_100000_instruction_pal_file_runs(tmp_path):
    path = tmp_path / "long.pal"
    path.write_text(";; pendulum pal file\n        start\n" + "        addi $1 1\n" * 100000
                    + "        finish\n")
    result = invoke("run", path, "--engine", "reference", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["registers"]["$1"] == 100000


class _FakeServer:
    """A TCP server that is not a Dask scheduler: it answers ``reply`` (or nothing)."""

    def __init__(self, reply: bytes | None) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.reply = reply
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            if self.reply is None:
                self.held.append(connection)  # says nothing, as a web server waiting
            else:
                connection.sendall(self.reply)
                connection.close()

    def close(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


@pytest.mark.parametrize("reply, message", [
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "is not a Dask scheduler: it began with b'HTTP/1.1'"),
    (None, "did not greet it as a Dask scheduler does"),
    (b"", "closed the connection without the greeting of a Dask scheduler"),
])
def test_a_scheduler_that_is_not_dask_is_one_clear_error(reply, message, tmp_path,
                                                         monkeypatch):
    pytest.importorskip("distributed")
    from revasm.batching import cluster
    monkeypatch.setattr(cluster, "GREETING_SECONDS", 1.0)
    server = _FakeServer(reply)
    try:
        result = invoke("batch", MULTIPLY, "--inputs", AB, "--scheduler",
                        f"tcp://127.0.0.1:{server.port}", "-o", tmp_path / "o.parquet",
                        "--json")
    finally:
        server.close()
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert message in error["message"] and error["kind"] != "internal"
    assert not (tmp_path / "o.parquet").exists()


def test_a_parquet_column_named_twice_is_an_error_naming_it(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])],
                                        names=["a", "a"]), path)
    result = invoke("batch", MULTIPLY, "--inputs", path, "--json")
    assert result.exit_code == 1
    message = json.loads(result.stdout)["error"]["message"]
    assert "column 'a' is named twice (columns 1 and 2)" in message


def test_two_columns_that_set_the_same_place_are_an_error(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,$1\n1,2\n")
    result = invoke("batch", MULTIPLY, "--inputs", path)
    assert result.exit_code == 1
    assert "columns 'a' and '$1' both set $1" in result.output
    with pytest.raises(ValueError, match="columns 'a' and '\\$1' both set \\$1"):
        revasm.batch(revasm.load(MULTIPLY), {"a": [1], "$1": [2]})
