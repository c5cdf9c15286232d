"""`revasm compile`: a @reversible Python function to PAL assembly (or to its IR)."""
from __future__ import annotations

import gc
import json
from fractions import Fraction
from pathlib import Path

import click

from revasm.assembler import AssemblyError
from revasm.assembler.files import GroupWriteError, write_atomic_all
from revasm.compiler import CompileError, compile_file
from revasm.compiler.api import CompiledProgram
from revasm.expressions import EXPRESSION_WIDTH
from revasm.isa.fixed_point import DEFAULT_WIDTH, word_format
from revasm.leftovers import keep
from revasm.machine import fault_json
from revasm.machine.values import FIXED, RawWord, ValueRuleError, parse_number, word_of

from .errors import EXIT_FAILURE, ToolError, output_error
from .help_text import filled_help
from .loading import assembly_error, compile_error, is_janus
from .options import FORMATS, width_option
from .outputs import refuse_overwrite


def _split_target(target: str) -> tuple[str, str | None]:
    path, _, func = target.partition(":") if not Path(target).exists() else (target, "", "")
    if ":" in target and not Path(target).exists():
        path, func = target.rsplit(":", 1)
    return path, (func or None)


#: Suffixes of the machine's own program files (PAL source and images), which
#: `revasm compile` does not take: it compiles Python.
PROGRAM_SUFFIXES = (".pal", ".bin", ".hex")


def _refuse_program_file(path: str) -> None:
    """A PAL source or an image given to compile: a usage error (exit 2) saying what to run."""
    file = Path(path)
    is_pal = file.suffix.lower() in PROGRAM_SUFFIXES
    if not is_pal and file.suffix.lower() != ".py":
        try:
            with file.open(errors="replace") as stream:
                is_pal = stream.readline().strip().lower().startswith(";; pendulum pal file")
        except OSError:
            return
    if is_pal:
        image = file.suffix.lower() in (".bin", ".hex")
        kind, other = (("an assembled image", f"to take it apart: revasm disasm {path}")
                       if image else ("PAL assembly", f"to assemble it: revasm asm {path}"))
        raise click.BadParameter(
            f"{path} is {kind}, not Python: compile takes a Python source with a "
            f"@reversible function (SRC.py[:FUNC], e.g. examples/nilang/rfib.py:rfib). "
            f"To run the program: revasm run {path}; {other}",
            param_hint="SRC.py[:FUNC]")


def _checks(no_checks: str | None) -> bool | set[str]:
    """``--no-checks`` (all), ``--no-checks bounds,alias`` (those) or nothing (none)."""
    from revasm.compiler.backend.guards import CHECK_KINDS
    if no_checks is None:
        return True
    if no_checks == "all":
        return False
    dropped = {k.strip() for k in no_checks.split(",") if k.strip()}
    unknown = sorted(dropped - set(CHECK_KINDS))
    if unknown:
        raise click.BadParameter(f"unknown check kind {unknown[0]!r} (the kinds: "
                                 f"{', '.join(CHECK_KINDS)})", param_hint="--no-checks")
    return set(CHECK_KINDS) - dropped


#: ``-O0``, ``-O1``, ``-O2``: the optimisation level (``compiler.api.LEVELS``).
LEVEL = click.option("-O", "level", type=click.Choice(["0", "1", "2"]), default="2",
                     show_default=True,
                     help="Optimisation level: -O0 the plain lowering (the reference), -O1 "
                          "peephole and constant pool, -O2 also induction pointers, unrolling "
                          "and the other passes; the same values and gradients at every level "
                          "(docs/language.md).")


@click.command("compile")
@click.argument("target", metavar="SRC.py[:FUNC]")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False),
              help="Write here instead of standard output (and OUT.map.json: PAL line -> "
                   "Python line).")
@click.option("--emit", type=click.Choice(["asm", "ir"]), default="asm", show_default=True,
              help="PAL assembly, or the reversible IR.")
@click.option("--inverse", is_flag=True, help="With --emit ir: print the inverse program.")
@width_option(DEFAULT_WIDTH, help=f"Word width W of the target machine ({FORMATS}).")
@click.option("--gradient", is_flag=True,
              help="Also apply the checks for differentiation (no x * x, ...).")
@click.option("--no-checks", "no_checks", is_flag=False, flag_value="all", default=None,
              metavar="[KINDS]",
              help="Drop the runtime guards (NiLang's @invcheckoff): all of them, or the "
                   "kinds listed (bounds,alias,ancilla,branch,range); what they caught then "
                   "surfaces later, as an uncaught jump, unrestored state or a wrong value.")
@click.option("--no-inline", "no_inline", is_flag=True,
              help="Keep every call a portal call (small straight-line functions are "
                   "inlined by default).")
@LEVEL
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object (the program as \"text\", or what was "
                   "written).")
