"""Fuzzing the readers (docs/bench.md "fuzz"): mutated examples into the assembler, the image
readers, the batch input readers (every format), the eDSL and Janus front ends, the command
line, the debugger's commands and the DAP server.  Only each reader's documented error is
allowed; never a traceback or "internal error".

The targets and mutators are ``bench/fuzz.py``'s (``revasm bench fuzz`` is the long run,
10⁵ inputs per target); here hypothesis drives the mutations, a bounded number of times.
"""
from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from revasm.bench import fuzz
from revasm.cli.commands_bench import hand_over
from revasm.cli.main import cli

hand_over(cli)  # the command line and the debugger handed to the harness, as `revasm bench` does

EDITS = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 1 << 20), st.integers(0, 1 << 20)),
                 min_size=1, max_size=6)
FUZZ = settings(max_examples=400, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

PAL = fuzz.pal_corpus()
PAL_VOCAB = fuzz.vocabulary(PAL)
PYTHON = fuzz.python_corpus()
PYTHON_VOCAB = fuzz.vocabulary(PYTHON)
JANUS = fuzz.janus_corpus()
JANUS_VOCAB = fuzz.vocabulary(JANUS) + list(fuzz.JANUS_SPECIALS)
IMAGES = fuzz.image_seeds()
BATCH = fuzz.batch_seeds()
CSV_VOCAB = fuzz.vocabulary([b.decode() for b in BATCH[".csv"]])


@FUZZ
@given(st.sampled_from(range(len(PAL))), EDITS)
def test_assembler_takes_mutated_examples(which, edits):
    fuzz.check_assembler(fuzz.mutate_text(PAL[which], edits, PAL_VOCAB))


@FUZZ
@given(st.text(max_size=300))
def test_assembler_takes_any_text(text):
    fuzz.check_assembler(text)
    fuzz.check_assembler(";; pendulum pal file\n" + text)


@FUZZ
@given(st.sampled_from(("bin", "hex", "sidecar")), EDITS, st.booleans())
def test_image_readers_take_mutated_images(tmp_path, kind, edits, as_text):
    seed = IMAGES[kind]
    data = (fuzz.mutate_text(seed.decode(), edits, fuzz.SPECIALS).encode("utf-8", "replace")
            if as_text and kind != "bin" else fuzz.mutate_bytes(seed, edits))
    fuzz.check_image(data, kind, tmp_path)


@FUZZ
@given(st.sampled_from(("bin", "hex", "sidecar")), st.binary(max_size=200))
def test_image_readers_take_any_bytes(tmp_path, kind, data):
    fuzz.check_image(data, kind, tmp_path)


@FUZZ
@given(st.sampled_from((".csv", ".npz")), st.integers(0, 10), EDITS, st.booleans())
def test_batch_readers_take_mutated_inputs(tmp_path, suffix, which, edits, as_text):
    seeds = BATCH[suffix]
    seed = seeds[which % len(seeds)]
    data = (fuzz.mutate_text(seed.decode(), edits, CSV_VOCAB).encode("utf-8", "replace")
            if as_text and suffix == ".csv" else fuzz.mutate_bytes(seed, edits))
    fuzz.check_batch_inputs(data, suffix, tmp_path)


@FUZZ
@given(st.sampled_from((".csv", ".npz")), st.binary(max_size=200))
def test_batch_readers_take_any_bytes(tmp_path, suffix, data):
    fuzz.check_batch_inputs(data, suffix, tmp_path)


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(range(len(PYTHON))), EDITS)
def test_frontend_takes_mutated_examples(which, edits):
    fuzz.check_frontend(fuzz.mutate_text(PYTHON[which], edits[:4], PYTHON_VOCAB))


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(range(len(JANUS))), EDITS)
def test_janus_takes_mutated_examples(which, edits):
    fuzz.check_janus(fuzz.mutate_text(JANUS[which], edits[:4], JANUS_VOCAB))


@pytest.fixture(scope="module")
def debug_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("debug")
    fuzz.debug_workspace(directory)
    return directory


@settings(FUZZ, max_examples=200)
@given(st.randoms(use_true_random=False))
def test_debugger_takes_random_commands(debug_dir, rng):
    assert fuzz.DEBUGGER is not None
    program = rng.choice(fuzz.DEBUG_PROGRAMS)
    fuzz.check_debugger(program, fuzz.random_commands(rng, fuzz.DEBUGGER.command_words),
                        debug_dir)


