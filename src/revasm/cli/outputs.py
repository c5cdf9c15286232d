"""Output files: never over an input (docs/cli.md), always written whole (assembler/files.py)."""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import click

from revasm.assembler.files import atomic_open, atomic_path, write_atomic
from revasm.loading import python_target

__all__ = ["atomic_open", "atomic_path", "refuse_overwrite", "same_file", "write_atomic"]


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (resolved; hard links and symlinks too)."""
    first, second = Path(a), Path(b)
    try:
        if first.exists() and second.exists():
            return os.path.samefile(first, second)
    except OSError:
        pass
    return first.resolve() == second.resolve()


def refuse_overwrite(outputs: Iterable[str | os.PathLike[str] | None],
                     inputs: Iterable[str | os.PathLike[str] | None], option: str,
                     advice: str = "choose another output file") -> None:
    """A usage error (exit 2) when an output file would replace an input file."""
    sources = [Path(path) for path in inputs if path is not None]
    for output in outputs:
        if output is None:
            continue
        for source in sources:
            if same_file(output, source):
                raise click.BadParameter(
                    f"{output} would overwrite the input {source}: {advice}",
                    param_hint=option)


def image_inputs(path: str) -> list[Path]:
    """A program argument's files: itself (``SRC.py`` of ``SRC.py:FUNC``) and, for an
    image, its sidecar."""
    file = Path(python_target(path)[0])
    files = [file]
    if file.suffix.lower() in (".bin", ".hex"):
        files.append(file.with_name(file.name + ".json"))
    return files
