"""Machine words and fixed-point formats (Qi.f) shared by every engine.

Registers and memory words are held as *unsigned canonical* integers in
``[0, 2**W)``; arithmetic wraps modulo ``2**W`` so that every accumulate stays a
bijection even on overflow.  A fixed-point value is the same word read as a
two's-complement integer scaled by ``2**-F``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

#: The word widths the machine has: every engine, the assembler, the image formats and the
#: RTL accept these and no other (the RTL's proofs also run at reduced widths of their own).
WIDTHS: tuple[int, ...] = (32, 64)
#: The width of a program that does not say: a PAL file without ``.width``, a Python
#: function compiled without ``width=``, a command without ``--width`` -- for every command
#: and API call alike (docs/decisions.md, "One width default").
DEFAULT_WIDTH = 32


@dataclass(frozen=True)
class WordFormat:
    """Word width ``W`` and fraction bits ``F`` (Q16.16 for W=32, Q32.32 for W=64)."""

    width: int = DEFAULT_WIDTH

    def __post_init__(self) -> None:
        if self.width not in WIDTHS:
            raise ValueError(f"word width must be {widths_text()}, not {self.width}")

    @property
    def frac_bits(self) -> int:
        return self.width // 2

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def one(self) -> int:
        """The raw word of the fixed-point value 1.0."""
        return 1 << self.frac_bits

    @property
    def min_signed(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def max_signed(self) -> int:
        return (1 << (self.width - 1)) - 1

    @property
    def name(self) -> str:
        return f"Q{self.width - self.frac_bits}.{self.frac_bits}"

    def wrap(self, value: int) -> int:
        """Reduce any integer to the unsigned canonical word (mod 2**W)."""
        return value & self.mask

    def signed(self, word: int) -> int:
        """Read an unsigned canonical word as a two's-complement integer."""
        return word - ((word & self.sign_bit) << 1)

    def from_real(self, value: float | Fraction | str) -> int:
        """The signed raw integer nearest to ``value * 2**F`` (ties away from zero).

        Exact: goes through :class:`fractions.Fraction`, never through float
        arithmetic on the scaled value.
        """
        scaled = Fraction(value) * (1 << self.frac_bits)
        sign = -1 if scaled < 0 else 1
        magnitude = abs(scaled)
        rounded = int(magnitude + Fraction(1, 2))  # floor(|x| + 1/2)
        return sign * rounded

    def to_real(self, word: int) -> float:
        """The real value of a word read as fixed point (for display only)."""
        return self.signed(word & self.mask) / (1 << self.frac_bits)

    def to_fraction(self, word: int) -> Fraction:
        return Fraction(self.signed(word & self.mask), 1 << self.frac_bits)

    def range_text(self) -> str:
        """"from LO to HI": the reals a word holds, as messages show them.  The top is
        truncated, never rounded up to a value the word cannot hold (Q32.32's is
        2147483647.9999999997, not 2147483648)."""
        digits = (self.frac_bits * 3 + 9) // 10  # about F * log10(2) decimals
        top = Fraction(self.max_signed, 1 << self.frac_bits)
        whole = int(top)
        fraction = int((top - whole) * 10 ** digits)
        low = Fraction(self.min_signed, 1 << self.frac_bits)
        return f"from {int(low)} to {whole}.{fraction:0{digits}d}"


def widths_text() -> str:
    """The widths as messages name them: ``32 or 64``."""
    return " or ".join(str(width) for width in WIDTHS)


Q16_16 = WordFormat(32)
Q32_32 = WordFormat(64)
_FORMATS = {fmt.width: fmt for fmt in (Q16_16, Q32_32)}


def word_format(width: int) -> WordFormat:
    """The one shared format of a machine of this word width (``WIDTHS``): what every
    ``WordFormat(width)`` means, without a new instance each time; any other width raises
    ``ValueError`` as ``WordFormat`` does."""
    fmt = _FORMATS.get(width)
    return fmt if fmt is not None else WordFormat(width)
