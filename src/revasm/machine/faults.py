"""Machine faults: the one exception a running program can raise.

Every fault names where the machine stopped (PC and source line), the control
state (BR, DIR), the registers, and how many instructions had completed.  For
an uncaught jump it also names the landing PC and the jump's source PC and
line, so the message reads like the programmer's own view of the program:
"jump from line 5 (pc 2) landed on line 8 (pc 5), which does not catch it:
BR is still 3 after the landing instruction" (the wording: ``fault_messages.py``).

Engines also signal faults internally before they build one: :class:`Trap` (a device
inside a template) and :class:`ComeFromViolation` (generated code that saw a landing keep
BR != 0).
"""
from __future__ import annotations

from revasm.assembler.image import SourceLocation

#: Every fault kind an engine reports, with what it means.
FAULT_KINDS = {
    "uncaught-jump": "a jump landed on an instruction that did not bring BR back to 0",
    "illegal-instruction": "the PC reached a word that is not an executable instruction "
                           "(undecodable, a DATA cell, outside the program, or operands "
                           "the table forbids)",
    "memory-address": "EXCH addressed a code cell (or a word beyond the RTL core's memory)",
    "divide-by-zero": "a fixed-point division (or 0 ** negative) by zero",
    "domain-error": "an elementary function outside its domain (log of x <= 0, ...)",
    "step-limit": "the run did not halt within max_steps instructions",
    "tape-empty": "EMIT ran backward with nothing on the output tape",
    "overflow": "a fixed-point extension instruction's exact result does not fit the word "
                "(an overflow event) and the machine is strict",
    "no-finish": "a backward run was asked of a program without FINISH",
}


class MachineFault(Exception):
    """The machine stopped on a fault; ``str(fault)`` is a multi-line report.

    ``step`` is the number of instructions that completed before the machine
    stopped.  A fault raised while executing an instruction (divide by zero,
    bad address, empty tape) leaves that instruction without effect and
    uncounted; an uncaught jump is detected *after* the landing instruction,
    whose effects stay and which is counted.
    """

    def __init__(self, kind: str, message: str, *, pc: int | None = None,
                 location: SourceLocation | None = None, br: int = 0, direction: int = 1,
                 registers: tuple[int, ...] = (), step: int = 0, width: int = 32,
                 landing_pc: int | None = None, jump_source_pc: int | None = None,
                 jump_source_location: SourceLocation | None = None,
                 instruction_text: str = "", address: int | None = None) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.pc = pc
        self.location = location
        self.br = br
        self.direction = direction
        self.registers = tuple(registers)
        self.step = step
        self.width = width
        self.landing_pc = landing_pc
        self.jump_source_pc = jump_source_pc
        self.jump_source_location = jump_source_location
        self.instruction_text = instruction_text
        #: the W-bit address of a ``memory-address`` fault (None where not known)
        self.address = address
        #: Which pass of a protocol faulted ("forward", "backward (gradient)", ...),
        #: set by the host protocol (``gradient.py``); None for a plain run.
        self.run_pass: str | None = None

    @property
    def line(self) -> int | None:
        return self.location.line if self.location else None

    @property
    def jump_source_line(self) -> int | None:
        return self.jump_source_location.line if self.jump_source_location else None

    def signed_registers(self) -> dict[int, int]:
        """The non-zero registers at the fault, as signed integers."""
        sign = 1 << (self.width - 1)
        return {i: word - ((word & sign) << 1) for i, word in enumerate(self.registers) if word}

    def __str__(self) -> str:
        during = f" in the {self.run_pass} pass" if self.run_pass else ""
        if self.location is not None and self.location.origin is not None:
            return self._compiled_report(during)
        lines = [f"machine fault ({self.kind}){during}: {self.message}"]
        if self.pc is not None:
            where = f"  at pc {self.pc}"
            if self.location is not None:
                where += f", {self.location.file}:{self.location.line}"
                if self.location.text.strip():
                    where += f": {self.location.text.strip()}"
            elif self.instruction_text:
                where += f": {self.instruction_text}"
            lines.append(where)
        return "\n".join(lines + self._state_lines())

    def _compiled_report(self, during: str) -> str:
        """A compiled program's fault, at the user's line (``fault_place``), in the
        compiler's ``file:line:col: error:`` form; the generated PAL as a detail."""
        from .fault_place import fault_place
        place = fault_place(self)
        what = f"{place.check} check" if place.check else f"machine fault ({self.kind})"
        lines = [f"{place.file}:{place.line}:{place.column}: runtime error{during}: "
                 f"{place.message}"]
        if place.text:
            lines.append(f"    {place.text}")
        lines.append(f"  {what} at pc {self.pc}, {place.pal_file}:{place.pal_line}: "
                     f"{place.pal_text}")
        if place.message != self.message:
            lines.append(f"  the machine: {self.message}")
        return "\n".join(lines + self._state_lines())

    def _state_lines(self) -> list[str]:
        lines = []
        lines.append(f"  BR = {self.br}, DIR = {'+1' if self.direction > 0 else '-1'}, "
                     f"after {self.step} steps")
        registers = self.signed_registers()
        if registers:
            lines.append("  registers: " + " ".join(f"${i}={v}" for i, v in registers.items()))
        elif self.registers:
            lines.append("  registers: all zero")
        return lines

    def __reduce__(self):  # keep faults picklable (multiprocessing test runners)
        return (_rebuild, (self.kind, self.message, self.__dict__))


def _rebuild(kind: str, message: str, state: dict) -> MachineFault:
    fault = MachineFault.__new__(MachineFault)
    Exception.__init__(fault, message)
    fault.__dict__.update(state)
    return fault


class Trap(Exception):
    """Raised by an engine device (``addr``, ``unemit``, a strict overflow) inside a
    template: a fault whose PC the device does not know.

    The engine turns it into a :class:`MachineFault` once it knows the PC.
    """

    def __init__(self, kind: str, message: str, address: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.address = address  # the memory address a memory-address trap is about


class ComeFromViolation(Exception):
    """Raised by an engine's generated code: a landing instruction left BR != 0 (the
    come-from rule, docs/simulator.md); the engine turns it into an ``uncaught-jump`` fault."""

    def __init__(self, landing_pc: int, br: int, direction: int) -> None:
        super().__init__(landing_pc)
        self.landing_pc = landing_pc
        self.br = br
        self.direction = direction
