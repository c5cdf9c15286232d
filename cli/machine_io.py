"""Putting values into a machine and reading its state out for the user."""
from __future__ import annotations

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import Machine

from .values import Location, parse_assignment, parse_memory_assignment


def load_inputs(machine: Machine, image: Image, sets: tuple[str, ...],
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


def store(machine: Machine, location: Location, word: int) -> None:
    if location.register is not None:
        machine.registers[location.register] = word
    else:
        machine.memory[location.address] = word


def fetch(machine: Machine, location: Location) -> int:
    if location.register is not None:
        return machine.registers[location.register]
    return machine.memory[location.address]


def named_values(machine: Machine, image: Image) -> dict[str, float | int]:
    """Declared names -> value (real for fixed-point names, signed integer otherwise)."""
    fmt = WordFormat(image.width)
    out: dict[str, float | int] = {}
    for name, declared in image.names.items():
        word = fetch(machine, Location(declared.register, declared.address))
        out[name] = fmt.to_real(word) if declared.fixed else fmt.signed(word)
    return out


def state_dict(machine: Machine, image: Image) -> dict:
    """Registers (all), non-zero memory, output and named values, as JSON-ready data."""
    fmt = WordFormat(image.width)
    return {
        "registers": {f"${i}": fmt.signed(word) for i, word in enumerate(machine.registers)},
        "memory": {str(addr): fmt.signed(word) for addr, word in enumerate(machine.memory)
                   if word and not (addr < len(image) and image.is_code[addr])},
        "output": [fmt.signed(word) for word in machine.output],
        "named": named_values(machine, image),
    }
