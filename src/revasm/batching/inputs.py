"""Batch inputs: columns of values (npz arrays or CSV columns) to lane words.

A column is named by a register (``$5``) or a declared name.  What a value means
depends on the name it feeds:

* a **fixed-point name** (``.input x $1 fixed``) reads every value as a real number:
  ``3`` is 3.0, as ``2.5`` is 2.5, converted exactly as ``WordFormat.from_real`` does
  (round half away from zero);
* an **integer name** (``.input n $1 int``) reads every value as an integer in the
  signed range; a real value must be a whole number (``3.0`` is 3);
* a **register** (``$3``) holds a raw word: an integer (``3.0`` is 3), signed or its
  unsigned bits;
* a ``raw:N`` cell is the raw word N for any column -- the one rule of every value a
  user gives (``machine/values.py``, docs/cli.md "Values"), as ``revasm run --set``
  reads VALUEs.

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
from typing import Any

import numpy as np

from revasm.assembler.image import Image, UnknownName
from revasm.isa.fixed_point import WordFormat
from revasm.machine.values import (
    FIXED,
    INT,
    RAW_PREFIX,
    RawWord,
    ValueRuleError,
    kind_of,
    parse_number,
    word_of,
)


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


def resolve_columns(names: Iterable[str], image: Image) -> dict[str, Column]:
    """Every column's place (:func:`resolve_column`); two columns that set the same
    register or word (``n`` and ``$1`` where ``n`` lives in ``$1``) are an error naming
    both, not a silent last-one-wins."""
    places: dict[str, Column] = {}
    seen: dict[tuple[int | None, int | None], str] = {}
    for name in names:
        place = resolve_column(name, image)
        key = (place.register, place.address)
        if key in seen:
            where = f"${place.register}" if place.register is not None else \
                f"address {place.address}"
            raise BatchInputError(f"columns {seen[key]!r} and {name!r} both set {where}")
        seen[key] = name
        places[name] = place
    return places


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
        repeated = sorted({name for name in data.files if data.files.count(name) > 1})
        if repeated:
            raise BatchInputError(f"{file}: column {repeated[0]!r} is named twice")
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
        values: list[int | float | RawWord] = []
        for line, row in rows[1:]:
            if i >= len(row) or not row[i].strip():
                raise BatchInputError(f"{file}:{line}: no value for column {name!r}")
            values.append(csv_number(row[i].strip(), f"{file}:{line}: column {name!r}"))
        if any(isinstance(v, float) for v in values) and \
                not any(isinstance(v, RawWord) for v in values):
            columns[name] = np.array(values, dtype=np.float64)
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


def csv_number(cell: str, where: str) -> int | float | RawWord:
    """An integer (decimal, 0x, 0b, 0o), a real (with '.', an exponent, nan or inf) or a
    raw word (``raw:N``)."""
    if cell.lower().startswith(RAW_PREFIX):
        try:
            return parse_number(cell)  # type: ignore[return-value]  # RawWord
        except ValueRuleError as exc:
            raise BatchInputError(f"{where}: {exc}") from None
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
    """Lane words (uint64) for a column, by the one rule of ``machine/values.py``.

    ``fixed`` is the type of the name the column feeds: True reads every value as a real
    (``3`` is 3.0), False every value as an integer (``3.0`` is 3, ``2.5`` an error, in the
    signed range), None (a register) as a raw word (an integer, signed or its unsigned
    bits); ``raw:N`` text is the word N anywhere.  ``name`` is the column's name, for the
    messages (which also give the row: ``first_row`` is the first value's, 1 unless the
    values are a chunk of a longer column).  A bad value's message is the rule's own.
    """
    label = f"column {name!r}" if name is not None else "an input"
    kind = kind_of(fixed)
    values = np.asarray(values)
    if values.ndim != 1:
        raise BatchInputError(f"{label}: expected one value per lane (a 1-D column), "
                              f"not shape {values.shape}")
    dtype = values.dtype.kind
    if dtype in "OUSb":  # Python objects, text or booleans (refused): value by value
        return _rule_words(values.tolist(), fmt, kind, label, name or "", first_row)
    if dtype in "iu" and kind != FIXED:
        return _int_array_words(values, fmt, kind, label, name or "", first_row)
    if dtype in "iu":
        return _rule_words(values.tolist(), fmt, kind, label, name or "", first_row)
    if dtype == "f":
        values = np.asarray(values, dtype=np.float64)  # (read only: no copy)
        if kind == FIXED and values.size >= COMPILED_VALUES:
            return _compiled_real_words(values, fmt, label, first_row, name or "")
        bad = np.nonzero(~np.isfinite(values))[0]
        if bad.size:
            _refuse(values, int(bad[0]), fmt, kind, label, name or "", first_row)
        if kind != FIXED:  # whole numbers only, then the integer range (exactly, in Python)
            return _rule_words(values.tolist(), fmt, kind, label, name or "", first_row)
        return _real_words(values, fmt, label, first_row, name or "")
    raise BatchInputError(f"{label}: inputs must be numbers, not {values.dtype}")


#: Float columns of at least this many values for a fixed-point name are converted by one
#: compiled pass (``real_words.py``); shorter ones by numpy, without importing numba.
COMPILED_VALUES = 1 << 14


def _refuse(values: Any, row: int, fmt: WordFormat, kind: str, label: str, place: str,
            first_row: int) -> None:
    """Raise the rule's message for ``values[row]``, which a vectorised check refused."""
    value = values[row]
    try:
        word_of(value.item() if isinstance(value, np.generic) else value, fmt, kind, place)
    except ValueRuleError as exc:
        raise BatchInputError(f"{label}, row {row + first_row}: {exc}") from None
    raise AssertionError(f"{label}, row {row + first_row}: the vectorised check refused "
                         f"{value!r}, which the rule takes")  # the two must agree


