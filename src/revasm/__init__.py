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

__all__ = ["DEFAULT_WIDTH", "WIDTHS", "BatchResult", "BatchSummary", "CheckResult", "Image",
           "LoadError", "MachineFault", "ProgramFault", "ProgramResult", "RtlSimError",
           "RtlSimResult", "RunResult", "assemble", "assemble_file", "batch", "batch_file",
           "check", "compile_file", "compile_function", "compile_source", "count_program",
           "disassemble", "engines", "grad", "grad_program", "hessian", "load", "report_program",
           "reversible", "rtl_sim", "run", "run_program"]
