"""The instruction set of the reversible, differentiable processor: one table.

``INSTRUCTIONS`` is the whole ISA (``table.py``); ``lookup``/``encode``/``decode``
derive the syntax and encodings from it; ``vocabulary`` binds the names its
semantics use for a word format.
"""
from .codec import BY_ENCODING, BY_MNEMONIC, IllegalInstruction, decode, encode, lookup
from .fixed_point import Q16_16, Q32_32, WordFormat, word_format
from .instruction import CONTROL_KINDS, Instruction
from .table import BINARY_FUNCTIONS, INSTRUCTIONS, UNARY_FUNCTIONS

__all__ = [
    "BINARY_FUNCTIONS", "BY_ENCODING", "BY_MNEMONIC", "CONTROL_KINDS", "INSTRUCTIONS",
    "IllegalInstruction", "Instruction", "Q16_16", "Q32_32", "UNARY_FUNCTIONS", "WordFormat",
    "decode", "encode", "lookup", "word_format",
]