def test_the_targets_count_clean_errors_and_successes():
    """A bounded campaign on every in-process surface: each input is taken or refused
    cleanly, and both happen (the mutations reach past the first check)."""
    outcome = fuzz.campaign({"janus": 60, "debugger": 40, "batch_inputs": 40})
    for name, counts in outcome["surfaces"].items():
        assert counts["internal_errors"] == 0, outcome["targets"][name]["reproducers"]
        assert counts["successes"] + counts["clean_errors"] == counts["inputs"]
        assert counts["successes"] > 0 and counts["clean_errors"] > 0, (name, counts)


def test_a_failure_is_shrunk_to_a_reproducer():
    """The minimiser keeps what still fails: here, the one line that holds the fault."""
    text = "\n".join(["a", "b", "BAD", "c", "d"] * 3)
    small = fuzz.minimise(text, lambda t: "BAD" in t)
    assert small == "BAD"
    assert fuzz.minimise([1, 2, 3, 4], lambda xs: 3 in xs) == [3]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("cli")
    fuzz.cli_workspace(directory)
    return directory


@settings(FUZZ, max_examples=300)
@given(st.randoms(use_true_random=False))
def test_cli_takes_random_command_lines(workspace, monkeypatch, rng):
    monkeypatch.chdir(workspace)
    fuzz.check_cli(fuzz.random_arguments(rng))


def test_the_cli_target_never_starts_a_server():
    """`dap --port` serves until it is stopped: as a cli input it waited out the 30 s limit
    (a false "timeout"), and a full run of 10^5 inputs met it again and again."""
    import random

    rng = random.Random(3)
    lines = [fuzz.random_arguments(rng) for _ in range(3000)]
    daps = [words for words in lines if words[:1] == ["dap"]]
    assert daps and not any("--port" in words for words in daps)


# --- regressions: what the fuzzer found, each fixed at its source ---------------------------

@pytest.mark.parametrize("kind, data, message", [
    ("hex", b"188000000\n1c06\xef0000\n", "fuzz.hex:2: not a hex image: byte 0xef"),
    ("sidecar", b'{"format": "revasm-image-sidecar", "x": "\xe9"}', "not a JSON sidecar"),
])
def test_image_files_that_are_not_utf8(tmp_path, kind, data, message):
    from revasm.assembler import ImageFormatError, read_bin, read_hex

    path = tmp_path / ("fuzz.hex" if kind == "hex" else "fuzz.bin")
    if kind == "sidecar":
        path.write_bytes(IMAGES["bin"])
        (tmp_path / "fuzz.bin.json").write_bytes(data)
    else:
        path.write_bytes(data)
    with pytest.raises(ImageFormatError, match=message):
        read_hex(path) if kind == "hex" else read_bin(path)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["names"]["x"].update(register=99), "register must be a whole number 0..31"),
    (lambda d: d.update(names=[1]), "names must be a JSON object"),
    (lambda d: d["names"].update(x=5), "name 'x' must be a JSON object"),
    (lambda d: d["names"]["x"].update(role="boss"), "role 'boss'"),
    (lambda d: d["names"]["x"].update(type="float"), "type 'float'"),
    (lambda d: d.update(symbols={"a": "b"}), "address must be a whole number"),
    (lambda d: d["lines"].update({"0": {"file": 3, "line": 1}}), "file must be a string"),
    (lambda d: d.update(source_file=None), "source_file must be a string"),
])
def test_malformed_sidecars_are_image_format_errors(change, message):
    import json

    from revasm.assembler import ImageFormatError, apply_sidecar, image_from_bin_bytes

    data = json.loads(IMAGES["sidecar"])
    change(data)
    with pytest.raises(ImageFormatError, match=message):
        apply_sidecar(image_from_bin_bytes(IMAGES["bin"]), data)


def test_frontend_constants_that_are_not_finite_and_files_that_are_not_utf8(tmp_path):
    from revasm.compiler import CompileError, compile_file, compile_source

    source = (Path(fuzz.EXAMPLES) / "nilang" / "rfib.py").read_text()
    for text, where in ((source.replace("n - 2", "n - 1e999"), "not a finite number"),
                        ("BIG = 1e999\n" + source, "constant 'BIG' is inf"),
                        ("T = (1.0, float('nan'))\n" + source, None)):
        if where is None:
            compile_source(text)  # not a literal: not a constant the compiler reads
            continue
        with pytest.raises(CompileError, match=where):
            compile_source(text, filename="f.py")
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\nx = 1\n")
    with pytest.raises(CompileError, match="not UTF-8") as caught:
        compile_file(latin)
    assert (caught.value.pos.line, caught.value.pos.column) == (1, 6)
    with pytest.raises(CompileError, match="is a directory"):
        compile_file(tmp_path)


