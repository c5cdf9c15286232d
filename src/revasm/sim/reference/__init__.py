"""The reference simulator: scalar, exact, readable; the oracle for every other engine.

``Machine(image)`` loads an assembled :class:`~revasm.assembler.image.Image`;
``run(+1)`` runs it forward from START to FINISH, ``run(-1)`` backward from
FINISH to START.  All semantics come from the instruction table
(``revasm.isa.table``), compiled per program into Python functions, one per
straight-line block (``blocks.py``).  Faults are :class:`MachineFault`.
"""
from .faults import FAULT_KINDS, MachineFault
from .machine import DEFAULT_MEMORY_WORDS, Machine, Program
from .state import Snapshot
from .trace import TraceRecord, format_trace_line

__all__ = ["DEFAULT_MEMORY_WORDS", "FAULT_KINDS", "Machine", "MachineFault", "Program",
           "Snapshot", "TraceRecord", "format_trace_line"]
