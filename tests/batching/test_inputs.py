"""Batch inputs (revasm.batching.inputs, revasm.batch, revasm batch): what a value means, and a
clear error naming the file, column and row for every value the batch cannot use."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import revasm
from revasm.assembler import assemble
from revasm.batching.inputs import (
    BatchInputError,
    Column,
    check_column,
    column_words,
    read_columns,
    to_words,
)
from revasm.cli.main import cli
from revasm.isa.fixed_point import WordFormat

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NO_DEFAULTS = """;; pendulum pal file
.input  a $1 int
.input  b $2 int
.input  x $4 fixed = 0.5
.output c $3 int
        start
        add $3 $1
        add $3 $2
        finish
"""

LOG = """;; pendulum pal file
.input  x $1 fixed
.loss   y $2 fixed
.output k $3 int
        start
        addi   $3 7
        addlog $2 $1
        finish
"""


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_missing_input_column_without_default_is_an_error_naming_it(tmp_path):
    image = assemble(NO_DEFAULTS)
    with pytest.raises(BatchInputError, match="'b'") as caught:
        revasm.batch(image, {"a": [1, 2]})
    assert "'x'" not in str(caught.value)  # x has a default
    assert list(revasm.batch(image, {"a": [1, 2], "b": [3, 4]}).named["c"]) == [4, 6]
    assert list(revasm.batch(image, {"a": [1], "$2": [5]}).named["c"]) == [6]  # by register
    program = tmp_path / "p.pal"
    program.write_text(NO_DEFAULTS)
    inputs = tmp_path / "a.csv"
    inputs.write_text("a\n1\n")
    result = invoke("batch", program, "--inputs", inputs)
    assert result.exit_code == 1 and "'b'" in result.output and str(inputs) in result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_integer_looking_values_for_a_fixed_point_name_are_numbers(tmp_path):
    inputs = tmp_path / "x.csv"
    inputs.write_text("x,theta\n3,1\n-2,0\n")
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", inputs, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["named"]["x"] == [3.0, -2.0]
    image = assemble((EXAMPLES / "fixed_point.pal").read_text())
    out = revasm.batch(image, {"x": np.array([3, -2]), "theta": [1, 0]})
    assert list(out.named["x"]) == [3.0, -2.0] and list(out.named["theta"]) == [1.0, 0.0]
    # an integer name or a register keeps raw words; a whole real is fine for an int name
    image = assemble(NO_DEFAULTS)
    assert list(revasm.batch(image, {"a": [3.0], "b": [2]}).named["c"]) == [5]
    assert list(revasm.batch(image, {"a": [3], "$2": [2]}).registers["$2"]) == [2]
    with pytest.raises(BatchInputError, match=r"column 'a', row 2: 2.5 is not a whole number"):
        revasm.batch(image, {"a": [1.0, 2.5], "b": [0, 0]})


def test_exact_fixed_point_conversion_of_integers_and_its_range():
    fmt = WordFormat(32)
    assert to_words(np.array([3, -1]), fmt, fixed=True).tolist() == [3 << 16, fmt.mask - 0xFFFF]
    assert to_words(np.array([3, -1]), fmt).tolist() == [3, fmt.mask]  # a register: raw
    with pytest.raises(BatchInputError, match="row 1: 32768 does not fit Q16.16"):
        to_words(np.array([32768]), fmt, fixed=True)
    with pytest.raises(BatchInputError, match="row 2: 32768.0 does not fit Q16.16"):
        to_words(np.array([0.0, 32768.0]), fmt, fixed=True)  # would wrap to -32768
    assert to_words(np.array([-32768.0]), fmt, fixed=True).tolist() == [1 << 31]


def _outcome(call):
    try:
        call()
    except BatchInputError as exc:
        return str(exc)
    return "ok"


@settings(max_examples=300, deadline=None)
@given(width=st.sampled_from([32, 64]), fixed=st.sampled_from([True, False, None]),
       values=st.lists(st.one_of(
           st.floats(allow_nan=True, allow_infinity=True),
           st.floats(min_value=-40000.0, max_value=40000.0),
           st.sampled_from([32767.0, 32767.5, 32768.0, -32768.0, -32768.5, 2.0**31,
                            -2.0**31, 2.0**31 - 0.5, 2.0**47, 0.5, -0.0])),
           min_size=1, max_size=6),
       dtype=st.sampled_from([np.float64, np.float32]), row=st.integers(1, 10**9))
def test_the_inputs_check_fails_exactly_where_the_conversion_does(width, fixed, values, dtype,
                                                                   row):
    """check_column (a chunked batch's check, before any lane runs) takes a shortcut for
    float columns: it gives every verdict and message that building the words gives."""
    column = Column("x", 3, None, fixed is not False, typed=fixed is not None)
    with np.errstate(over="ignore"):  # float32: a huge float is inf, which is a case too
        array = np.array(values, dtype=dtype)
    fmt = WordFormat(width)
    assert _outcome(lambda: check_column(column, array, fmt, row)) == \
        _outcome(lambda: column_words(column, array, fmt, row))


@pytest.mark.parametrize("content, message", [
    ("x\n0.5\nnan\n", "column 'x', row 2: nan is not a finite number"),
    ("x\ninf\n", "column 'x', row 1: inf is not a finite number"),
    ("x\n1e9\n", "column 'x', row 1: 1000000000.0 does not fit Q16.16"),
    ("x\n0.5\nabc\n", ":3: column 'x': 'abc' is not a number"),
    ("x,x\n1,2\n", "column 'x' is named twice"),
    ("x,\n1,2\n", "column 2 of the header has no name"),
    ("x\n1,2\n", ":2: 2 values, but the header names 1 columns"),
    ("x\n1\x002\n", "a NUL byte"),
])
def test_bad_values_name_the_file_column_and_row(tmp_path, content, message):
    inputs = tmp_path / "bad.csv"
    inputs.write_text(content)
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", inputs)
    assert result.exit_code == 1, result.output
    assert message in result.output and str(inputs) in result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


@pytest.mark.parametrize("content", [b"garbage", b"", b"PK\x03\x04broken", b"\x93NUMPY"])
def test_a_corrupt_npz_is_a_clear_error(tmp_path, content):
    inputs = tmp_path / "bad.npz"
    inputs.write_bytes(content)
    with pytest.raises(BatchInputError, match="not a valid .npz file"):
        read_columns(str(inputs))
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", inputs)
    assert result.exit_code == 1 and "not a valid .npz file" in result.output
    assert "internal error" not in result.output


def test_a_parquet_column_name_that_is_not_utf8_is_a_clear_error(tmp_path):
    """Found by the fuzz campaign: pyarrow fails decoding such a name (UnicodeDecodeError)."""
    import io

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table({"x\u00e9": [1.0, 2.0]}), buffer, store_schema=False)
    inputs = tmp_path / "bad.parquet"
    inputs.write_bytes(buffer.getvalue().replace(b"x\xc3\xa9", b"x\xf8\xf8"))
    from revasm.batching.sources import ParquetSource

    with pytest.raises(BatchInputError, match="not a valid Parquet file"):
        ParquetSource.scan(str(inputs))
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", inputs)
    assert result.exit_code == 1 and "not a valid Parquet file" in result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_npz_of_one_array_or_of_strings_is_refused(tmp_path):
    one = tmp_path / "one.npz"
    with open(one, "wb") as stream:
        np.save(stream, np.arange(3))
    with pytest.raises(BatchInputError, match="holds one array"):
        read_columns(str(one))
    words = tmp_path / "words.npz"
    np.savez(words, x=np.array(["a", "b"]))
    with pytest.raises(BatchInputError, match="column 'x' holds <U1 values, not numbers"):
        read_columns(str(words))
    nan = tmp_path / "nan.npz"
    np.savez(nan, x=np.array([0.5, np.nan]))
    result = invoke("batch", EXAMPLES / "fixed_point.pal", "--inputs", nan)
    assert result.exit_code == 1 and "column 'x', row 2: nan" in result.output


def test_csv_with_cr_crlf_or_lf_line_ends_and_a_bom(tmp_path):
    for end in ("\n", "\r\n", "\r"):
        inputs = tmp_path / "x.csv"
        inputs.write_bytes(("\ufeffx" + end + "1" + end + "2.5" + end).encode())
        assert read_columns(str(inputs))["x"].tolist() == [1.0, 2.5]


def test_faulted_lanes_are_nan_in_float_outputs_and_null_in_json(tmp_path):
    image = assemble(LOG)
    out = revasm.batch(image, {"x": [1.0, -1.0, 2.0]})
    assert list(out.status) == ["finished", "fault", "finished"]
    assert math.isnan(out.named["y"][1]) and math.isnan(out.named["x"][1])
    assert out.named["y"][0] == 0.0 and out.named["k"].tolist() == [7, 7, 7]
    grad = revasm.batch(image, {"x": [1.0, -1.0, 2.0]}, grad=True)
    assert math.isnan(grad.loss[1]) and math.isnan(grad.gradient["x"][1])
    assert grad.gradient["x"][2] == pytest.approx(0.5, abs=1e-6)
    assert json.loads(json.dumps(grad.to_json()))["gradient"]["x"][1] is None
    program = tmp_path / "log.pal"
    program.write_text(LOG)
    inputs = tmp_path / "x.csv"
    inputs.write_text("x\n1\n-1\n2\n")
    result = invoke("batch", program, "--inputs", inputs, "--json", "--grad")
    assert result.exit_code == 1
    text = result.stdout
    assert "NaN" not in text
    out_json = json.loads(text)
    assert out_json["named"]["y"][1] is None and out_json["loss"][1] is None
    npz = tmp_path / "out.npz"
    assert invoke("batch", program, "--inputs", inputs, "-o", npz).exit_code == 1
    assert np.isnan(np.load(npz)["y"][1])


def _words_or_message(values, fmt, compiled):
    from unittest import mock

    from revasm.batching import inputs

    with mock.patch.object(inputs, "COMPILED_VALUES", 0 if compiled else 1 << 62):
        try:
            return to_words(values, fmt, fixed=True, name="x", first_row=7).tolist()
        except BatchInputError as exc:
            return str(exc)


@settings(max_examples=300, deadline=None)
@given(width=st.sampled_from([32, 64]), values=st.lists(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-3.0, max_value=3.0),
    st.integers(-2**40, 2**40).map(lambda k: k / 2.0**17),  # halves of the last bit
    st.sampled_from([32767.0, 32767.5, 32768.0, -32768.0, -32768.5, 2.0**31, -2.0**31,
                     2.0**31 - 2.0**-33, -2.0**31 - 2.0**-33, 2.0**31 - 0.5, 0.5, -0.0,
                     5e-324, -5e-324, 2.0**-17, -2.0**-17, 3 * 2.0**-33, -3 * 2.0**-33])),
    min_size=1, max_size=8), dtype=st.sampled_from([np.float64, np.float32]))
def test_a_large_column_of_reals_takes_the_words_and_refusals_of_the_numpy_rule(
        width, values, dtype):
    """Large float columns for fixed-point names are converted in one compiled pass
    (``batching/real_words.py``); on any values it gives numpy's words, or the same
    refusal of the same row (a value not finite first, then one beyond the word)."""
    with np.errstate(over="ignore"):
        array = np.array(values, dtype=dtype)
    fmt = WordFormat(width)
    assert _words_or_message(array, fmt, True) == _words_or_message(array, fmt, False)


def test_a_large_column_of_reals_is_converted_in_one_pass():
    """A column of 10^5 reals goes through the compiled pass and gives numpy's words."""
    from revasm.batching import inputs

    x = np.random.default_rng(3).uniform(-3, 3, 10**5)
    assert x.size >= inputs.COMPILED_VALUES
    fmt = WordFormat(64)
    assert np.array_equal(to_words(x, fmt, fixed=True), inputs._real_words(x, fmt, "x"))
    # columns as files give them: a strided slice, read-only, big-endian, float32
    table = np.stack([x, -x], axis=1)
    frozen = x.copy()
    frozen.setflags(write=False)
    for column in (table[:, 1], frozen, x.astype(">f8"), x.astype(np.float32)):
        as_float64 = np.asarray(column, dtype=np.float64)
        assert np.array_equal(to_words(column, fmt, fixed=True),
                              inputs._real_words(as_float64, fmt, "x"))
