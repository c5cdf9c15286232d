"""`revasm run` and `revasm check`: execute a program on a simulator engine."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

import revasm as api
from revasm.assembler.image import Image
from revasm.machine import TraceRecord
from revasm.sim.engine import Lanes
from revasm.sim.engines import CHOICES, EngineError, choose

from .errors import EXIT_FAILURE, ToolError
from .loading import is_janus, load_program
from .machine_io import load_inputs, load_inputs_over
from .options import STEP_COUNT, WIDTH
from .outputs import image_inputs, refuse_overwrite
from .waveforms import write_waveforms

#: No step limit unless one is asked for (docs/decisions.md, "No default step limit"): a
#: run ends at FINISH, at a fault, or on Ctrl-C (exit 130), on every engine.
DEFAULT_MAX_STEPS: int | None = None

SETS = click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
                    help="Set a register ($5=3) or a declared name (x=0.5) before the run. "
                         "An int name takes an integer, a fixed name a real (x=1 is 1.0), "
                         "raw:N the raw word N (docs/cli.md \"Values\").")
MEMS = click.option("--mem", "mems", multiple=True, metavar="ADDR=VALUE",
                    help="Set a memory word (address or label) before the run.")
ENGINE = click.option("--engine", "engine_name", type=click.Choice(CHOICES), default="auto",
                      show_default=True,
                      help="The simulator engine: reference (the scalar oracle, traces), vector "
                           "(numpy lanes), compiled (native code), or auto (the fastest that "
                           "pays for this job). Every engine gives the same bits.")
MAX_STEPS = click.option("--max-steps", type=STEP_COUNT, default=DEFAULT_MAX_STEPS,
                         help="Stop with a step-limit fault after this many steps (up to "
                              "2^64-1; from 2^62 on: no limit). Default: no limit; the run "
                              "ends at FINISH, at a fault, or on Ctrl-C.")
STRICT = click.option("--strict", is_flag=True,
                      help="Fault (exit 1, naming the PC and line) at the first overflow event: "
                           "a fixed-point instruction whose exact result does not fit the word. "
                           "Without it the run goes on (values wrap or saturate), counts the "
                           "events (`overflows`) and warns on stderr.")


def warn_overflows(events: int, what: str = "the run") -> None:
    """The stderr warning of a non-strict command whose run counted overflow events."""
    plural = "s" if abs(events) != 1 else ""
    if events > 0:
        click.echo(f"warning: {events} overflow event{plural} in {what}: a fixed-point "
                   "instruction's exact result did not fit the word, so values wrapped or "
                   "saturated; --strict stops at the first one, naming its line", err=True)
    elif events < 0:  # a backward run takes back the events its instructions count forward
        click.echo(f"warning: {what} took back {-events} overflow event{plural}: it undid "
                   "instructions whose forward run does not fit the word; --strict stops at "
                   "the first one, naming its line", err=True)


def engine_for(engine_name: str, *, lanes: int = 1, trace: bool = False) -> str:
    """Check the user's ``--engine`` choice here (a usage error if it cannot run)."""
    try:
        choose(engine_name, lanes=lanes, trace=trace)
    except EngineError as exc:
        raise click.UsageError(str(exc)) from None
    return engine_name


def load_engine(image: Image, *, engine_name: str, lanes: int = 1, trace: bool = False,
                max_steps: int | None = None) -> Lanes:
    """``image`` loaded on the engine the user chose (a usage error if it cannot run)."""
    try:
        chosen = choose(engine_name, lanes=lanes, trace=trace)
    except EngineError as exc:
        raise click.UsageError(str(exc)) from None
    return chosen.load(image, lanes, max_steps=max_steps)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@SETS
@MEMS
@WIDTH
@click.option("--reverse", is_flag=True,
              help="Run backward, from FINISH to START, on the given state.")
