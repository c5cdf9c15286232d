"""The JSON schema of ``revasm report --json`` (a JSON Schema 2020-12 subset) and a checker.

``REPORT_SCHEMA`` is the contract scripts rely on; docs/energy.md describes
every field.  ``validate_report`` checks a report against it with a small
validator (type, required, properties, additionalProperties, items, enum,
const, minimum), so no extra dependency is needed; it returns the problems
found as ``path: message`` strings (empty when the report conforms).
"""
from __future__ import annotations

from typing import Any

from revasm.isa.fixed_point import WIDTHS

COUNT = {"type": "integer", "minimum": 0}
JOULES = {"type": "number", "minimum": 0}
COUNTS_BY_NAME = {"type": "object", "additionalProperties": COUNT}
JOULES_BY_NAME = {"type": "object", "additionalProperties": JOULES}
VALUE = {"type": ["number", "integer"]}

TRAFFIC_KEYS = ("register_reads", "register_writes", "memory_reads", "memory_writes",
                "instruction_fetches", "gradient_reads", "gradient_writes",
                "memory_gradient_reads", "memory_gradient_writes")
TRAFFIC = {
    "type": "object",
    "required": list(TRAFFIC_KEYS),
    "properties": {key: COUNT for key in TRAFFIC_KEYS},
    "additionalProperties": False,
}

OCCUPANCY = {
    "type": "object",
    "required": ["peak_live_registers", "peak_data_words", "highest_data_address",
                 "ancilla_words", "ancilla_registers", "peak_ancilla_words"],
    "properties": {
        "peak_live_registers": COUNT, "peak_data_words": COUNT,
        "highest_data_address": {"type": ["integer", "null"], "minimum": 0},
        "ancilla_words": COUNT, "ancilla_registers": {"type": "array", "items": {"type": "string"}},
        "peak_ancilla_words": COUNT,
    },
    "additionalProperties": False,
}

RUN = {
    "type": "object",
    "required": ["direction", "mode", "status", "steps", "cycles", "machine_steps",
                 "machine_cycles", "by_instruction", "by_class", "by_energy_class",
                 "cycles_by_energy_class", "traffic", "branches", "irreversible_overwrites",
                 "tape_words", "adjoint_updates", "adjoint_operations", "occupancy"],
    "properties": {
        "direction": {"enum": ["forward", "backward"]},
        "mode": {"enum": ["value", "gradient"]},
        "status": {"enum": ["finished", "fault"]},
        "steps": COUNT, "cycles": COUNT, "machine_steps": COUNT, "machine_cycles": COUNT,
        "overflows": {"type": "integer"},
        "by_instruction": COUNTS_BY_NAME, "by_class": COUNTS_BY_NAME,
        "by_energy_class": COUNTS_BY_NAME, "cycles_by_energy_class": COUNTS_BY_NAME,
        "traffic": TRAFFIC,
        "branches": {"type": "object", "required": ["conditional", "taken"],
                     "properties": {"conditional": COUNT, "taken": COUNT},
                     "additionalProperties": False},
        "irreversible_overwrites": COUNT, "tape_words": COUNT, "adjoint_updates": COUNT,
        "adjoint_operations": COUNTS_BY_NAME, "occupancy": OCCUPANCY,
    },
    "additionalProperties": False,
}

SCENARIO = {
    "type": "object",
    "required": ["bits_erased", "bits_stored", "parts"],
    "properties": {"bits_erased": COUNT, "bits_stored": COUNT, "parts": COUNTS_BY_NAME},
    "additionalProperties": False,
}

ERASURE = {
    "type": "object",
    "required": ["word_bits", "results_words", "gradient_words", "copied_out_bits",
                 "scenarios"],
    "properties": {
        "word_bits": {"enum": list(WIDTHS)}, "results_words": COUNT, "gradient_words": COUNT,
        "copied_out_bits": COUNT,
        "scenarios": {"type": "object",
                      "required": ["reversible", "reversible_forward_only", "irreversible",
                                   "tape"],
                      "properties": {name: SCENARIO for name in (
                          "reversible", "reversible_forward_only", "irreversible", "tape")},
                      "additionalProperties": False},
    },
    "additionalProperties": False,
}

MODEL_HEAD = {"name": {"type": "string"}, "title": {"type": "string"},
              "source": {"type": "string"}, "file": {"type": "string"}, "total_J": JOULES}

