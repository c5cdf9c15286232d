"""`revasm batch`: one program over a table of inputs, one lane per row.

Every row of the inputs is a lane; lanes run together (docs/vector.md) and
each gives exactly what `revasm run` (or, with --grad, `revasm grad`) gives
for that row.  A lane that faults stops alone; the others finish.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from types import TracebackType

import click
import numpy as np

import revasm as api
from revasm.batch_files import streams
from revasm.chunked import BatchOptions
from revasm.sim.batch_io import BatchInputError, read_columns, resolve_column
from revasm.sim.host import GradientError

from . import batch_chunked
from .batch_chunked import print_summary, write_npz
from .commands_grad import LOSS, WRT
from .commands_run import DEFAULT_MAX_STEPS, ENGINE, STRICT, engine_for
from .errors import EXIT_FAILURE, ToolError
from .loading import load_program
from .options import STEP_COUNT, WIDTH
from .outputs import image_inputs, refuse_overwrite
from .values import parse_name_list

PROGRESS_MIN_LANES = 2_000


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--inputs", "inputs_path", required=True, type=click.Path(),
              metavar="FILE.npz|csv|parquet|zarr",
              help="One column per input, named by a declared name (x) or register ($3); "
                   "one lane per row. Values for a fixed-point name are reals (3 is 3.0), "
                   "for an int name integers; a register's float column is reals, its "
                   "integer column raw words. Every .input without a default needs a column.")
@click.option("--grad", "with_grad", is_flag=True,
              help="Also run the gradient protocol (forward, G[loss] = 1, backward).")
@LOSS
@WRT
@WIDTH
@click.option("--max-steps", type=STEP_COUNT, default=DEFAULT_MAX_STEPS,
              show_default=True, help="A lane that runs longer stops with a step-limit fault "
                                      "(up to 2^64-1; from 2^62 on: no limit).")
@ENGINE
@STRICT
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("-o", "--output", "out_path", type=click.Path(), default=None,
              metavar="OUT.npz|parquet|zarr",
              help="Write every result column: an .npz file (whole, at the end), or a "
                   ".parquet or .zarr folder written chunk by chunk (a rerun of the same "
                   "command writes only the chunks missing).")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Run the chunks on a local Dask cluster of N worker processes (one core "
                   "each), started and stopped by revasm.")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Run the chunks on the Dask cluster of this scheduler (`dask scheduler`).")
@click.option("--columns", "keep", default=None, metavar="NAME,...",
              help="The result columns an output file keeps (status, fault_kind, steps, "
                   "cycles, overflows, declared names, $0..$31, loss, forward_steps, "
                   "grad_NAME); default: every one.")
@click.option("--chunk-lanes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Lanes per chunk (default 100000): the unit of work, of memory and of "
                   "resuming.")
def batch(file: str, inputs_path: str, with_grad: bool, loss: str | None, wrt: str | None,
          width: int | None, max_steps: int, engine_name: str, strict: bool, as_json: bool,
          out_path: str | None, workers: int | None, scheduler: str | None,
          keep: str | None, chunk_lanes: int | None) -> None:
    """Run a program once per input row, all rows at once (one lane per row).

    \b
    Examples:
      revasm batch examples/multiply.pal --inputs examples/ab.csv --json
      revasm batch examples/bessel_j2.pal --inputs examples/xs.npz --grad -o out.npz
      revasm batch examples/bessel_j2.pal --inputs examples/xs.npz --grad -o out.zarr --workers 2
    The inputs' header names the columns (x, $3, ...). Results: the declared
    names, every register, steps, cycles, each lane's overflow events
    (`overflows`; --strict: a lane's first one faults it) and fault; with --grad
    also the loss and d loss / d each --wrt (values as the forward pass left
    them; steps of the backward pass). Exit code 1 if any lane faulted.
    """
    if workers is not None and scheduler is not None:
        raise click.UsageError("choose one of --workers and --scheduler")
    chunked = (workers is not None or scheduler is not None or chunk_lanes is not None
               or streams(out_path) or keep is not None
               or not inputs_path.lower().endswith((".csv", ".npz")))
    if as_json and out_path and not streams(out_path):
        raise click.UsageError("choose one of --json and -o OUT.npz")
    if out_path and not out_path.lower().endswith((".npz", ".parquet", ".zarr")):
        raise click.BadParameter(f"{out_path}: the output is an .npz file or a .parquet or "
                                 ".zarr folder", param_hint="-o")
    if out_path:  # never over the program or the inputs
        refuse_overwrite([out_path], [*image_inputs(file), inputs_path], "-o")
    if not with_grad and (loss is not None or wrt is not None):
        raise click.UsageError("--loss and --wrt need --grad")
    image = load_program(file, width, gradient=with_grad)
    if chunked:
        options = BatchOptions(with_grad, loss, _tuple(parse_name_list(wrt)),
                               engine_for(engine_name, lanes=2**31), max_steps, strict,
                               _tuple(parse_name_list(keep)))
        batch_chunked.run(image, file, inputs_path, out_path, options, workers=workers,
                          scheduler=scheduler, chunk_lanes=chunk_lanes, as_json=as_json)
        return
    try:
        columns = read_columns(inputs_path)
        for name in columns:  # name the bad column before any lane runs
            resolve_column(name, image)
    except BatchInputError as exc:
        raise ToolError(f"{inputs_path}: error: {exc}" if not str(exc).startswith(inputs_path)
                        else f"error: {exc}") from None
    lanes = len(next(iter(columns.values())))
    with _progress(lanes, as_json) as report:
        try:
            result = api.batch(image, columns, grad=with_grad, loss=loss,
                               wrt=parse_name_list(wrt),
                               engine=engine_for(engine_name, lanes=lanes),
                               max_steps=max_steps, progress=report, strict=strict)
        except BatchInputError as exc:
            raise ToolError(f"{inputs_path}: error: {exc}") from None
        except (GradientError, ValueError) as exc:
            raise ToolError(f"{file}: error: {exc}") from None
    faulted = result.faulted
    _warn_overflows(result, lanes)
    if out_path:
        write_npz(out_path, result.columns())
    if as_json:
        click.echo(json.dumps(result.to_json()))
    elif not out_path:
        print_summary(result, lanes, faulted)
    else:
        click.echo(f"wrote {out_path}: {lanes} lanes, {lanes - faulted} finished, {faulted} "
                   "faulted" + (" (see its 'fault_kind')" if faulted else ""), err=True)
    if faulted:
        sys.exit(EXIT_FAILURE)


def _tuple(names: list[str] | None) -> tuple[str, ...] | None:
    return tuple(names) if names is not None else None


def _warn_overflows(result: api.BatchResult, lanes: int) -> None:
    """Without --strict: say on stderr how many lanes counted overflow events."""
    if result.overflows is None:
        return
    counted = result.overflows != 0
    if bool(np.any(counted)):
        first = int(np.nonzero(counted)[0][0])
        click.echo(f"warning: {int(np.sum(counted))} of {lanes} lanes counted overflow events "
                   f"(first: lane {first}, {int(result.overflows[first])}): a fixed-point "
                   "instruction's exact result did not fit the word, so values wrapped or "
                   "saturated; see the 'overflows' column; --strict makes each lane stop at "
                   "its first", err=True)


class _progress:
    """click.progressbar on stderr for long runs (lanes finished of all lanes)."""

    def __init__(self, lanes: int, quiet: bool) -> None:
        self.lanes = lanes
        self.bar = None
        self.done = 0
        if lanes >= PROGRESS_MIN_LANES:
            self.bar = click.progressbar(length=lanes, label="lanes", file=sys.stderr)

    def __enter__(self) -> Callable[[int], None]:
        if self.bar is not None:
            self.bar.__enter__()
        return self.update

    def update(self, done: int) -> None:
        if self.bar is not None and done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, error, traceback)
