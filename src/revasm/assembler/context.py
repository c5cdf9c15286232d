"""What every assembly pass shares: the diagnostics, the word format and the names in scope.

Also the small helpers that phrase operand errors the same way everywhere.
"""
from __future__ import annotations

from revasm.isa.fixed_point import WordFormat

from .diagnostics import DiagnosticLog
from .lexer import Token
from .literals import is_real
from .operands import OperandError, Scope, field_range, range_text, value
from .parser import Statement


class Context:
    """The state an assembly pass reads and reports into."""

    log: DiagnosticLog
    fmt: WordFormat
    scope: Scope

    def error(self, line: int, token: Token | int, message: str) -> None:
        column = token if isinstance(token, int) else token.column
        self.log.error(line, column, message)

    @staticmethod
    def describe_target(token: Token, target: int) -> str:
        """``pc 7`` for an address written as a number, ``'loop' (pc 7)`` for a name."""
        return f"pc {target}" if token.text.lstrip("+-")[:1].isdigit() else \
            f"{token.text!r} (pc {target})"

    def shown(self, token: Token, number: int) -> str:
        """How a message shows an operand's value: ``70000``, ``0.5 (raw 32768 in Q16.16)``."""
        if abs(number).bit_length() > 128:  # 1e99999: too long to print (and to read)
            return f"{token.text} (a number of {abs(number).bit_length()} bits)"
        if is_real(token.text):
            return f"{token.text} (raw {number} in {self.fmt.name})"
        if token.text == str(number):
            return token.text
        return f"{token.text} = {number}"

    def operand_count(self, statement: Statement, wanted: tuple[int, int], syntax: str) -> bool:
        """Whether the statement has ``low..high`` operands; reports it if not."""
        low, high = wanted
        got = len(statement.operands)
        if low <= got <= high:
            return True
        count = str(low) if low == high else f"{low} to {high}"
        plural = "" if high == 1 else "s"
        message = f"{syntax.split()[0]} takes {count} operand{plural} ({syntax}), got {got}"
        column = statement.operands[high].column if got > high else statement.end_column()
        self.log.error(statement.line, column, message)
        return False

    def word_value(self, statement: Statement, token: Token, what: str) -> int | None:
        """A W-bit word (signed or unsigned range), or None after reporting why not."""
        try:
            number = value(token, self.scope)
        except OperandError as exc:
            self.error(statement.line, token, str(exc))
            return None
        low, high = field_range("word", None, self.fmt.width)
        if not low <= number <= high:
            self.error(statement.line, token,
                       f"{what} {self.shown(token, number)} does not fit a "
                       f"{self.fmt.width}-bit word ({range_text(low, high)})")
            return None
        return self.fmt.wrap(number)