def compile_command(target: str, out: str | None, emit: str, inverse: bool, width: int,
                    gradient: bool, no_checks: str | None = None, no_inline: bool = False,
                    level: str = "2", as_json: bool = False) -> None:
    """Compile a @reversible Python function (or a Janus program, .ja) to PAL.

    FUNC defaults to the last @reversible function of the file; the functions
    it calls are compiled with it.  A Janus file compiles its procedure main
    (docs/janus.md).  Errors name the source file, line and column.

    \b
    Examples:
      revasm compile examples/nilang/rfib.py:rfib -o rfib.pal && revasm run rfib.pal --set n=10
      revasm compile examples/nilang/dot.py --emit ir --inverse
      revasm compile examples/nilang/ibesselj.py:ibesselj --width 64 --no-checks -o ib.pal
      revasm compile examples/janus/factor.ja -o factor.pal && revasm run factor.pal
      revasm compile examples/nilang/dot.py:dot -O0   # the plain lowering, for comparison
    """
    # The cyclic collector stays off for the whole command: a long program's compilation
    # leaves millions of objects, and each collection after it (writing the map) scans
    # them all -- 1.5 s on a 10^5-statement program; reference counting frees them when
    # the command returns, and the collector is on again for what follows.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _compile(target, out, emit, inverse, width, gradient, no_checks, no_inline, level,
                 as_json)
    finally:
        if collecting:
            gc.enable()


def _compile(target: str, out: str | None, emit: str, inverse: bool, width: int,
             gradient: bool, no_checks: str | None, no_inline: bool, level: str,
             as_json: bool) -> None:
    path, func = _split_target(target)
    if Path(path).is_dir():
        raise ToolError(f"{path}: error: is a directory: compile takes a Python source file "
                        "(SRC.py[:FUNC])", file=path)
    if not Path(path).is_file():
        raise ToolError(f"{path}: error: no such file", file=path)
    _refuse_program_file(path)
    if out is not None:  # never over the Python source: `-o f.py` would replace it
        refuse_overwrite([out, out + ".map.json"], [path], "-o")
    try:
        if is_janus(path):
            program = _compile_janus(path, func, width, gradient, no_checks, no_inline,
                                     int(level))
        else:
            program = compile_file(path, func, width=width, for_gradient=gradient,
                                   checks=_checks(no_checks), inline=not no_inline,
                                   level=int(level))
    except CompileError as exc:
        raise compile_error(exc) from None
    except AssemblyError as exc:  # a compiler bug: the output did not assemble
        raise assembly_error(exc, path, "internal error: the compiled program does not "
                             "assemble:\n") from None
    keep(program)  # freed by the process's end, not object by object (leftovers.py)
    if emit == "ir":
        text = program.ir_text(inverse=inverse)
    else:
        if inverse:
            raise click.UsageError("--inverse goes with --emit ir (the assembly of a program "
                                   "already runs backward)")
        text = program.pal
    instructions = sum(program.image.is_code)
    if out is None:
        if as_json:
            click.echo(json.dumps({"status": "ok", "target": target, "emit": emit,
                                   "width": width, "level": int(level),
                                   "instructions": instructions, "output": None,
                                   "text": text}))
        else:
            click.echo(text, nl=False)
        return
    source_map_path = out + ".map.json" if emit == "asm" else None
    files: list[tuple[str, str]] = [(out, text)]
    if source_map_path is not None:
        files.append((source_map_path, _source_map_text(program)))
    try:  # the PAL and its map both or neither, each whole (assembler/files.py)
        write_atomic_all(files)
    except GroupWriteError as exc:
        raise output_error(exc.path, exc) from None
    if as_json:
        click.echo(json.dumps({"status": "ok", "target": target, "emit": emit,
                               "width": width, "level": int(level),
                               "instructions": instructions, "output": out,
                               "map": source_map_path}))
    click.echo(f"{target}: {instructions} instructions -> {out}", err=True)


def _source_map_text(program: CompiledProgram) -> str:
    """``OUT.map.json``: each PAL line -> the user's file, line, column, role and note.

    One entry a line, as ``json.dumps`` of the entry's dict would write it, its strings
    each encoded once (a 10^5-statement program's lines share a few files, roles and
    notes; ``indent=`` would take json's pure-Python encoder: seconds there)."""
    quoted: dict[str, str] = {}

    def q(text: str) -> str:
        out = quoted.get(text)
        if out is None:
            out = quoted[text] = json.dumps(text)
        return out
    entries = []
    last, fragment = None, ""
    for line, e in program.lowered.lines.items():
        if e is not last:  # (the lines of one statement share their entry)
            last = e
            fragment = "" if e.pos is None else (
                f'{{"file": {q(e.pos.file)}, "line": {e.pos.line}, "column": {e.pos.column}, '
                f'"role": {q(e.role)}, "note": {q(e.note)}}}')
        if fragment:
            entries.append(f'"{line}": {fragment}')
    return "{\n" + ",\n".join(entries) + "\n}" if entries else "{}"


