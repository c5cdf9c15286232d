"""Energy models: JSON data files, validated on load, evaluated on run counts.

Three kinds (docs/energy.md explains each and its assumptions):

* ``per_operation`` — energy per executed instruction by the table's
  ``energy_class`` (``pJ`` per instruction plus ``pJ_per_cycle`` per cycle it takes
  on the RTL core, ``isa/timing``), per register-file access, per data-memory access
  and per instruction fetch; all scaled by ``(W / reference_width) ** width_exponent``.
* ``adiabatic`` — a ``per_operation`` base model whose switching energy is
  multiplied by ``min(1, 2·tau/T) + T/leakage_time`` (Athas et al. 1994), plus
  the Landauer cost of what the run erases.
* ``landauer`` — ``k·T·ln 2`` per erased bit (Landauer 1961).

The bundled files live in ``models/`` (package data); users pass their own
with ``--model-file``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

BOLTZMANN_J_PER_K = 1.380649e-23  # exact (SI 2019)
PICOJOULE = 1e-12
KINDS = ("per_operation", "adiabatic", "landauer")

class ModelError(ValueError):
    """A model file that cannot be used, with the file and the field in the message."""


@dataclass(frozen=True)
class EnergyModel:
    """One model: its ``name``, ``kind``, the file's data, and where it came from."""

    name: str
    kind: str
    data: dict
    file: str

    @property
    def title(self) -> str:
        return self.data.get("title", self.name)

    @property
    def source(self) -> str:
        return self.data.get("source", "")


def _number(data: dict, key: str, where: str, *, positive: bool = False,
            required: bool = True, default: float = 0.0) -> float:
    if key not in data:
        if required:
            raise ModelError(f"{where}: missing '{key}'")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelError(f"{where}: '{key}' must be a number, not {value!r}")
    if value < 0 or (positive and value == 0):
        raise ModelError(f"{where}: '{key}' must be {'positive' if positive else 'non-negative'}"
                         f", not {value}")
    return float(value)


def _check_cost(entry: object, where: str) -> None:
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected an object with 'pJ', not {entry!r}")
    _number(entry, "pJ", where)
    _number(entry, "pJ_per_cycle", where, required=False)
    _number(entry, "width_exponent", where, required=False)


