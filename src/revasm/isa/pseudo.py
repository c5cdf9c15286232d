"""Pseudo-instructions: assembly conveniences that expand to table instructions."""
from __future__ import annotations

from .fixed_point import WordFormat


def load_constant(register: int, value: int, fmt: WordFormat) -> list[tuple[str, dict[str, int]]]:
    """``LI $r VALUE`` (r += VALUE) as ADDI + ADDIS: signed 16-bit digits of the word.

    The digits d_k satisfy sum(d_k << 16k) == VALUE (mod 2**W), so adding them
    adds VALUE; zero digits are skipped (an all-zero constant still emits one
    ADDI so that a label on the line has an instruction).
    """
    remaining = fmt.signed(value & fmt.mask)
    steps: list[tuple[str, dict[str, int]]] = []
    for k in range(fmt.width // 16):
        digit = ((remaining & 0xFFFF) ^ 0x8000) - 0x8000
        remaining = (remaining - digit) >> 16
        if digit:
            if k == 0:
                steps.append(("ADDI", {"a": register, "imm": digit}))
            else:
                steps.append(("ADDIS", {"a": register, "imm": digit, "k": k}))
    return steps or [("ADDI", {"a": register, "imm": 0})]
