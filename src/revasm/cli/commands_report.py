"""`revasm report`: op counts, cycles, traffic, occupancy, bits erased and energy of a run."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from revasm.assembler import AssemblyError
from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.report import (
    REPORT_SCHEMA,
    EnergyModel,
    ModelError,
    ReportError,
    build_report,
    bundled_models,
    load_model,
)
from revasm.report.batch import build_batch_report
from revasm.report.batch_format import format_batch_report, render_batch_html
from revasm.report.by_line import LineMap, mapped_line_map, pal_line_map
from revasm.report.html_report import render_html
from revasm.report.terminal import format_report
from revasm.sim.engine import Lanes

from .commands_compile import LEVEL
from .commands_run import ENGINE, MAX_STEPS, MEMS, SETS, engine_for, warn_overflows
from .errors import EXIT_FAILURE, ToolError, output_error
from .loading import assembly_error, compile_error, load_program
from .machine_io import load_inputs, store
from .options import WIDTH
from .outputs import image_inputs, refuse_overwrite, write_atomic
from .values import Location

if TYPE_CHECKING:
    from revasm.compiler.api import CompiledProgram


def _select_models(names: tuple[str, ...], files: tuple[str, ...]
                   ) -> tuple[list[EnergyModel], dict[str, EnergyModel]]:
    """The models to evaluate, and every known model (for an adiabatic base_model)."""
    known = bundled_models()
    from_files = []
    for file in files:
        try:
            model = load_model(file)
        except ModelError as exc:
            raise ToolError(f"error: {exc}") from None
        known[model.name] = model
        from_files.append(model)
    if not names and not files:
        return list(known.values()), known
    selected = list(from_files)
    for name in names:
        if name not in known:
            raise click.BadParameter(f"{name!r} is not a model (known: {', '.join(known)})",
                                     param_hint="--model")
        if known[name] not in selected:
            selected.append(known[name])
    return selected, known


def _lane_loaders(path: str, image: Image, sets: tuple[str, ...], mems: tuple[str, ...]
                  ) -> list[Callable[[Lanes], None]]:
    """One loader per lane: defaults and --set/--mem, then the lane's row of the inputs,
    read exactly as `revasm batch --inputs` reads them (``revasm.batching.inputs``)."""
    from revasm.batching.inputs import (
        BatchInputError,
        column_words,
        read_columns,
        resolve_columns,
    )

    fmt = word_format(image.width)
    try:
        columns = read_columns(path)
        places = list(resolve_columns(columns, image).values())
        words = [column_words(place, values, fmt)  # read by the type of the name it feeds
                 for place, values in zip(places, columns.values())]
    except BatchInputError as exc:
        raise ToolError(f"{path}: error: {exc}" if not str(exc).startswith(path)
                        else f"error: {exc}") from None
    if not words or len(words[0]) == 0:
        raise ToolError(f"{path}: error: no lanes (expected a header of names and one row "
                        "per lane)")

    def loader(lane: int) -> Callable[[Lanes], None]:
        def load(machine: Lanes) -> None:
            load_inputs(machine, image, sets, mems)
            for place, column in zip(places, words):
                store(machine, Location(place.register, place.address), int(column[lane]))
        return load

    return [loader(lane) for lane in range(len(words[0]))]


@click.command()
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@SETS
@MEMS
@WIDTH
@MAX_STEPS
@click.option("--grad", is_flag=True,
              help="Gradient mode: forward, seed the loss, backward with the gradient switch on "
                   "(as `revasm grad`).")
@click.option("--loss", default=None, metavar="NAME",
              help="With --grad: the loss (default: the declared .loss).")
@click.option("--wrt", default=None, metavar="NAME,...",
              help="With --grad: gradients to copy out (default: the fixed-point inputs).")
@click.option("--model", "model_names", multiple=True, metavar="NAME",
              help="Energy model to use (repeatable): cmos45, adiabatic, landauer. "
                   "Default: every bundled model.")
@click.option("--model-file", "model_files", multiple=True, type=click.Path(dir_okay=False),
              metavar="F", help="Energy model from a JSON file (repeatable); see docs/energy.md.")
@click.option("--inputs", "inputs_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.csv|FILE.npz",
              help="A batch, read as `revasm batch --inputs` reads it: one lane per CSV row "
                   "(header: names) or per .npz array element; reports aggregates and the "
                   "per-lane distribution.")
@ENGINE
@click.option("--by-line", "by_line", is_flag=True,
              help="Also report each source line: steps forward and backward, cycles, energy "
                   "and bits erased (the Python or Janus lines of a compiled program, else "
                   "the PAL lines; a PAL file with the OUT.map.json `revasm compile -o OUT` "
                   "wrote beside it maps to its Python lines).")
@LEVEL
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), metavar="OUT",
              help="Write an HTML report with tables and plots (plots need revasm[plots]).")
@click.option("--schema", "show_schema", is_flag=True,
              help="Print the JSON schema of --json output and exit.")
def report(file: str | None, sets: tuple[str, ...], mems: tuple[str, ...], width: int | None,
           max_steps: int | None, grad: bool, loss: str | None, wrt: str | None,
           model_names: tuple[str, ...],
           model_files: tuple[str, ...], inputs_file: str | None, engine_name: str,
           by_line: bool, level: str, as_json: bool,
           html_out: str | None,
           show_schema: bool) -> None:
    """Op counts by instruction and class, cycles, register/memory traffic, peak
    occupancy, bits erased (reversible vs irreversible vs tape AD) and energy
    under documented models, for the protocol "run forward, copy the results
    out, run backward" on the reference simulator (with --grad: backward with
    the gradient switch on, gradients copied out).

    \b
    Examples:
      revasm report examples/fib.pal
      revasm report examples/multiply.pal --set a=3 --set b=5 --json
      revasm report examples/fixed_point.pal --model cmos45 --html report.html
      revasm report examples/fib.pal --model-file examples/my_process.json
      revasm report examples/bessel_j2.pal --set x=1.0 --grad
      revasm report examples/fib.pal --inputs examples/lanes.csv  # header "n"
      revasm report examples/nilang/dot.py:dot --grad --by-line --html dot.html
    Models and every count are explained in docs/energy.md.  Exit code 1 on a
    machine fault (the report up to the fault is still printed).
    """
    if show_schema:
        click.echo(json.dumps(REPORT_SCHEMA, indent=2))
        return
    if file is None:
        raise click.UsageError("missing FILE (the program to report on)")
    if as_json and html_out:
        raise click.UsageError("--json and --html are exclusive: choose one output")
    if (loss or wrt) and not grad:
        raise click.UsageError("--loss and --wrt need --grad")
    if html_out:  # never over the program, its inputs or a model file
        refuse_overwrite([html_out], [*image_inputs(file), inputs_file, *model_files], "--html")
    engine = engine_for(engine_name, trace=True)  # counts come from every step's trace
    models, known = _select_models(model_names, model_files)
    program = _compiled(file, width, grad, int(level))
    if program is not None:
        image = program.image
        if grad and loss is None:  # a compiled Out is the loss, as `revasm.grad_program`
            from revasm.reports import program_loss
            loss = program_loss(program)
    else:
        image = load_program(file, width, gradient=grad)
    if by_line and inputs_file is not None:
        raise click.UsageError("--by-line reports one run: it does not go with --inputs")
    wrt_names = [name.strip() for name in wrt.split(",") if name.strip()] if wrt else None
    if inputs_file is not None:
        lanes = _lane_loaders(inputs_file, image, sets, mems)
        try:
            batch = build_batch_report(image, lanes, models=models, all_models=known, grad=grad,
                                       loss=loss, wrt=wrt_names, max_steps=max_steps, file=file,
                                       engine=engine)
        except ModelError as exc:
            raise ToolError(f"error: {exc}") from None
        except ReportError as exc:
            raise ToolError(f"{file}: error: {exc}") from None
        _emit(batch, as_json, html_out, format_batch_report, render_batch_html)
        if batch["finished"] != batch["lanes"]:
            raise SystemExit(EXIT_FAILURE)
        return
    try:
        result = build_report(
            image, prepare=lambda machine: load_inputs(machine, image, sets, mems),
            models=models, all_models=known, grad=grad, loss=loss,
            wrt=wrt_names,
            max_steps=max_steps, file=file, engine=engine,
            line_map=_line_map(file, image, program) if by_line else None)
    except ModelError as exc:
        raise ToolError(f"error: {exc}") from None
    except ReportError as exc:
        raise ToolError(f"{file}: error: {exc}") from None
    _emit(result, as_json, html_out, format_report, render_html)
    forward = [run for run in result["runs"] if run["direction"] == "forward"]
    warn_overflows(forward[0]["overflows"] if forward else 0, "the forward run")
    if result["status"] == "fault":
        raise SystemExit(EXIT_FAILURE)


def _compiled(file: str, width: int | None, grad: bool, level: int) -> CompiledProgram | None:
    """FILE compiled at optimisation ``level`` when it is a Python source (SRC.py[:FUNC])
    or a Janus program (.ja), keeping the program for its source map; None for PAL and
    images.  The width follows the one rule (``revasm.loading``): --width, else Janus's
    32, else the default."""
    from revasm.compiler import CompileError
    from revasm.isa.fixed_point import DEFAULT_WIDTH
    from revasm.loading import file_kind, python_target
    from revasm.reports import compile_target
    kind = file_kind(file)
    if kind not in ("python", "janus"):
        return None
    source, function = python_target(file)
    if not Path(source).is_file():
        raise ToolError(f"{source}: error: no such file", file=source)
    if kind == "janus" and width not in (None, 32):
        raise ToolError(f"{file}: error: Janus programs run at W = 32 (their integers are "
                        f"32-bit words, docs/janus.md), not {width}", file=file)
    target = file if kind == "janus" else f"{source}:{function}" if function else source
    try:
        return compile_target(target, width=width or DEFAULT_WIDTH,
                              for_gradient=grad and kind == "python", level=level)
    except CompileError as exc:
        raise compile_error(exc) from None
    except AssemblyError as exc:  # a compiler bug: the output did not assemble
        raise assembly_error(exc, source, "internal error: the compiled program does not "
                             "assemble:\n") from None
    except OSError as exc:
        raise ToolError(f"{source}: error: cannot read: {exc.strerror or exc}") from None


def _line_map(file: str, image: Image, program: CompiledProgram | None) -> LineMap:
    """The source lines of ``--by-line``: a compiled program's own, the Python lines of the
    ``FILE.map.json`` beside a compiled PAL file, else the PAL lines."""
    from revasm.reports import program_line_map
    if program is not None:
        return program_line_map(program)
    beside = Path(file + ".map.json")
    if beside.is_file():
        try:
            entries = json.loads(beside.read_text(encoding="utf-8"))
            return mapped_line_map(image, {int(line): (str(e["file"]), int(e["line"]))
                                           for line, e in entries.items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ToolError(f"{beside}: error: not a source map of `revasm compile -o`: "
                            f"{exc}") from None
    return pal_line_map(image)


def _emit(result: dict, as_json: bool, html_out: str | None, text: Callable[[dict], str],
          page: Callable[[dict], str]) -> None:
    """One JSON object, an HTML file, or terminal tables."""
    if as_json:
        click.echo(json.dumps(result))
    elif html_out:
        try:  # whole or not at all: a temporary file, then renamed
            write_atomic(html_out, page(result))
        except OSError as exc:
            raise output_error(html_out, exc, "the HTML report") from None
        click.echo(f"wrote {html_out}")
    else:
        click.echo(text(result))
