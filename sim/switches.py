"""The gradient and tangent switches, shared by every simulator engine.

Turning a switch on makes the banks its rules use (``isa.adjoint.banks_needed``)
through the engine's own ``bank(name)``, which creates a bank zeroed on first use
and never replaces it (compiled code binds the banks themselves).
"""
from __future__ import annotations

from revasm.isa.adjoint import banks_needed


class ModeSwitches:
    """``gradient`` and ``tangent`` for an engine that defines ``bank(name)``."""

    _gradient = False
    _tangent = False

    def bank(self, name: str):  # pragma: no cover - every engine defines it
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
