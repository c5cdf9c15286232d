"""Batch inputs: columns of values (npz arrays or CSV columns) to lane words.

A column is named by a register (``$5``) or a declared name.  What a value means
depends on the name it feeds:

* a **fixed-point name** (``.input x $1 fixed``) reads every value as a real number:
  ``3`` is 3.0, as ``2.5`` is 2.5, converted exactly as ``WordFormat.from_real`` does
  (round half away from zero);
* an **integer name** (``.input n $1 int``) reads every value as an integer (raw word);
  a real value must be a whole number (``3.0`` is 3);
* a **register** (``$3``) has no type: float columns (a CSV column with a decimal point,
  an exponent, ``nan`` or ``inf`` anywhere) are fixed-point reals, integer columns raw
  words, as ``revasm run --set`` reads VALUEs.

A declared ``.input`` with no default that no column provides is an error naming it.
Every unusable value is a :class:`BatchInputError` naming the column and its row (row 1
is the first data row: the line after a CSV file's header, element 0 of an npz array).
Results are read back out of the lanes by ``revasm.sim.host`` (``to_reals``, ``signed``);
files too large for memory are read a chunk at a time by :mod:`revasm.batching.sources`.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from revasm.assembler.image import Image, UnknownName
from revasm.isa.fixed_point import WordFormat


class BatchInputError(ValueError):
    """Inputs the batch cannot use (unreadable file, unknown name, ragged columns)."""


@dataclass(frozen=True)
class Column:
    name: str
    register: int | None
    address: int | None
    fixed: bool
    #: True for a declared name (its type decides how values read), False for ``$n``.
    typed: bool = True


def resolve_column(name: str, image: Image) -> Column:
    try:
        place = image.resolve_name(name)
    except UnknownName as exc:
        raise BatchInputError(f"column {exc}") from None
    if place.register == 0:
        raise BatchInputError(f"column {name!r}: not a register $1..$31")
    return Column(name, place.register, place.address, place.fixed,
                  typed=place.role != "register")


def missing_inputs(image: Image, columns: Iterable[Column]) -> list[str]:
    """The declared inputs with no default that none of ``columns`` sets."""
    given = {(c.register, c.address) for c in columns}
    return [name for name, d in image.names.items()
            if d.role == "input" and d.default is None and (d.register, d.address) not in given]


def check_inputs_given(image: Image, columns: Iterable[Column]) -> None:
    """A :class:`BatchInputError` naming every declared input without default and column."""
    missing = missing_inputs(image, columns)
    if missing:
        names = ", ".join(repr(name) for name in missing)
        raise BatchInputError(
            f"no column for the input{'s' if len(missing) > 1 else ''} {names} (declared "
            "without a default value): add a column of that name")


def read_columns(path: str) -> dict[str, np.ndarray]:
    """name -> 1-D array, from ``.npz`` or ``.csv`` (header row of names)."""
    file = Path(path)
    try:
        if file.suffix == ".npz":
            columns = _read_npz(file)
        elif file.suffix == ".csv":
            columns = _read_csv(file)
        else:
            raise BatchInputError(f"{path}: inputs must be a .npz or .csv file")
    except BatchInputError:
        raise
    except UnicodeDecodeError as exc:
        raise BatchInputError(f"{path}: cannot read inputs: not UTF-8 text (byte "
                              f"{exc.start})") from None
    except (OSError, ValueError, csv.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise BatchInputError(f"{path}: cannot read inputs: {reason}") from None
    if not columns:
        raise BatchInputError(f"{path}: no input columns")
    lengths = {name: (a.shape[0] if a.ndim == 1 else -1) for name, a in columns.items()}
    if any(n < 0 for n in lengths.values()):
        bad = [name for name, n in lengths.items() if n < 0]
        raise BatchInputError(f"{path}: every input must be one-dimensional ({', '.join(bad)})")
    if len(set(lengths.values())) != 1:
        shown = ", ".join(f"{k}: {v}" for k, v in lengths.items())
        raise BatchInputError(f"{path}: the columns differ in length ({shown})")
    if next(iter(lengths.values())) == 0:
        raise BatchInputError(f"{path}: the inputs have no rows")
    return columns


def _read_npz(file: Path) -> dict[str, np.ndarray]:
    try:
        data = np.load(file, allow_pickle=False)
    except Exception:  # numpy's readers raise many kinds on corrupt bytes
        raise BatchInputError(f"{file}: not a valid .npz file (numpy.savez writes one)"
                              ) from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise BatchInputError(f"{file}: not a valid .npz file (it holds one array, not named "
                              "columns: write it with numpy.savez)")
    columns = {}
    with data:
        for name in data.files:
            try:
                columns[name] = np.asarray(data[name])
            except Exception as exc:  # e.g. tokenize.TokenError on a bad header
                raise BatchInputError(f"{file}: column {name!r} is unreadable: {exc}") from None
            if columns[name].dtype.kind not in "biuf":
                raise BatchInputError(f"{file}: column {name!r} holds {columns[name].dtype} "
                                      "values, not numbers")
    return columns


def _read_csv(file: Path) -> dict[str, np.ndarray]:
    text = file.read_bytes().decode("utf-8-sig")
    if "\0" in text:
        line = text[:text.index("\0")].count("\n") + 1
        raise BatchInputError(f"{file}:{line}: a NUL byte: not a CSV text file")
    reader = csv.reader(io.StringIO(text, newline=""))  # newline="": \n, \r\n or \r
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        raise BatchInputError(f"{file}: empty CSV file")
    header_line, header_row = rows[0]
    header = csv_header(file, header_line, header_row)
    for line, row in rows[1:]:
        check_csv_row_length(file, line, row, header)
    columns: dict[str, np.ndarray] = {}
    for i, name in enumerate(header):
        values: list[int | float] = []
        for line, row in rows[1:]:
            if i >= len(row) or not row[i].strip():
                raise BatchInputError(f"{file}:{line}: no value for column {name!r}")
            values.append(csv_number(row[i].strip(), f"{file}:{line}: column {name!r}"))
        if any(isinstance(v, float) for v in values):
            columns[name] = np.array([float(v) for v in values], dtype=np.float64)
        else:
            columns[name] = np.array(values, dtype=object)
    return columns


def csv_header(file: str | Path, line: int, row: list[str]) -> list[str]:
    """A CSV header row's column names; an error names an empty or repeated one."""
    header = [h.strip() for h in row]
    seen: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        if not name:
            raise BatchInputError(f"{file}:{line}: column {i} of the header has no name")
        if name in seen:
            raise BatchInputError(f"{file}:{line}: column {name!r} is named twice "
                                  f"(columns {seen[name]} and {i})")
        seen[name] = i
    return header


