"""Batch inputs read a range of rows at a time: CSV, NPZ, Parquet and Zarr, never whole.

A *source* knows its column names and its number of rows (lanes) after a look at the
file, and :meth:`Source.read` returns the columns of rows ``[start, stop)`` only, so a
chunked batch (:mod:`revasm.batching.chunks`) holds one chunk of inputs at a time, on whichever
worker runs it.  Sources are small picklable objects (a path and an index), sent to
workers with each chunk.  Values keep the file's types -- what they mean is decided by
:mod:`revasm.batching.inputs` (``column_words``), the same rules as the whole-file reader.

* CSV: one pass over the file checks every cell (a number, as ``inputs`` reads it),
  learns which columns are reals (a decimal point, an exponent, nan or inf anywhere in
  the column) and remembers the byte offset of every :data:`CSV_STRIDE`-th data row;
* NPZ: each member's ``.npy`` header (numpy's own ``numpy.lib.format``), then the rows'
  bytes, read from the member at their offset;
* Parquet (pyarrow): the row groups that hold the rows;
* Zarr: a group of 1-D arrays, sliced (zarr reads the chunks that hold the rows).

Every problem is a :class:`~revasm.batching.inputs.BatchInputError` naming the file, and
the column and row when there is one (row 1 is the first data row).  Parquet and Zarr
need the ``dist`` extra (``pip install 'revasm[dist]'``); the message says so.
"""
from __future__ import annotations

import csv
import re
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from revasm.machine.values import RawWord

from .inputs import BatchInputError, check_csv_row_length, csv_header, csv_number

#: The CSV source remembers the byte offset of every this many data rows.
CSV_STRIDE = 4096

#: The file suffixes a source reads.
FORMATS = (".csv", ".npz", ".parquet", ".zarr")


class Source(Protocol):
    """Columns of a batch's inputs, read a range of rows at a time."""

    @property
    def path(self) -> str:
        """The file (or ``<inputs>`` for columns in memory)."""
        ...

    @property
    def lanes(self) -> int:
        """The number of rows."""
        ...

    @property
    def names(self) -> tuple[str, ...]:
        """The columns' names, in the file's order."""
        ...

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Every column's values of rows ``[start, stop)`` (0-based, ``stop`` excluded)."""
        ...

    def part(self, start: int, stop: int) -> Source:
        """A source that reads rows ``[start, stop)`` as this one does, and may know
        nothing of the others (what a chunk's job carries to its worker)."""
        ...


def needs_extra(what: str, module: str) -> BatchInputError:
    """The error for a missing optional dependency: which extra installs it."""
    return BatchInputError(f"{what} needs {module}, which is not installed: "
                           "pip install 'revasm[dist]'")


def open_source(path: str) -> Source:
    """The source for an inputs file, by its suffix (:data:`FORMATS`)."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in FORMATS:
        raise BatchInputError(f"{path}: inputs must be a {', '.join(FORMATS[:-1])} or "
                              f"{FORMATS[-1]} file")
    if not file.exists():
        raise BatchInputError(f"{path}: no such file or directory")
    if suffix == ".csv":
        return CsvSource.scan(path)
    if suffix == ".npz":
        return NpzSource.scan(path)
    if suffix == ".parquet":
        return ParquetSource.scan(path)
    return ZarrSource.scan(path)


def _check_lengths(path: str, lengths: dict[str, int]) -> int:
    if not lengths:
        raise BatchInputError(f"{path}: no input columns")
    if len(set(lengths.values())) != 1:
        shown = ", ".join(f"{k}: {v}" for k, v in lengths.items())
        raise BatchInputError(f"{path}: the columns differ in length ({shown})")
    lanes = next(iter(lengths.values()))
    if lanes == 0:
        raise BatchInputError(f"{path}: the inputs have no rows")
    return lanes


def _numeric(path: str, name: str, dtype: np.dtype) -> None:
    if dtype.kind not in "biuf":
        raise BatchInputError(f"{path}: column {name!r} holds {dtype} values, not numbers")


@dataclass(frozen=True)
class ArraySource:
    """Columns already in memory (the Python API's ``inputs``)."""

    columns: dict[str, np.ndarray]
    path: str = "<inputs>"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.columns)

    @property
    def lanes(self) -> int:
        return len(next(iter(self.columns.values())))

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        return {name: values[start:stop] for name, values in self.columns.items()}

    def part(self, start: int, stop: int) -> Source:
        return self