ENERGY = {
    "type": "object",
    "required": ["name", "kind", "title", "source", "file", "total_J"],
    "properties": {
        **MODEL_HEAD,
        "kind": {"enum": ["per_operation", "adiabatic", "landauer"]},
        # per_operation
        "by_run": JOULES_BY_NAME, "by_energy_class": JOULES_BY_NAME,
        "by_part": {"type": "object",
                    "required": ["operations", "register_file", "data_memory",
                                 "instruction_fetch"],
                    "additionalProperties": JOULES},
        "unpriced_classes": {"type": "array", "items": {"type": "string"}},
        # adiabatic
        "base_model": {"type": "string"}, "switching_time_s": JOULES, "factor": JOULES,
        "landauer_floor_J": JOULES, "optimal_switching_time_s": JOULES,
        "optimal_total_J": JOULES,
        "sweep": {"type": "array", "items": {
            "type": "object", "required": ["switching_time_s", "total_J"],
            "properties": {"switching_time_s": JOULES, "total_J": JOULES},
            "additionalProperties": False}},
        # landauer
        "temperature_K": JOULES, "J_per_bit": JOULES, "scenarios_J": JOULES_BY_NAME,
    },
    "additionalProperties": False,
}

STEPS_AND_CYCLES = {"type": "object", "required": ["steps", "cycles"],
                    "properties": {"steps": COUNT, "cycles": COUNT},
                    "additionalProperties": False}

#: ``by_line`` (``revasm report --by-line``, ``by_line.py``): one row per source line that ran.
BY_LINE = {
    "type": "object",
    "required": ["language", "files", "sources", "lines"],
    "properties": {
        "language": {"enum": ["pal", "python", "janus"]},
        "files": {"type": "array", "items": {"type": "string"}},
        "sources": {"type": "object", "additionalProperties": {
            "type": "array", "items": {"type": "string"}}},
        "lines": {"type": "array", "items": {
            "type": "object",
            "required": ["file", "line", "text", "steps", "cycles", "forward", "backward",
                         "by_instruction", "energy_J", "bits_erased"],
            "properties": {
                "file": {"type": ["string", "null"]},
                "line": {"type": ["integer", "null"], "minimum": 1},
                "text": {"type": "string"}, "steps": COUNT, "cycles": COUNT,
                "forward": STEPS_AND_CYCLES, "backward": STEPS_AND_CYCLES,
                "by_instruction": COUNTS_BY_NAME, "energy_J": JOULES_BY_NAME,
                "bits_erased": {"type": "object",
                                "required": ["reversible", "irreversible", "tape"],
                                "properties": {"reversible": COUNT, "irreversible": COUNT,
                                               "tape": COUNT},
                                "additionalProperties": False}},
            "additionalProperties": False}},
    },
    "additionalProperties": False,
}

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "revasm report",
    "type": "object",
    "required": ["schema", "file", "width", "mode", "status", "restored", "inputs", "outputs",
                 "runs", "totals", "erasure", "energy"],
    "properties": {
        "schema": {"const": "revasm-report/1"},
        "file": {"type": "string"},
        "width": {"enum": list(WIDTHS)},
        "mode": {"enum": ["value", "gradient"]},
        "status": {"enum": ["finished", "fault"]},
        "restored": {"type": ["boolean", "null"]},
        "inputs": {"type": "object", "additionalProperties": VALUE},
        "outputs": {"type": "object", "additionalProperties": VALUE},
        "gradient": {"type": "object", "additionalProperties": VALUE},
        "runs": {"type": "array", "items": RUN},
        "totals": {"type": "object", "required": ["steps", "cycles", "by_instruction",
                                                  "by_class", "traffic"],
                   "properties": {"steps": COUNT, "cycles": COUNT,
                                  "by_instruction": COUNTS_BY_NAME,
                                  "by_class": COUNTS_BY_NAME, "traffic": TRAFFIC},
                   "additionalProperties": False},
        "erasure": ERASURE,
        "energy": {"type": "array", "items": ENERGY},
        "by_line": BY_LINE,
        "fault": {"type": "object",
                  "required": ["kind", "pc", "file", "line", "source", "message"],
                  "properties": {"kind": {"type": "string"},
                                 "pc": {"type": ["integer", "null"]},
                                 "file": {"type": ["string", "null"]},
                                 "line": {"type": ["integer", "null"]},
                                 "source": {"type": ["string", "null"]},
                                 "message": {"type": "string"},
                                 # a compiled program's: the failed check, the PAL line
                                 "check": {"type": ["string", "null"]},
                                 "pal_file": {"type": ["string", "null"]},
                                 "pal_line": {"type": ["integer", "null"]},
                                 "pal_source": {"type": ["string", "null"]}},
                  "additionalProperties": False},
    },
    "additionalProperties": False,
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