def check_csv_row_length(file: str | Path, line: int, row: list[str], header: list[str]
                         ) -> None:
    """An error when a data row has values beyond the header's columns."""
    if any(cell.strip() for cell in row[len(header):]):
        raise BatchInputError(f"{file}:{line}: {len(row)} values, but the header names "
                              f"{len(header)} columns")


def csv_number(cell: str, where: str) -> int | float:
    """An integer (decimal, 0x, 0b, 0o) or a real (with '.', an exponent, nan or inf)."""
    try:
        return int(cell, 0)
    except ValueError:
        pass
    try:
        value = float(cell)
    except ValueError:
        raise BatchInputError(f"{where}: {cell!r} is not a number") from None
    if math.isfinite(value) and value == int(value) and not any(c in cell for c in ".eEnN"):
        return int(value)  # "1_0" and the like: an integer written another way
    return value


def to_words(values: np.ndarray, fmt: WordFormat, fixed: bool | None = None,
             name: str | None = None, first_row: int = 1) -> np.ndarray:
    """Lane words (uint64) for a column.

    ``fixed`` is the type of the name the column feeds: True reads every value as a real
    (``3`` is 3.0), False every value as an integer (a raw word; ``3.0`` is 3, ``2.5`` an
    error); None (a register) reads floats as reals and integers as raw words.  ``name``
    is the column's name, for the messages (which also give the row: ``first_row`` is the
    first value's, 1 unless the values are a chunk of a longer column).
    """
    label = f"column {name!r}" if name is not None else "an input"
    values = np.asarray(values)
    if values.ndim != 1:
        raise BatchInputError(f"{label}: expected one value per lane (a 1-D column), "
                              f"not shape {values.shape}")
    kind = values.dtype.kind
    if kind == "O":
        items = values.tolist()
        for row, v in enumerate(items, start=first_row):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise BatchInputError(f"{label}, row {row}: {v!r} is not a number")
        if any(isinstance(v, (float, np.floating)) for v in items):
            values = np.array([float(v) for v in items], dtype=np.float64)
            kind = "f"
        else:
            ints = [int(v) for v in items]
            return _int_words(ints, fmt, label, first_row) if fixed is not True else \
                _real_words_exact(ints, fmt, label, first_row)
    if kind == "b":
        values = values.astype(np.int64)
        kind = "i"
    if kind in "iu" and fixed is not True:
        return _int_array_words(values, fmt, label, first_row)
    if kind in "iu":
        ints = [int(v) for v in values.tolist()]
        return _real_words_exact(ints, fmt, label, first_row)
    if kind == "f":
        values = values.astype(np.float64)
        bad = np.nonzero(~np.isfinite(values))[0]
        if bad.size:
            raise BatchInputError(f"{label}, row {bad[0] + first_row}: {values[bad[0]]} is not a "
                                  "finite number")
        if fixed is False:
            whole = np.nonzero(values != np.floor(values))[0]
            if whole.size:
                raise BatchInputError(f"{label}, row {whole[0] + first_row}: {values[whole[0]]} "
                                      "is not a whole number, and the name is an integer (int)")
            return _int_words([int(v) for v in values.tolist()], fmt, label, first_row)
        return _real_words(values, fmt, label, first_row)
    raise BatchInputError(f"{label}: inputs must be numbers, not {values.dtype}")


