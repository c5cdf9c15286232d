"""Report classes: the table's ``energy_class`` values grouped as the issue names them.

The table gives each instruction a fine ``energy_class`` (``alu``, ``logic``,
``shift``, ``move``, ``mul``, ``div``, ``func``, ``mem``, ``branch``,
``control``, ``io``); reports group them into the six units of the machine
(ALU, multiply/divide, function unit, memory, branch/control, I/O).  The
grouping is the only knowledge here: which instruction is in which class comes
from the table alone.
"""
from __future__ import annotations

#: Report class -> the energy classes of the table it gathers, and a label.
REPORT_CLASSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "alu": ("ALU (add, logic, shift, move)", ("alu", "logic", "shift", "move")),
    "multiply": ("multiply / divide", ("mul", "div")),
    "function": ("function unit (CORDIC, rotation)", ("func",)),
    "memory": ("memory (EXCH)", ("mem",)),
    "branch": ("branch / control", ("branch", "control")),
    "io": ("I/O (SHOW, EMIT)", ("io",)),
}

_BY_ENERGY_CLASS = {energy: name for name, (_, members) in REPORT_CLASSES.items()
                    for energy in members}


def report_class(energy_class: str) -> str:
    """The report class of a table ``energy_class`` (an unknown one stands for itself)."""
    return _BY_ENERGY_CLASS.get(energy_class, energy_class)
