"""Writing output files so that nothing is lost (docs/cli.md, "Output files").

Every file revasm writes goes first to a temporary file in the same folder, which
then replaces the target in one ``os.replace``: a reader sees the old file or the
new one, never half of one, and a failure (a full disk, an exception while the
data is produced, Ctrl-C) leaves the old file as it was and no temporary file behind.
"""
from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
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


class GroupWriteError(OSError):
    """One file of a group could not be written (:func:`write_atomic_all`); ``path`` says
    which.  None of the group was written: every file is as it was before."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error), str(path))
        self.path = path


def write_atomic_all(files: Sequence[tuple[str | os.PathLike[str], bytes | str]],
                     encoding: str = "utf-8") -> None:
    """Write files that belong together (an image and its JSON sidecar, a ``.pal`` and its
    ``.map.json``) all or nothing: each to a temporary file first, then renamed into place
    one by one; when a write or a rename fails, the files renamed so far get their old
    contents back (or go, if they were new) and no temporary is left.  Raises
    :class:`GroupWriteError` naming the file that failed."""
    targets = [Path(path) for path, _ in files]
    temporaries: list[Path] = []
    backups: dict[Path, Path | None] = {}  # target -> its old file moved aside, or None
    current = targets[0] if targets else Path()
    try:
        for target, (_, data) in zip(targets, files):
            current = target
            temporary, descriptor = _open_temporary(target)
            temporaries.append(temporary)
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(data.encode(encoding) if isinstance(data, str) else data)
                stream.flush()
                os.fsync(stream.fileno())
        for target, temporary in zip(targets, temporaries):
            current = target
            if target.exists() and not target.is_file():
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
            backup = None
            if target.exists():
                backup, descriptor = _open_temporary(target)
                os.close(descriptor)
                try:
                    os.replace(target, backup)
                except BaseException:
                    _remove(backup)
                    raise
            backups[target] = backup
            os.replace(temporary, target)
    except BaseException as exc:
        for target, backup in reversed(backups.items()):  # put back what was there
            with suppress(OSError):
                if backup is not None:
                    os.replace(backup, target)
                elif target.exists():
                    _remove(target)
        for temporary in temporaries:
            _remove(temporary)
        if isinstance(exc, OSError) and not isinstance(exc, GroupWriteError):
            raise GroupWriteError(current, exc) from exc
        raise
    for backup in backups.values():
        if backup is not None:
            _remove(backup)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
