"""The gradient, tangent and strict switches, shared by every simulator engine.

Turning a switch on makes the banks its rules use (``isa.adjoint.banks_needed``)
through the engine's own ``bank(name)``, which creates a bank zeroed on first use
and never replaces it (compiled code binds the banks themselves).
"""
from __future__ import annotations

from typing import Any

from revasm.isa.adjoint import banks_needed


class ModeSwitches:
    """``gradient``, ``tangent`` and ``strict`` for an engine that defines ``bank(name)``."""

    _gradient = False
    _tangent = False
    _strict = False

    @property
    def strict(self) -> bool:
        """The strict switch: an overflow event (``isa/table.py``, ``OV``) faults with kind
        ``overflow`` at the instruction, before it writes anything, instead of counting."""
        return self._strict

    @strict.setter
    def strict(self, on: bool) -> None:
        self._strict = bool(on)

    def bank(self, name: str) -> Any:  # pragma: no cover - every engine defines it
        raise NotImplementedError

    @property
    def gradient(self) -> bool:
        """The gradient switch: steps also apply the table's adjoint rules to G/GM."""
        return self._gradient

    @gradient.setter
    def gradient(self, on: bool) -> None:
        self._gradient = bool(on)
        self._allocate_banks()

    @property
    def tangent(self) -> bool:
        """The tangent switch: steps also apply the tangent rules to T/TM."""
        return self._tangent

    @tangent.setter
    def tangent(self, on: bool) -> None:
        self._tangent = bool(on)
        self._allocate_banks()

    def _allocate_banks(self) -> None:
        for name in banks_needed(self._gradient, self._tangent):
            self.bank(name)
