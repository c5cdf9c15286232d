"""The host's side of the machine, over any engine: inputs in, passes, gradients out.

The host protocol of gradient mode (docs/gradient.md)::

    inputs in -> forward to FINISH -> loss out -> grad[loss] = 1
      -> gradient switch on -> backward to START -> gradients out

:func:`gradient` runs it on one lane; :func:`hessian` once per direction ``e_j`` with the
tangent bank on (T[wrt_j] = 1 before the forward pass), so that the gradient tangents TG
hold the column H e_j after the backward pass (forward-over-reverse); :func:`batch_gradient`
runs it on every lane of a loaded batch at once.  Everything is fixed-point arithmetic on
the machine (``isa/adjoint.py``); results are read out as exact fractions of the format.
A fault in either pass of a scalar protocol is raised with ``fault.run_pass`` naming the
pass.  Every function here works on any engine of ``revasm.sim.engines``: they speak only
the :class:`~revasm.sim.engine.Lanes` interface.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from revasm.assembler.image import Image, UnknownName
from revasm.isa.fixed_point import WordFormat, word_format
from revasm.machine.values import WORD, kind_of, word_of

from .engine import Lanes, overflow_counts, read_place, write_place
from .engines import load
from .reference.machine import DEFAULT_MEMORY_WORDS


class GradientError(ValueError):
    """A request the protocol cannot serve (unknown name, no loss declared, ...)."""


@dataclass(frozen=True)
class Place:
    """Where a name lives: a register or a memory word."""

    name: str
    register: int | None = None
    address: int | None = None
    fixed: bool = True

    def read(self, machine: Lanes, bank: str = "") -> Any:
        """Every lane's word here, of the values (``bank=""``) or of ``G``/``T``/``TG``."""
        return read_place(machine, self.register, self.address, bank)

    def write(self, machine: Lanes, values: Any, bank: str = "") -> None:
        """Store words (one for all lanes or one per lane) here."""
        write_place(machine, self.register, self.address, values, bank)


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
    """The one name declared with ``.loss``: the loss of every gradient-mode run (the
    engines' protocol, the debugger, reports, the RTL's lockstep) that names none."""
    losses = [d.name for d in image.names.values() if d.role == "loss"]
    if len(losses) != 1:
        found = "no .loss" if not losses else "several: " + ", ".join(losses)
        raise GradientError(f"gradient mode needs a loss: say which value it is (--loss "
                            f"NAME); the program declares {found}")
    return losses[0]


def loss_place(image: Image, loss: str | None = None) -> Place:
    """Where the loss lives: ``loss`` (``$n`` or a declared name), else the declared one
    (:func:`default_loss`); raises :class:`GradientError`."""
    return resolve(image, loss if loss is not None else default_loss(image))


def default_wrt(image: Image) -> list[str]:
    """The declared fixed-point inputs, in declaration order."""
    names = [d.name for d in image.names.values() if d.role == "input" and d.fixed]
    if not names:
        raise GradientError("say which inputs to differentiate by (--wrt NAME,...): the program "
                            "declares no fixed-point .input")
    return names


@dataclass(frozen=True)
class PassCount:
    """Instructions executed and cycles spent by one pass, and the overflow counter OV at
    its end (the forward pass's overflow events; the backward pass takes them back)."""

    steps: int
    cycles: int
    overflows: int = 0


@dataclass
class GradientResult:
    """Loss, gradient (name -> exact fixed-point value) and the cost of both passes.

    ``machine`` is the loaded engine after both passes (back at START, values restored,
    the gradient bank holding d loss / d every word)."""

    width: int
    loss_name: str
    loss: Fraction
    gradient: dict[str, Fraction]
    forward: PassCount
    backward: PassCount
    machine: Lanes = field(repr=False)

    @property
    def overflows(self) -> int:
        """Overflow events of the forward pass (``isa/table.py``: OV)."""
        return self.forward.overflows


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

    @property
    def overflows(self) -> int:
        """Overflow events of a forward pass (every column's pass computes the same values)."""
        return self.forward.overflows


Prepare = Callable[[Lanes], None]