@dataclass(frozen=True)
class CsvSource:
    """A CSV file with a header row of names; blank rows are skipped, as ever."""

    path: str
    names: tuple[str, ...]
    lanes: int
    #: the columns with a real anywhere (read as float64; the others as integers)
    reals: frozenset[str]
    #: (byte offset, line number) of data rows 0, CSV_STRIDE, 2 * CSV_STRIDE, ...
    marks: tuple[tuple[int, int], ...] = field(repr=False)
    #: the number of marks left out before ``marks[0]`` (a part of the source)
    first_mark: int = 0

    @classmethod
    def scan(cls, path: str) -> CsvSource:
        """Check every cell and index the rows, in one pass of bounded memory."""
        header: list[str] | None = None
        reals: set[str] = set()
        raw: set[str] = set()
        marks: list[tuple[int, int]] = []
        rows = 0
        try:
            with open(path, "rb") as stream:
                for offset, line, row in _csv_rows(path, stream, 0, 1):
                    if header is None:
                        header = csv_header(path, line, row)
                        continue
                    check_csv_row_length(path, line, row, header)
                    if rows % CSV_STRIDE == 0:
                        marks.append((offset, line))
                    for i, name in enumerate(header):
                        cell = row[i].strip() if i < len(row) else ""
                        if not cell:
                            raise BatchInputError(f"{path}:{line}: no value for column {name!r}")
                        number = csv_number(cell, f"{path}:{line}: column {name!r}")
                        if isinstance(number, float):
                            reals.add(name)
                        elif not isinstance(number, int):  # raw:N: the column is read
                            raw.add(name)                   # value by value

                    rows += 1
        except OSError as exc:
            raise BatchInputError(f"{path}: cannot read inputs: {exc.strerror or exc}") from None
        if header is None:
            raise BatchInputError(f"{path}: empty CSV file")
        if rows == 0:
            raise BatchInputError(f"{path}: the inputs have no rows")
        return cls(path, tuple(header), rows, frozenset(reals - raw), tuple(marks))

    def part(self, start: int, stop: int) -> CsvSource:
        """The one mark rows ``[start, stop)`` are read from (10^8 rows have 24414)."""
        mark = start // CSV_STRIDE
        return replace(self, marks=(self.marks[mark - self.first_mark],), first_mark=mark)

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        offset, line = self.marks[start // CSV_STRIDE - self.first_mark]
        skip = start % CSV_STRIDE
        values: list[list[int | float | RawWord]] = [[] for _ in self.names]
        try:
            with open(self.path, "rb") as stream:
                stream.seek(offset)
                for _, at, row in _csv_rows(self.path, stream, offset, line):
                    if skip:
                        skip -= 1
                        continue
                    for i, name in enumerate(self.names):
                        values[i].append(csv_number(row[i].strip(), f"{self.path}:{at}: column "
                                                    f"{name!r}"))
                    if len(values[0]) == stop - start:
                        break
        except (OSError, IndexError) as exc:
            raise BatchInputError(f"{self.path}: changed while the batch ran ({exc})") from None
        if len(values[0]) != stop - start:
            raise BatchInputError(f"{self.path}: changed while the batch ran (rows missing)")
        return {name: (np.array(column, dtype=np.float64) if name in self.reals
                       else np.array(column, dtype=object))
                for name, column in zip(self.names, values)}


def _csv_rows(path: str, stream: Any, offset: int,
              line: int) -> Iterator[tuple[int, int, list[str]]]:
    """(byte offset, line number, cells) of each non-blank row from ``offset`` on."""
    for raw in stream:
        at, here = offset, line
        offset += len(raw)
        line += 1
        if here == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # the UTF-8 byte order mark
        if b"\0" in raw:
            raise BatchInputError(f"{path}:{here}: a NUL byte: not a CSV text file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BatchInputError(f"{path}:{here}: cannot read inputs: not UTF-8 text (byte "
                                  f"{at + exc.start})") from None
        try:
            row = next(csv.reader([text]), [])
        except csv.Error as exc:
            raise BatchInputError(f"{path}:{here}: {exc}") from None
        if any(cell.strip() for cell in row):
            yield at, here, row


@dataclass(frozen=True)
class _NpyMember:
    member: str
    dtype: np.dtype
    rows: int
    data_offset: int


#: What zipfile raises on a damaged archive: a bad directory, a member cut short, an
#: unknown compression method (NotImplementedError), an encrypted member (RuntimeError),
#: damaged deflate data (zlib.error).
_ZIP_ERRORS = (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile, NotImplementedError,
               RuntimeError, zlib.error)


@dataclass(frozen=True)
class NpzSource:
    """A ``numpy.savez`` file: one 1-D array per column, read row ranges from the zip."""

    path: str
    names: tuple[str, ...]
    lanes: int
    members: tuple[_NpyMember, ...] = field(repr=False)

    @classmethod
    def scan(cls, path: str) -> NpzSource:
        members = []
        try:
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if not info.filename.endswith(".npy"):
                        continue
                    name = info.filename[:-4]
                    with archive.open(info) as stream:
                        members.append(_npy_header(path, name, info.filename, stream))
        except _ZIP_ERRORS:
            raise BatchInputError(f"{path}: not a valid .npz file (numpy.savez writes one)"
                                  ) from None
        except OSError as exc:
            raise BatchInputError(f"{path}: cannot read inputs: {exc.strerror or exc}") from None
        lanes = _check_lengths(path, {m.member[:-4]: m.rows for m in members})
        return cls(path, tuple(m.member[:-4] for m in members), lanes, tuple(members))

    def part(self, start: int, stop: int) -> Source:
        return self

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        columns = {}
        try:
            with zipfile.ZipFile(self.path) as archive:
                for name, member in zip(self.names, self.members):
                    with archive.open(member.member) as stream:
                        size = member.dtype.itemsize
                        stream.seek(member.data_offset + start * size)
                        data = stream.read((stop - start) * size)
                    if len(data) != (stop - start) * size:
                        raise BatchInputError(f"{self.path}: column {name!r} is cut short "
                                              f"before row {start + len(data) // size + 1}")
                    columns[name] = np.frombuffer(data, dtype=member.dtype)
        except (*_ZIP_ERRORS, OSError) as exc:
            raise BatchInputError(f"{self.path}: not a valid .npz file ({exc})") from None
        return columns


def _npy_header(path: str, name: str, member: str, stream: Any) -> _NpyMember:
    """An ``.npy`` member's dtype and length (numpy.lib.format reads the header)."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(stream)
        else:
            shape, fortran, dtype = npy.read_array_header_2_0(stream)
    except Exception as exc:  # numpy raises several kinds on a bad header
        raise BatchInputError(f"{path}: column {name!r} is unreadable: {exc}") from None
    _numeric(path, name, dtype)
    if len(shape) != 1:
        raise BatchInputError(f"{path}: every input must be one-dimensional ({name})")
    return _NpyMember(member, dtype, shape[0], stream.tell())


@dataclass(frozen=True)
class ParquetSource:
    """A Parquet file, or a dataset folder of them (read in file-name order, as pyarrow
    and ``revasm batch -o OUT.parquet`` order them), of numeric columns, read by row group."""

    path: str
    names: tuple[str, ...]
    lanes: int
    #: every row group: (file, group in the file, its first row in the batch)
    groups: tuple[tuple[str, int, int], ...] = field(repr=False)

    @classmethod
    def scan(cls, path: str) -> ParquetSource:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise needs_extra("reading .parquet inputs", "pyarrow") from None
        files = _parquet_files(path)
        names: list[str] = []
        schema = None
        groups = []
        rows = 0
        for file in files:
            try:
                metadata = pq.ParquetFile(file)
                file_schema = metadata.schema_arrow
            except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
                # (a column name that is not UTF-8 fails in pyarrow's decoding of it)
                raise BatchInputError(f"{file}: not a valid Parquet file ({exc})") from None
            if schema is None:
                schema = file_schema
                names = [_parquet_number(file, column) for column in schema]
                for index, name in enumerate(names):
                    if name in names[:index]:
                        raise BatchInputError(f"{file}: column {name!r} is named twice "
                                              f"(columns {names.index(name) + 1} and "
                                              f"{index + 1})")
            elif not file_schema.equals(schema):
                raise BatchInputError(f"{file}: its columns differ from those of {files[0]}")
            for group in range(metadata.metadata.num_row_groups):
                groups.append((file, group, rows))
                rows += metadata.metadata.row_group(group).num_rows
        if not names:
            raise BatchInputError(f"{path}: no input columns")
        if rows == 0:
            raise BatchInputError(f"{path}: the inputs have no rows")
        return cls(path, tuple(names), rows, tuple(groups))

    def part(self, start: int, stop: int) -> Source:
        return self

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        ends = [first for _, _, first in self.groups[1:]] + [self.lanes]
        wanted = [group for group, end in zip(self.groups, ends)
                  if group[2] < stop and end > start]
        try:
            table = pa.concat_tables(
                pq.ParquetFile(file).read_row_group(index, columns=list(self.names))
                for file, index, _ in wanted)
        except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
            raise BatchInputError(f"{self.path}: rows {start + 1} to {stop} are unreadable "
                                  f"({exc})") from None
        table = table.slice(start - wanted[0][2], stop - start)
        columns = {}
        for name in self.names:
            column = table.column(name)
            if column.null_count:
                first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
                raise BatchInputError(f"{self.path}: column {name!r}, row {start + first + 1}: "
                                      "no value (null)")
            columns[name] = column.to_numpy()
        return columns


def _parquet_files(path: str) -> list[str]:
    """The file, or a dataset folder's ``.parquet`` files (not those pyarrow skips: names
    starting with ``_`` or ``.``, and what is in such folders), in name order."""
    folder = Path(path)
    if not folder.is_dir():
        return [path]
    files = sorted(str(file) for file in folder.rglob("*.parquet") if file.is_file()
                   and not any(part.startswith(("_", "."))
                               for part in file.relative_to(folder).parts))
    if not files:
        raise BatchInputError(f"{path}: a folder without .parquet files")
    return files


def _parquet_number(file: str, column: Any) -> str:
    """A Parquet column's name, if it holds numbers."""
    import pyarrow as pa

    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise BatchInputError(f"{file}: column {column.name!r} holds {kind} values, not "
                              "numbers")
    return str(column.name)


@dataclass(frozen=True)
class ZarrSource:
    """A Zarr group (v2 or v3) of 1-D numeric arrays, one per column."""

    path: str
    names: tuple[str, ...]
    lanes: int

    @classmethod
    def scan(cls, path: str) -> ZarrSource:
        group = _zarr_group(path)
        lengths = {}
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                arrays = sorted(group.arrays(), key=lambda item: item[0])
        except Exception as exc:  # zarr raises many kinds on a corrupt store
            raise BatchInputError(f"{path}: not a valid Zarr group ({exc})") from None
        for warning in said:  # a member zarr cannot read is left out of arrays() with a
            # warning: it could be a column the program reads, which would then take its
            # declared default -- a silent wrong answer
            unread = _UNREAD_MEMBER.search(str(warning.message))
            if unread:
                raise BatchInputError(f"{path}: {unread.group(1)!r} is neither an array nor "
                                      "a group (its metadata is missing or unreadable)")
        for name, array in arrays:
            _numeric(path, name, np.dtype(array.dtype))
            if array.ndim != 1:
                raise BatchInputError(f"{path}: every input must be one-dimensional ({name})")
            lengths[name] = array.shape[0]
        lanes = _check_lengths(path, lengths)
        return cls(path, tuple(lengths), lanes)

    def part(self, start: int, stop: int) -> Source:
        return self

    def read(self, start: int, stop: int) -> dict[str, np.ndarray]:
        group = _zarr_group(self.path)
        columns = {}
        for name in self.names:
            try:
                columns[name] = np.asarray(group[name][start:stop])
            except Exception as exc:  # a missing or corrupt chunk
                raise BatchInputError(f"{self.path}: column {name!r}, rows {start + 1} to "
                                      f"{stop} are unreadable ({exc})") from None
        return columns


#: What zarr warns of a member of a group it cannot read (``Group.arrays`` leaves it out).
_UNREAD_MEMBER = re.compile(r"Object at (\S+) is not recognized as a component of a Zarr "
                            r"hierarchy")


def _zarr_group(path: str) -> Any:
    try:
        import zarr
    except ImportError:
        raise needs_extra("reading .zarr inputs", "zarr") from None
    try:
        group = zarr.open_group(path, mode="r")
    except Exception as exc:  # zarr raises many kinds on a missing or corrupt store
        raise BatchInputError(f"{path}: not a valid Zarr group ({exc})") from None
    return group