def _int_words(ints: list[int], fmt: WordFormat, label: str, first_row: int = 1
               ) -> np.ndarray:
    for row, v in enumerate(ints, start=first_row):
        if not fmt.min_signed <= v <= fmt.mask:
            raise BatchInputError(f"{label}, row {row}: {v} does not fit a {fmt.width}-bit "
                                  "word")
    return np.array([v & fmt.mask for v in ints], dtype=np.uint64)


def _int_array_words(values: np.ndarray, fmt: WordFormat, label: str, first_row: int
                     ) -> np.ndarray:
    """:func:`_int_words` of a numpy integer column, without a Python loop (a chunk of a
    large batch): every value must fit the word, signed or unsigned."""
    if values.dtype.kind == "u":
        wide = values.astype(np.uint64)
        bad = np.nonzero(wide > np.uint64(fmt.mask))[0]
    else:
        wide = values.astype(np.int64)
        bad = np.nonzero((wide < max(fmt.min_signed, -(1 << 63)))
                         | (wide > min(fmt.mask, (1 << 63) - 1)))[0]
    if bad.size:
        raise BatchInputError(f"{label}, row {bad[0] + first_row}: {values[bad[0]]} does not "
                              f"fit a {fmt.width}-bit word")
    return wide.astype(np.uint64) & np.uint64(fmt.mask)


def _real_words_exact(ints: list[int], fmt: WordFormat, label: str, first_row: int = 1
                      ) -> np.ndarray:
    """Whole numbers as fixed-point reals (n -> n * 2**frac_bits), exactly."""
    limit = 1 << (fmt.width - 1 - fmt.frac_bits)
    for row, v in enumerate(ints, start=first_row):
        if not -limit <= v < limit:
            raise BatchInputError(f"{label}, row {row}: {v} does not fit {fmt.name} "
                                  f"(-{limit} <= x < {limit})")
    return np.array([(v << fmt.frac_bits) & fmt.mask for v in ints], dtype=np.uint64)


def _real_words(values: np.ndarray, fmt: WordFormat, label: str, first_row: int = 1
                ) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # a huge value: inf, refused below
        scaled = np.abs(values) * float(1 << fmt.frac_bits)  # exact: a power of two
        whole = np.floor(scaled)
        rounded = whole + ((scaled - whole) >= 0.5)  # half away from zero, as from_real
    limit = float(1 << (fmt.width - 1))
    over = np.nonzero((rounded > limit) | ((rounded == limit) & (values > 0)))[0]
    if over.size:
        raise BatchInputError(f"{label}, row {over[0] + first_row}: {values[over[0]]} does not fit "
                              f"{fmt.name}")
    magnitude = rounded.astype(np.uint64)
    words = np.where(values < 0, (-magnitude.astype(np.uint64)), magnitude)
    return words & np.uint64(fmt.mask)


def column_words(column: Column, values: np.ndarray, fmt: WordFormat, first_row: int = 1
                 ) -> np.ndarray:
    """Lane words for the values of ``column``, read by the type of the name it feeds
    (``first_row``: the row of the first value, for the messages)."""
    return to_words(values, fmt, fixed=column.fixed if column.typed else None, name=column.name,
                    first_row=first_row)


def check_column(column: Column, values: np.ndarray, fmt: WordFormat, first_row: int = 1
                 ) -> None:
    """Raise what :func:`column_words` raises for these values, without building the
    words when it can: a float column read as reals whose smallest and largest values lie
    well inside the format (two passes, no temporaries; NaN fails them) is fine, and only
    another column is converted to find its first bad row.  A chunked batch checks its
    whole input this way before the first chunk runs (measured on 5 * 10^6 J2 inputs:
    converting them took 0.32 s on one core while the workers waited)."""
    values = np.asarray(values)
    reals = column.fixed if column.typed else None
    if values.ndim == 1 and values.dtype.kind == "f" and reals is not False and values.size:
        bound = float(1 << (fmt.width - 1 - fmt.frac_bits)) - 1.0  # well inside: no rounding
        if bool(values.min() > -bound) and bool(values.max() < bound):
            return
    column_words(column, values, fmt, first_row)