@click.option("--state", "state_file", type=click.Path(dir_okay=False), default=None,
              help="Start from the state in this JSON file (before --set/--mem): a `run "
                   "--json` object (its registers and memory word for word, and any name "
                   "its `named` changes), or {NAME: VALUE} (a Janus array or stack as a "
                   "list). `run P --json > OUT.json; run P --reverse --state OUT.json` "
                   "undoes the run.")
@MAX_STEPS
@click.option("--trace", is_flag=True,
              help="Print a line per executed instruction: step, PC, instruction, changes.")
@click.option("--vcd", type=click.Path(dir_okay=False), default=None,
              help="Write the run's waveforms to this VCD file: the RTL core's architectural "
                   "signals, with the names and clock timing of `revasm rtl sim --vcd` "
                   "(needs the 'rtl' extra; docs/simulator.md 'Waveforms'). It starts "
                   "at the run, the loaded registers as its initial values.")
@click.option("--vcd-load", is_flag=True,
              help="With --vcd: write the host's load before the run too (each memory cell "
                   "and register, one clock edge a word), so the file lines up edge for edge "
                   "with `revasm rtl sim --vcd`'s.")
@ENGINE
@STRICT
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def run(file: str, sets: tuple[str, ...], mems: tuple[str, ...], width: int | None,
        reverse: bool, state_file: str | None, max_steps: int | None, trace: bool,
        vcd: str | None, vcd_load: bool, engine_name: str, strict: bool,
        as_json: bool) -> None:
    """Run a program (PAL source or image) from START to FINISH.

    \b
    Examples:
      revasm run examples/fib.pal
      revasm run examples/multiply.pal --set a=12 --set b=34 --json
      revasm run examples/fixed_point.pal --set x=0.25 --trace
      revasm run examples/fib.pal --vcd fib.vcd      waveforms, as the RTL's
      revasm run examples/janus/rle.ja --json > OUT.json
      revasm run examples/janus/rle.ja --reverse --state OUT.json   back again
    Each word the program shows (SHOW, EMIT) is printed on a line of its own as
    the run shows it, before the summary (which lists the output again).
    Exit code 1 and a report (PC, source line, BR, DIR, registers) on a fault.
    Overflow events (exact results that did not fit) are counted (`overflows`)
    and warned about; --strict makes the first one a fault.
    """
    if vcd_load and not vcd:
        raise click.UsageError("--vcd-load says how --vcd writes its file: give --vcd OUT.vcd")
    image = load_program(file, width)
    if reverse and image.finish is None:
        raise ToolError(f"{image.source_file}: error: --reverse needs a FINISH instruction "
                        "to start from")
    printer: Callable[[TraceRecord], None] | None = \
        (lambda record: click.echo(record, err=as_json)) if trace else None
    sink = printer
    records: list[TraceRecord] = []
    if vcd:
        refuse_overwrite([vcd], image_inputs(file), "--vcd")

        def record_and_print(record: TraceRecord) -> None:
            records.append(record)
            if printer is not None:
                printer(record)
        sink = record_and_print
    # Output as it runs: each word on a line of its own when the program shows it (a trace
    # line shows it already; --json prints one object, output inside it).
    live = None if as_json or trace else print_output_lines
    if state_file is not None:  # the state's words go first: --set/--mem override them
        state = read_state(state_file)
        sets, mems = state_assignments(state, image) + sets, mems

        def prepare(machine: Lanes) -> None:
            load_inputs(machine, image, (), ())  # the declared defaults
            load_state(machine, image, state)
            load_inputs_over(machine, image, sets, mems)
    else:
        def prepare(machine: Lanes) -> None:
            load_inputs(machine, image, sets, mems)
    result = api.run(image, prepare=prepare, reverse=reverse,
                     engine=engine_for(engine_name, trace=trace or bool(vcd)),
                     max_steps=max_steps, trace=sink, strict=strict, on_output=live)
    if vcd:
        write_waveforms(vcd, image, records, sets, mems, reverse=reverse, fault=result.fault,
                        load=vcd_load)
    payload = result.to_json()
    if is_janus(file):  # main's variables by their Janus names (arrays and stacks as lists)
        from revasm.compiler.frontend.janus.store import janus_store
        payload["named"] = janus_store(payload["named"])
    if as_json:
        click.echo(json.dumps(payload))
    else:
        # A fault's report (stderr) lists the registers itself.
        _print_summary(payload, image, registers=result.fault is None)
        if result.fault:
            click.echo(str(result.fault), err=True)
    warn_overflows(result.overflows)
    if result.fault:
        raise SystemExit(EXIT_FAILURE)


