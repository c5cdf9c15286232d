"""Running a program image and checking that it runs backward: what ``revasm run`` and
``revasm check`` do, as Python calls on any engine.

Inputs are a mapping of names (``$5`` or a declared name) to values -- reals for fixed-point
names, integers otherwise, as the host protocol reads them (``revasm.sim.host``) -- or a
``prepare(machine)`` callback that writes words itself.
"""
from __future__ import annotations

import random as random_module
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.machine import MachineFault, Snapshot, TraceRecord, fault_json
from revasm.sim.engine import Lanes, overflow_counts, read_place, write_place
from revasm.sim.engines import choose
from revasm.sim.host import Prepare, load_inputs, named_values


@dataclass
class RunResult:
    """One lane's run: how it ended, its counts and its state as the user reads it.

    ``registers`` holds every register (``$0`` .. ``$31``) as a signed integer, ``memory``
    the non-zero data words (address -> signed integer), ``output`` what SHOW/EMIT
    displayed, ``named`` the declared names (reals for fixed-point names), ``fault`` the
    machine fault that stopped the run, if any."""

    status: str
    steps: int
    cycles: int
    registers: dict[str, int]
    memory: dict[str, int]
    output: list[int]
    #: a Janus program's arrays and stacks as (nested) lists
    named: dict[str, Any]
    fault: MachineFault | None = None
    machine: Lanes | None = field(default=None, repr=False)
    #: the overflow counter OV after the run: overflow events (``isa/table.py``)
    overflows: int = 0

    def to_json(self) -> dict:
        """The ``revasm run --json`` object."""
        out: dict[str, Any] = {"status": self.status, "steps": self.steps,
                               "cycles": self.cycles, "overflows": self.overflows,
                               "registers": self.registers, "memory": self.memory,
                               "output": self.output, "named": self.named}
        if self.fault is not None:
            out["fault"] = fault_json(self.fault)
        return out


def lane_result(machine: Lanes, lane: int = 0) -> RunResult:
    """What one lane of a loaded engine holds after a run."""
    image = machine.image
    fmt = word_format(image.width)
    snapshot = machine.snapshot(lane)
    named = named_values(machine, lane)
    fault = machine.fault(lane)
    return RunResult(
        status="fault" if fault else "finished", steps=int(machine.steps[lane]),
        cycles=int(machine.cycles[lane]),
        registers={f"${i}": fmt.signed(word) for i, word in enumerate(snapshot.registers)},
        memory={str(address): fmt.signed(word) for address, word in snapshot.words()
                if word and not (address < len(image) and image.is_code[address])},
        output=[fmt.signed(word) for word in machine.output(lane)], named=named, fault=fault,
        machine=machine, overflows=snapshot.overflows)


def _is_janus(image: Image) -> bool:
    """Whether ``image`` was compiled from Janus (its entry's source is a .ja file)."""
    where = image.locations.get(image.entry)
    return where is not None and where.origin is not None and where.origin.file.endswith(".ja")


def run(image: Image, inputs: dict[str, object] | None = None, *,
        prepare: Prepare | None = None, reverse: bool = False, engine: str = "auto",
        max_steps: int | None = None,
        trace: Callable[[TraceRecord], object] | None = None,
        strict: bool = False,
        on_output: Callable[[list[int]], object] | None = None) -> RunResult:
    """Run ``image`` forward from START (``reverse``: backward from FINISH) on one lane.

    The declared defaults are loaded first, then ``inputs``, then ``prepare``.  A program
    compiled from Janus takes its arrays and stacks as lists in ``inputs`` and gives them
    as lists in ``named``, as `revasm run` does.  A machine
    fault does not raise: the result has ``status == "fault"`` and the fault.  ``trace``
    (an engine that traces: the reference) is called after every instruction;
    ``on_output(words)`` with the SHOW/EMIT words (signed, as ``output``) as the run shows
    them, within ``revasm.sim.engine.LIVE_OUTPUT_SECONDS`` on every engine, the last ones
    before this returns.  The result counts the run's overflow events (``overflows``);
    ``strict`` makes the first a fault.
    """
    machine = choose(engine, trace=trace is not None).load(image, 1, max_steps=max_steps)
    machine.strict = strict
    janus = _is_janus(image)
    if janus and inputs and any(isinstance(v, (list, tuple)) for v in inputs.values()):
        # a Janus array or stack given as a list, as `named` shows it
        from revasm.compiler.frontend.janus.store import janus_words
        inputs = janus_words(inputs, image.names)
    load_inputs(machine, image, inputs, prepare)
    direction = -1 if reverse else 1
    listener = None
    if on_output is not None:
        signed = word_format(image.width).signed

        def listener(_lane: int, words: list[int]) -> None:
            on_output([signed(word) for word in words])
    if trace is not None:
        machine.run(direction, trace=trace, on_output=listener)  # type: ignore[call-arg]
    else:
        machine.run(direction, on_output=listener)
    result = lane_result(machine)
    if janus:
        # a Janus program: main's variables by their Janus names (arrays and stacks as
        # lists), as `revasm run` shows them (imported here: the compiler is not needed
        # to run PAL)
        from revasm.compiler.frontend.janus.store import janus_store
        result.named = janus_store(result.named)
    return result