def validate_model(data: object, file: str) -> EnergyModel:
    """Check a parsed model file; raises :class:`ModelError` naming the bad field."""
    if not isinstance(data, dict):
        raise ModelError(f"{file}: a model file holds one JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{file}: missing 'name' (a non-empty string)")
    kind = data.get("kind")
    if kind not in KINDS:
        raise ModelError(f"{file}: 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "per_operation":
        _number(data, "reference_width", file, positive=True)
        operations = data.get("operations")
        if not isinstance(operations, dict):
            raise ModelError(f"{file}: missing 'operations' (energy class -> cost)")
        for energy_class, entry in operations.items():
            _check_cost(entry, f"{file}: operations.{energy_class}")
        for key in ("register_access", "memory_access", "instruction_fetch"):
            if key not in data:
                raise ModelError(f"{file}: missing '{key}'")
            _check_cost(data[key], f"{file}: {key}")
    elif kind == "adiabatic":
        if not isinstance(data.get("base_model"), str):
            raise ModelError(f"{file}: missing 'base_model' (the name of a per_operation model)")
        for key in ("rc_time_constant_s", "switching_time_s", "leakage_time_s", "temperature_K"):
            _number(data, key, file, positive=True)
        sweep = data.get("sweep", {"from_s": 1e-11, "to_s": 1e-3, "points": 33})
        if not isinstance(sweep, dict):
            raise ModelError(f"{file}: 'sweep' must be an object")
        low = _number(sweep, "from_s", f"{file}: sweep", positive=True)
        high = _number(sweep, "to_s", f"{file}: sweep", positive=True)
        points = sweep.get("points")
        if not isinstance(points, int) or not 2 <= points <= 1000 or low >= high:
            raise ModelError(f"{file}: sweep needs from_s < to_s and 2..1000 integer points")
    else:
        _number(data, "temperature_K", file, positive=True)
    return EnergyModel(name, kind, data, file)


def load_model(path: str | Path) -> EnergyModel:
    """Read and validate one model file."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path}: no such model file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the model file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    return validate_model(data, str(path))


def bundled_models() -> dict[str, EnergyModel]:
    """The models shipped in the package (``revasm/report/models/*.json``), by name."""
    folder = resources.files(__package__).joinpath("models")
    models: dict[str, EnergyModel] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            model = validate_model(data, f"models/{entry.name}")
            models[model.name] = model
    return dict(sorted(models.items(), key=lambda item: KINDS.index(item[1].kind)))


# --- evaluation ----------------------------------------------------------------------

def _scale(entry: dict, width: int, reference: float) -> float:
    return (width / reference) ** entry.get("width_exponent", 1)


def operation_energy(model: EnergyModel, runs: list[dict], width: int) -> dict:
    """Joules of each run and part under a ``per_operation`` model."""
    data = model.data
    reference = data["reference_width"]
    operations = data["operations"]
    register = data["register_access"]
    memory = data["memory_access"]
    fetch = data["instruction_fetch"]
    by_run: dict[str, float] = {}
    by_part = {"operations": 0.0, "register_file": 0.0, "data_memory": 0.0,
               "instruction_fetch": 0.0}
    by_class: dict[str, float] = {}
    unpriced: set[str] = set()
    for run in runs:
        total = 0.0
        for energy_class, count in run["by_energy_class"].items():
            entry = operations.get(energy_class)
            if entry is None:
                unpriced.add(energy_class)
                continue
            cycles = run["cycles_by_energy_class"].get(energy_class, 0)
            joules = ((entry["pJ"] * count + entry.get("pJ_per_cycle", 0.0) * cycles)
                      * _scale(entry, width, reference) * PICOJOULE)
            by_class[energy_class] = by_class.get(energy_class, 0.0) + joules
            by_part["operations"] += joules
            total += joules
        for energy_class, count in run.get("adjoint_operations", {}).items():
            entry = operations.get(energy_class)
            if entry is None:
                unpriced.add(energy_class)
                continue
            # one operation each: their cycles (the gradient unit's micro-program) are the
            # gradient-mode step's, priced with the instruction's class above
            joules = entry["pJ"] * count * _scale(entry, width, reference) * PICOJOULE
            by_part["adjoint_operations"] = by_part.get("adjoint_operations", 0.0) + joules
            total += joules
        traffic = run["traffic"]
        parts = {
            "register_file": (traffic["register_reads"] + traffic["register_writes"]
                              + traffic.get("gradient_reads", 0)
                              + traffic.get("gradient_writes", 0))
            * register["pJ"] * _scale(register, width, reference),
            "data_memory": (traffic["memory_reads"] + traffic["memory_writes"]
                            + traffic.get("memory_gradient_reads", 0)
                            + traffic.get("memory_gradient_writes", 0))
            * memory["pJ"] * _scale(memory, width, reference),
            "instruction_fetch": traffic["instruction_fetches"] * fetch["pJ"]
            * _scale(fetch, width, reference),
        }
        for part, picojoules in parts.items():
            by_part[part] += picojoules * PICOJOULE
            total += picojoules * PICOJOULE
        key = f"{run['direction']}/{run['mode']}"
        by_run[key] = by_run.get(key, 0.0) + total
    return {"total_J": sum(by_run.values()), "by_run": by_run, "by_part": by_part,
            "by_energy_class": dict(sorted(by_class.items())),
            "unpriced_classes": sorted(unpriced)}


def landauer_joules_per_bit(temperature_k: float) -> float:
    """k·T·ln 2: the least heat of erasing one bit at temperature T."""
    return BOLTZMANN_J_PER_K * temperature_k * math.log(2)


def adiabatic_factor(data: dict, switching_time_s: float) -> float:
    """min(1, 2·tau/T) + T/leakage_time: adiabatic switching loss plus leakage."""
    tau = data["rc_time_constant_s"]
    return min(1.0, 2 * tau / switching_time_s) + switching_time_s / data["leakage_time_s"]


def evaluate(model: EnergyModel, runs: list[dict], width: int, erasure: dict,
             models: dict[str, EnergyModel]) -> dict:
    """The model's entry in a report: total joules and its breakdown."""
    head = {"name": model.name, "kind": model.kind, "title": model.title,
            "source": model.source, "file": model.file}
    if model.kind == "per_operation":
        return {**head, **operation_energy(model, runs, width)}
    if model.kind == "landauer":
        per_bit = landauer_joules_per_bit(model.data["temperature_K"])
        scenarios = {name: scenario["bits_erased"] * per_bit
                     for name, scenario in erasure["scenarios"].items()}
        return {**head, "temperature_K": model.data["temperature_K"], "J_per_bit": per_bit,
                "total_J": scenarios["reversible"], "scenarios_J": scenarios}
    data = model.data
    base = models.get(data["base_model"])
    if base is None or base.kind != "per_operation":
        raise ModelError(f"{model.file}: base_model {data['base_model']!r} is not a loaded "
                         "per_operation model")
    base_energy = operation_energy(base, runs, width)
    floor = erasure["scenarios"]["reversible"]["bits_erased"] * landauer_joules_per_bit(
        data["temperature_K"])
    switching = data["switching_time_s"]
    factor = adiabatic_factor(data, switching)
    sweep_spec = data.get("sweep", {"from_s": 1e-11, "to_s": 1e-3, "points": 33})
    low, high, points = sweep_spec["from_s"], sweep_spec["to_s"], sweep_spec["points"]
    sweep = []
    for i in range(points):
        t = low * (high / low) ** (i / (points - 1))
        sweep.append({"switching_time_s": t,
                      "total_J": base_energy["total_J"] * adiabatic_factor(data, t) + floor})
    optimum = math.sqrt(2 * data["rc_time_constant_s"] * data["leakage_time_s"])
    return {**head, "base_model": base.name, "switching_time_s": switching,
            "factor": factor, "total_J": base_energy["total_J"] * factor + floor,
            "by_run": {k: v * factor for k, v in base_energy["by_run"].items()},
            "landauer_floor_J": floor, "optimal_switching_time_s": optimum,
            "optimal_total_J": base_energy["total_J"] * adiabatic_factor(data, optimum) + floor,
            "sweep": sweep}
