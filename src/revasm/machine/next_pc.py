"""The next-PC rule (docs/simulator.md "Execution model"): where the machine goes next.

The control state is the PC, BR (the branch register, 0 between jumps) and DIR (+1
forward, -1 backward).  Each instruction runs its table template (``isa/table.py``),
which may change BR (a taken branch adds its offset, SWAPBR exchanges BR with a register)
and DIR (RBRA flips it: the uncall).  Then, with BR and DIR as the instruction left them:

* FINISH executed forward, or START executed backward, halts the machine -- a jump may land
  on FINISH (PendVM's programs do): the run halts there with BR kept (:func:`halts`);
* otherwise, if BR = 0 then PC += DIR, else PC += BR·DIR (:func:`next_pc`).

Read backward, the same rule says where the instruction executed last sits
(:func:`previous_pc`): it is how a fault names a jump's source and how the debugger steps
back.

This module is the rule's one definition.  Python code calls these functions (the
reference machine, the vector engine -- :func:`next_pc` works on integer arrays too --,
the fault messages, the debugger); code generated as text (the reference's blocks, the
compiled engine's numba kernels) writes :func:`next_pc_source` and :func:`halts_source`,
proven equal to the functions by ``tests/machine/test_next_pc.py``; the RTL's control
unit is hardware and is proven equal there too.

Engines that keep the PC in a 64-bit register (the vector and compiled engines) wrap a
jump far outside the program (BR near ±2^63 at W = 64); :func:`pc_register` and
:func:`pc_from_register` convert, so every engine reports the PC the rule gives.
"""
from __future__ import annotations

from typing import Any, overload

#: Bits of the PC of the engines that keep it in a machine word (numpy's and numba's int64).
PC_REGISTER_BITS = 64


@overload
def next_pc(pc: int, br: int, direction: int) -> int: ...


@overload
def next_pc(pc: Any, br: Any, direction: Any) -> Any: ...


def next_pc(pc, br, direction):
    """The PC after an instruction at ``pc`` that left BR = ``br`` and DIR = ``direction``:
    ``pc + DIR`` when BR = 0, else ``pc + BR·DIR``.

    Also elementwise on integer arrays (one entry per lane, numpy's API): ``br + (br == 0)``
    is BR where BR != 0 and 1 where BR = 0, with no branch.
    """
    return pc + (br + (br == 0)) * direction


@overload
def previous_pc(pc: int, br: int, direction: int) -> int: ...


@overload
def previous_pc(pc: Any, br: Any, direction: Any) -> Any: ...


def previous_pc(pc, br, direction):
    """The PC of the instruction that moved the machine to ``pc`` leaving BR = ``br`` and
    DIR = ``direction``: the inverse of :func:`next_pc` (with BR != 0, a jump's source)."""
    return pc - (br + (br == 0)) * direction


@overload
def halts(kind: str, direction: int) -> bool: ...


@overload
def halts(kind: str, direction: Any) -> Any: ...


def halts(kind, direction):
    """Whether an instruction of ``kind`` (``Instruction.kind``: "finish", "start", ...)
    that left DIR = ``direction`` halts the machine instead of moving the PC (elementwise
    on an array of DIRs)."""
    if kind == "finish":
        return direction > 0
    if kind == "start":
        return direction < 0
    return False


def next_pc_source(pc: str, br: str, direction: str | int) -> str:
    """:func:`next_pc` as a Python expression for generated code (Python or numba).

    ``pc`` and ``br`` are expressions (``"pc"``, ``"I(12)"``, ``"BR"``); ``direction`` is
    one too, or the int +1 / -1 when the code is generated for one direction, which
    drops the multiplication.  ``(BR or 1)`` is :func:`next_pc`'s ``br + (br == 0)`` on one
    integer, the faster form in CPython (numba compiles both alike)."""
    step = f"({br} or 1)"
    if direction == 1:
        return f"{pc} + {step}"
    if direction == -1:
        return f"{pc} - {step}"
    if isinstance(direction, int):
        raise ValueError(f"DIR is +1 or -1, not {direction}")
    return f"{pc} + {step} * {direction}"


def halts_source(direction: str, finish: str, start: str) -> str:
    """:func:`halts` as a Python expression for generated code: ``finish`` and ``start``
    are expressions true when the instruction is FINISH, resp. START."""
    return f"({direction} > 0 and {finish}) or ({direction} < 0 and {start})"


def pc_register(pc: int) -> int:
    """``pc`` as a signed :data:`PC_REGISTER_BITS`-bit register holds it (wrapped; the
    same value for every PC inside a program)."""
    half = 1 << (PC_REGISTER_BITS - 1)
    return (pc + half) % (1 << PC_REGISTER_BITS) - half


def pc_from_register(held: int, br: int, direction: int, length: int) -> int:
    """The PC a :data:`PC_REGISTER_BITS`-bit register holding ``held`` stands for, on a
    program of ``length`` cells, with BR = ``br`` and DIR = ``direction`` as they are now.

    After the machine moved by the rule, the instruction it came from
    (:func:`previous_pc`) is inside the program; that names the one PC congruent to
    ``held`` it can be.  ``held`` itself when no move explains it (the host put the PC
    there), and always for a PC inside the program.
    """
    moved = next_pc(0, br, direction)
    pc = moved + (held - moved) % (1 << PC_REGISTER_BITS)
    return pc if 0 <= previous_pc(pc, br, direction) < length else held
