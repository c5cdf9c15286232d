"""A report over a batch: one program, many input sets (lanes).

Each lane is reported exactly as a single run (``build_report``, the
reference simulator through its trace callback); the batch report adds the
aggregates (sums over lanes) and the per-lane distribution (min, 5th
percentile, median, mean, 95th percentile, max) of steps, cycles, energy
under each model and bits erased in each scenario, and one line per lane.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy

from revasm.assembler.image import Image
from revasm.sim.engine import Lanes
from revasm.sim.engines import EngineError, load
from revasm.sim.reference import DEFAULT_MEMORY_WORDS

from .build import build_report
from .energy_models import EnergyModel

BATCH_SCHEMA_ID = "revasm-batch-report/1"
STATISTICS = ("min", "p05", "median", "mean", "p95", "max")


def distribution(values: Sequence[float]) -> dict[str, float]:
    """min, 5th percentile, median, mean, 95th percentile and max of ``values``."""
    data = numpy.asarray(values, dtype=float)
    if data.size == 0:
        return {name: 0.0 for name in STATISTICS}
    p05, median, p95 = numpy.percentile(data, [5, 50, 95])
    return {"min": float(data.min()), "p05": float(p05), "median": float(median),
            "mean": float(data.mean()), "p95": float(p95), "max": float(data.max())}


def lane_summary(lane: int, report: dict) -> dict:
    """The per-lane line of a batch report."""
    return {
        "lane": lane,
        "status": report["status"],
        "fault": report["fault"]["kind"] if "fault" in report else None,
        "steps": report["totals"]["steps"],
        "cycles": report["totals"]["cycles"],
        "forward_steps": report["runs"][0]["steps"],
        "forward_cycles": report["runs"][0]["cycles"],
        "inputs": report["inputs"],
        "outputs": report["outputs"],
        **({"gradient": report["gradient"]} if "gradient" in report else {}),
        "energy_J": {model["name"]: model["total_J"] for model in report["energy"]},
        "bits_erased": {name: scenario["bits_erased"]
                        for name, scenario in report["erasure"]["scenarios"].items()},
        "peak_ancilla_words": max(run["occupancy"]["peak_ancilla_words"]
                                  for run in report["runs"]),
    }


def build_batch_report(image: Image, lanes: Sequence[Callable[[Lanes], None]], *,
                       models: list[EnergyModel], all_models: dict[str, EnergyModel],
                       grad: bool = False, loss: str | None = None,
                       wrt: list[str] | None = None, max_steps: int | None = None,
                       file: str | None = None,
                       memory_words: int = DEFAULT_MEMORY_WORDS, engine: str = "auto") -> dict:
    """Report every lane (``lanes[i]`` loads lane i's inputs) and aggregate."""
    by_instruction: Counter = Counter()
    by_class: Counter = Counter()
    traffic: Counter = Counter()
    energy_totals: dict[str, float] = {}
    erasure_totals: Counter = Counter()
    fault_kinds: Counter = Counter()
    per_lane = []
    mode = "gradient" if grad else "value"
    for index, prepare in enumerate(lanes):
        report = build_report(image, prepare=prepare, models=models, all_models=all_models,
                              grad=grad, loss=loss, wrt=wrt, max_steps=max_steps, file=file,
                              memory_words=memory_words, engine=engine)
        per_lane.append(lane_summary(index, report))
        by_instruction.update(report["totals"]["by_instruction"])
        by_class.update(report["totals"]["by_class"])
        traffic.update(report["totals"]["traffic"])
        for model in report["energy"]:
            energy_totals[model["name"]] = energy_totals.get(model["name"], 0.0) + model["total_J"]
        for name, scenario in report["erasure"]["scenarios"].items():
            erasure_totals[name] += scenario["bits_erased"]
        if "fault" in report:
            fault_kinds[report["fault"]["kind"]] += 1
    metrics: dict[str, dict[str, float]] = {
        "steps": distribution([lane["steps"] for lane in per_lane]),
        "cycles": distribution([lane["cycles"] for lane in per_lane]),
        "peak_ancilla_words": distribution([lane["peak_ancilla_words"] for lane in per_lane]),
    }
    for name in energy_totals:
        metrics[f"energy_J.{name}"] = distribution([lane["energy_J"][name] for lane in per_lane])
    for name in erasure_totals:
        metrics[f"bits_erased.{name}"] = distribution([lane["bits_erased"][name]
                                                       for lane in per_lane])
    engines: dict[str, object] = {"counts": "reference (traced, per lane)"}
    try:
        vector = None if grad else vector_steps(image, lanes, max_steps=max_steps,
                                                memory_words=memory_words)
    except (TypeError, AttributeError, ValueError, KeyError) as exc:  # an API mismatch
        vector = None
        engines["vector_error"] = f"{type(exc).__name__}: {exc}"
    if vector is not None:
        agree = all(lane["status"] != "finished"
                    or (vector["steps"][i], vector["cycles"][i])
                    == (lane["forward_steps"], lane["forward_cycles"])
                    for i, lane in enumerate(per_lane))
        engines["vector_forward_steps_agree"] = agree
    return {
        "schema": BATCH_SCHEMA_ID,
        "engines": engines,
        "file": file or image.source_file,
        "width": image.width,
        "mode": mode,
        "lanes": len(per_lane),
        "finished": sum(1 for lane in per_lane if lane["status"] == "finished"),
        "faults": dict(sorted(fault_kinds.items())),
        "totals": {"steps": sum(lane["steps"] for lane in per_lane),
                   "cycles": sum(lane["cycles"] for lane in per_lane),
                   "by_instruction": dict(sorted(by_instruction.items())),
                   "by_class": dict(sorted(by_class.items())), "traffic": dict(traffic)},
        "energy_J": energy_totals,
        "bits_erased": dict(erasure_totals),
        "distribution": metrics,
        "per_lane": per_lane,
    }


def _lane_state(image: Image, prepare: Callable[[Lanes], None],
                memory_words: int) -> tuple[list[int], dict[int, int]]:
    """Registers and the memory words that differ from the image, after ``prepare``."""
    machine = load(image, 1, engine_name="reference", memory_words=memory_words)
    prepare(machine)
    snapshot = machine.snapshot(0)
    mask = (1 << image.width) - 1
    image_words = [w & mask for w in image.words]
    memory = {address: word for address, word in snapshot.words()
              if word != (image_words[address] if address < len(image_words) else 0)}
    return list(snapshot.registers), memory


def vector_steps(image: Image, lanes: Sequence[Callable[[Lanes], None]], *,
                 max_steps: int | None = None,
                 memory_words: int = DEFAULT_MEMORY_WORDS) -> dict | None:
    """Forward steps and cycles of every lane on the batched simulator (``sim/vector``).

    None when this build has no vector simulator.  A batch report compares
    them with its per-lane counts: the two engines must agree on every lane.
    """
    states = [_lane_state(image, prepare, memory_words) for prepare in lanes]
    try:
        machine = load(image, len(states), engine_name="vector", memory_words=memory_words,
                       max_steps=max_steps)
    except EngineError:
        return None
    for register in range(1, 32):
        values = numpy.array([registers[register] for registers, _ in states], dtype=numpy.uint64)
        if values.any():
            machine.set_bank_word("R", register, values)
    addresses = sorted({address for _, memory in states for address in memory})
    mask = (1 << image.width) - 1
    for address in addresses:
        default = image.words[address] & mask if address < len(image.words) else 0
        values = numpy.array([memory.get(address, default) for _, memory in states],
                             dtype=numpy.uint64)
        machine.set_bank_word("MEM", address, values)
    machine.run(1)
    return {"steps": [int(s) for s in machine.steps], "cycles": [int(c) for c in machine.cycles],
            "faulted": [bool(f) for f in machine.faulted]}
