"""`revasm bench`: every benchmark of revasm (docs/bench.md)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from revasm.bench import BENCHMARKS, result_path, run_benchmark

from .errors import ToolError
from .help_text import filled_help


def benchmark_list(indent: str = "    ") -> str:
    """One line per registered benchmark: its name and the head of its module's summary
    (to the first colon or full stop), indented as the help text it goes into."""
    import re
    import sys
    lines = []
    for name, run in BENCHMARKS.items():
        doc = " ".join((sys.modules[run.__module__].__doc__ or "").split("\n\n")[0].split())
        summary = re.split(r": |\. | \(", doc, maxsplit=1)[0].rstrip(".")
        lines.append(f"  {name:<18} {summary}")
    return ("\n" + indent).join(lines)


def hand_over(command_line: click.Command) -> None:
    """Give the fuzz campaign (bench/fuzz.py) what sits above the benchmarks: the command
    line (its ``cli`` target) and the debugger (its ``debugger`` and ``dap`` targets)."""
    from revasm.bench import fuzz
    from revasm.debug.commands import COMMAND_WORDS, Interpreter
    from revasm.debug.dap import serve

    from .commands_debug import dap_session, open_session

    fuzz.COMMAND_LINE = command_line
    fuzz.DEBUGGER = fuzz.DebuggerKit(open_session, Interpreter, serve, dap_session,
                                     COMMAND_WORDS)


@click.command(cls=filled_help("benchmarks", benchmark_list))
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--quick", is_flag=True,
              help="Small batches and few repeats (minutes, not hours); results go to "
                   "NAME.quick.json, never over a full run's NAME.json.")
@click.option("--results", "results_dir", default="bench/results", show_default=True,
              type=click.Path(file_okay=False), help="Where NAME.json and NAME.png go.")
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object (every result, by name).")
def bench(names: tuple[str, ...], quick: bool, results_dir: str, as_json: bool) -> None:
    """Run benchmarks and save bench/results/NAME.json (and a PNG plot).

    \b
    Benchmarks (all of them without a NAME):
    {benchmarks}
    Examples:
      revasm bench --quick
      revasm bench vector_throughput
    Targets are recorded in the JSON, not asserted.
    """
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        raise click.BadParameter(f"unknown benchmark {', '.join(unknown)} (choose from "
                                 f"{', '.join(BENCHMARKS)})", param_hint="NAME")
    hand_over(click.get_current_context().find_root().command)
    results = {}
    for name in names or tuple(BENCHMARKS):
        if not as_json:
            click.echo(f"{name} ...", err=True)
        try:
            results[name] = run_benchmark(name, quick, Path(results_dir))
        except OSError as exc:
            raise ToolError(f"{results_dir}: error: cannot write results: {exc}") from None
        drawn = str(results[name].get("plot", ""))
        if drawn.endswith(".png"):  # on stderr: --json's stdout stays one object
            click.echo(f"{name}: plot {drawn}", err=True)
        if not as_json:
            _print(name, results[name], Path(results_dir))
    if as_json:
        click.echo(json.dumps(results))


def _print(name: str, result: dict, results_dir: Path) -> None:
    click.echo(f"{name}: {result.get('status', 'measured')} in {result['seconds']} s "
               f"-> {result_path(results_dir, name, bool(result.get('quick')))}")
    if name == "vector_throughput":
        for program, data in result["programs"].items():
            click.echo(f"  {program}: reference {data['reference_instructions_per_s']:.3g} "
                       "instructions/s")
            for row in data["vector"]:
                ratio = row.get("bandwidth_ratio")
                extra = f", {ratio:.0%} of in-place add" if ratio is not None else ""
                click.echo(f"    batch {row['batch']:>8}: {row['lane_instructions_per_s']:.3g} "
                           f"lane-instructions/s, {row['speedup_over_reference']:.3g}x "
                           f"reference{extra}")
    elif name == "bessel_gradients" and result.get("status") == "measured":
        click.echo(f"  {result['batch']} gradients in {result['vector_gradient_s']:.3g} s; "
                   f"gradient/forward = {result['ratio_gradient_to_forward']:.3g}; "
                   f"jax: {result['jax']['status']}, pytorch: {result['pytorch']['status']}")
    elif name == "nilang_workloads":
        for workload, data in result.get("workloads", {}).items():
            if data.get("status") == "measured" and "vector" in data:  # a gradient workload
                vector, jax = data["vector"], data.get("jax", {})
                jax_text = (f"{jax['per_gradient_s']:.3g} s" if jax.get("status") == "measured"
                            else jax.get("status", "absent"))
                click.echo(f"  {workload}: {vector['per_gradient_s']:.3g} s per gradient at "
                           f"batch {vector['batch']} (reference {data['reference_gradient_s']:.3g}"
                           f" s; jax {jax_text})")
            elif data.get("status") == "measured":
                click.echo(f"  {workload}: {data['vector_lane_instructions_per_s']:.3g} "
                           f"lane-instructions/s at batch {data['batch']} (reference "
                           f"{data['reference_instructions_per_s']:.3g} instructions/s)")
            else:
                click.echo(f"  {workload}: {data.get('status')}: {data.get('reason', '')}")
    elif name == "sim_speed":
        for row in result["results"]:
            if row["direction"] == "forward" and row["name"] == "pal_loop":
                click.echo(f"  {row['engine']:<10} {row['path']:<21} W = {row['width']}: "
                           f"{row['instructions_per_second']:.3g} instructions/s")
    elif name == "long_stack_run" and result["run"].get("status") == "measured":
        run = result["run"]
        click.echo(f"  {run['steps']} steps in {run['run_s']:.3g} s "
                   f"({run['instructions_per_s']:.3g} instructions/s, kernel {run['build_s']} s), "
                   f"{run['output_words']} words printed, check: {run['check']}, "
                   f"peak {run['peak_rss_mib']} MiB")
    elif name == "long_stack_run":
        click.echo(f"  {result['run']['status']}: {result['run'].get('reason', '')}")
    elif name == "sparse_memory":
        for engine, data in result["summary"].items():
            ratio = data.get("geometric_mean_ratio")
            click.echo(f"  {engine:<22} " + (f"seconds / seconds dense = {ratio:.3f} (geometric "
                                              f"mean of {data['workloads']} workloads)" if ratio
                                              else f"{data.get('status')}: {data.get('reason')}"))
    elif result.get("reason"):
        click.echo(f"  {result['reason']}")
    if not str(result.get("plot", "")).endswith(".png"):
        click.echo(f"  plot {result.get('plot')}")
