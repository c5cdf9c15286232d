"""The gradient host protocol on lanes: one forward and one backward pass for the whole batch.

    inputs in -> forward to FINISH -> loss out -> G[loss] = 1.0
      -> gradient switch on -> backward to START -> gradients out

exactly as :func:`revasm.sim.reference.gradient.gradient` does for one input,
so each lane's loss and gradient words equal the reference's.  A lane that
faults in either pass keeps its fault (``machine.fault(lane)``) and its
gradient words are not meaningful (``ok`` is False there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from revasm.assembler.image import Image
from revasm.sim.reference import DEFAULT_MEMORY_WORDS
from revasm.sim.reference.gradient import Place, _places

from .machine import HALTED, VectorMachine


@dataclass
class BatchGradient:
    """Loss and gradient words per lane (``uint64`` arrays) and the machine after both passes."""

    loss_name: str
    loss: Any
    gradient: dict[str, Any]
    ok: Any
    forward_steps: Any
    backward_steps: Any
    machine: VectorMachine


def read(machine: VectorMachine, place: Place, bank: str = "") -> Any:
    """Every lane's word at a place, from the values (``bank=""``) or a gradient bank."""
    if not bank:
        if place.register is not None:
            return machine.register(place.register)
        return machine.memory(place.address)
    memory_bank = bank + "M"
    if place.register is not None:
        return machine.bank_word(bank, place.register)
    return machine.bank_word(memory_bank, place.address)


def seed(machine: VectorMachine, place: Place, bank: str, values: Any) -> None:
    if place.register is not None:
        machine.set_bank_word(bank, place.register, values)
    else:
        machine.set_bank_word(bank + "M", place.address, values)


def batch_gradient(machine: VectorMachine, *, loss: str | None = None,
                   wrt: Iterable[str] | None = None, progress: Any = None,
                   after_forward: Any = None) -> BatchGradient:
    """Run the protocol on a loaded machine (inputs already stored in its lanes).

    ``after_forward(machine)`` is called between the passes (to read values
    before the backward pass uncomputes them)."""
    image: Image = machine.image
    loss_place, places = _places(image, loss, wrt)
    machine.run(1, progress=progress)
    if after_forward is not None:
        after_forward(machine)
    forward_steps = machine.steps.copy()
    loss_words = read(machine, loss_place)
    ok = machine.status == HALTED
    machine.gradient = True
    seed(machine, loss_place, "G", machine.fmt.one)
    machine.run_back(progress=progress)
    ok = ok & (machine.status == HALTED)
    gradient = {p.name: read(machine, p, "G") for p in places}
    return BatchGradient(loss_place.name, loss_words, gradient, ok, forward_steps,
                         machine.steps.copy(), machine)


def new_machine(image: Image, lanes: int, *, max_steps: int | None = None,
                memory_words: int = DEFAULT_MEMORY_WORDS, xp: Any = None) -> VectorMachine:
    return VectorMachine(image, lanes, max_steps=max_steps, memory_words=memory_words, xp=xp)
