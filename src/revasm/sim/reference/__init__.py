"""The reference simulator: scalar, exact, readable; the oracle for every other engine.

``Machine(image)`` loads an assembled :class:`~revasm.assembler.image.Image`;
``run(+1)`` runs it forward from START to FINISH, ``run(-1)`` backward from
FINISH to START.  All semantics come from the instruction table
(``revasm.isa.table``), compiled per program into Python functions, one per
straight-line block (``blocks.py``).  Faults are :class:`revasm.machine.MachineFault`.
"""
from .machine import DEFAULT_MEMORY_WORDS, Machine, Program

__all__ = ["DEFAULT_MEMORY_WORDS", "Machine", "Program"]
