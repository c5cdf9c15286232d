"""Numeric literals: integers as PendVM reads them, and fixed-point reals.

Integers follow C's ``strtol(text, NULL, 0)``, which is what PendVM uses:
decimal, ``0x`` hexadecimal, and a leading ``0`` meaning *octal* (``010`` is
8).  We add ``0b`` binary and ``0o`` octal.  A number with a decimal point or
an exponent (``1.5``, ``-0.25``, ``3.``, ``.5``, ``1.5e-3``, ``1e-3``; as on the
command line) is a fixed-point real: it becomes the raw word
``round(value * 2**F)`` of the machine's Q format, computed exactly from the
decimal text (never through a float).
"""
from __future__ import annotations

import re
from fractions import Fraction

from revasm.isa.fixed_point import WordFormat

_INTEGER = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)\Z")
_REAL = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                   r"|[0-9]+[eE][+-]?[0-9]+)\Z")
_NUMERIC_START = re.compile(r"[+-]?\.?[0-9]")
#: Every literal _INTEGER or _REAL reads starts with one of these.
_FIRST_OF_NUMBER = frozenset("+-.0123456789")


def looks_numeric(text: str) -> bool:
    """True when the text starts like a number (so it is not a name)."""
    return bool(_NUMERIC_START.match(text))


#: A literal longer than this is out of range of every word (W <= 64): read as _HUGE.
_MOST_DIGITS = 400
_HUGE = 1 << 200


def is_number(text: str) -> bool:
    """True for an integer or fixed-point literal."""
    if text[:1] not in _FIRST_OF_NUMBER:  # (a label: the writer of a long program asks
        return False  # for each of its hundreds of thousands)
    return is_real(text) or parse_integer(text) is not None


def is_real(text: str) -> bool:
    return bool(_REAL.match(text))


def parse_integer(text: str) -> int | None:
    """The integer a literal denotes, or None if it is not an integer literal."""
    match = _INTEGER.match(text)
    if not match:
        return None
    sign, digits = match.groups()
    if len(digits) > _MOST_DIGITS:  # beyond any word (and beyond int()'s digit limit)
        return -_HUGE if sign == "-" else _HUGE
    lower = digits.lower()
    if lower.startswith(("0x", "0b", "0o")):
        value = int(digits[2:], {"x": 16, "b": 2, "o": 8}[lower[1]])
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)  # C (and PendVM): a leading 0 means octal
    else:
        value = int(digits)
    return -value if sign == "-" else value


def parse_real(text: str) -> Fraction | None:
    """The exact rational value of a fixed-point literal, or None."""
    if not _REAL.match(text):
        return None
    mantissa, _, exponent = text.lower().partition("e")
    whole = mantissa.lstrip("+-").partition(".")[0]
    if len(whole) > _MOST_DIGITS or (exponent and abs(int(exponent[:12])) > _MOST_DIGITS):
        # 1e999999999 would take minutes to make exact: it is out of range, or 0 when tiny
        tiny = exponent.lstrip("+").startswith("-")
        return Fraction(0) if tiny else Fraction(-_HUGE if text.startswith("-") else _HUGE)
    return Fraction(text)


def fixed_point_word(text: str, fmt: WordFormat) -> int | None:
    """The signed raw integer of a fixed-point literal in format ``fmt``."""
    value = parse_real(text)
    return None if value is None else fmt.from_real(value)


def describe_number_error(text: str) -> str:
    """Why a token that starts like a number is not one."""
    if re.match(r"[+-]?0[0-9]+\Z", text):
        return (f"{text!r} is not a number: a leading 0 makes an octal literal (as in C and "
                "PendVM), and octal digits are 0..7")
    return f"{text!r} is not a number"


def format_fixed(word: int, fmt: WordFormat) -> str:
    """A word as an exact decimal fixed-point literal (``0.5``, ``-3.0``).

    Every Qi.f value is a multiple of 2**-F, so its decimal expansion ends
    within F digits, and reading it back gives the same word.
    """
    value = fmt.to_fraction(word)
    sign = "-" if value < 0 else ""
    value = abs(value)
    whole = int(value)
    scaled = (value - whole) * 10 ** fmt.frac_bits  # an integer: 2**-F = 5**F / 10**F
    digits = f"{int(scaled):0{fmt.frac_bits}d}".rstrip("0") or "0"
    return f"{sign}{whole}.{digits}"