def _compile_janus(path: str, func: str | None, width: int, gradient: bool,
                   no_checks: str | None, no_inline: bool, level: int) -> CompiledProgram:
    """A Janus program: its main, at W = 32, for values (Janus has no reals to differentiate)."""
    from revasm.compiler.api import JANUS_WIDTH, compile_janus_file
    if func not in (None, "main"):
        raise click.BadParameter(f"a Janus program compiles from its procedure main, not "
                                 f"{func}", param_hint="SRC.py[:FUNC]")
    if width != JANUS_WIDTH:
        raise click.BadParameter(f"Janus integers are {JANUS_WIDTH}-bit words "
                                 "(docs/janus.md)", param_hint="--width")
    if gradient:
        raise click.BadParameter("a Janus program computes integers, which carry no "
                                 "gradient", param_hint="--gradient")
    return compile_janus_file(path, checks=_checks(no_checks), inline=not no_inline,
                              level=level)


def _parse_at(text: str, width: int) -> tuple[dict[str, int | Fraction | RawWord],
                                             dict[str, float]]:
    """``--at x=0.3,y=0.5``: every value read by the one rule for a fixed-point name
    (machine/values.py): the exact numbers for the machine, and as floats for the output."""
    fmt = word_format(width)
    point: dict[str, int | Fraction | RawWord] = {}
    shown: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint="--at")
        try:
            number = parse_number(value)
            word = word_of(value, fmt, FIXED, name.strip())
        except ValueRuleError as exc:
            raise click.BadParameter(f"{item}: {exc}", param_hint="--at") from None
        point[name.strip()] = number
        shown[name.strip()] = float(fmt.to_fraction(word) if isinstance(number, RawWord)
                                    else number)
    return point, shown


@click.command("grad-expr", cls=filled_help("accepted", lambda: expression_syntax_help()))
@click.argument("expression")
@click.option("--at", "at", required=True, metavar="NAME=VALUE,...",
              help="The point: a value for every variable of the expression.")
@width_option(EXPRESSION_WIDTH, help=f"Word width W ({FORMATS}); an expression has no file "
                                     "to say it, and its gradient wants Q32.32.")
@click.option("--show-program", is_flag=True,
              help="Also print the compute-copy-uncompute program that was differentiated.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def grad_expr(expression: str, at: str, width: int, show_program: bool, as_json: bool) -> None:
    """Value and gradient of an expression, computed on the reversible machine.

    The expression becomes a compute-copy-uncompute program (each sub-expression
    in its own ancilla), compiled, run forward, and run backward in gradient
    mode.  The value and gradient in 40-digit arithmetic (mpmath) are shown beside it.

    {accepted}

    \b
    Example:
      revasm grad-expr "sq(x / y) * sin(x)" --at x=0.3,y=0.5 --json
    """
    from revasm.compiler import CompileError
    from revasm.expressions import grad_expression
    from revasm.programs import ProgramFault

    exact, point = _parse_at(at, width)
    try:
        result = grad_expression(expression, exact, width=width)
    except CompileError as exc:
        raise compile_error(exc) from None
    except ProgramFault as exc:
        message = f"{exc}\n(not defined at this point on the machine: {exc.fault.kind})"
        if not as_json:
            raise ToolError(message) from None
        click.echo(message, err=True)
        fault = fault_json(exc.fault)
        fault["note"] = exc.note
        click.echo(json.dumps({"status": "fault", "expression": expression, "at": point,
                               "width": width, "fault": fault}))
        raise SystemExit(EXIT_FAILURE) from None
    if as_json:
        payload = {"expression": expression, "at": point, "width": width,
                   "value": result.value, "gradient": result.gradient,
                   "reference": {"value": result.reference_value,
                                 "gradient": result.reference_gradient},
                   "steps": {"forward": result.result.exact.forward.steps,
                             "backward": result.result.exact.backward.steps}}
        if show_program:
            payload["program"] = result.source
        click.echo(json.dumps(payload))
        return
    if show_program:
        click.echo(result.source)
    click.echo(f"{expression} = {result.value:.12g}   (40 digits: "
               f"{_fmt(result.reference_value)})")
    for name in result.variables:
        click.echo(f"  d/d{name} = {result.gradient[name]:.12g}   (40 digits: "
                   f"{_fmt(result.reference_gradient.get(name))})")
    click.echo(f"  {result.result.exact.forward.steps} steps forward, "
               f"{result.result.exact.backward.steps} backward at W = {width}")


def expression_syntax_help() -> str:
    """What grad-expr accepts, from the table the expression reader uses."""
    from revasm.compiler.expression import FUNCTIONS as EXPRESSION_FUNCTIONS

    calls = ", ".join(f"{name}({', '.join('xyz'[:arity])})"
                      for name, arity in EXPRESSION_FUNCTIONS.items())
    return ("Accepted: numbers, variables, the constants pi and e, the operators "
            f"+ - * / ** and unary -, and the functions {calls}.")


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.12g}"
