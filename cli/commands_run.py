"""`revasm run` and `revasm check`: execute a program on the reference simulator."""
from __future__ import annotations

import json
import random

import click

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import Machine, MachineFault

from .errors import EXIT_FAILURE, ToolError
from .loading import load_program
from .machine_io import Location, load_inputs, state_dict, store

DEFAULT_MAX_STEPS = 10_000_000

WIDTH = click.option("--width", type=click.Choice(["32", "64"]), default=None,
                     help="Word width W (Q16.16 or Q32.32). Default: the file's .width, else 32.")
SETS = click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
                    help="Set a register ($5=3) or a declared name (x=0.5) before the run. "
                         "A VALUE with a decimal point is a fixed-point real.")
MEMS = click.option("--mem", "mems", multiple=True, metavar="ADDR=VALUE",
                    help="Set a memory word (address or label) before the run.")
MAX_STEPS = click.option("--max-steps", type=click.IntRange(min=1), default=DEFAULT_MAX_STEPS,
                         show_default=True, help="Stop with a fault after this many steps.")


def fault_dict(fault: MachineFault, image: Image) -> dict:
    location = image.location(fault.pc) if fault.pc is not None else None
    return {
        "kind": fault.kind,
        "pc": fault.pc,
        "line": location.line if location else None,
        "source": location.text.strip() if location else None,
        "message": fault.message,
    }


def _start(machine: Machine, image: Image, reverse: bool) -> None:
    if reverse:
        if image.finish is None:
            raise ToolError(f"{image.source_file}: error: --reverse needs a FINISH instruction "
                            "to start from")
        machine.pc = image.finish
        machine.direction = -1


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@SETS
@MEMS
@WIDTH
@click.option("--reverse", is_flag=True,
              help="Run backward, from FINISH to START, on the given state.")
@MAX_STEPS
@click.option("--trace", is_flag=True,
              help="Print a line per executed instruction: step, PC, instruction, changes.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def run(file: str, sets: tuple[str, ...], mems: tuple[str, ...], width: str | None,
        reverse: bool, max_steps: int, trace: bool, as_json: bool) -> None:
    """Run a program (PAL source or image) on the reference simulator.

    \b
    Examples:
      revasm run examples/fib.pal
      revasm run examples/multiply.pal --set a=12 --set b=34 --json
      revasm run examples/fixed_point.pal --set x=0.25 --trace
    Exit code 1 and a report (PC, source line, BR, DIR, registers) on a fault.
    """
    image = load_program(file, int(width) if width else None)
    machine = Machine(image, max_steps=max_steps)
    load_inputs(machine, image, sets, mems)
    _start(machine, image, reverse)
    fault: MachineFault | None = None
    trace_sink = (lambda line: click.echo(line, err=as_json)) if trace else None
    try:
        machine.run(direction=-1 if reverse else 1, trace=trace_sink)
    except MachineFault as exc:
        fault = exc
    result = {"status": "fault" if fault else "finished", "steps": machine.steps,
              "cycles": machine.cycles, **state_dict(machine, image)}
    if fault:
        result["fault"] = fault_dict(fault, image)
    if as_json:
        click.echo(json.dumps(result))
    else:
        _print_summary(result, image)
        if fault:
            click.echo(str(fault), err=True)
    if fault:
        raise SystemExit(EXIT_FAILURE)


def _print_summary(result: dict, image: Image) -> None:
    click.echo(f"{result['status']} after {result['steps']} steps, {result['cycles']} cycles")
    for name, value in result["named"].items():
        click.echo(f"  {name} = {value}")
    nonzero = {k: v for k, v in result["registers"].items() if v}
    if nonzero:
        click.echo("  registers: " + ", ".join(f"{k}={v}" for k, v in nonzero.items()))
    if result["memory"]:
        click.echo("  memory: " + ", ".join(f"[{k}]={v}" for k, v in result["memory"].items()))
    if result["output"]:
        click.echo("  output: " + " ".join(str(v) for v in result["output"]))


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--random", "trials", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also check this many random initial states of the declared inputs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random states.")
@click.option("--int-range", default="1:24", show_default=True, metavar="LO:HI",
              help="Range of random integer inputs.")
