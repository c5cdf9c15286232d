"""Compile, run and differentiate a reversible function in one call (gradient mode).

    from revasm.compiler import grad
    result = grad("examples/nilang/petersen.py:embedding_loss", {"x": x})
    result.loss, result.gradient["x"]          # a float, a nested list like x

The program is compiled with the gradient checks on, then the host protocol of
``sim/reference/gradient.py`` runs: forward, grad[loss] = 1, backward in
gradient mode.  Array parameters come back as nested lists of their elements'
gradients.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from revasm.sim.reference import MachineFault
from revasm.sim.host import GradientResult, gradient

from .api import (CompiledProgram, _reshape, compile_file, compile_function, load_inputs,
                  program_fault)
from .edsl import ReversibleFunction
from .errors import CompileError, SourcePos
from .ir import nodes as ir


@dataclass
class Gradient:
    """Loss value and d loss / d parameter (floats; nested lists for arrays)."""

    loss: float
    gradient: dict[str, Any]
    exact: GradientResult = field(repr=False)
    program: CompiledProgram = field(repr=False)


def compile_for_gradient(target: Any, width: int = 64) -> CompiledProgram:
    if isinstance(target, CompiledProgram):
        return target
    if isinstance(target, ReversibleFunction):
        return compile_function(target, width=width, for_gradient=True)
    path, _, func = str(target).rpartition(":") if ":" in str(target) else (str(target), "", "")
    return compile_file(path or str(target), func or None, width=width, for_gradient=True)


def grad(target: Any, inputs: dict[str, Any] | None = None, *, loss: str | None = None,
         wrt: list[str] | None = None, width: int = 64,
         max_steps: int | None = 50_000_000) -> Gradient:
    """The loss parameter's value and its gradient in the Fixed inputs (or ``wrt``).

    The loss is ``loss``, else the parameter marked ``Loss``, else the only ``Out``.
    """
    program = compile_for_gradient(target, width)
    f = program.function
    losses = [p for p in f.params if p.role == "loss"] or \
        [p for p in f.params if p.role == "output" and p.type == ir.FIXED]
    if loss is not None:
        losses = [p for p in f.params if p.name == loss and p.type == ir.FIXED]
        if not losses:
            raise KeyError(f"{loss!r} is not a Fixed scalar parameter of {f.name}")
    if len(losses) != 1:
        raise CompileError(f.pos or SourcePos(program.module.file, 1, 1),
                           f"{f.name} needs exactly one parameter marked Loss to be "
                           "differentiated", "def f(out: Loss, x: Fixed): ...")
    params = [p for p in f.params if p is not losses[0] and _fixed(p.type)]
    if wrt is not None:
        unknown = [n for n in wrt if f.param(n) is None]
        if unknown:
            raise KeyError(f"{unknown[0]!r} is not a parameter of {f.name}")
        params = [f.param(n) for n in wrt]
    names: list[str] = []
    for p in params:
        if isinstance(p.type, ir.ArrayType):
            names += [label[2:] for label in program.lowered.array_labels[p.name]]
        else:
            names.append(p.name)
    try:
        result = gradient(program.image, loss=losses[0].name, wrt=names,
                          prepare=lambda machine: load_inputs(program, machine, inputs or {}),
                          max_steps=max_steps)
    except MachineFault as fault:
        raise program_fault(program, fault) from None
    out: dict[str, Any] = {}
    for p in params:
        if isinstance(p.type, ir.ArrayType):
            flat = [float(result.gradient[label[2:]])
                    for label in program.lowered.array_labels[p.name]]
            out[p.name] = _reshape(flat, p.type.shape)
        else:
            out[p.name] = float(result.gradient[p.name])
    return Gradient(float(result.loss), out, result, program)


def _fixed(type_) -> bool:
    element = type_.element if isinstance(type_, ir.ArrayType) else type_
    return element == ir.FIXED


__all__ = ["Gradient", "grad", "compile_for_gradient", "Fraction"]