def test_cr_only_line_ends_in_pal_and_python(tmp_path):
    from revasm.assembler import AssemblyError, assemble, assemble_file
    from revasm.compiler import compile_file

    pal = (Path(fuzz.EXAMPLES) / "fib.pal").read_text()
    assert assemble(pal.replace("\n", "\r")).words == assemble(pal).words
    bad = tmp_path / "bad.pal"
    bad.write_text(";; pendulum pal file\r\r  nosuch $1\r", newline="")
    with pytest.raises(AssemblyError) as caught:
        assemble_file(bad)
    assert any(d.line == 3 and "nosuch" in d.message for d in caught.value.diagnostics)
    python = (Path(fuzz.EXAMPLES) / "nilang" / "rfib.py").read_text()
    cr = tmp_path / "cr.py"
    cr.write_bytes(python.replace("\n", "\r").encode())
    assert compile_file(cr).image.words == \
        compile_file(Path(fuzz.EXAMPLES) / "nilang" / "rfib.py").image.words


def test_a_huge_immediate_is_an_assembly_error():
    from revasm.assembler import AssemblyError, assemble

    for literal in ("-1e99910", "1" * 5000, "1e999999999999", "0x" + "f" * 5000,
                    "9" * 500 + ".5"):
        with pytest.raises(AssemblyError, match="does not fit"):
            assemble(f";; pendulum pal file\n start\n addi $3 {literal}\n finish\n")
    image = assemble(";; pendulum pal file\n start\n li $3 0." + "5" * 999 + "\n finish\n")
    assert image.words  # a long fraction is an ordinary real


def test_the_long_run_counts_inputs_and_failures():
    outcome = fuzz.fuzz_target("batch_inputs", 20, seed=random.randrange(1 << 30))
    assert outcome["inputs"] == 20 and outcome["failures"] == 0, outcome["first_failures"]


def test_the_long_runs_findings(tmp_path, workspace, monkeypatch):
    """What 10^5-input runs found: an .npz whose header does not tokenize (numpy raises
    tokenize.TokenError), a NUL byte in an argument (os.stat raises ValueError), and
    grad-expr of a constant with nothing in --at (no variable to differentiate by)."""
    header = (b"PK\x03\x04-\x00\x00\x00\x00\x00\x00\x00!\x00\x8b\xe7\xcb,\xff\xff\xff\xff"
              b"\xff\xff\xff\xff\x05\x00\x14\x00x.npy\x01\x00\x10\x00\x88\x00\x00\x00\x00"
              b"\x00\x00\x00\x88\x00\x00\x00\x00\x00\x00\x00\x93NUMPY\x01\x00v\x00{'descr': "
              b"'<f8', 'fortran_order': False,('shape': (1, 1), }" + b" " * 33 + b"\xdb"
              + b" " * 24 + b"\n\x00\x00\x00\x00\x00\x00\xf0?PK\x01\x02-\x03-\x00\x00\x00"
              b"\x00\x00\x00\x00!\x00\x8b\xe7\xcb,\x88\x00Q\xfaqg\x00\x00\x05\x00\x00\x00"
              b"\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00x.npyPK\x05\x06\x00"
              b"\x00\x00\x00\x01\x00\x01\x003\x00\x00\x00\xbf\x00\x00\x00\x00\x00")
    fuzz.check_batch_inputs(header, ".npz", tmp_path)
    monkeypatch.chdir(workspace)
    for arguments in (["check", "\x00"], ["asm", "fib.hex", "--output", "\x00"],
                      ["grad-expr", "10", "--at", ""]):
        fuzz.check_cli(arguments)
    from click.testing import CliRunner
    result = CliRunner().invoke(cli, ["grad-expr", "10", "--at", "", "--json"])
    assert result.exit_code == 1 and "nothing to differentiate by" in result.stdout
    result = CliRunner().invoke(cli, ["run", "fib\x00.pal", "--json"])
    assert result.exit_code == 2 and "NUL byte" in result.stdout


