"""`revasm batch`: one program over a table of inputs on the vector simulator.

Every row of the inputs is a lane; lanes run together (docs/vector.md) and
each gives exactly what `revasm run` (or, with --grad, `revasm grad`) gives
for that row.  A lane that faults stops alone; the others finish.
"""
from __future__ import annotations

import json
import sys

import click
import numpy as np

from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import MachineFault
from revasm.sim.reference.gradient import GradientError
from revasm.sim.vector import VectorMachine
from revasm.sim.vector.batch_io import (BatchInputError, read_columns, resolve_column,
                                        signed, to_reals, to_words)
from revasm.sim.vector.gradient import batch_gradient

from .commands_grad import LOSS, WRT
from .loading import load_gradient_program
from .values import parse_name_list
from .commands_run import DEFAULT_MAX_STEPS
from .errors import EXIT_FAILURE, ToolError
from .loading import load_program

PROGRESS_MIN_LANES = 2_000


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--inputs", "inputs_path", required=True, type=click.Path(dir_okay=False),
              metavar="FILE.npz|FILE.csv",
              help="One column per input, named by a declared name (x) or register ($3); "
                   "one lane per row. Float columns are fixed-point reals, integer "
                   "columns raw words.")
@click.option("--grad", "with_grad", is_flag=True,
              help="Also run the gradient protocol (forward, G[loss] = 1, backward).")
@LOSS
@WRT
@click.option("--width", type=click.Choice(["32", "64"]), default=None,
              help="Word width W. Default: the file's .width, else 32 (64 with --grad).")
@click.option("--max-steps", type=click.IntRange(min=1), default=DEFAULT_MAX_STEPS,
              show_default=True, help="A lane that runs longer stops with a step-limit fault.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("-o", "--output", "out_path", type=click.Path(dir_okay=False), default=None,
              metavar="OUT.npz", help="Write every result column to an .npz file.")
def batch(file: str, inputs_path: str, with_grad: bool, loss: str | None, wrt: str | None,
          width: str | None, max_steps: int, as_json: bool, out_path: str | None) -> None:
    """Run a program once per input row, all rows at once (numpy lanes).

    \b
    Examples:
      revasm batch examples/multiply.pal --inputs ab.csv --json
      revasm batch examples/bessel_j2.pal --inputs xs.npz --grad -o out.npz
    The inputs' header names the columns (x, $3, ...). Results: the declared
    names, every register, steps, cycles and each lane's fault; with --grad
    also the loss and d loss / d each --wrt (values as the forward pass left
    them; steps of the backward pass). Exit code 1 if any lane faulted.
    """
    if as_json and out_path:
        raise click.UsageError("choose one of --json and -o")
    if with_grad:
        image = load_gradient_program(file, width)
    else:
        if loss is not None or wrt is not None:
            raise click.UsageError("--loss and --wrt need --grad")
        image = load_program(file, int(width) if width else None)
    fmt = WordFormat(image.width)
    try:
        columns = read_columns(inputs_path)
        places = {name: resolve_column(name, image) for name in columns}
        words = {name: to_words(values, fmt) for name, values in columns.items()}
    except BatchInputError as exc:
        raise ToolError(f"{inputs_path}: error: {exc}" if not str(exc).startswith(inputs_path)
                        else f"error: {exc}")
    lanes = len(next(iter(words.values())))
    machine = VectorMachine(image, lanes, max_steps=max_steps)
    for declared in image.names.values():
        if declared.default is not None:
            _store(machine, declared.register, declared.address, declared.default)
    for name, place in places.items():
        _store(machine, place.register, place.address, words[name])
    forward: dict = {}
    with _progress(lanes, as_json) as report:
        try:
            if with_grad:
                grads = batch_gradient(machine, loss=loss, wrt=parse_name_list(wrt), progress=report,
                                       after_forward=lambda m: forward.update(
                                           _results(m, image, fmt)))
            else:
                machine.run(1, progress=report)
        except GradientError as exc:
            raise ToolError(f"{file}: error: {exc}")
        except MachineFault as exc:
            raise ToolError(f"{file}: error: {exc}")
    result = _results(machine, image, fmt)
    if with_grad:
        # Values as the forward pass left them (the backward pass uncomputes them);
        # status, faults, steps and cycles cover both passes.
        result["named"], result["registers"] = forward["named"], forward["registers"]
        result["loss_name"] = grads.loss_name
        result["loss"] = to_reals(grads.loss, fmt)
        result["gradient"] = {name: to_reals(g, fmt) for name, g in grads.gradient.items()}
        result["forward_steps"] = grads.forward_steps
    faulted = int(np.sum(machine.faulted))
    if out_path:
        _write_npz(out_path, result)
    if as_json:
        click.echo(json.dumps(_jsonable(result)))
    elif not out_path:
        _summary(result, lanes, faulted)
    elif faulted:
        click.echo(f"{faulted} of {lanes} lanes faulted (see 'fault_kind' in {out_path})",
                   err=True)
    if faulted:
        sys.exit(EXIT_FAILURE)


