"""The faults an elementary function raises: outside its domain, or a division by zero."""
from __future__ import annotations


class DomainError(ArithmeticError):
    """The argument lies outside the function's domain (e.g. ``log(x <= 0)``)."""


class DivideByZero(DomainError):
    """Division by zero (``s / 0``, or ``0 ** y`` with ``y < 0``)."""
