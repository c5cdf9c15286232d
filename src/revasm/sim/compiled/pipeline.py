"""The numba compiler pipeline of the kernels' inner functions: nopython without SSA.

numba rebuilds every function in SSA form (``ReconstructSSA``) before typing and strips
the phi nodes again before lowering.  A kernel's locals -- the lane's registers, PC, BR,
DIR, counts -- are each assigned in hundreds of blocks, so for a kernel those two passes
take about a third of the compile time; LLVM's ``mem2reg`` builds the same SSA form from
numba's stack slots anyway.  Without them numba types a variable once over all its
assignments (its behaviour before 0.50, still a flag: ``enable_ssa``).  The kernels
allow it -- each local holds one type throughout: ``uint64`` words, ``int64`` BR, DIR
and counts -- but should a function ever give one local two types, numba would unify
them (``int64`` with ``uint64`` is ``float64``): :class:`IntegerLocals` stops that
pipeline at typing and the function is compiled again by numba's default pipeline, so a
lean compile is never a different program.  The parallel entry point (``run_parallel``)
keeps numba's default pipeline: its parfor passes need SSA.  docs/decisions.md, "The
kernels' numba pipeline", says what else was tried.
"""
from __future__ import annotations

from typing import Any

from numba.core import errors, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import TranslateByteCode

#: Types no kernel local has: numba's unification of two integer types of different
#: signedness (and anything else a kernel never computes).
_FOREIGN = (types.Float, types.Complex, types.Optional, types.PyObject)


@register_pass(mutates_CFG=False, analysis_only=True)
class WithoutSSA(FunctionPass):
    """Sets the ``enable_ssa`` flag off for the passes of the lean pipeline."""

    _name = "revasm_without_ssa"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        state.flags.enable_ssa = False
        return False


@register_pass(mutates_CFG=False, analysis_only=True)
class WithSSA(FunctionPass):
    """Sets the ``enable_ssa`` flag back on for the default pipeline (the fallback), and
    forgets the lean pipeline's failure (numba's dispatcher raises a result's recorded
    typing error: its way of refusing an object-mode fallback)."""

    _name = "revasm_with_ssa"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        state.flags.enable_ssa = True
        state.status.fail_reason = None
        return False


@register_pass(mutates_CFG=False, analysis_only=True)
class IntegerLocals(FunctionPass):
    """Fails the lean pipeline (a typing error, so numba tries the next one) if a local was
    typed as anything a kernel never holds -- what a variable with two integer types in
    different places becomes without SSA."""

    _name = "revasm_integer_locals"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        foreign = sorted(name for name, typ in state.typemap.items()
                         if isinstance(typ, _FOREIGN))
        if foreign:
            raise errors.TypingError(f"locals {foreign[:5]} typed as no kernel local is "
                                     "(compiled again with SSA)")
        return False


class KernelCompiler(CompilerBase):
    """numba's nopython pipeline without SSA, with numba's default pipeline as its
    fallback (``njit(pipeline_class=KernelCompiler)``)."""

    def define_pipelines(self) -> list:
        self.state.flags.enable_ssa = False
        lean = DefaultPassBuilder.define_nopython_pipeline(self.state, "nopython_without_ssa")
        lean.add_pass_after(WithoutSSA, TranslateByteCode)
        lean.add_pass_after(IntegerLocals, NopythonTypeInference)
        lean.finalize()
        self.state.flags.enable_ssa = True
        default = DefaultPassBuilder.define_nopython_pipeline(self.state)
        default.add_pass_after(WithSSA, TranslateByteCode)
        default.finalize()
        self.state.flags.enable_ssa = False
        return [lean, default]
