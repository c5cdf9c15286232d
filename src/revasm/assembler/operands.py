"""Operand values: registers, immediates, branch targets, and their ranges.

What an operand may be is decided by its *kind* (``reg``, ``imm``, ``amt``,
``k``, ``off`` from the instruction table, plus ``word`` for a full machine
word); its range comes from the encoding
field that holds it, narrowed by the word width where the machine needs it
(a shift amount below W, a 16-bit lane inside the word).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from revasm.isa.encoding import REG_A, Field
from revasm.isa.fixed_point import WordFormat

from .lexer import Token
from .literals import describe_number_error, fixed_point_word, is_real, looks_numeric, parse_integer
from .parser import LABEL, NAME

#: Registers are what a register field can name: $0..$31.
REGISTER_COUNT = 1 << REG_A.width
_REGISTER = re.compile(r"\$([0-9]+)\Z")
#: The registers as they are usually spelled (a long program names them millions of times).
_REGISTER_NUMBERS = {f"${n}": n for n in range(REGISTER_COUNT)}


class OperandError(Exception):
    """An operand that cannot be used; the message is for the user."""


@dataclass
class Scope:
    """The names an operand can use: labels (addresses) and named constants."""

    fmt: WordFormat
    labels: dict[str, int] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)


def register(token: Token) -> int:
    """``$n`` -> n, for 0 <= n < 32."""
    number = _REGISTER_NUMBERS.get(token.text)
    if number is not None:
        return number
    match = _REGISTER.match(token.text)
    if not match:
        raise OperandError(f"expected a register $0..${REGISTER_COUNT - 1}, got {token.text!r}")
    number = int(match.group(1))
    if number >= REGISTER_COUNT:
        raise OperandError(f"{token.text} is not a register (registers are "
                           f"$0..${REGISTER_COUNT - 1})")
    return number


def is_register(token: Token) -> bool:
    return token.text.startswith("$")


def _name_value(name: str, scope: Scope) -> int:
    if name in scope.constants:
        return scope.constants[name]
    if name in scope.labels:
        return scope.labels[name]
    known = list(scope.labels) + list(scope.constants)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise OperandError(f"undefined label or constant {name!r}{hint}")


def value(token: Token, scope: Scope, *, reals: bool = True, names: bool = True,
          negated_names: bool = True) -> int:
    """The integer an operand denotes: a literal, a fixed-point real, a name or ``-name``.

    A name is a label (its address) or a named constant; ``-name`` negates it.
    Fixed-point reals give the raw signed word of the machine's format.
    """
    text = token.text
    if is_register(token):
        raise OperandError(f"expected a value, got the register {text}")
    negate = text.startswith("-")
    name = text[1:] if negate else text
    # Names before numbers, as in PendVM (parse_immed asks the label table first):
    # a label may be spelled like the start of a number (``1st``).
    known = name in scope.labels or name in scope.constants
    if not known and looks_numeric(text):
        if is_real(text):
            if not reals:
                raise OperandError(f"expected an integer, got the fixed-point literal {text}")
            word = fixed_point_word(text, scope.fmt)
            assert word is not None  # is_real: a fixed-point literal
            return word
        number = parse_integer(text)
        if number is None:
            raise OperandError(describe_number_error(text))
        return number
    if not known and not (NAME.match(name) or LABEL.match(name)):
        raise OperandError(f"{text!r} is neither a number nor a name")
    if not names:
        raise OperandError(f"expected a number, got the name {text!r}")
    if negate and not negated_names:
        raise OperandError(f"{text} is not an address (only immediates and DATA values "
                           "take -name)")
    number = _name_value(name, scope)
    return -number if negate else number


# --- ranges -------------------------------------------------------------------

def field_range(kind: str, fld: Field | None, width: int) -> tuple[int, int]:
    """The values an operand of ``kind`` may take at word width ``width``."""
    if kind == "word":
        return -(1 << (width - 1)), (1 << width) - 1
    if fld is None:
        raise ValueError(f"an operand of kind {kind!r} needs its instruction field")
    if kind == "amt":
        return 0, min(fld.high, width - 1)
    if kind == "k":
        # ADDIS adds imm << 16k: the lane must lie inside the word, and lane 0
        # is ADDI's job.
        return 1, min(fld.high, width // 16 - 1)
    return fld.low, fld.high


def range_text(low: int, high: int) -> str:
    return f"{low}..{high}"
