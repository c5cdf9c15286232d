"""Building a report of one program run (value mode: forward, then backward).

The reversible protocol a report describes: load the inputs, run forward from
START to FINISH, copy the results out, run backward from FINISH to START (which
restores the initial state).  Both runs are observed through the trace callback of
an engine that traces (``revasm.sim.engines``: the reference); the report is one
JSON-ready dict whose schema is in ``schema.py`` and docs/energy.md.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.machine import MachineFault, fault_json
from revasm.sim.engine import Lanes, overflow_counts, read_place, write_place
from revasm.sim.engines import choose
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

from .by_line import LineMap, by_line
from .counting import RunCounter
from .energy_models import EnergyModel, evaluate
from .erasure import changed_words, erasure_report

if TYPE_CHECKING:
    from revasm.sim.host import Place

SCHEMA_ID = "revasm-report/1"
OUTPUT_ROLES = ("output", "loss")


def _named(machine: Lanes, image: Image, roles: tuple[str, ...]) -> dict:
    from revasm.sim.host import named_values
    return named_values(machine, roles=roles)


def _state(machine: Lanes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    snapshot = machine.snapshot(0)
    return snapshot.registers, snapshot.memory


def _observe(machine: Lanes, direction: int, mode: str, counters: list[RunCounter] | None = None
             ) -> tuple[dict, MachineFault | None]:
    """Run in ``direction`` and count it; with ``counters``, counted per PC and kept there."""
    counter = RunCounter(machine, direction=direction, mode=mode, by_pc=counters is not None)
    if counters is not None:
        counters.append(counter)
    if direction > 0:
        machine.run(1, trace=counter)  # type: ignore[call-arg]
    else:
        # Back from the FINISH the forward run halted on (a program may have several).
        machine.run_back(trace=counter)  # type: ignore[call-arg]
    fault = machine.fault(0)
    counts = counter.finish().to_dict()
    counts["machine_steps"] = int(machine.steps[0])
    counts["machine_cycles"] = int(machine.cycles[0])
    # OV at the end of the run: the forward run's overflow events (backward takes them back)
    counts["overflows"] = int(overflow_counts(machine)[0])
    counts["status"] = "fault" if fault else "finished"
    return counts, fault


def totals(runs: list[dict]) -> dict:
    """Sums over runs of every additive count."""
    by_instruction: Counter = Counter()
    by_class: Counter = Counter()
    traffic: Counter = Counter()
    for run in runs:
        by_instruction.update(run["by_instruction"])
        by_class.update(run["by_class"])
        traffic.update(run["traffic"])
    return {"steps": sum(r["steps"] for r in runs), "cycles": sum(r["cycles"] for r in runs),
            "by_instruction": dict(sorted(by_instruction.items())),
            "by_class": dict(sorted(by_class.items())), "traffic": dict(traffic)}


def gradient_mode_available() -> bool:
    """Whether the tracing engine has gradient mode (the host protocol of ``sim/host.py``)."""
    try:
        from revasm.sim import host  # noqa: F401
    except ImportError:
        return False
    return True


class ReportError(ValueError):
    """A request the report cannot serve (no loss declared, unknown name, ...)."""


def _gradient_places(image: Image, loss: str | None, wrt: list[str] | None
                     ) -> tuple[Place, list[Place]]:
    from revasm.sim.host import GradientError, default_wrt, loss_place, resolve
    try:
        place = loss_place(image, loss)
        names = list(wrt) if wrt else default_wrt(image)
        return place, [resolve(image, name) for name in names]
    except GradientError as exc:
        raise ReportError(str(exc)) from None


def build_report(image: Image, *, prepare: Callable[[Lanes], None],
                 models: list[EnergyModel], all_models: dict[str, EnergyModel],
                 grad: bool = False, loss: str | None = None, wrt: list[str] | None = None,
                 max_steps: int | None = None, file: str | None = None,
                 memory_words: int = DEFAULT_MEMORY_WORDS, engine: str = "auto",
                 line_map: LineMap | None = None) -> dict:
    """Run ``image`` forward then backward (after ``prepare`` loads inputs) and report.

    Value mode: forward, copy the results out, backward.  Gradient mode
    (``grad``): forward, copy the loss out, seed grad[loss] = 1, switch the
    gradient bank on, backward (docs/gradient.md, "The host protocol"), copy the
    gradients of ``wrt`` out.  ``models`` are evaluated in order; ``all_models`` resolves an
    adiabatic model's ``base_model``.  A fault stops the protocol there; the
    report then has ``status: "fault"`` and the counts up to the fault.  With
    ``line_map`` the report also has ``by_line``: the counts of each source line
    (``by_line.py``).
    """
    if grad and not gradient_mode_available():
        raise ReportError("gradient mode is not available: the reference simulator has no "
                          "gradient switch in this build")
    places = _gradient_places(image, loss, wrt) if grad else None
    fmt = word_format(image.width)
    machine = choose(engine, trace=True).load(image, 1, max_steps=max_steps,
                                              memory_words=memory_words)
    prepare(machine)
    initial = _state(machine)
    inputs = _named(machine, image, ("input",))
    emitted_before = len(machine.snapshot(0).emitted)
    runs: list[dict] = []
    counters: list[RunCounter] | None = [] if line_map is not None else None
    forward, fault = _observe(machine, 1, "value", counters)
    runs.append(forward)
    outputs = _named(machine, image, OUTPUT_ROLES)
    result_words = {("r", d.register) if d.register is not None else ("m", d.address)
                    for d in image.names.values() if d.role in OUTPUT_ROLES}
    changed_at_finish = changed_words(initial, _state(machine))
    emitted = len(machine.snapshot(0).emitted) - emitted_before
    restored = None
    gradient: dict[str, float] = {}
    if fault is None:
        if places is not None:
            loss_place, wrt_places = places
            machine.gradient = True
            write_place(machine, loss_place.register, loss_place.address, fmt.one, "G")
        backward, fault = _observe(machine, -1, "gradient" if grad else "value", counters)
        runs.append(backward)
        if fault is None:
            restored = (_state(machine) == initial
                        and len(machine.snapshot(0).emitted) == emitted_before)
            if places is not None:
                gradient = {p.name: fmt.to_real(int(read_place(machine, p.register, p.address,
                                                               "G")[0]))
                            for p in wrt_places}
    fault_words = len(changed_words(initial, _state(machine))) if fault else 0
    # Without declared outputs, whatever the forward run changed is its result.
    results = result_words or changed_at_finish
    erasure = erasure_report(width=image.width, forward=forward, results_words=len(results),
                             gradient_words=len(places[1]) if places else 0,
                             emitted_words=emitted,
                             garbage_words=len(changed_at_finish - results),
                             fault_words=fault_words)
    report = {
        "schema": SCHEMA_ID,
        "file": file or image.source_file,
        "width": image.width,
        "mode": "gradient" if grad else "value",
        "status": "fault" if fault else "finished",
        "restored": restored,
        "inputs": inputs,
        "outputs": outputs,
        "runs": runs,
        "totals": totals(runs),
        "erasure": erasure,
        "energy": [evaluate(model, runs, image.width, erasure, all_models) for model in models],
    }
    if grad:
        report["gradient"] = gradient
    if line_map is not None and counters is not None:
        report["by_line"] = by_line(counters, line_map, image.width, models, all_models)
    if fault is not None:
        report["fault"] = fault_json(fault)
    return report


def build_value_report(image: Image, **options: Any) -> dict:
    """:func:`build_report` in value mode (forward, copy out, backward)."""
    return build_report(image, grad=False, **options)