def read_state(path: str) -> dict[str, Any]:
    """The JSON object in ``path`` (a usage error if it is not one)."""
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except OSError as exc:
        raise click.BadParameter(f"{path}: {exc.strerror or exc}", param_hint="--state") \
            from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path} is not JSON: {exc}", param_hint="--state") from None
    if not isinstance(state, dict):
        raise click.BadParameter(f"{path} holds a JSON {type(state).__name__}, not an object "
                                 "(a `run --json` result or {NAME: VALUE})",
                                 param_hint="--state")
    return state


def _is_run_result(state: dict[str, Any]) -> bool:
    return any(key in state for key in ("registers", "memory", "named"))


def _named_words(named: dict[str, Any], image: Image) -> dict[str, object]:
    """Names -> values, a Janus program's lists spread over its declared words."""
    if not any(isinstance(v, (list, tuple)) for v in named.values()):
        return dict(named)
    from revasm.compiler.frontend.janus.store import janus_words
    try:
        return janus_words(named, image.names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--state") from None


def _assignment(name: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise click.BadParameter(f"{name}: {value!r} is not a value (a number or a string "
                                 "such as \"raw:0x8000\")", param_hint="--state")
    return f"{name}={value!r}" if isinstance(value, float) else f"{name}={value}"


def state_assignments(state: dict[str, Any], image: Image) -> tuple[str, ...]:
    """A plain state {NAME: VALUE} as ``--set`` assignments (empty for a `run --json`
    object, which :func:`load_state` loads word for word)."""
    if _is_run_result(state):
        return ()
    return tuple(_assignment(n, v) for n, v in _named_words(state, image).items())


def load_state(machine: Lanes, image: Image, state: dict[str, Any]) -> None:
    """A `run --json` object's state: every register and data word as the raw word it
    shows (a data word it does not list is 0, as the run left it), then each name its
    ``named`` gives another value than those words hold (an edited value), by the value
    rule -- so an unedited state loads exactly, even a fixed name at W = 64 whose real a
    JSON number cannot hold."""
    if not _is_run_result(state):
        return
    registers = state.get("registers") or {}
    memory = state.get("memory") or {}
    if not isinstance(registers, dict) or not isinstance(memory, dict):
        raise click.BadParameter("registers and memory are objects, as `run --json` prints "
                                 "them", param_hint="--state")
    words = [f"{r}=raw:{v}" for r, v in registers.items() if r != "$0"]
    if memory or registers:
        listed = {str(a) for a in memory}
        data = [f"{a}=raw:0" for a in range(len(image))
                if not image.is_code[a] and str(a) not in listed]
        load_inputs_over(machine, image, tuple(words), tuple(data) + tuple(
            f"{a}=raw:{v}" for a, v in memory.items()))
    named = state.get("named") or {}
    if not isinstance(named, dict):
        raise click.BadParameter("named is an object, as `run --json` prints it",
                                 param_hint="--state")
    from revasm.sim.host import named_values
    held = named_values(machine)
    edited = tuple(_assignment(n, v) for n, v in _named_words(named, image).items()
                   if held.get(n) != v)
    load_inputs_over(machine, image, edited, ())




def print_output_lines(words: list[int]) -> None:
    """Words a run has just shown, one signed integer a line, flushed at once (to a
    terminal, a pipe or a file alike) so that a reader sees each as the program shows it."""
    click.echo("\n".join(str(word) for word in words))


def _print_summary(result: dict, image: Image, *, registers: bool = True) -> None:
    events = result["overflows"]
    counted = f", {events} overflow event{'s' if abs(events) != 1 else ''}" if events else ""
    click.echo(f"{result['status']} after {result['steps']} steps, {result['cycles']} cycles"
               + counted)
    for name, value in result["named"].items():
        click.echo(f"  {name} = {value}")
    nonzero = {k: v for k, v in result["registers"].items() if v}
    if nonzero and registers:
        click.echo("  registers: " + ", ".join(f"{k}={v}" for k, v in nonzero.items()))
    if result["memory"]:
        click.echo("  memory: " + ", ".join(f"[{k}]={v}" for k, v in result["memory"].items()))
    if result["output"]:
        click.echo("  output: " + " ".join(str(v) for v in result["output"]))


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--random", "trials", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also check this many random initial states of the declared inputs, "
                   "each drawn from its declared domain (`.input n $3 int = 5 in 1..20`, "
                   "`n: Int[1, 20]`), else from --int-range/--real-range.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random states.")
@click.option("--int-range", default="1:24", show_default=True, metavar="LO:HI",
              help="Range of random integer inputs that declare no domain.")
@click.option("--real-range", default="-2:2", show_default=True, metavar="LO:HI",
              help="Range of random fixed-point inputs that declare no domain.")
@SETS
@MEMS
@WIDTH
@MAX_STEPS
@ENGINE
@STRICT
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def check(file: str, trials: int, seed: int, int_range: str, real_range: str,
          sets: tuple[str, ...], mems: tuple[str, ...], width: int | None, max_steps: int | None,
          engine_name: str, strict: bool, as_json: bool) -> None:
    """Check reversibility: run forward to FINISH, then backward to START, and
    compare every register, memory word, BR, DIR, the output tape and the
    overflow counter with the initial state.  The first state is the declared
    defaults plus --set/--mem; --random N adds N states with random values of
    the declared inputs, each inside its declared domain (an input whose values
    must stay in a range, an index say, declares it: `.input n $3 int = 5 in
    1..20` in PAL, `n: Int[1, 20]` in Python), else inside --int-range /
    --real-range.

    \b
    Example:
      revasm check examples/fib.pal --random 50 --seed 1
    Exit code 1 if any state is not restored exactly or a run faults.
    """
    image = load_program(file, width)
    try:
        result = api.check(image, prepare=lambda machine: load_inputs(machine, image, sets, mems),
                           random=trials, seed=seed,
                           int_range=_range(int_range, int, "--int-range"),
                           real_range=_range(real_range, float, "--real-range"),
                           engine=engine_for(engine_name, lanes=trials + 1),
                           max_steps=max_steps, strict=strict)
    except ValueError as exc:
        raise ToolError(f"{file}: error: --random needs inputs declared with .input "
                        f"({exc})") from None
    failures = [state.to_json() for state in result.failures]
    summary = {"file": file, "states": len(result.states), "restored": result.restored,
               "overflows": result.overflows, "failures": failures}
    if as_json:
        click.echo(json.dumps(summary))
    else:
        for failure in failures:
            click.echo(f"state {failure['state']}: {failure['status']}: {failure['detail']}",
                       err=True)
        click.echo(f"{file}: {summary['restored']} of {summary['states']} initial states "
                   "restored exactly by forward then backward execution")
    states = sum(1 for state in result.states if state.overflows)
    warn_overflows(result.overflows, f"the forward runs of {states} of {len(result.states)} "
                                     "states" if len(result.states) > 1 else "the forward run")
    if failures:
        raise SystemExit(EXIT_FAILURE)


#: A number type an option's LO:HI range is read as.
N = TypeVar("N", int, float)


def _range(text: str, kind: Callable[[str], N], option: str) -> tuple[N, N]:
    try:
        lo, hi = (kind(part) for part in text.split(":"))
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected LO:HI", param_hint=option) from None
    if lo > hi:
        raise click.BadParameter(f"{text!r}: LO is above HI", param_hint=option)
    return lo, hi