def load_inputs(machine: Lanes, image: Image, inputs: dict[str, object] | None = None,
                prepare: Prepare | None = None) -> None:
    """Declared defaults, then ``inputs`` (names or ``$n`` -> value), then ``prepare``."""
    fmt = word_format(image.width)
    for declared in image.names.values():
        if declared.default is not None:
            Place(declared.name, declared.register, declared.address).write(
                machine, declared.default & fmt.mask)
    for name, value in (inputs or {}).items():
        place = resolve(image, name)
        # the one rule (machine/values.py): a register a raw word, a name as declared
        kind = WORD if name.startswith("$") else kind_of(place.fixed)
        place.write(machine, word_of(value, fmt, kind, name))
    if prepare is not None:
        prepare(machine)


def signed(words: np.ndarray, fmt: WordFormat) -> np.ndarray:
    """Lane words (uint64) as the signed integers they hold (int64)."""
    s = words.astype(np.int64)
    return s if fmt.width == 64 else s - ((s & (1 << 31)) << 1)


def to_reals(words: np.ndarray, fmt: WordFormat) -> np.ndarray:
    """Lane words as the fixed-point reals they hold (float64; exact for W = 32, the
    nearest double for W = 64): how results are read out of the lanes."""
    return signed(words, fmt).astype(np.float64) / float(1 << fmt.frac_bits)


