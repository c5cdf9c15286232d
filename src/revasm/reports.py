"""Reports of compiled programs: op counts, cycles, energy and bits erased, per source line.

    import revasm
    report = revasm.report_program("examples/nilang/dot.py:dot", grad=True)
    report["by_line"]["lines"]      # steps, cycles, energy and bits erased of each line

``report_program`` compiles (when given a file or a ``@reversible`` function), loads the
inputs by parameter name, and runs the report's protocol (``revasm.report.build_report``:
forward, copy out, backward; with ``grad`` the backward pass in gradient mode) with the
compiler's PC -> source map, so ``by_line`` names the lines of the Python or Janus
source.  ``program_line_map`` is that map, for ``build_report`` callers of their own.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from revasm.compiler.api import (
    CompiledProgram,
    ReversibleFunction,
    compile_file,
    compile_function,
    compile_janus_file,
)
from revasm.compiler.ir import nodes as ir
from revasm.isa.fixed_point import DEFAULT_WIDTH
from revasm.report import EnergyModel, build_report, bundled_models
from revasm.report.by_line import LineMap, SourceLine
from revasm.sim.host import load_inputs as load_defaults

from .programs import load_inputs


def program_line_map(program: CompiledProgram) -> LineMap:
    """The Python (or Janus) line of every instruction of a compiled program, and the
    source's text: the map faults and the debugger use (``CompiledProgram.source_of_pc``)."""
    image = program.image
    lines: dict[int, SourceLine] = {}
    for pc in range(len(image)):
        if not image.is_code[pc]:
            continue
        entry = program.source_of_pc(pc)
        if entry is not None and entry.pos is not None and entry.pos.line > 0:
            lines[pc] = (entry.pos.file, entry.pos.line)
    source = list(program.module.source_lines)
    while source and not source[-1]:  # the text after the last newline is no line
        source.pop()
    sources = {program.module.file: source}
    language = "janus" if Path(program.module.file).suffix.lower() == ".ja" else "python"
    return LineMap(lines, sources, language)


def program_loss(program: CompiledProgram) -> str | None:
    """The loss of a compiled program, as ``grad_program`` chooses it: the parameter marked
    Loss, else the only Fixed Out (None when there is no such one parameter)."""
    f = program.function
    losses = [p for p in f.params if p.role == "loss"] or \
        [p for p in f.params if p.role == "output" and p.type == ir.FIXED]
    return losses[0].name if len(losses) == 1 else None


def compile_target(target: Any, *, width: int = DEFAULT_WIDTH, for_gradient: bool = False,
                   **options: Any) -> CompiledProgram:
    """``target`` compiled: a CompiledProgram as it is, a @reversible function, a Janus file
    (``.ja``, always W = 32) or ``"FILE.py[:FUNC]"``."""
    if isinstance(target, CompiledProgram):
        return target
    if isinstance(target, ReversibleFunction):
        return compile_function(target, width=width, for_gradient=for_gradient, **options)
    text = str(target)
    if text.lower().endswith(".ja"):
        return compile_janus_file(text, **options)
    path, function = text, None
    if ".py:" in text:
        path, function = text.rsplit(":", 1)
    return compile_file(path, function or None, width=width, for_gradient=for_gradient,
                        **options)


def report_program(target: Any, inputs: dict[str, Any] | None = None, *, grad: bool = False,
                   width: int | None = None, models: list[str] | None = None,
                   loss: str | None = None, wrt: list[str] | None = None,
                   max_steps: int | None = None, engine: str = "auto",
                   **compile_options: Any) -> dict:
    """The report of one run of a compiled program, with ``by_line`` in its source's lines.

    ``inputs`` by parameter name (the declared defaults fill the rest); ``grad`` runs the
    backward pass in gradient mode; ``width`` defaults to ``DEFAULT_WIDTH`` (the one width
    rule, ``revasm.loading``); ``models`` names the
    energy models (default: every bundled one); ``compile_options`` go to the compiler
    (``level``, ``checks``, ...)."""
    chosen = width if width is not None else DEFAULT_WIDTH
    program = compile_target(target, width=chosen, for_gradient=grad, **compile_options)
    known = bundled_models()
    selected: list[EnergyModel] = [known[name] for name in models] if models else \
        list(known.values())

    if grad and loss is None:
        loss = program_loss(program)

    def prepare(machine: Any) -> None:
        load_defaults(machine, program.image)
        load_inputs(program, machine, inputs or {})
    return build_report(program.image, prepare=prepare, models=selected, all_models=known,
                        grad=grad, loss=loss, wrt=wrt, max_steps=max_steps,
                        file=program.module.file, engine=engine,
                        line_map=program_line_map(program))


__all__ = ["compile_target", "program_line_map", "program_loss", "report_program"]
