"""`revasm batch` in chunks: streaming files, a Dask cluster, a progress bar (rich).

What the command does when asked for chunks (``--chunk-lanes``), a cluster
(``--workers``, ``--scheduler``) or a file format only the chunked path reads or
writes (Parquet, Zarr): the API's :func:`revasm.batch_files.batch_file` does the work;
this module starts or joins the cluster, shows progress on a terminal and reports.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

import click
import numpy as np

from revasm.batch_files import BatchSummary, batch_file
from revasm.batching import BatchResult
from revasm.chunked import BatchOptions, ClusterError, dask_client
from revasm.sim.batch_io import BatchInputError
from revasm.sim.batch_sinks import BatchOutputError
from revasm.sim.host import GradientError

from .errors import EXIT_FAILURE, ToolError, keep_on_interrupt, output_error
from .outputs import atomic_open


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


def run(image: Any, file: str, inputs_path: str, out_path: str | None, options: BatchOptions,
        *, workers: int | None, scheduler: str | None, chunk_lanes: int | None,
        as_json: bool) -> None:
    """Run the batch in chunks and report it (exit code 1 if a lane faulted)."""
    progress = _progress_bar(disable=as_json or not sys.stderr.isatty())
    task: list[Any] = []

    def started(lanes: int, already: int) -> None:
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
            if workers is None and scheduler is None:
                summary = batch_file(image, inputs_path, out_path, options=options,
                                     chunk_lanes=chunk_lanes, progress=advance,
                                     on_start=started)
            else:
                with dask_client(scheduler, workers) as client:
                    summary = batch_file(image, inputs_path, out_path, options=options,
                                         client=client, chunk_lanes=chunk_lanes,
                                         progress=advance, on_start=started)
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


def _report(summary: BatchSummary, out_path: str | None, options: BatchOptions, as_json: bool,
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
        click.echo(f"  lane {fault['lane']}: {fault['kind']}: {fault['message']}", err=True)


def write_npz(path: str, arrays: dict) -> None:
    """Every result column to ``path``, whole or not at all (a temporary file, renamed)."""
    try:
        with atomic_open(path, "wb") as stream:
            np.savez(stream, **arrays)
    except OSError as exc:
        raise output_error(path, exc) from None


def print_summary(result: BatchResult, lanes: int, faulted: int) -> None:
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
        click.echo(f"  lane {fault['lane']}: {fault['kind']}: {fault['message']}", err=True)