def named_columns(machine: Lanes, *, roles: Collection[str] | None = None,
                  keep: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """Every declared name's value on every lane, as the user reads it: reals (float64)
    for a fixed-point name, signed integers (int64) otherwise -- the one reading of names
    that runs, batches and reports share.  ``roles``: only names declared with one of
    these roles (``input``, ``output``, ``loss``, ...); ``keep``: only these names."""
    image = machine.image
    fmt = word_format(image.width)
    columns: dict[str, np.ndarray] = {}
    for name, declared in image.names.items():
        if (roles is not None and declared.role not in roles) or \
                (keep is not None and name not in keep):
            continue
        words = np.asarray(read_place(machine, declared.register, declared.address))
        columns[name] = to_reals(words, fmt) if declared.fixed else signed(words, fmt)
    return columns


def named_values(machine: Lanes, lane: int = 0, *,
                 roles: Collection[str] | None = None) -> dict[str, float | int]:
    """The declared names' values on one lane (:func:`named_columns`), as Python numbers."""
    return {name: column[lane].item()
            for name, column in named_columns(machine, roles=roles).items()}


def initial_words(image: Image, inputs: dict[str, object] | None = None,
                  prepare: Prepare | None = None, *, memory_words: int = DEFAULT_MEMORY_WORDS
                  ) -> tuple[dict[int, int], dict[int, int]]:
    """The registers and non-zero memory words a run starts from: the image, the declared
    defaults, ``inputs`` and ``prepare`` (for jobs handed to the RTL co-simulation)."""
    staging = load(image, 1, engine_name="reference", memory_words=memory_words)
    load_inputs(staging, image, inputs, prepare)
    snapshot = staging.snapshot(0)
    return (dict(enumerate(snapshot.registers)),
            {address: word for address, word in snapshot.words() if word})


def run_pass(machine: Lanes, direction: int, name: str) -> PassCount:
    """One pass of a one-lane protocol; a fault is raised with ``run_pass`` = ``name``.

    The backward pass starts at the FINISH where the forward pass halted (a program may
    have several), not at the image's first one."""
    if direction > 0:
        machine.run(1)
    else:
        machine.run_back()
    fault = machine.fault(0)
    if fault is not None:
        fault.run_pass = name
        raise fault
    return PassCount(int(machine.steps[0]), int(machine.cycles[0]),
                     int(overflow_counts(machine)[0]))


def _places(image: Image, loss: str | None, wrt: Iterable[str] | None) -> tuple[Place, list[Place]]:
    place = loss_place(image, loss)
    names = list(wrt) if wrt is not None else default_wrt(image)
    if not names:
        raise GradientError("--wrt names no value")
    return place, [resolve(image, name) for name in names]


def gradient(image: Image, *, loss: str | None = None, wrt: Iterable[str] | None = None,
             inputs: dict[str, object] | None = None, prepare: Prepare | None = None,
             max_steps: int | None = None, memory_words: int = DEFAULT_MEMORY_WORDS,
             engine: str = "auto", strict: bool = False) -> GradientResult:
    """d loss / d wrt by the host protocol: forward, seed grad[loss] = 1, backward.

    ``loss`` defaults to the declared ``.loss``, ``wrt`` to the declared fixed-point
    inputs; ``engine`` names the engine (``revasm.sim.engines``); ``strict``: an overflow
    event faults (else the result counts them: ``overflows``).
    """
    loss_at, places = _places(image, loss, wrt)
    machine = load(image, 1, engine_name=engine, max_steps=max_steps, memory_words=memory_words)
    machine.strict = strict
    load_inputs(machine, image, inputs, prepare)
    fmt = word_format(image.width)
    forward = run_pass(machine, 1, "forward")
    loss_word = int(loss_at.read(machine)[0])
    machine.gradient = True
    loss_at.write(machine, fmt.one, "G")
    backward = run_pass(machine, -1, "backward (gradient)")
    grads = {p.name: fmt.to_fraction(int(p.read(machine, "G")[0])) for p in places}
    return GradientResult(image.width, loss_at.name, _value(fmt, loss_word, loss_at),
                          grads, forward, backward, machine)


def hessian(image: Image, *, loss: str | None = None, wrt: Iterable[str] | None = None,
            inputs: dict[str, object] | None = None, prepare: Prepare | None = None,
            max_steps: int | None = None, memory_words: int = DEFAULT_MEMORY_WORDS,
            engine: str = "auto", strict: bool = False) -> HessianResult:
    """The Hessian of the loss in the ``wrt`` values, one forward-over-reverse pass per column.

    Column j: tangent bank on with T[wrt_j] = 1, forward pass (values and
    tangents), grad[loss] = 1, gradient switch on, backward pass; then
    TG[wrt_i] = d2 loss / d wrt_i d wrt_j.  Not symmetrized: the two
    triangles agree up to the rounding of the fixed-point rules.
    """
    loss_at, places = _places(image, loss, wrt)
    names = [p.name for p in places]
    fmt = word_format(image.width)
    matrix: dict[str, dict[str, Fraction]] = {name: {} for name in names}
    grads: dict[str, Fraction] = {}
    loss_value = Fraction(0)
    forward = backward = PassCount(0, 0)
    for column in places:
        machine = load(image, 1, engine_name=engine, max_steps=max_steps,
                       memory_words=memory_words)
        machine.tangent = True
        machine.strict = strict
        load_inputs(machine, image, inputs, prepare)
        column.write(machine, fmt.one, "T")
        forward = run_pass(machine, 1, f"forward (tangent d/d{column.name})")
        loss_value = _value(fmt, int(loss_at.read(machine)[0]), loss_at)
        machine.gradient = True
        loss_at.write(machine, fmt.one, "G")
        backward = run_pass(machine, -1, f"backward (gradient, tangent d/d{column.name})")
        for row in places:
            matrix[row.name][column.name] = fmt.to_fraction(int(row.read(machine, "TG")[0]))
            grads[row.name] = fmt.to_fraction(int(row.read(machine, "G")[0]))
    return HessianResult(image.width, loss_at.name, loss_value, names, grads, matrix, forward,
                         backward, 2 * len(places))


@dataclass
class BatchGradient:
    """Loss and gradient words per lane (``uint64`` arrays) and the machine after both passes.

    A lane that faulted in either pass keeps its fault (``machine.fault(lane)``) and its
    gradient words are not meaningful (``ok`` is False there)."""

    loss_name: str
    loss: Any
    gradient: dict[str, Any]
    ok: Any
    forward_steps: Any
    backward_steps: Any
    machine: Lanes


def batch_gradient(machine: Lanes, *, loss: str | None = None,
                   wrt: Iterable[str] | None = None, progress: Any = None,
                   after_forward: Any = None) -> BatchGradient:
    """Run the protocol on every lane of a loaded machine (inputs already stored).

    Each lane's loss and gradient words equal those of :func:`gradient` for its inputs.
    ``after_forward(machine)`` is called between the passes (to read values before the
    backward pass uncomputes them)."""
    image: Image = machine.image
    loss_at, places = _places(image, loss, wrt)
    machine.run(1, progress=progress)
    if after_forward is not None:
        after_forward(machine)
    forward_steps = machine.steps.copy()
    loss_words = loss_at.read(machine)
    ok = machine.halted
    machine.gradient = True
    loss_at.write(machine, word_format(image.width).one, "G")
    machine.run_back(progress=progress)
    ok = ok & machine.halted
    grads = {p.name: p.read(machine, "G") for p in places}
    return BatchGradient(loss_at.name, loss_words, grads, ok, forward_steps,
                         machine.steps.copy(), machine)


def _value(fmt: WordFormat, word: int, place: Place) -> Fraction:
    return fmt.to_fraction(word) if place.fixed else Fraction(fmt.signed(word))
