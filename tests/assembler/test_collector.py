"""Phases that build many objects pause the cyclic collector and give it back as it was."""
from __future__ import annotations

import gc

import pytest

from revasm.assembler import AssemblyError, assemble
from revasm.assembler.collector import paused


@pytest.mark.parametrize("was_on", [True, False])
def test_paused_gives_the_collector_back_as_it_was_even_after_an_error(was_on):
    (gc.enable if was_on else gc.disable)()
    try:
        with paused():
            assert not gc.isenabled()
        assert gc.isenabled() == was_on
        with pytest.raises(ValueError), paused():
            raise ValueError("inside")
        assert gc.isenabled() == was_on
        with pytest.raises(AssemblyError):  # an assembly error leaves it as it was, too
            assemble(";; pendulum pal file\nnot-an-instruction\n", "bad.pal")
        assert gc.isenabled() == was_on
    finally:
        gc.enable()
