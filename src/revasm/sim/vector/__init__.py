"""The batched simulator: numpy lanes, one program, bit for bit the reference on every lane.

``VectorMachine(image, lanes)`` holds ``lanes`` copies of the machine state
with a lane axis; ``run(+1)`` / ``run(-1)`` run them all, lanes at the same PC
together (SIMT).  See docs/vector.md.
"""
from .machine import BANKS, FAULTED, HALTED, RUNNING, VectorMachine
from .templates import TemplateError, vector_source

__all__ = ["BANKS", "FAULTED", "HALTED", "RUNNING", "TemplateError", "VectorMachine",
           "vector_source"]
