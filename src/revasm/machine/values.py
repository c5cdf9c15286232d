"""The one value rule (``word_of``): see :mod:`revasm.assembler.values`, its home.

Kept here as the name every layer above the assembler imports it by (the engines, the
debugger, batches, the CLI, the Python API).
"""
from __future__ import annotations

from revasm.assembler.values import (
    FIXED,
    FORMS,
    INT,
    KINDS,
    RAW_PREFIX,
    WORD,
    RawWord,
    ValueRuleError,
    fixed_range_text,
    int_range_text,
    kind_of,
    name_kind,
    parse_number,
    shown,
    word_of,
    word_range_text,
)

__all__ = ["FIXED", "FORMS", "INT", "KINDS", "RAW_PREFIX", "WORD", "RawWord",
           "ValueRuleError", "fixed_range_text", "int_range_text", "kind_of", "name_kind",
           "parse_number", "shown", "word_of", "word_range_text"]
