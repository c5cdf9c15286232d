"""One program over many inputs: what ``revasm batch`` does, as a Python call.

Every row of the inputs is a lane; each lane gives exactly what :func:`revasm.run` (with
``grad=True``, :func:`revasm.grad`) gives for that row, on any engine.  A lane that faults
stops alone; the others finish.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.batch_io import resolve_column, signed, to_reals, to_words
from revasm.sim.engine import Lanes, read_place, write_place
from revasm.sim.engines import choose
from revasm.sim.host import batch_gradient

#: At most this many lanes' faults are described in full (every lane has its kind).
FAULTS_DESCRIBED = 1000


@dataclass
class BatchResult:
    """Per-lane columns: ``status`` ("finished"/"fault"), ``fault_kind`` ("" if none),
    ``steps``, ``cycles``, ``named`` (declared name -> reals or signed integers),
    ``registers`` ($i -> signed integers); with ``grad``: ``loss_name``, ``loss``,
    ``gradient`` (name -> reals), ``forward_steps``.  ``faults`` describes the first
    :data:`FAULTS_DESCRIBED` faulted lanes (lane, kind, pc, line, message)."""

    lanes: int
    status: np.ndarray
    fault_kind: np.ndarray
    faults: list[dict]
    steps: np.ndarray
    cycles: np.ndarray
    named: dict[str, np.ndarray]
    registers: dict[str, np.ndarray]
    loss_name: str | None = None
    loss: np.ndarray | None = None
    gradient: dict[str, np.ndarray] = field(default_factory=dict)
    forward_steps: np.ndarray | None = None
    machine: Lanes | None = field(default=None, repr=False)

    @property
    def faulted(self) -> int:
        return int(np.sum(self.status == "fault"))

    def columns(self) -> dict[str, np.ndarray]:
        """Every result column by its output name (``x``, ``$3``, ``loss``, ``grad_x``, ...)."""
        out = {"status": self.status, "fault_kind": self.fault_kind, "steps": self.steps,
               "cycles": self.cycles, **self.named, **self.registers}
        if self.loss is not None:
            out["loss"] = self.loss
            out["forward_steps"] = self.forward_steps  # type: ignore[assignment]
            out.update({f"grad_{k}": v for k, v in self.gradient.items()})
        return out

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "lanes": self.lanes, "status": self.status.tolist(),
            "fault_kind": self.fault_kind.tolist(), "faults": self.faults,
            "steps": self.steps.tolist(), "cycles": self.cycles.tolist(),
            "named": {k: v.tolist() for k, v in self.named.items()},
            "registers": {k: v.tolist() for k, v in self.registers.items()}}
        if self.loss is not None:
            out["loss_name"] = self.loss_name
            out["loss"] = self.loss.tolist()
            out["gradient"] = {k: v.tolist() for k, v in self.gradient.items()}
            out["forward_steps"] = self.forward_steps.tolist()  # type: ignore[union-attr]
        return out


def batch(image: Image, inputs: Mapping[str, Any], *, grad: bool = False,
          loss: str | None = None, wrt: Iterable[str] | None = None, engine: str = "auto",
          max_steps: int | None = None,
          progress: Callable[[int], object] | None = None) -> BatchResult:
    """Run ``image`` once per row of ``inputs`` (name -> one value per lane), all at once.

    Float columns are fixed-point reals, integer columns raw words (``revasm batch``'s
    rule); names are registers (``$3``) or declared names.  Raises
    :class:`~revasm.sim.batch_io.BatchInputError` for unusable columns and
    :class:`~revasm.sim.host.GradientError` for an unusable loss/wrt.
    """
    fmt = WordFormat(image.width)
    places = {name: resolve_column(name, image) for name in inputs}
    words = {name: to_words(np.asarray(values), fmt) for name, values in inputs.items()}
    lengths = {len(column) for column in words.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError("every input column needs the same, non-zero number of lanes")
    (lanes,) = lengths
    machine = choose(engine, lanes=lanes).load(image, lanes, max_steps=max_steps)
    for declared in image.names.values():
        if declared.default is not None:
            write_place(machine, declared.register, declared.address, declared.default)
    for name, place in places.items():
        write_place(machine, place.register, place.address, words[name])
    if not grad:
        machine.run(1, progress=progress)
        return _results(machine, fmt)
    forward: list[BatchResult] = []
    grads = batch_gradient(machine, loss=loss, wrt=wrt, progress=progress,
                           after_forward=lambda m: forward.append(_results(m, fmt)))
    result = _results(machine, fmt)
    # Values as the forward pass left them (the backward pass uncomputes them);
    # status, faults, steps and cycles cover both passes.
    result.named, result.registers = forward[0].named, forward[0].registers
    result.loss_name = grads.loss_name
    result.loss = to_reals(grads.loss, fmt)
    result.gradient = {name: to_reals(g, fmt) for name, g in grads.gradient.items()}
    result.forward_steps = grads.forward_steps
    return result


def _results(machine: Lanes, fmt: WordFormat) -> BatchResult:
    image = machine.image
    kinds = [""] * machine.lanes
    faults: list[dict[str, Any]] = []
    for lane in np.nonzero(machine.faulted)[0].tolist():
        fault = machine.fault(lane)
        assert fault is not None
        kinds[lane] = fault.kind
        if len(faults) < FAULTS_DESCRIBED:
            location = image.location(fault.pc) if fault.pc is not None else None
            faults.append({"lane": lane, "kind": fault.kind, "pc": fault.pc,
                           "line": location.line if location else None,
                           "message": fault.message})
    named = {}
    for name, declared in image.names.items():
        column = read_place(machine, declared.register, declared.address)
        named[name] = to_reals(column, fmt) if declared.fixed else signed(column, fmt)
    return BatchResult(
        lanes=machine.lanes, status=np.where(machine.faulted, "fault", "finished"),
        fault_kind=np.array(kinds), faults=faults, steps=np.asarray(machine.steps),
        cycles=np.asarray(machine.cycles), named=named,
        registers={f"${i}": signed(read_place(machine, i, None), fmt) for i in range(32)},
        machine=machine)
