"""revasm: a toolchain for a reversible, differentiable processor -- the Python API.

Every instruction of the machine runs backward as well as forward; a program's gradient
comes from running it forward, seeding the loss gradient and running it backward with the
gradient switch on.  The whole toolchain on one screen::

    import revasm

    image = revasm.assemble_file("examples/fib.pal")          # PAL text -> program image
    result = revasm.run(image, {"n": 10})                      # .status .steps .named ...
    assert revasm.check(image, random=20).failures == []       # forward then backward
    j2 = revasm.load("examples/bessel_j2.pal")                 # any program file: W = 64 (.width)
    g = revasm.grad(j2, inputs={"x": 1.0})                     # .loss .gradient["x"]
    h = revasm.hessian(j2, inputs={"x": 1.0})                  # .hessian["x"]["x"]
    b = revasm.batch(j2, {"x": [0.5, 1.0, 2.0]}, grad=True)    # one lane per row
    program = revasm.compile_file("examples/nilang/rfib.py", "rfib")   # @reversible Python
    revasm.run_program(program, {"n": 10}).values["out"]      # 55, by parameter name
    revasm.grad_program("examples/nilang/dot.py", {...})      # gradients by parameter
    revasm.rtl_sim(image).status                               # "agree": RTL in lockstep
    revasm.report_program("examples/nilang/dot.py:dot")["by_line"]   # cost per Python line

Each call takes ``engine=`` (``revasm.engines()`` lists them: ``reference``, the readable
oracle; ``vector``, numpy lanes; ``compiled``, native code; ``auto`` picks); all give the
same bits.  The command line (``revasm --help``) is a thin layer over these calls.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from revasm.assembler import assemble, assemble_file, disassemble
    from revasm.assembler.image import Image
    from revasm.compiler import compile_file, compile_function, compile_source, reversible
    from revasm.isa.fixed_point import DEFAULT_WIDTH, WIDTHS
    from revasm.machine import MachineFault
    from revasm.sim.engines import available as engines
    from revasm.sim.host import gradient as grad
    from revasm.sim.host import hessian

    from .batching.files import BatchSummary, batch_file
    from .batching.running import BatchResult, batch
    from .loading import LoadError, load
    from .program_counts import count_program
    from .programs import ProgramFault, ProgramResult, grad_program, run_program
    from .reports import report_program
    from .rtl_sim import RtlSimError, RtlSimResult, rtl_sim
    from .running import CheckResult, RunResult, check, run

__version__ = "0.1.0"

#: Where each name of the API lives: (module, attribute).  A name is imported on first use
#: (PEP 562), so ``import revasm`` -- and every ``revasm`` command, which imports it -- pays
#: only for what it calls: ``revasm --help`` never loads numpy, numba or the RTL.
_API: dict[str, tuple[str, str]] = {
    "assemble": ("revasm.assembler", "assemble"),
    "assemble_file": ("revasm.assembler", "assemble_file"),
    "disassemble": ("revasm.assembler", "disassemble"),
    "Image": ("revasm.assembler.image", "Image"),
    "compile_file": ("revasm.compiler", "compile_file"),
    "compile_function": ("revasm.compiler", "compile_function"),
    "compile_source": ("revasm.compiler", "compile_source"),
    "reversible": ("revasm.compiler", "reversible"),
    "DEFAULT_WIDTH": ("revasm.isa.fixed_point", "DEFAULT_WIDTH"),
    "WIDTHS": ("revasm.isa.fixed_point", "WIDTHS"),
    "MachineFault": ("revasm.machine", "MachineFault"),
    "engines": ("revasm.sim.engines", "available"),
    "grad": ("revasm.sim.host", "gradient"),
    "hessian": ("revasm.sim.host", "hessian"),
    "BatchSummary": ("revasm.batching.files", "BatchSummary"),
    "batch_file": ("revasm.batching.files", "batch_file"),
    "BatchResult": ("revasm.batching.running", "BatchResult"),
    "batch": ("revasm.batching.running", "batch"),
    "LoadError": ("revasm.loading", "LoadError"),
    "load": ("revasm.loading", "load"),
    "count_program": ("revasm.program_counts", "count_program"),
    "ProgramFault": ("revasm.programs", "ProgramFault"),
    "ProgramResult": ("revasm.programs", "ProgramResult"),
    "grad_program": ("revasm.programs", "grad_program"),
    "run_program": ("revasm.programs", "run_program"),
    "report_program": ("revasm.reports", "report_program"),
    "RtlSimError": ("revasm.rtl_sim", "RtlSimError"),
    "RtlSimResult": ("revasm.rtl_sim", "RtlSimResult"),
    "rtl_sim": ("revasm.rtl_sim", "rtl_sim"),
    "CheckResult": ("revasm.running", "CheckResult"),
    "RunResult": ("revasm.running", "RunResult"),
    "check": ("revasm.running", "check"),
    "run": ("revasm.running", "run"),
}

__all__ = ["DEFAULT_WIDTH", "WIDTHS", "BatchResult", "BatchSummary", "CheckResult", "Image",
           "LoadError", "MachineFault", "ProgramFault", "ProgramResult", "RtlSimError",
           "RtlSimResult", "RunResult", "assemble", "assemble_file", "batch", "batch_file",
           "check", "compile_file", "compile_function", "compile_source", "count_program",
           "disassemble", "engines", "grad", "grad_program", "hessian", "load", "report_program",
           "reversible", "rtl_sim", "run", "run_program"]


def __getattr__(name: str) -> Any:
    """An API name, imported on first use and kept (module docstring)."""
    if name not in _API:
        raise AttributeError(f"module 'revasm' has no attribute {name!r}")
    module_name, attribute = _API[name]
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    """``revasm`` itself: importing the submodule ``revasm.rtl_sim`` must not replace the
    function ``revasm.rtl_sim`` (the import system sets a package's attribute to each
    submodule it loads; with every name imported eagerly the function came after it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
