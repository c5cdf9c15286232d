"""The one rule for a value a user gives a name, a register or a memory word.

Every place a value comes in -- ``--set``/``--mem``, ``grad-expr --at``, batch input
columns, the debugger's ``set``, the DAP ``launch`` ``set`` and ``setVariable``, and the
Python API's ``inputs`` (PAL, Janus and compiled programs alike) -- turns it into a W-bit
word with :func:`word_of`, so the same value gives the same word, or the same error,
everywhere (docs/cli.md "Values"):

- a name declared ``int`` takes an integer: ``2`` and ``2.0`` are 2, ``2.5`` is an error;
  it must fit the signed W-bit range;
- a name declared ``fixed`` takes a real: ``1``, ``1.0`` and ``1e0`` are all 1.0 (the word
  2^F), rounded to the nearest word (ties away from zero); it must fit the Q format;
- a register (``$5``) or a memory word with no declared name holds a raw word: an integer
  (``2.0`` is 2, ``2.5`` an error), signed or its unsigned bits;
- ``raw:N`` (N an integer: decimal, ``0x``, ``0b`` or ``0o``) is the raw word N for any
  place, signed or unsigned bits -- the one way to give a name its word rather than its
  value.

Anything that does not fit is an error naming the range; nothing wraps, nothing is read
another way with a note.

It lives with the assembler, the lowest layer that reads a value a user wrote for a name
(a declaration's ``= VALUE`` and ``in LO..HI``, assembler/declarations.py); the engines,
the debugger, batches and the CLI import it as ``revasm.machine.values``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from numbers import Integral, Real

from revasm.isa.fixed_point import WordFormat

from .image import DeclaredName

#: The kinds of place a value goes to.
INT = "int"
FIXED = "fixed"
WORD = "word"
KINDS = (INT, FIXED, WORD)

#: The prefix of an explicit raw word.
RAW_PREFIX = "raw:"

#: The forms a value takes, for the messages.
FORMS = "write 3, -7, 2.5, 1e-3, 0x1f or raw:0x8000"


class ValueRuleError(ValueError):
    """A value the rule refuses: not a number, not whole for an integer, or out of range.
    The message names the value and, for one out of range, the range."""


@dataclass(frozen=True)
class RawWord:
    """A raw W-bit word given explicitly (``raw:0x8000`` in text)."""

    value: int

    def __str__(self) -> str:
        return f"{RAW_PREFIX}{self.value}"


def kind_of(fixed: bool | None) -> str:
    """The kind of a place: ``fixed`` (True), ``int`` (False) or ``word`` (None: a register
    or an address without a declared name)."""
    return WORD if fixed is None else FIXED if fixed else INT


def shown(value: object) -> str:
    """A value as the messages show it: text as typed, numbers as Python prints them."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, float) or (isinstance(value, Real)
                                    and not isinstance(value, (Fraction, Decimal))):
        return repr(float(value))
    return str(value)


def parse_number(value: object) -> int | Fraction | RawWord:
    """The exact number ``value`` denotes: an ``int``, a ``Fraction`` (a real) or a
    :class:`RawWord`; raises :class:`ValueRuleError` for anything else (a bool, a word that
    is not a number, nan or infinity)."""
    if isinstance(value, RawWord):
        return value
    if isinstance(value, bool):
        raise ValueRuleError(f"{value!r} is not a number ({FORMS})")
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, (Fraction, Decimal)) or isinstance(value, Real):
        if isinstance(value, Decimal) and not value.is_finite():
            raise ValueRuleError(f"{shown(value)} is not a finite number")
        if not isinstance(value, (Fraction, Decimal)):
            number = float(value)
            if not math.isfinite(number):
                raise ValueRuleError(f"{shown(value)} is not a finite number")
            return Fraction(number)
        return Fraction(value)
    if not isinstance(value, str):
        raise ValueRuleError(f"{value!r} is not a number ({FORMS})")
    return _parse_text(value)


def _parse_text(value: str) -> int | Fraction | RawWord:
    text = value.strip()
    lowered = text.lower()
    if lowered.startswith(RAW_PREFIX):
        try:
            return RawWord(int(text[len(RAW_PREFIX):].strip(), 0))
        except ValueError:
            raise ValueRuleError(f"{text!r}: a raw word is an integer: raw:123, raw:-1 or "
                                 "raw:0x8000") from None
    try:
        return int(text, 0)
    except ValueError:
        pass
    if lowered.lstrip("+-") in ("nan", "inf", "infinity"):
        raise ValueRuleError(f"{text} is not a finite number")
    if "/" in text or "_" in text or not text:
        raise ValueRuleError(f"{text!r} is not a number ({FORMS})")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueRuleError(f"{text!r} is not a number ({FORMS})") from None


def int_range_text(fmt: WordFormat) -> str:
    """"a 32-bit int (from -2147483648 to 2147483647)"."""
    return f"a {fmt.width}-bit int (from {fmt.min_signed} to {fmt.max_signed})"


def word_range_text(fmt: WordFormat) -> str:
    """"a 32-bit word (from -2147483648 to 4294967295)": signed or its unsigned bits."""
    return f"a {fmt.width}-bit word (from {fmt.min_signed} to {fmt.mask})"


def fixed_range_text(fmt: WordFormat) -> str:
    """"Q16.16 (from -32768 to 32767.99998)"."""
    return f"{fmt.name} ({fmt.range_text()})"


def word_of(value: object, fmt: WordFormat, kind: str, place: str = "") -> int:
    """The unsigned W-bit word ``value`` stores at a place of ``kind`` (``int``, ``fixed``
    or ``word``: :func:`kind_of`), by the module's rule; ``place`` names the place in the
    messages (``x``, ``$2``).  Raises :class:`ValueRuleError`."""
    if kind not in KINDS:
        raise ValueError(f"kind is one of {', '.join(KINDS)}, not {kind!r}")
    number = parse_number(value)
    text = shown(value)
    if isinstance(number, RawWord):
        if not fmt.min_signed <= number.value <= fmt.mask:
            raise ValueRuleError(f"{text} does not fit {word_range_text(fmt)}")
        return number.value & fmt.mask
    if kind == FIXED:
        word = fmt.from_real(number)
        if not fmt.min_signed <= word <= fmt.max_signed:
            raise ValueRuleError(f"{text} does not fit {fixed_range_text(fmt)}")
        return word & fmt.mask
    if isinstance(number, Fraction):
        if number.denominator != 1:
            who = f"{place} is" if place else "the place is"
            what = "an integer (int)" if kind == INT else "a raw word (an integer)"
            raise ValueRuleError(f"{text} is not a whole number, and {who} {what}")
        number = int(number)
    low, high, where = ((fmt.min_signed, fmt.max_signed, int_range_text(fmt)) if kind == INT
                        else (fmt.min_signed, fmt.mask, word_range_text(fmt)))
    if not low <= number <= high:
        hint = f"; raw:{text} for its raw bits" if kind == INT and fmt.max_signed < number \
            <= fmt.mask else ""
        raise ValueRuleError(f"{text} does not fit {where}{hint}")
    return number & fmt.mask


def name_kind(declared: DeclaredName) -> str:
    """The kind of a place :meth:`Image.resolve_name` found: ``word`` for ``$n``, else the
    declared name's type."""
    return WORD if declared.role == "register" else kind_of(declared.fixed)