def _store(machine: VectorMachine, register: int | None, address: int | None, words) -> None:
    if register is not None:
        machine.set_register(register, words)
    else:
        machine.set_memory(address, words)


class _progress:
    """click.progressbar on stderr for long runs (lanes finished of all lanes)."""

    def __init__(self, lanes: int, quiet: bool) -> None:
        self.lanes = lanes
        self.bar = None
        self.done = 0
        if lanes >= PROGRESS_MIN_LANES:
            self.bar = click.progressbar(length=lanes, label="lanes", file=sys.stderr)

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        return self.update

    def update(self, done: int) -> None:
        if self.bar is not None and done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _results(machine: VectorMachine, image, fmt: WordFormat) -> dict:
    kinds = machine.fault_kinds()
    faults = []
    for lane in np.nonzero(machine.faulted)[0].tolist()[:1000]:
        fault = machine.fault(lane)
        location = image.location(fault.pc) if fault.pc is not None else None
        faults.append({"lane": lane, "kind": fault.kind, "pc": fault.pc,
                       "line": location.line if location else None,
                       "message": fault.message})
    named = {}
    for name, declared in image.names.items():
        words = (machine.register(declared.register) if declared.register is not None
                 else machine.memory(declared.address))
        named[name] = to_reals(words, fmt) if declared.fixed else signed(words, fmt)
    return {
        "lanes": machine.lanes,
        "status": np.where(machine.faulted, "fault", "finished"),
        "fault_kind": np.array(kinds),
        "faults": faults,
        "steps": np.asarray(machine.steps),
        "cycles": np.asarray(machine.cycles),
        "named": named,
        "registers": {f"${i}": signed(machine.register(i), fmt) for i in range(32)},
    }


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _write_npz(path: str, result: dict) -> None:
    arrays = {"status": result["status"], "fault_kind": result["fault_kind"],
              "steps": result["steps"], "cycles": result["cycles"]}
    arrays.update(result["named"])
    arrays.update(result["registers"])
    if "loss" in result:
        arrays["loss"] = result["loss"]
        arrays["forward_steps"] = result["forward_steps"]
        arrays.update({f"grad_{k}": v for k, v in result["gradient"].items()})
    try:
        np.savez(path, **arrays)
    except OSError as exc:
        raise ToolError(f"{path}: error: cannot write: {exc}")


def _summary(result: dict, lanes: int, faulted: int) -> None:
    click.echo(f"{lanes} lanes: {lanes - faulted} finished, {faulted} faulted")
    shown = min(lanes, 5)
    for name, values in result["named"].items():
        more = " ..." if lanes > shown else ""
        click.echo(f"  {name} = " + ", ".join(str(v) for v in values[:shown].tolist()) + more)
    if "loss" in result:
        for name, values in result["gradient"].items():
            click.echo(f"  d{result['loss_name']}/d{name} = "
                       + ", ".join(str(v) for v in values[:shown].tolist())
                       + (" ..." if lanes > shown else ""))
    for fault in result["faults"][:5]:
        click.echo(f"  lane {fault['lane']}: {fault['kind']}: {fault['message']}", err=True)
