"""Putting the values of ``--set``/``--mem`` into a loaded engine."""
from __future__ import annotations

from revasm.assembler.image import Image
from revasm.sim.engine import Lanes, write_place

from .values import Location, parse_assignment, parse_memory_assignment


def load_inputs(machine: Lanes, image: Image, sets: tuple[str, ...],
                mems: tuple[str, ...]) -> None:
    """Declared defaults first, then ``--set NAME=VALUE`` and ``--mem ADDR=VALUE``."""
    for declared in image.names.values():
        if declared.default is not None:
            store(machine, Location(declared.register, declared.address), declared.default)
    load_inputs_over(machine, image, sets, mems)


def load_inputs_over(machine: Lanes, image: Image, sets: tuple[str, ...],
                     mems: tuple[str, ...]) -> None:
    """``--set``/``--mem`` assignments on what the machine holds (no declared defaults)."""
    for text in sets:
        location, word = parse_assignment(text, image)
        store(machine, location, word)
    for text in mems:
        address, word = parse_memory_assignment(text, image)
        store(machine, Location(address=address), word)


def store(machine: Lanes, location: Location, word: int) -> None:
    """Store ``word`` at a register or memory word in every lane."""
    write_place(machine, location.register, location.address, word)


def initial_words(image: Image, sets: tuple[str, ...] = (), mems: tuple[str, ...] = (), *,
                  memory_words: int | None = None) -> tuple[dict[int, int], dict[int, int]]:
    """The registers and non-zero memory words a run starts from: the image, the declared
    defaults and ``--set``/``--mem`` (for jobs handed to the RTL co-simulation)."""
    from revasm.sim import host
    def prepare(machine: Lanes) -> None:
        load_inputs(machine, image, sets, mems)
    if memory_words is None:
        return host.initial_words(image, prepare=prepare)
    return host.initial_words(image, prepare=prepare, memory_words=memory_words)
