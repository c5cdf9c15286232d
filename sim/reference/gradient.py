"""The host protocol of gradient mode (DESIGN §3.5) as a Python API.

    inputs in -> forward to FINISH -> loss out -> grad[loss] = 1
      -> gradient switch on -> backward to START -> gradients out

:func:`gradient` runs it once; :func:`hessian` runs it once per direction
``e_j`` with the tangent bank on (T[wrt_j] = 1 before the forward pass), so
that the gradient tangents TG hold the column H e_j after the backward pass
(forward-over-reverse).  Everything is fixed-point arithmetic on the machine
(``isa/adjoint.py``); results are read out as exact fractions of the format.
A fault in either pass is re-raised with ``fault.run_pass`` naming the pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable

from revasm.assembler.image import Image, UnknownName

from .faults import MachineFault
from .machine import DEFAULT_MEMORY_WORDS, Machine


class GradientError(ValueError):
    """A request the protocol cannot serve (unknown name, no loss declared, ...)."""


@dataclass(frozen=True)
class Place:
    """Where a name lives: a register or a memory word."""

    name: str
    register: int | None = None
    address: int | None = None
    fixed: bool = True

    def read(self, registers: list[int], memory: list[int]) -> int:
        return registers[self.register] if self.register is not None else memory[self.address]

    def write(self, registers: list[int], memory: list[int], word: int) -> None:
        if self.register is not None:
            registers[self.register] = word
        else:
            memory[self.address] = word


def resolve(image: Image, name: str) -> Place:
    """``$n`` or a name the source declares; raises :class:`GradientError`."""
    try:
        place = image.resolve_name(name)
    except UnknownName as exc:
        raise GradientError(str(exc)) from None
    if place.role == "register":
        if place.register == 0:
            raise GradientError(f"{name} is not a register $1..$31 ($0 is the constant 0)")
        return Place(name, register=place.register)  # a register reads as fixed point here
    return Place(name, place.register, place.address, place.fixed)


def default_loss(image: Image) -> str:
    """The one name declared with ``.loss``."""
    losses = [d.name for d in image.names.values() if d.role == "loss"]
    if len(losses) != 1:
        found = "none" if not losses else ", ".join(losses)
        raise GradientError(f"say which value is the loss (--loss NAME): the program declares "
                            f"{'no .loss' if not losses else 'several: ' + found}")
    return losses[0]


def default_wrt(image: Image) -> list[str]:
    """The declared fixed-point inputs, in declaration order."""
    names = [d.name for d in image.names.values() if d.role == "input" and d.fixed]
    if not names:
        raise GradientError("say which inputs to differentiate by (--wrt NAME,...): the program "
                            "declares no fixed-point .input")
    return names


@dataclass(frozen=True)
class PassCount:
    """Instructions executed and cycles spent by one pass."""

    steps: int
    cycles: int


@dataclass
class GradientResult:
    """Loss, gradient (name -> exact fixed-point value) and the cost of both passes."""

    width: int
    loss_name: str
    loss: Fraction
    gradient: dict[str, Fraction]
    forward: PassCount
    backward: PassCount
    machine: Machine = field(repr=False)


@dataclass
class HessianResult:
    """Loss, gradient and Hessian (``hessian[i][j]`` = d2 loss / d wrt_i d wrt_j)."""

    width: int
    loss_name: str
    loss: Fraction
    wrt: list[str]
    gradient: dict[str, Fraction]
    hessian: dict[str, dict[str, Fraction]]
    forward: PassCount
    backward: PassCount
    passes: int


Prepare = Callable[[Machine], None]


def _load(machine: Machine, image: Image, inputs: dict[str, object] | None,
          prepare: Prepare | None) -> None:
    """Declared defaults, then ``inputs`` (names or ``$n`` -> value), then ``prepare``."""
    for declared in image.names.values():
        if declared.default is not None:
            Place(declared.name, declared.register, declared.address).write(
                machine.registers, machine.memory, declared.default & machine.fmt.mask)
    for name, value in (inputs or {}).items():
        place = resolve(image, name)
        if name.startswith("$"):  # a register: integers are raw words, others reals
            word = value if isinstance(value, int) else machine.fmt.from_real(value)
        else:  # a declared name, read as its declaration says (as Machine.set does)
            word = machine.fmt.from_real(value) if place.fixed else int(value)
        place.write(machine.registers, machine.memory, word & machine.fmt.mask)
    if prepare is not None:
        prepare(machine)


def _run(machine: Machine, direction: int, name: str) -> PassCount:
    """One pass; the backward pass starts at the FINISH where the forward pass halted
    (a program may have several), not at the image's first one."""
    try:
        if direction > 0:
            machine.run(1)
        else:
            machine.br, machine.direction, machine.steps, machine.cycles = 0, -1, 0, 0
            machine.halted = False
            machine.resume()
    except MachineFault as fault:
        fault.run_pass = name
        raise
    return PassCount(machine.steps, machine.cycles)


