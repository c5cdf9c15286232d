"""`revasm batch`: one program over a table of inputs, one lane per row.

Every row of the inputs is a lane; lanes run together (docs/vector.md) and
each gives exactly what `revasm run` (or, with --grad, `revasm grad`) gives
for that row.  A lane that faults stops alone; the others finish.

The work is the API's (``revasm.batch``, ``revasm.batch_file``: the package
``revasm.batching``); this module reads the options, shows progress on a terminal
(click's bar for a batch in memory, rich's for one in chunks: lanes done, lanes/s,
time left), turns errors into messages and reports.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import click
import numpy as np

import revasm as api
from revasm.assembler.image import Image
from revasm.batching import sinks
from revasm.batching.chunks import BatchOptions
from revasm.batching.cluster import MAX_LOCAL_WORKERS, ClusterError
from revasm.batching.files import streams
from revasm.batching.inputs import BatchInputError, read_columns, resolve_column
from revasm.batching.sinks import BatchOutputError
from revasm.sim.host import GradientError, default_wrt

from .commands_grad import LOSS, WRT
from .commands_run import DEFAULT_MAX_STEPS, ENGINE, STRICT, engine_for
from .errors import EXIT_FAILURE, ToolError, keep_on_interrupt, output_error
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
              help="A lane that runs longer stops with a step-limit fault (up to 2^64-1; "
                   "from 2^62 on: no limit). Default: no limit; Ctrl-C stops the batch.")
@ENGINE
@STRICT
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("-o", "--output", "out_path", type=click.Path(), default=None,
              metavar="OUT.npz|parquet|zarr",
              help="Write every result column: an .npz file (whole, at the end), or a "
                   ".parquet or .zarr folder written chunk by chunk (a rerun of the same "
                   "command writes only the chunks missing).")
@click.option("--workers", type=click.IntRange(1, MAX_LOCAL_WORKERS), default=None,
              metavar="N",
              help="Run the chunks on a local Dask cluster of N worker processes (one core "
                   f"each, at most {MAX_LOCAL_WORKERS}), started and stopped by revasm.")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Run the chunks on the Dask cluster of this scheduler (`dask scheduler`).")
@click.option("--columns", "keep", default=None, metavar="NAME,...",
              help="The result columns an output file keeps (status, fault_kind, steps, "
                   "cycles, overflows, declared names, $0..$31, loss, forward_steps, "
                   "grad_NAME); default: all of them but the registers.")
@click.option("--all-registers", is_flag=True,
              help="Also keep every register ($0..$31) in the results (JSON and files).")
@click.option("--chunk-lanes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Lanes per chunk (default 100000): the unit of work, of memory and of "
                   "resuming.")
def batch(file: str, inputs_path: str, with_grad: bool, loss: str | None, wrt: str | None,
          width: int | None, max_steps: int | None, engine_name: str, strict: bool,
          as_json: bool, out_path: str | None, workers: int | None, scheduler: str | None,
          keep: str | None, all_registers: bool, chunk_lanes: int | None) -> None:
    """Run a program once per input row, all rows at once (one lane per row).

    \b
    Examples:
      revasm batch examples/multiply.pal --inputs examples/ab.csv --json
      revasm batch examples/bessel_j2.pal --inputs examples/xs.npz --grad -o out.npz
      revasm batch examples/bessel_j2.pal --inputs examples/xs.npz --grad -o out.zarr --workers 2
    The inputs' header names the columns (x, $3, ...). Results: the declared
    names (every register too with --all-registers, or those --columns names),
    steps, cycles, each lane's overflow events
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
    if keep is not None and all_registers:
        raise click.UsageError("choose one of --columns and --all-registers")
    if chunked:
        kept = _tuple(parse_name_list(keep))
        if kept is None and not all_registers:
            kept = default_columns(image, with_grad, _tuple(parse_name_list(wrt)))
        options = BatchOptions(with_grad, loss, _tuple(parse_name_list(wrt)),
                               engine_for(engine_name, lanes=2**31), max_steps, strict, kept)
        _run_chunked(image, file, inputs_path, out_path, options, workers=workers,
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
                               max_steps=max_steps, progress=report, strict=strict,
                               columns=None if all_registers else list(image.names))
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


def default_columns(image: Image, with_grad: bool, wrt: tuple[str, ...] | None
                    ) -> tuple[str, ...]:
    """The result columns ``revasm batch`` writes unless told otherwise: what a user asks
    for -- status and fault, counts, overflows, the declared names, and with ``--grad`` the
    loss, the forward pass's steps and the gradients -- not the 32 registers (at 10^6 lanes
    they were 256 MB of the output and most of its writing time)."""
    out = ["status", "fault_kind", "steps", "cycles", "overflows", *image.names]
    if with_grad:
        try:
            names = list(wrt) if wrt is not None else default_wrt(image)
        except GradientError as exc:
            raise ToolError(f"error: {exc}") from None
        out += ["loss", "forward_steps", *(f"grad_{name}" for name in names)]
    return tuple(out)


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


# --- a batch in chunks: streaming files, a Dask cluster, rich's progress bar ----------