#: The JSON Schema keywords :func:`validate` checks, and those it may ignore (annotations).
KEYWORDS = {"type", "const", "enum", "required", "properties", "additionalProperties", "items",
            "minimum", "minLength"}
ANNOTATIONS = {"$schema", "$id", "title", "description"}


def validate(value: object, schema: dict, path: str = "$") -> list[str]:
    """Problems of ``value`` against ``schema``: the subset of JSON Schema in
    :data:`KEYWORDS`, used by the report schemas here and the command line's error schema
    (a schema with any other keyword is refused rather than half checked)."""
    unknown = set(schema) - KEYWORDS - ANNOTATIONS
    if unknown:
        raise ValueError(f"{path}: the validator does not know {sorted(unknown)}")
    problems: list[str] = []
    if "const" in schema and value != schema["const"]:
        return [f"{path}: expected {schema['const']!r}, got {value!r}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} is not one of {schema['enum']}"]
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[kind](value) for kind in kinds):
            return [f"{path}: expected {' or '.join(kinds)}, got {type(value).__name__}"]
    if "minimum" in schema and _TYPES["number"](value) and value < schema["minimum"]:
        problems.append(f"{path}: {value} is below {schema['minimum']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        problems.append(f"{path}: {value!r} is shorter than {schema['minLength']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                problems.append(f"{path}: missing '{key}'")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                problems += validate(item, properties[key], f"{path}.{key}")
            elif extra is False:
                problems.append(f"{path}: unexpected '{key}'")
            elif isinstance(extra, dict):
                problems += validate(item, extra, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            problems += validate(item, schema["items"], f"{path}[{index}]")
    return problems


def validate_report(report: object) -> list[str]:
    """Problems of a report against ``REPORT_SCHEMA`` (empty when it conforms)."""
    return validate(report, REPORT_SCHEMA)


STATISTIC = {"type": "object", "required": ["min", "p05", "median", "mean", "p95", "max"],
             "additionalProperties": {"type": "number"}}
VALUES = {"type": "object", "additionalProperties": VALUE}

BATCH_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "revasm batch report",
    "type": "object",
    "required": ["schema", "engines", "file", "width", "mode", "lanes", "finished", "faults",
                 "totals", "energy_J", "bits_erased", "distribution", "per_lane"],
    "properties": {
        "schema": {"const": "revasm-batch-report/1"},
        "engines": {"type": "object", "required": ["counts"],
                    "properties": {"counts": {"type": "string"},
                                   "vector_forward_steps_agree": {"type": "boolean"},
                                   "vector_error": {"type": "string"}},
                    "additionalProperties": False},
        "file": {"type": "string"}, "width": {"enum": list(WIDTHS)},
        "mode": {"enum": ["value", "gradient"]},
        "lanes": COUNT, "finished": COUNT, "faults": COUNTS_BY_NAME,
        "totals": REPORT_SCHEMA["properties"]["totals"],
        "energy_J": JOULES_BY_NAME, "bits_erased": COUNTS_BY_NAME,
        "distribution": {"type": "object", "additionalProperties": STATISTIC},
        "per_lane": {"type": "array", "items": {
            "type": "object",
            "required": ["lane", "status", "fault", "steps", "cycles", "forward_steps",
                         "forward_cycles", "inputs", "outputs", "energy_J", "bits_erased",
                         "peak_ancilla_words"],
            "properties": {
                "lane": COUNT, "status": {"enum": ["finished", "fault"]},
                "fault": {"type": ["string", "null"]}, "steps": COUNT, "cycles": COUNT,
                "forward_steps": COUNT, "forward_cycles": COUNT, "inputs": VALUES,
                "outputs": VALUES,
                "gradient": VALUES, "energy_J": JOULES_BY_NAME, "bits_erased": COUNTS_BY_NAME,
                "peak_ancilla_words": COUNT},
            "additionalProperties": False}},
    },
    "additionalProperties": False,
}


def validate_batch_report(report: object) -> list[str]:
    """Problems of a batch report against ``BATCH_SCHEMA`` (empty when it conforms)."""
    return validate(report, BATCH_SCHEMA)
