"""`revasm grad` and `revasm hessian`: gradients and Hessians by the host protocol.

Both run a simulator engine in gradient mode (docs/gradient.md): forward
to FINISH, grad[loss] = 1, gradient switch on, backward to START; `hessian`
repeats it once per input with the tangent bank on (forward-over-reverse).
The width is the one every command uses (`revasm.load`): --width, else the
file's `.width`, else 32; the examples whose gradients want Q32.32 say `.width 64`.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

import click

from revasm.assembler.image import Image
from revasm.machine import MachineFault, fault_json
from revasm.sim.engines import EngineError
from revasm.sim.host import GradientError, GradientResult, HessianResult, gradient, hessian

from .commands_run import ENGINE, MAX_STEPS, MEMS, SETS, STRICT, warn_overflows
from .errors import EXIT_FAILURE
from .loading import load_program
from .machine_io import load_inputs
from .options import WIDTH
from .values import parse_name_list

LOSS = click.option("--loss", metavar="NAME", default=None,
                    help="The loss: a register ($5) or a declared name. Default: the .loss.")
WRT = click.option("--wrt", metavar="NAME,...", default=None,
                   help="Differentiate by these (registers or declared names, comma-separated). "
                        "Default: every declared fixed-point .input.")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

JSON = click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")


def _run_protocol(protocol: Callable[..., R], image: Image, sets: tuple[str, ...],
                  mems: tuple[str, ...], loss: str | None, wrt: str | None, max_steps: int | None,
                  engine_name: str, as_json: bool, strict: bool = False) -> R | None:
    """Run the host protocol (``gradient`` or ``hessian``); None after a reported fault."""
    try:
        return protocol(image, loss=loss, wrt=parse_name_list(wrt), max_steps=max_steps,
                        prepare=lambda machine: load_inputs(machine, image, sets, mems),
                        engine=engine_name, strict=strict)
    except (GradientError, EngineError) as exc:
        raise click.UsageError(str(exc)) from None
    except MachineFault as fault:
        _fault_exit(fault, image, as_json)
        return None


def _summary(result: GradientResult | HessianResult) -> dict:
    """The JSON fields grad and hessian share: loss, gradient, steps and cycles per pass."""
    return {
        "status": "finished",
        "width": result.width,
        "loss_name": result.loss_name,
        "loss": _real(result.loss),
        "gradient": {name: _real(value) for name, value in result.gradient.items()},
        "steps": {"forward": result.forward.steps, "backward": result.backward.steps},
        "cycles": {"forward": result.forward.cycles, "backward": result.backward.cycles},
        "overflows": result.overflows,
    }


def _fault_exit(fault: MachineFault, image: Image, as_json: bool) -> None:
    if as_json:
        info = fault_json(fault)
        info["pass"] = fault.run_pass
        click.echo(json.dumps({"status": "fault", "width": image.width, "fault": info}))
    else:
        click.echo(str(fault), err=True)
    raise SystemExit(EXIT_FAILURE)


def _protocol_options(command: F) -> F:
    """The arguments grad and hessian share: FILE, inputs, loss, wrt, width, limits, JSON."""
    for option in (JSON, STRICT, ENGINE, MAX_STEPS, WIDTH, WRT, LOSS, MEMS, SETS,
                   click.argument("file", type=click.Path(dir_okay=False))):
        command = option(command)
    return command


def _real(value: Fraction) -> float:
    return float(value)


@click.command()
@_protocol_options
def grad(file: str, sets: tuple[str, ...], mems: tuple[str, ...], loss: str | None,
         wrt: str | None, width: int | None, max_steps: int | None, engine_name: str,
         strict: bool, as_json: bool) -> None:
    """Gradient of a program's loss by reverse mode on the machine itself.

    Host protocol: inputs in, forward to FINISH, loss out, grad[loss] = 1,
    gradient switch on, backward to START (each instruction uncomputes its
    value and applies its adjoint rule), gradients out.

    \b
    Examples:
      revasm grad examples/bessel_j2.pal --set x=1.0
      revasm grad examples/apex.pal --set x=0.3 --set y=0.5 --json
      revasm grad examples/umm.pal --loss sum --wrt x1,t1 --width 64
    JSON: loss, gradient (name -> real), steps and cycles of each pass.
    Exit code 1 and a report naming the pass on a machine fault.
    """
    image = load_program(file, width, gradient=True)
    result = _run_protocol(gradient, image, sets, mems, loss, wrt, max_steps, engine_name,
                           as_json, strict)
    if result is None:
        return
    warn_overflows(result.overflows, "the forward pass")
    out = _summary(result)
    if as_json:
        click.echo(json.dumps(out))
        return
    click.echo(f"loss {result.loss_name} = {out['loss']!r}   (W = {result.width})")
    for name, value in out["gradient"].items():
        click.echo(f"  d{result.loss_name}/d{name} = {value!r}")
    click.echo(f"forward: {result.forward.steps} steps, {result.forward.cycles} cycles; "
               f"backward: {result.backward.steps} steps, {result.backward.cycles} cycles")


@click.command("hessian")
@_protocol_options
def hessian_command(file: str, sets: tuple[str, ...], mems: tuple[str, ...], loss: str | None,
                    wrt: str | None, width: int | None, max_steps: int | None, engine_name: str,
                    strict: bool, as_json: bool) -> None:
    """Hessian of a program's loss by forward-over-reverse on the machine.

    For each input x_j: tangent bank on with dx_j = 1, forward pass, grad[loss]
    = 1, gradient switch on, backward pass; the gradient tangents then hold
    column j of the Hessian.  Rows and columns follow --wrt.

    \b
    Examples:
      revasm hessian examples/bessel_j2.pal --set x=3.0
      revasm hessian examples/apex.pal --wrt x,y --json
    JSON: loss, wrt, gradient, hessian (row -> column -> real), steps/cycles
    of one forward and one backward pass, and the number of passes.
    """
    image = load_program(file, width, gradient=True)
    result = _run_protocol(hessian, image, sets, mems, loss, wrt, max_steps, engine_name,
                           as_json, strict)
    if result is None:
        return
    warn_overflows(result.overflows, "a forward pass")
    out = _summary(result)
    out["wrt"] = result.wrt
    out["hessian"] = {row: {col: _real(v) for col, v in cols.items()}
                      for row, cols in result.hessian.items()}
    out["passes"] = result.passes
    if as_json:
        click.echo(json.dumps(out))
        return
    click.echo(f"loss {result.loss_name} = {out['loss']!r}   (W = {result.width})")
    click.echo("gradient: " + ", ".join(f"{k} = {v!r}" for k, v in out["gradient"].items()))
    click.echo("hessian:")
    widest = max(len(name) for name in result.wrt)
    click.echo("  " + " " * widest + "".join(f"{name:>22}" for name in result.wrt))
    for row in result.wrt:
        click.echo(f"  {row:>{widest}}" + "".join(f"{out['hessian'][row][col]:>22.12g}"
                                                  for col in result.wrt))
    click.echo(f"{result.passes} passes of {result.forward.steps} steps each")