@pytest.mark.parametrize("body, params, shown", [
    ("y += x << -1", "y: Int, x: Int", "shift amount -1 is outside 0..31"),
    ("for i in range(0x8000000000000000):\n        y += 1", "y: Int", "does not fit a 32-bit Int"),
    ("y += 1", "y: Fixed[0, 1e999]", "inf is not a finite number"),
    ("y += T[1]", "y: Fixed", "element 1 of T (1e+20) does not fit Q16.16"),
    ("if x in range(4):\n        y += 1", "y: Int, x: Int", "only == != < <= > >= compare"),
    ("y += 1", "y: Fixed = 1000000.0", "y's default or domain end 1e+06 does not fit Q16.16"),
    ("y += a[0]", "y: Fixed, a: Array[Fixed, 99999999, 2]", "an array of 199999998 elements"),
])
def test_the_long_runs_frontend_findings(body, params, shown):
    """Mutated examples that raised past the compiler (OverflowError, KeyError) or reached
    the assembler as an "internal error" (a shift by -1, a table word too wide)."""
    from revasm.compiler import CompileError, compile_source

    source = (f"from revasm.compiler import *\n\nT = (1.0, 1e20)\n\n\n@reversible\n"
              f"def f({params}):\n    {body}\n")
    with pytest.raises(CompileError, match=re.escape(shown)) as caught:
        compile_source(source, "f", "fuzzed.py")
    assert caught.value.pos.line >= 3


# --- what the campaign found on the DAP server and in signals (fixed on the values branch) ---

def test_dap_takes_random_message_sequences():
    """A bounded sample of DAP sessions: once a pause before launch raised AssertionError
    in the adapter, a Content-Length past the index range OverflowError out of the server."""
    outcome = fuzz.fuzz_target("dap", 150, shrink=0)
    assert outcome["internal_errors"] == 0, outcome["internal_error_kinds"]


@pytest.mark.parametrize("message", [
    b'Content-Length: 79\r\n\r\n{"seq": 5, "type": "request", "command": "pause", '
    b'"arguments": {"threadId": 1}}',
    b'Content-Length: 99999999999999999999\r\n\r\n{"seq": 1, "type": "request", '
    b'"command": "initialize"}',
])
def test_dap_known_findings(debug_dir, message):
    fuzz.check_dap([message], debug_dir)


def test_sigint_during_a_run_exits_130(tmp_path):
    """SIGINT during `revasm run` in text mode: exit 130 saying "interrupted" (it was exit 1
    with "Aborted!")."""
    fuzz.signal_workspace(tmp_path)
    fuzz.check_signal(["run", "long.pal", "--max-steps", "400000000"], 2.0, tmp_path)


def test_the_signals_target_interrupts_its_runs_from_a_background_job_too(tmp_path):
    """A campaign started in a shell's background job has SIGINT ignored, and its children
    inherited that: they ran on until the 30 s limit, every input a false "hang".  The
    target now starts each run as a terminal would (SIGINT raising KeyboardInterrupt)."""
    import signal

    fuzz.signal_workspace(tmp_path)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        started = time.monotonic()
        assert fuzz.check_signal(["run", "long.pal", "--max-steps", "400000000", "--json"],
                                 1.0, tmp_path) == fuzz.CLEAN
        assert time.monotonic() - started < 25
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("method", [99, 14])  # no such method; LZMA with a damaged header
def test_an_npz_member_in_an_unknown_or_damaged_compression_is_a_batch_input_error(
        tmp_path, method):
    """The chunked reader opened each member with zipfile, which raises NotImplementedError
    for a compression method it does not know (found by the campaign)."""
    import io

    import numpy as np

    from revasm.batching.inputs import BatchInputError
    from revasm.batching.sources import open_source

    buffer = io.BytesIO()
    np.savez(buffer, x=np.array([0.5, 1.0]))
    data = bytearray(buffer.getvalue())
    central = data.index(b"PK\x01\x02")
    data[8:10] = data[central + 10:central + 12] = method.to_bytes(2, "little")
    path = tmp_path / "odd.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(BatchInputError, match=r"odd\.npz: (not a valid \.npz file|column 'x' is "
                                              r"unreadable)"):
        open_source(str(path))
    fuzz.check_batch_inputs(bytes(data), ".npz", tmp_path)


@pytest.mark.parametrize("suffix", [".pal", ".ja", ".py", ".bin"])
def test_a_file_name_too_long_is_a_clean_error(suffix):
    """A DAP launch with a 1000-letter program name answered "internal error" (the
    campaign's finding): Path.exists raises OSError (ENAMETOOLONG) for such a name."""
    from click.testing import CliRunner
    name = "a" * 1000 + suffix
    result = CliRunner().invoke(cli, ["run", name, "--json"])
    assert result.exit_code == 1, result.output
    assert "File name too long" in result.stdout and "internal error" not in result.stdout
