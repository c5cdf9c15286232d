"""Nothing lost on disk (docs/cli.md, "Output files"): an output path naming an input is refused,
and every output file is written atomically -- a failed write leaves the old file intact
and no partial or temporary file behind."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from revasm.assembler import assemble_file, write_bin, write_hex, write_listing, write_sidecar
from revasm.assembler.files import atomic_open, atomic_path, write_atomic
from revasm.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIB = EXAMPLES / "fib.pal"
RFIB = EXAMPLES / "nilang" / "rfib.py"
OLD = b"the previous output\n"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def contents(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` (hidden ones too: a leftover temporary file shows)."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


@pytest.fixture
def failing_replace(monkeypatch):
    """os.replace fails, as on a full disk or a lost network folder."""
    def refuse(source, target, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", refuse)


# --- the helper ----------------------------------------------------------------------

def test_write_atomic_writes_text_and_bytes_with_the_usual_mode(tmp_path):
    target = tmp_path / "out.txt"
    write_atomic(target, "text\n")
    assert target.read_text() == "text\n"
    write_atomic(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert list(tmp_path.iterdir()) == [target]


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, failing_replace):
    target = tmp_path / "out.bin"
    target.write_bytes(OLD)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert contents(tmp_path) == {"out.bin": OLD}


@pytest.mark.parametrize("opener", ["open", "path"])
def test_an_exception_while_writing_leaves_the_old_file(tmp_path, opener):
    target = tmp_path / "out.txt"
    target.write_bytes(OLD)
    with pytest.raises(RuntimeError):
        if opener == "open":
            with atomic_open(target) as stream:
                stream.write("half")
                raise RuntimeError("the data could not be produced")
        else:
            with atomic_path(target) as temporary:
                temporary.write_text("half")
                raise RuntimeError("the data could not be produced")
    assert contents(tmp_path) == {"out.txt": OLD}


def test_an_unwritable_target_leaves_nothing_behind(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(OSError):
        write_atomic(folder, "text")
    with pytest.raises(OSError):
        write_atomic(tmp_path / "missing" / "out.txt", "text")
    assert contents(tmp_path) == {} and list(folder.iterdir()) == []


@pytest.mark.parametrize("writer", [write_bin, write_hex, write_sidecar, write_listing])
def test_the_image_writers_are_atomic(writer, tmp_path, monkeypatch):
    image = assemble_file(FIB)
    target = tmp_path / "fib.out"
    writer(image, target)
    written = target.read_bytes()
    assert written
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError):
        writer(image, target)
    assert contents(tmp_path) == {"fib.out": written}


# --- the commands: a failed write keeps the old output ------------------------------

def _old_outputs(*paths: Path) -> None:
    for path in paths:
        path.write_bytes(OLD)


def test_asm_keeps_the_old_image_and_sidecar(tmp_path, failing_replace):
    image, sidecar = tmp_path / "fib.bin", tmp_path / "fib.bin.json"
    _old_outputs(image, sidecar)
    result = invoke("asm", FIB, "-o", image, "--json")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["error"]["kind"] == "output" and out["error"]["file"] == str(image)
    assert "cannot write" in result.stderr
    assert contents(tmp_path) == {"fib.bin": OLD, "fib.bin.json": OLD}


def test_compile_keeps_the_old_output(tmp_path, failing_replace):
    out = tmp_path / "rfib.pal"
    _old_outputs(out)
    result = invoke("compile", RFIB, "-o", out)
    assert result.exit_code == 1 and "cannot write" in result.stderr
    assert contents(tmp_path) == {"rfib.pal": OLD}


def test_batch_keeps_the_old_npz(tmp_path, failing_replace):
    out = tmp_path / "out.npz"
    _old_outputs(out)
    result = invoke("batch", FIB, "--inputs", EXAMPLES / "lanes.csv", "-o", out)
    assert result.exit_code == 1 and "cannot write" in result.stderr
    assert contents(tmp_path) == {"out.npz": OLD}


def test_batch_writes_a_whole_npz(tmp_path):
    import numpy as np
    out = tmp_path / "out.npz"
    assert invoke("batch", FIB, "--inputs", EXAMPLES / "lanes.csv", "-o", out).exit_code == 0
    assert contents(tmp_path).keys() == {"out.npz"}
    assert "steps" in np.load(out).files


def test_report_keeps_the_old_html(tmp_path, failing_replace):
    out = tmp_path / "report.html"
    _old_outputs(out)
    result = invoke("report", FIB, "--html", out)
    assert result.exit_code == 1 and "cannot write" in result.stderr
    assert contents(tmp_path) == {"report.html": OLD}


def test_an_output_in_a_missing_folder_is_an_output_error(tmp_path):
    result = invoke("asm", FIB, "-o", tmp_path / "missing" / "fib.bin", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "output"
    assert not (tmp_path / "missing").exists()


def test_bench_keeps_the_old_results(tmp_path, monkeypatch):
    import revasm.bench as bench

    monkeypatch.setitem(bench.BENCHMARKS, "fake", lambda quick: {"status": "measured"})
    bench.run_benchmark("fake", True, tmp_path)
    first = json.loads((tmp_path / "fake.quick.json").read_text())
    assert first["benchmark"] == "fake"
    assert {p.name for p in tmp_path.iterdir()} == {"fake.quick.json"}
    old = (tmp_path / "fake.quick.json").read_bytes()
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError):
        bench.run_benchmark("fake", True, tmp_path)
    assert contents(tmp_path) == {"fake.quick.json": old}


# --- an output naming an input is refused ---------------------------------------------

def test_asm_refuses_to_write_over_its_source(tmp_path):
    source = tmp_path / "fib.pal"
    source.write_bytes(FIB.read_bytes())
    for args in (["-o", source], ["-o", tmp_path / "." / "fib.pal"]):
        result = invoke("asm", source, *args)
        assert result.exit_code == 2, result.output
        assert "would overwrite the input" in result.stderr
    assert contents(tmp_path) == {"fib.pal": FIB.read_bytes()}


def test_asm_refuses_an_output_whose_sidecar_is_the_source(tmp_path):
    source = tmp_path / "fib.json"
    source.write_bytes(FIB.read_bytes())
    result = invoke("asm", source, "-o", tmp_path / "fib")
    assert result.exit_code == 2 and "would overwrite the input" in result.stderr
    assert contents(tmp_path) == {"fib.json": FIB.read_bytes()}


def test_asm_of_an_image_without_o_is_refused(tmp_path):
    image = tmp_path / "fib.bin"
    assert invoke("asm", FIB, "-o", image).exit_code == 0
    before = contents(tmp_path)
    result = invoke("asm", image, "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "usage" and "-o" in error["message"]
    assert contents(tmp_path) == before


def test_compile_refuses_to_write_over_its_source(tmp_path):
    source = tmp_path / "rfib.py"
    source.write_bytes(RFIB.read_bytes())
    for out in (source, tmp_path / "." / "rfib.py"):
        result = invoke("compile", f"{source}:rfib", "-o", out)
        assert result.exit_code == 2, result.output
        assert "would overwrite the input" in result.stderr
    assert contents(tmp_path) == {"rfib.py": RFIB.read_bytes()}


def test_batch_refuses_to_write_over_its_inputs(tmp_path):
    inputs = tmp_path / "lanes.npz"
    inputs.write_bytes((EXAMPLES / "xs.npz").read_bytes())
    result = invoke("batch", EXAMPLES / "bessel_j2.pal", "--inputs", inputs, "-o", inputs)
    assert result.exit_code == 2 and "would overwrite the input" in result.stderr
    assert inputs.read_bytes() == (EXAMPLES / "xs.npz").read_bytes()


def test_report_refuses_to_write_over_its_program(tmp_path):
    source = tmp_path / "fib.pal"
    source.write_bytes(FIB.read_bytes())
    result = invoke("report", source, "--html", source)
    assert result.exit_code == 2 and "would overwrite the input" in result.stderr
    assert source.read_bytes() == FIB.read_bytes()


def test_rtl_sim_refuses_a_vcd_over_its_program(tmp_path):
    source = tmp_path / "fib.pal"
    source.write_bytes(FIB.read_bytes())
    result = invoke("rtl", "sim", source, "--vcd", source)
    assert result.exit_code == 2 and "would overwrite the input" in result.stderr
    assert source.read_bytes() == FIB.read_bytes()


def test_rtl_sim_keeps_the_old_vcd(tmp_path, failing_replace):
    vcd = tmp_path / "fib.vcd"
    _old_outputs(vcd)
    result = invoke("rtl", "sim", FIB, "--vcd", vcd, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "output"
    assert contents(tmp_path) == {"fib.vcd": OLD}


# --- outputs in pairs: both or neither (issue #40) -------------------------------------

def test_asm_leaves_no_image_when_its_sidecar_cannot_be_written(tmp_path):
    image, sidecar = tmp_path / "fib.bin", tmp_path / "fib.bin.json"
    sidecar.mkdir()  # the sidecar's name is taken by a folder
    result = invoke("asm", FIB, "-o", image, "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "output" and error["file"] == str(sidecar)
    assert contents(tmp_path) == {} and list(sidecar.iterdir()) == []


def test_compile_leaves_no_pal_when_its_map_cannot_be_written(tmp_path):
    out = tmp_path / "rfib.pal"
    (tmp_path / "rfib.pal.map.json").mkdir()
    result = invoke("compile", f"{RFIB}:rfib", "-o", out, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["file"] == f"{out}.map.json"
    assert contents(tmp_path) == {}


def test_a_pair_whose_second_rename_fails_keeps_both_old_files(tmp_path, monkeypatch):
    image, sidecar = tmp_path / "fib.bin", tmp_path / "fib.bin.json"
    _old_outputs(image, sidecar)
    real_replace = os.replace
    renames: list[tuple[str, str]] = []

    def refuse_the_sidecar(source, target, **kwargs):
        renames.append((str(source), str(target)))
        # old image aside, new image in, old sidecar aside, then the new sidecar: refused
        if len(renames) == 4:
            assert str(target) == str(sidecar)
            raise OSError(28, "No space left on device")
        return real_replace(source, target, **kwargs)

    monkeypatch.setattr(os, "replace", refuse_the_sidecar)
    result = invoke("asm", FIB, "-o", image, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["file"] == str(sidecar)
    assert contents(tmp_path) == {"fib.bin": OLD, "fib.bin.json": OLD}


def test_write_atomic_all_writes_every_file_or_none(tmp_path):
    from revasm.assembler.files import GroupWriteError, write_atomic_all
    write_atomic_all([(tmp_path / "a", "A"), (tmp_path / "b", b"B")])
    assert contents(tmp_path) == {"a": b"A", "b": b"B"}
    with pytest.raises(GroupWriteError) as failed:
        write_atomic_all([(tmp_path / "a", "new A"), (tmp_path / "missing" / "c", "C")])
    assert failed.value.path == tmp_path / "missing" / "c"
    assert contents(tmp_path) == {"a": b"A", "b": b"B"}