def _rule_words(items: list, fmt: WordFormat, kind: str, label: str, place: str,
                first_row: int) -> np.ndarray:
    words = np.empty(len(items), dtype=np.uint64)
    for row, value in enumerate(items):
        try:
            words[row] = word_of(value, fmt, kind, place)
        except ValueRuleError as exc:
            raise BatchInputError(f"{label}, row {row + first_row}: {exc}") from None
    return words


def _int_array_words(values: np.ndarray, fmt: WordFormat, kind: str, label: str, place: str,
                     first_row: int) -> np.ndarray:
    """The rule for a numpy integer column without a Python loop (a chunk of a large
    batch): an ``int`` name's values in the signed range, a register's signed or its
    unsigned bits."""
    high = fmt.max_signed if kind == INT else fmt.mask
    if values.dtype.kind == "u":
        wide = values.astype(np.uint64)
        bad = np.nonzero(wide > np.uint64(high))[0]
    else:
        wide = values.astype(np.int64)
        bad = np.nonzero((wide < max(fmt.min_signed, -(1 << 63)))
                         | (wide > min(high, (1 << 63) - 1)))[0]
    if bad.size:
        _refuse(values, int(bad[0]), fmt, kind, label, place, first_row)
    return wide.astype(np.uint64) & np.uint64(fmt.mask)


def _real_words(values: np.ndarray, fmt: WordFormat, label: str, first_row: int = 1,
                place: str = "") -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # a huge value: inf, refused below
        scaled = np.abs(values) * float(1 << fmt.frac_bits)  # exact: a power of two
        whole = np.floor(scaled)
        rounded = whole + ((scaled - whole) >= 0.5)  # half away from zero, as from_real
    limit = float(1 << (fmt.width - 1))
    over = np.nonzero((rounded > limit) | ((rounded == limit) & (values > 0)))[0]
    if over.size:
        _refuse(values, int(over[0]), fmt, FIXED, label, place, first_row)
    magnitude = rounded.astype(np.uint64)
    words = np.where(values < 0, (-magnitude.astype(np.uint64)), magnitude)
    return words & np.uint64(fmt.mask)


def _compiled_real_words(values: np.ndarray, fmt: WordFormat, label: str, first_row: int,
                         place: str) -> np.ndarray:
    """:func:`_real_words` of a float64 column with its non-finite check, in one compiled
    pass (``real_words.py``): a value that is not finite is refused first, as there."""
    from .real_words import real_words

    words = np.empty(values.size, dtype=np.uint64)
    not_finite, too_large = real_words(values, float(1 << fmt.frac_bits),
                                       float(1 << (fmt.width - 1)), np.uint64(fmt.mask), words)
    for row in (not_finite, too_large):
        if row >= 0:
            _refuse(values, row, fmt, FIXED, label, place, first_row)
    return words


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
    if values.ndim == 1 and values.dtype.kind == "f" and reals is True and values.size:
        bound = float(1 << (fmt.width - 1 - fmt.frac_bits)) - 1.0  # well inside: no rounding
        if bool(values.min() > -bound) and bool(values.max() < bound):
            return
    column_words(column, values, fmt, first_row)