@dataclass
class RoundTrip:
    """One initial state of :func:`check`: ``restored``, ``not restored`` or ``fault``."""

    state: int
    status: str
    detail: str
    fault: MachineFault | None = None
    #: overflow events of the forward run (``isa/table.py``: OV)
    overflows: int = 0

    def to_json(self) -> dict:
        out: dict[str, Any] = {"state": self.state, "status": self.status,
                               "detail": self.detail, "overflows": self.overflows}
        if self.fault is not None:
            out["fault"] = fault_json(self.fault)
        return out


@dataclass
class CheckResult:
    """Every initial state :func:`check` tried and whether forward then backward restored it."""

    states: list[RoundTrip]

    @property
    def restored(self) -> int:
        return sum(state.status == "restored" for state in self.states)

    @property
    def failures(self) -> list[RoundTrip]:
        return [state for state in self.states if state.status != "restored"]

    @property
    def overflows(self) -> int:
        """Overflow events of every state's forward run, together."""
        return sum(state.overflows for state in self.states)


def check(image: Image, inputs: dict[str, object] | None = None, *,
          prepare: Prepare | None = None, random: int = 0, seed: int = 0,
          int_range: tuple[int, int] = (1, 24), real_range: tuple[float, float] = (-2.0, 2.0),
          engine: str = "auto", max_steps: int | None = None,
          strict: bool = False) -> CheckResult:
    """Run forward to FINISH, then backward to START, and compare every register, memory
    word, BR, DIR, the EMIT tape and the overflow counter with the initial state (each
    state's forward overflow events are in ``overflows``; ``strict``: the first faults).

    State 0 is the declared defaults plus ``inputs``/``prepare``; ``random`` more states draw
    the declared inputs uniformly: from the input's declared domain (``.input ... in
    LO..HI``, every word between the ends), else integers from ``int_range`` and reals from
    ``real_range``; all of them run as lanes of one engine.
    """
    fmt = word_format(image.width)
    declared_inputs = [d for d in image.names.values() if d.role == "input"]
    if random and not declared_inputs:
        raise ValueError("random states need inputs declared with .input (nothing to randomize)")
    machine = choose(engine, lanes=random + 1).load(image, random + 1, max_steps=max_steps)
    machine.strict = strict
    load_inputs(machine, image, inputs, prepare)
    rng = random_module.Random(seed)
    columns = [[int(read_place(machine, d.register, d.address)[0])] for d in declared_inputs]
    for _state in range(random):
        for declared, column in zip(declared_inputs, columns):
            if declared.domain is not None:  # ``in LO..HI``: words, both ends included
                column.append(rng.randint(*declared.domain) & fmt.mask)
            elif declared.fixed:
                column.append(fmt.from_real(round(rng.uniform(*real_range), 6)))
            else:
                column.append(rng.randint(*int_range) & fmt.mask)
    if random:
        for declared, column in zip(declared_inputs, columns):
            write_place(machine, declared.register, declared.address, column)
    return CheckResult(round_trips(machine))


def round_trips(machine: Lanes) -> list[RoundTrip]:
    """Forward from START, then backward from FINISH, on every lane; each lane's verdict."""
    image = machine.image
    before = [machine.snapshot(lane) for lane in range(machine.lanes)]
    machine.run(1)
    forward_steps = machine.steps.tolist()
    forward_overflows = overflow_counts(machine).tolist()
    forward_faults = [machine.fault(lane) for lane in range(machine.lanes)]
    if image.finish is not None:
        machine.run(-1)
    results = []
    for lane in range(machine.lanes):
        fault = forward_faults[lane] or machine.fault(lane)
        if fault is None and image.finish is None:
            fault = MachineFault("no-finish", "the program has no FINISH instruction to start "
                                              "a backward run from", br=0, direction=-1)
        events = int(forward_overflows[lane])
        if fault is not None:
            results.append(RoundTrip(lane, "fault", fault.message, fault, events))
            continue
        after = machine.snapshot(lane).turned()
        if after != before[lane]:
            results.append(RoundTrip(lane, "not restored", _difference(before[lane], after),
                                     overflows=events))
        else:
            results.append(RoundTrip(lane, "restored", f"{forward_steps[lane]} steps each way",
                                     overflows=events))
    return results


def _difference(before: Snapshot, after: Snapshot) -> str:
    return "; ".join(before.differences(after)[:6]) or "state differs"