def _places(image: Image, loss: str | None, wrt: Iterable[str] | None) -> tuple[Place, list[Place]]:
    loss_place = resolve(image, loss if loss is not None else default_loss(image))
    names = list(wrt) if wrt is not None else default_wrt(image)
    if not names:
        raise GradientError("--wrt names no value")
    return loss_place, [resolve(image, name) for name in names]


def gradient(image: Image, *, loss: str | None = None, wrt: Iterable[str] | None = None,
             inputs: dict[str, object] | None = None, prepare: Prepare | None = None,
             max_steps: int | None = None,
             memory_words: int = DEFAULT_MEMORY_WORDS) -> GradientResult:
    """d loss / d wrt by the host protocol: forward, seed grad[loss] = 1, backward.

    ``loss`` defaults to the declared ``.loss``, ``wrt`` to the declared
    fixed-point inputs.  The returned machine is back at START, its values
    restored and its gradient bank holding d loss / d every word.
    """
    loss_place, places = _places(image, loss, wrt)
    machine = Machine(image, max_steps=max_steps, memory_words=memory_words)
    _load(machine, image, inputs, prepare)
    forward = _run(machine, 1, "forward")
    loss_word = loss_place.read(machine.registers, machine.memory)
    machine.gradient = True
    loss_place.write(machine.gradients, machine.memory_gradients, machine.fmt.one)
    backward = _run(machine, -1, "backward (gradient)")
    fmt = machine.fmt
    grads = {p.name: fmt.to_fraction(p.read(machine.gradients, machine.memory_gradients))
             for p in places}
    return GradientResult(image.width, loss_place.name, _value(fmt, loss_word, loss_place),
                          grads, forward, backward, machine)


def hessian(image: Image, *, loss: str | None = None, wrt: Iterable[str] | None = None,
            inputs: dict[str, object] | None = None, prepare: Prepare | None = None,
            max_steps: int | None = None,
            memory_words: int = DEFAULT_MEMORY_WORDS) -> HessianResult:
    """The Hessian of the loss in the ``wrt`` values, one forward-over-reverse pass per column.

    Column j: tangent bank on with T[wrt_j] = 1, forward pass (values and
    tangents), grad[loss] = 1, gradient switch on, backward pass; then
    TG[wrt_i] = d2 loss / d wrt_i d wrt_j.  Not symmetrized: the two
    triangles agree up to the rounding of the fixed-point rules.
    """
    loss_place, places = _places(image, loss, wrt)
    names = [p.name for p in places]
    matrix: dict[str, dict[str, Fraction]] = {name: {} for name in names}
    grads: dict[str, Fraction] = {}
    loss_value = Fraction(0)
    forward = backward = PassCount(0, 0)
    for column in places:
        machine = Machine(image, max_steps=max_steps, memory_words=memory_words, tangent=True)
        fmt = machine.fmt
        _load(machine, image, inputs, prepare)
        column.write(machine.tangents, machine.memory_tangents, fmt.one)
        forward = _run(machine, 1, f"forward (tangent d/d{column.name})")
        loss_value = _value(fmt, loss_place.read(machine.registers, machine.memory), loss_place)
        machine.gradient = True
        loss_place.write(machine.gradients, machine.memory_gradients, fmt.one)
        backward = _run(machine, -1, f"backward (gradient, tangent d/d{column.name})")
        for row in places:
            matrix[row.name][column.name] = fmt.to_fraction(
                row.read(machine.gradient_tangents, machine.memory_gradient_tangents))
            grads[row.name] = fmt.to_fraction(row.read(machine.gradients, machine.memory_gradients))
    return HessianResult(image.width, loss_place.name, loss_value, names, grads, matrix, forward,
                         backward, 2 * len(places))


def _value(fmt, word: int, place: Place) -> Fraction:
    return fmt.to_fraction(word) if place.fixed else Fraction(fmt.signed(word))