@click.option("--real-range", default="-2:2", show_default=True, metavar="LO:HI",
              help="Range of random fixed-point inputs.")
@SETS
@MEMS
@WIDTH
@MAX_STEPS
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def check(file: str, trials: int, seed: int, int_range: str, real_range: str,
          sets: tuple[str, ...], mems: tuple[str, ...], width: str | None, max_steps: int,
          as_json: bool) -> None:
    """Check reversibility: run forward to FINISH, then backward to START, and
    compare every register, memory word, BR, DIR and the output tape with the
    initial state.  The first state is the declared defaults plus --set/--mem;
    --random N adds N states with random values of the declared inputs.

    \b
    Example:
      revasm check examples/fib.pal --random 50 --seed 1
    Exit code 1 if any state is not restored exactly or a run faults.
    """
    image = load_program(file, int(width) if width else None)
    fmt = WordFormat(image.width)
    int_lo, int_hi = _range(int_range, int, "--int-range")
    real_lo, real_hi = _range(real_range, float, "--real-range")
    rng = random.Random(seed)
    inputs = [d for d in image.names.values() if d.role == "input"]
    if trials and not inputs:
        raise ToolError(f"{file}: error: --random needs inputs declared with .input "
                        "(nothing to randomize)")
    results = []
    for trial in range(trials + 1):
        machine = Machine(image, max_steps=max_steps)
        load_inputs(machine, image, sets, mems)
        if trial:
            for declared in inputs:
                if declared.fixed:
                    word = fmt.from_real(round(rng.uniform(real_lo, real_hi), 6))
                else:
                    word = rng.randint(int_lo, int_hi)
                store(machine, Location(declared.register, declared.address), word & fmt.mask)
        results.append(_round_trip(machine, image, trial))
    failures = [r for r in results if r["status"] != "restored"]
    summary = {"file": file, "states": len(results), "restored": len(results) - len(failures),
               "failures": failures}
    if as_json:
        click.echo(json.dumps(summary))
    else:
        for failure in failures:
            click.echo(f"state {failure['state']}: {failure['status']}: {failure['detail']}",
                       err=True)
        click.echo(f"{file}: {summary['restored']} of {summary['states']} initial states "
                   "restored exactly by forward then backward execution")
    if failures:
        raise SystemExit(EXIT_FAILURE)


def _round_trip(machine: Machine, image: Image, trial: int) -> dict:
    before = machine.snapshot()
    try:
        machine.run(direction=1)
        forward_steps = machine.steps
        machine.direction = -1
        machine.run(direction=-1)
    except MachineFault as exc:
        return {"state": trial, "status": "fault", "detail": exc.message,
                "fault": fault_dict(exc, image)}
    machine.direction = 1
    after = machine.snapshot()
    if after != before:
        return {"state": trial, "status": "not restored", "detail": _difference(before, after)}
    return {"state": trial, "status": "restored", "detail": f"{forward_steps} steps each way"}


def _difference(before, after) -> str:
    parts = []
    for name in ("registers", "memory", "br", "direction", "emitted"):
        b, a = getattr(before, name, None), getattr(after, name, None)
        if b != a:
            if isinstance(b, (list, tuple)) and isinstance(a, (list, tuple)):
                idx = [i for i, (x, y) in enumerate(zip(b, a)) if x != y][:5]
                parts.append(f"{name} differ at {idx}")
            else:
                parts.append(f"{name}: {b} -> {a}")
    return "; ".join(parts) or "state differs"


def _range(text: str, kind, option: str):
    try:
        lo, hi = (kind(part) for part in text.split(":"))
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected LO:HI", param_hint=option)
    if lo > hi:
        raise click.BadParameter(f"{text!r}: LO is above HI", param_hint=option)
    return lo, hi
