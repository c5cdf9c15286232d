"""Peak occupancy of a run: live registers, data-memory words and ancillae.

A word is *live* while it is non-zero.  An *ancilla* is a register or data word
that is zero when the run starts and zero again when it ends but non-zero in
between: scratch space the program borrowed and returned clean (NiLang's
``@zeros``/ancilla, Bennett's garbage uncomputed).  Peaks are maxima over the
run of the number of such words live at once.  Only zero / non-zero changes
are recorded, so the cost is proportional to how often words become (non)zero.
"""
from __future__ import annotations

from revasm.machine import TraceRecord
from revasm.sim.engine import Lanes


class Occupancy:
    """Observes trace records of one run of a one-lane ``machine`` (from its current state)."""

    def __init__(self, machine: Lanes) -> None:
        self.machine = machine
        code = machine.image.is_code
        self._code_length = len(code)
        self._is_code = code
        initial = machine.snapshot(0)
        self.initial_registers = {i for i, word in enumerate(initial.registers) if word}
        self.initial_memory = {a for a, word in initial.words()
                               if word and not self._code(a)}
        self.live_registers = len(self.initial_registers)
        self.live_memory = len(self.initial_memory)
        self.peak_registers = self.live_registers
        self.peak_memory = self.live_memory
        self.highest_address = max(self.initial_memory, default=None)
        self.events: list[tuple[tuple[str, int], bool]] = []  # (word, becomes live)

    def _code(self, address: int) -> bool:
        return address < self._code_length and self._is_code[address]

    def observe(self, record: TraceRecord) -> None:
        for register, old, new in record.registers:
            if (old == 0) != (new == 0):
                self.live_registers += 1 if new else -1
                self.events.append((("r", register), bool(new)))
        for address, old, new in record.memory:
            if self.highest_address is None or address > self.highest_address:
                self.highest_address = address
            if (old == 0) != (new == 0):
                self.live_memory += 1 if new else -1
                self.events.append((("m", address), bool(new)))
        if self.live_registers > self.peak_registers:
            self.peak_registers = self.live_registers
        if self.live_memory > self.peak_memory:
            self.peak_memory = self.live_memory

    def summary(self) -> dict:
        """Peaks, and the ancillae: words zero at both ends of the run, live in between."""
        final = self.machine.snapshot(0)
        touched = {word for word, _ in self.events}
        ancillae = set()
        for kind, where in touched:
            initially = where in (self.initial_registers if kind == "r" else self.initial_memory)
            finally_ = final.registers[where] if kind == "r" else final.word(where)
            if not initially and not finally_:
                ancillae.add((kind, where))
        live = peak = 0
        for word, becomes_live in self.events:
            if word in ancillae:
                live += 1 if becomes_live else -1
                peak = max(peak, live)
        return {
            "peak_live_registers": self.peak_registers,
            "peak_data_words": self.peak_memory,
            "highest_data_address": self.highest_address,
            "ancilla_words": len(ancillae),
            "ancilla_registers": [f"${w}" for w in sorted(w for k, w in ancillae if k == "r")],
            "peak_ancilla_words": peak,
        }
