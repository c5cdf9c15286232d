"""The numba pipeline of the fused blocks: the kernels' lean pipeline, arguments ``noalias``.

A fused block (``fused.py``) reads and writes a dozen register rows in one loop over the
tile.  As rows of one bank array (``R[lane, 3]``, ``R[lane, 10]``) LLVM cannot tell them
apart -- their distance is a run-time stride -- and the vectoriser gives up once the
run-time overlap checks it would need pass its limit (8), so the loop ran scalar.  Each
row is therefore its own one-dimensional argument, and this pipeline marks every pointer
argument ``noalias`` (numba's ``noalias`` flag, which its decorators do not expose): the
rows of a bank, the banks, the counter row and the scratch rows never overlap, which is
exactly what ``noalias`` promises (``fused.py`` passes each row once).
"""
from __future__ import annotations

from typing import Any

from revasm.sim.compiled.pipeline import KernelCompiler


class NoAliasCompiler(KernelCompiler):
    """``KernelCompiler`` with numba's ``noalias`` flag on."""

    def define_pipelines(self) -> Any:
        self.state.flags.noalias = True
        return super().define_pipelines()
