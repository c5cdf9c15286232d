"""Putting values into a loaded engine and reading one lane's state out for the user."""
from __future__ import annotations

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.engine import Lanes, read_place, write_place

from .values import Location, parse_assignment, parse_memory_assignment


def load_inputs(machine: Lanes, image: Image, sets: tuple[str, ...],
                mems: tuple[str, ...]) -> None:
    """Declared defaults first, then ``--set NAME=VALUE`` and ``--mem ADDR=VALUE``."""
    for declared in image.names.values():
        if declared.default is not None:
            store(machine, Location(declared.register, declared.address), declared.default)
    for text in sets:
        location, word = parse_assignment(text, image)
        store(machine, location, word)
    for text in mems:
        address, word = parse_memory_assignment(text, image)
        store(machine, Location(address=address), word)


def store(machine: Lanes, location: Location, word: int) -> None:
    """Store ``word`` at a register or memory word in every lane."""
    write_place(machine, location.register, location.address, word)


def fetch(machine: Lanes, location: Location, lane: int = 0) -> int:
    return int(read_place(machine, location.register, location.address)[lane])


def named_values(machine: Lanes, image: Image, lane: int = 0) -> dict[str, float | int]:
    """Declared names -> value (real for fixed-point names, signed integer otherwise)."""
    fmt = WordFormat(image.width)
    out: dict[str, float | int] = {}
    for name, declared in image.names.items():
        word = fetch(machine, Location(declared.register, declared.address), lane)
        out[name] = fmt.to_real(word) if declared.fixed else fmt.signed(word)
    return out


def state_dict(machine: Lanes, image: Image, lane: int = 0) -> dict:
    """Registers (all), non-zero memory, output and named values, as JSON-ready data."""
    fmt = WordFormat(image.width)
    snapshot = machine.snapshot(lane)
    return {
        "registers": {f"${i}": fmt.signed(word) for i, word in enumerate(snapshot.registers)},
        "memory": {str(addr): fmt.signed(word) for addr, word in snapshot.words()
                   if word and not (addr < len(image) and image.is_code[addr])},
        "output": [fmt.signed(word) for word in machine.output(lane)],
        "named": named_values(machine, image, lane),
    }


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