def _progress_bar(disable: bool) -> Any:
    """A rich progress bar on stderr: lanes done of all, lanes per second, time left
    (rich is imported here: the other commands do not pay for it)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class LanesPerSecond(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f} lanes/s" if speed else "- lanes/s", style="cyan")

    return Progress(TextColumn("lanes"), BarColumn(), MofNCompleteColumn(), LanesPerSecond(),
                    TimeRemainingColumn(), console=Console(stderr=True), redirect_stdout=False,
                    redirect_stderr=False, disable=disable)


def _run_chunked(image: Any, file: str, inputs_path: str, out_path: str | None,
                 options: BatchOptions, *, workers: int | None, scheduler: str | None,
                 chunk_lanes: int | None, as_json: bool) -> None:
    """Run the batch in chunks and report it (exit code 1 if a lane faulted)."""
    progress = _progress_bar(disable=as_json or not sys.stderr.isatty())
    task: list[Any] = []

    def started(lanes: int, already: int) -> None:
        if workers is not None and not as_json:  # what the cluster cost, and how to share one
            progress.console.print(
                f"a local Dask cluster of {workers} worker{'s' if workers != 1 else ''} "
                f"started in {time.perf_counter() - began:.1f} s (to pay that once for many "
                "runs: `dask scheduler`, `dask worker`, then --scheduler tcp://HOST:PORT; "
                "docs/distributed.md)", markup=False, highlight=False, soft_wrap=True)
        task.append(progress.add_task("lanes", total=lanes, completed=already))

    def advance(done: int) -> None:
        if task:
            progress.update(task[0], completed=done)

    began = time.perf_counter()
    if out_path is not None:
        keep_on_interrupt(f"the chunks written so far are kept in {out_path}; the same "
                          "command resumes from them")
    try:
        with progress:
            summary = api.batch_file(image, inputs_path, out_path, options=options,
                                     workers=workers, scheduler=scheduler,
                                     chunk_lanes=chunk_lanes, progress=advance,
                                     on_start=started)
    except BatchInputError as exc:
        message = str(exc)
        raise ToolError(f"error: {message}" if message.startswith(inputs_path)
                        else f"{inputs_path}: error: {message}") from None
    except BatchOutputError as exc:
        raise ToolError(f"{out_path}: error: {exc}".replace(f"{out_path}: error: {out_path}: ",
                                                             f"{out_path}: error: "),
                        kind="output", file=out_path) from None
    except OSError as exc:
        raise output_error(out_path, exc) from None
    except ClusterError as exc:
        raise ToolError(f"error: {exc}") from None
    except (GradientError, ValueError) as exc:
        raise ToolError(f"{file}: error: {exc}") from None
    _report(summary, out_path, options, as_json, time.perf_counter() - began)
    if summary.faulted:
        sys.exit(EXIT_FAILURE)


def _report(summary: api.BatchSummary, out_path: str | None, options: BatchOptions, as_json: bool,
            seconds: float) -> None:
    if summary.overflow_lanes and summary.first_overflow:
        lane, count = summary.first_overflow
        click.echo(f"warning: {summary.overflow_lanes} of {summary.lanes} lanes counted overflow "
                   f"events (first: lane {lane}, {count}): a fixed-point instruction's exact "
                   "result did not fit the word, so values wrapped or saturated; see the "
                   "'overflows' column; --strict makes each lane stop at its first", err=True)
    result = summary.result
    if result is not None and out_path:
        write_npz(out_path, options.kept(result.columns()))
    if as_json:
        out = result.to_json() if result is not None and not out_path else summary.to_json()
        click.echo(json.dumps(out))
        return
    if result is not None and not out_path:
        print_summary(result, summary.lanes, summary.faulted)
        return
    faulted = summary.faulted
    rate = summary.lanes_run / seconds if seconds > 0 else 0.0
    resumed = (f", {summary.skipped} of {summary.chunks} chunks already written"
               if summary.skipped else "")
    click.echo(f"wrote {out_path}: {summary.lanes} lanes, {summary.lanes - faulted} finished, "
               f"{faulted} faulted" + (" (see its 'fault_kind')" if faulted else "")
               + f"; {summary.chunks} chunk{'s' if summary.chunks != 1 else ''}, "
               f"{summary.lanes_run} lanes run in {seconds:.1f} s "
               f"({rate:,.0f} lanes/s)"
               + resumed, err=True)
    for fault in summary.faults[:5]:
        click.echo(fault_line(fault), err=True)


def write_npz(path: str, arrays: dict) -> None:
    """Every result column to ``path``, whole or not at all (``sinks.write_npz``)."""
    try:
        sinks.write_npz(path, arrays)
    except OSError as exc:
        raise output_error(path, exc) from None


def print_summary(result: api.BatchResult, lanes: int, faulted: int) -> None:
    click.echo(f"{lanes} lanes: {lanes - faulted} finished, {faulted} faulted")
    shown = min(lanes, 5)
    for name, values in result.named.items():
        more = " ..." if lanes > shown else ""
        click.echo(f"  {name} = " + ", ".join(str(v) for v in values[:shown].tolist()) + more)
    if result.loss is not None:
        for name, values in result.gradient.items():
            click.echo(f"  d{result.loss_name}/d{name} = "
                       + ", ".join(str(v) for v in values[:shown].tolist())
                       + (" ..." if lanes > shown else ""))
    for fault in result.faults[:5]:
        click.echo(fault_line(fault), err=True)


def fault_line(fault: dict) -> str:
    """A lane's fault record (``fault_json`` and its lane) as a line of the summary: the
    lane, the place in the user's source (the Janus or Python line of a compiled program),
    the kind and the message."""
    where = f"{fault['file']}:{fault['line']}: " if fault.get("line") is not None else ""
    return f"  lane {fault['lane']}: {where}{fault['kind']}: {fault['message']}"
