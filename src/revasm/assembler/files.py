"""Writing output files so that nothing is lost (docs/cli.md, "Output files").

Every file revasm writes goes first to a temporary file in the same folder, which
then replaces the target in one ``os.replace``: a reader sees the old file or the
new one, never half of one, and a failure (a full disk, an exception while the
data is produced, Ctrl-C) leaves the old file as it was and no temporary file behind.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def _open_temporary(target: Path) -> tuple[Path, int]:
    """A new, empty file beside ``target`` (hidden, same suffix), with its descriptor."""
    folder = target.parent
    for _ in range(100):
        # The same suffix as the target: some writers (matplotlib) read the format from it.
        name = f".{target.stem}.{secrets.token_hex(4)}.tmp{target.suffix}"
        candidate = folder / name
        try:
            # 0o666 and the umask, as open() gives a new file (mkstemp would give 0o600).
            return candidate, os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: cannot create a temporary file for {target.name}")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path to write in place of ``path``; on success it replaces ``path``.

    For writers that take a file name (``savefig``, a simulator's VCD writer); on any
    exception the temporary file is removed and ``path`` is untouched.
    """
    target = Path(path)
    temporary, descriptor = _open_temporary(target)
    os.close(descriptor)
    try:
        yield temporary
        if target.exists() and not target.is_file():
            raise IsADirectoryError(f"{target} is not a file")
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w",
                encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """``open(path, mode)`` written atomically: the file appears whole when the block ends.

    ``mode`` is ``"w"`` (text, ``encoding``) or ``"wb"`` (bytes, e.g. for ``numpy.savez``).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a new file: mode 'w' or 'wb', not {mode!r}")
    target = Path(path)
    temporary, descriptor = _open_temporary(target)
    try:
        stream: IO[Any]
        if mode == "wb":
            stream = os.fdopen(descriptor, "wb")
        else:
            stream = os.fdopen(descriptor, "w", encoding=encoding, newline="")
        with stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists() and not target.is_file():
            raise IsADirectoryError(f"{target} is not a file")
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes | str,
                 encoding: str = "utf-8") -> None:
    """Write ``data`` (bytes, or text in ``encoding``) to ``path`` atomically."""
    if isinstance(data, str):
        with atomic_open(path, "w", encoding=encoding) as stream:
            stream.write(data)
    else:
        with atomic_open(path, "wb") as stream:
            stream.write(data)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
