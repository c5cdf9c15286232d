"""Batch inputs and outputs: columns of values (npz arrays or CSV columns) to lane words and back.

A column is named by a register (``$5``) or a declared name.  Float columns
(a CSV column with a decimal point or exponent anywhere) are fixed-point reals,
converted exactly as ``WordFormat.from_real`` does (round half away from zero);
integer columns are raw words, as ``revasm run --set`` reads VALUEs.
"""
from __future__ import annotations

import csv
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


def resolve_column(name: str, image: Image) -> Column:
    try:
        place = image.resolve_name(name)
    except UnknownName as exc:
        raise BatchInputError(f"column {exc}") from None
    if place.register == 0:
        raise BatchInputError(f"column {name!r}: not a register $1..$31")
    return Column(name, place.register, place.address, place.fixed)


def read_columns(path: str) -> dict[str, np.ndarray]:
    """name -> 1-D array, from ``.npz`` or ``.csv`` (header row of names)."""
    file = Path(path)
    try:
        if file.suffix == ".npz":
            with np.load(file, allow_pickle=False) as data:
                columns = {name: np.asarray(data[name]) for name in data.files}
        elif file.suffix == ".csv":
            columns = _read_csv(file)
        else:
            raise BatchInputError(f"{path}: inputs must be a .npz or .csv file")
    except (OSError, ValueError) as exc:
        if isinstance(exc, BatchInputError):
            raise
        raise BatchInputError(f"{path}: cannot read inputs: {exc}") from None
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


def _read_csv(file: Path) -> dict[str, np.ndarray]:
    with open(file, newline="") as handle:
        rows = list(csv.reader(handle))
    rows = [row for row in rows if row and any(cell.strip() for cell in row)]
    if not rows:
        raise BatchInputError(f"{file}: empty CSV file")
    header = [h.strip() for h in rows[0]]
    columns: dict[str, np.ndarray] = {}
    for i, name in enumerate(header):
        cells = []
        for line, row in enumerate(rows[1:], start=2):
            if i >= len(row) or not row[i].strip():
                raise BatchInputError(f"{file}:{line}: no value for column {name!r}")
            cells.append(row[i].strip())
        real = any(ch in cell for cell in cells for ch in ".eE"
                   if not cell.lower().lstrip("-").startswith("0x"))
        try:
            columns[name] = (np.array([float(c) for c in cells], dtype=np.float64) if real
                             else np.array([int(c, 0) for c in cells], dtype=object))
        except ValueError as exc:
            raise BatchInputError(f"{file}: column {name!r}: {exc}") from None
    return columns


def to_words(values: np.ndarray, fmt: WordFormat) -> np.ndarray:
    """Lane words (uint64) for a column: floats as fixed-point reals, integers as raw words."""
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)):
            raise BatchInputError("a fixed-point input is not finite")
        scaled = np.abs(values) * float(1 << fmt.frac_bits)  # exact: a power of two
        whole = np.floor(scaled)
        rounded = whole + ((scaled - whole) >= 0.5)  # half away from zero, as from_real
        limit = float(1 << (fmt.width - 1))
        if np.any(rounded > limit):
            raise BatchInputError(f"a fixed-point input does not fit {fmt.name}")
        magnitude = rounded.astype(np.uint64)
        words = np.where(values < 0, (-magnitude.astype(np.uint64)), magnitude)
        return words & np.uint64(fmt.mask)
    if values.dtype.kind in "iub" or values.dtype == object:
        ints = [int(v) for v in values.tolist()]
        if any(not fmt.min_signed <= v <= fmt.mask for v in ints):
            raise BatchInputError(f"an integer input does not fit a {fmt.width}-bit word")
        return np.array([v & fmt.mask for v in ints], dtype=np.uint64)
    raise BatchInputError(f"inputs must be numbers, not {values.dtype}")


def signed(words: np.ndarray, fmt: WordFormat) -> np.ndarray:
    s = words.astype(np.int64)
    return s if fmt.width == 64 else s - ((s & (1 << 31)) << 1)


def to_reals(words: np.ndarray, fmt: WordFormat) -> np.ndarray:
    return signed(words, fmt).astype(np.float64) / float(1 << fmt.frac_bits)
