"""The core's waveforms from a reference run (``revasm run --vcd``), without the RTL.

The reference's trace, timed by the core's schedule (``isa/timing``) under the host
protocol of ``revasm rtl sim`` (the default core: ``CoreParams()`` at the program's width),
written as the architectural signals of the VCD that ``revasm rtl sim --vcd`` writes, with
the same names, scopes, timescale and clock: ``bench.top``'s ``clk``, ``host__busy``,
``host__halted``, ``host__pc``, ``host__br``, ``host__dir_backward``, the retire port's
``retire__valid``, ``pc``, ``insn``, ``backward_in``, ``br``, ``backward``, ``ov`` and
enables, and the register file's words (``bench.top.regfile``, ``\\bank[N]``).  So the
ISA-level and the RTL run open side by side in GTKWave or Surfer, and every signal this file
has equals the RTL's at every moment of the run (``tests/cli/test_waveforms.py``).  The RTL's
data outputs that hold a don't-care value when their enable is low (``retire__wa_data``,
...) and the units' internals are not written.

The file starts where the program starts: the host's load (every memory cell and register
written one clock edge each through the host port, ~2 080 edges on the default core, most
of a short run's file) is folded into time 0 -- the registers hold their loaded words from
the first moment, as a simulator preloads a memory -- and the first rising edge is the run
pulse, so every signal equals the RTL's ``load_edges(params)`` edges later.  ``load=True``
(``revasm run --vcd-load``) writes the load too: the RTL file's timeline edge for edge.
"""
from __future__ import annotations

from collections import defaultdict
from typing import TextIO

from amaranth.hdl import Shape
from vcd import VCDWriter

from revasm.assembler.image import Image
from revasm.isa.codec import decode
from revasm.isa.timing import (
    FIRST_COMMIT,
    NotTimed,
    call_cycles,
    step_cycles,
    step_shape,
    step_timing,
    traced_calls,
    word_entry,
)
from revasm.machine import FAULT_KINDS, MachineFault, TraceRecord
from revasm.rtl.hardware.params import FAULT_CODE, FAULT_NAMES, CoreParams

#: Amaranth's simulator as the co-simulation runs it: ``add_clock(1e-6)``, times in fs,
#: rising edges half a period in.
PERIOD = 10**9


class WaveformError(Exception):
    """A run whose waveforms cannot be timed exactly like the RTL's."""


def load_edges(params: CoreParams) -> int:
    """How many clock edges the host's load takes before the run pulse
    (``rtl/verification/cosim.py``, ``Lockstep._load``): every memory cell, registers 1..31
    and OV, one write each, after clearing GM (every cell) and G (32 registers) when the
    core has the gradient bank."""
    edges = params.memory_words + 31 + 1
    if params.gradient:
        edges += params.memory_words + 32
    return edges


def edge_time(edge: int) -> int:
    """The time of rising clock edge number ``edge`` (0 is the first)."""
    return edge * PERIOD + PERIOD // 2


def write_vcd(out: TextIO, image: Image, records: list[TraceRecord],
              registers: dict[int, int], memory: dict[int, int], *, direction: int = 1,
              params: CoreParams | None = None, fault: MachineFault | None = None,
              load: bool = False) -> int:
    """Write the waveforms of one run, in ``direction``, that halted or stopped on
    ``fault``; ``registers``/``memory`` are the words it started from, ``records`` its
    trace.  The file starts at the run pulse, the loaded registers as its initial values;
    with ``load`` it starts with the host's load, as the RTL's does.  Returns the number of
    clock edges."""
    from .cosim import overflow_count

    params = params or CoreParams(width=image.width)
    w, mask = params.width, (1 << params.width) - 1
    if fault is not None and fault.kind not in CORE_FAULTS:
        raise WaveformError(f"the run stopped on {fault.kind} ({FAULT_KINDS[fault.kind]}), "
                            "which the core does not have: it would run on")
    for address in [*memory, *(a for r in records for a, _, _ in r.memory)]:
        problem = params.memory_map.outside(address)
        if problem:
            raise WaveformError(f"{problem}: the core faults there")
    events: dict[int, list[tuple[str, int]]] = defaultdict(list)
    cleared = params.memory_words + 32 if params.gradient else 0
    for register in range(1, 32):  # the host writes registers 1..31 after every cell
        events[cleared + params.memory_words + register - 1].append(
            (f"bank{register}", registers.get(register, 0) & mask))
    run = load_edges(params)
    start = image.entry if direction > 0 else image.finish
    if start is None:
        raise WaveformError("a backward run needs the program's FINISH")
    # the core's fault_pc is its PC (rtl/hardware/control.py), so it moves with host__pc
    events[run] += [("host__busy", 1), ("host__pc", start), ("host__fault_pc", start),
                    ("host__br", 0),
                    ("host__dir_backward", int(direction < 0)), ("host__halted", 0)]
    values = [registers.get(r, 0) & mask for r in range(32)]
    br, ov, fetch, now_backward = 0, 0, run, direction < 0
    if not records and fault is None:  # pragma: no cover - every run retires or faults
        raise WaveformError("the run retired no instruction")
    for number, record in enumerate(records):
        word = image.words[record.pc] & 0xFFFFFFFF
        backward = record.direction < 0
        try:
            entry, _operands = word_entry(word)
            after_commit = step_timing(entry, backward, False, w).after_commit
            commit = fetch + step_cycles(word, backward, values, w) - after_commit
        except NotTimed as exc:
            where = f"line {record.location.line}" if record.location else f"pc {record.pc}"
            raise WaveformError(f"{record.text} at {where}: {exc}; its RTL timing is not "
                                "modelled (revasm rtl sim --vcd writes the RTL's own)") from None
        shape = step_shape(entry, backward)
        ov = (ov + overflow_count(record, image, values, w)) & mask
        if record.br is not None:
            br = record.br[1]
        after = record.dir_change[1] if record.dir_change else record.direction
        last = number == len(records) - 1
        if not last:
            next_pc = records[number + 1].pc
        elif fault is not None and fault.kind != "uncaught-jump" and fault.pc is not None:
            next_pc = fault.pc  # the instruction that faults: PC moved on to it
        else:
            next_pc = record.pc  # a halt (or an uncaught jump) keeps the PC
        events[commit] += [
            ("retire__valid", 1), ("retire__pc", record.pc), ("retire__insn", word),
            ("retire__backward_in", int(backward)), ("retire__br", br),
            ("retire__backward", int(after < 0)), ("retire__wa_en", int(shape.wa_en)),
            ("retire__wb_en", int(shape.wb_en)), ("retire__mem_en", int(shape.mem_en)),
            ("retire__out_en", int(shape.out_en)), ("retire__push", int(shape.push)),
            ("retire__pop", int(shape.pop)), ("retire__ov", ov),
            ("host__pc", next_pc), ("host__fault_pc", next_pc), ("host__br", br),
            ("host__dir_backward", int(after < 0)),
        ]
        events[commit + 1].append(("retire__valid", 0))
        b = decode(word)[1].get("b") if shape.wb_en else None
        for register, _old, new in record.registers:
            values[register] = new
            events[commit + 1 if register == b else commit].append((f"bank{register}", new))
        if last and fault is None:
            events[commit].append(("host__halted", 1))
        if last and fault is not None and fault.kind == "uncaught-jump":
            events[commit] += _fault_events(fault, record.pc)  # found as it commits
        if last and (fault is None or fault.kind == "uncaught-jump"):
            events[commit + 1 + int(shape.wb_en)].append(("host__busy", 0))  # NEXT
        fetch = commit + after_commit
        now_backward = after < 0
    if fault is not None and fault.kind != "uncaught-jump":
        pc = int(fault.pc if fault.pc is not None else start)
        edge = fetch + _edges_to_fault(fault.kind, pc, image, values, now_backward, params)
        events[edge] += [("host__busy", 0), *_fault_events(fault, pc)]
    initial: dict[str, int] = {}
    if not load:  # the load folded into time 0: its words are where the file starts
        for edge in sorted(edge for edge in events if edge < run):
            initial.update(events.pop(edge))
        events = defaultdict(list, {edge - run: changes for edge, changes in events.items()})
    end = max(events) + 2
    _write(out, params, events, end, initial)
    return end


#: The reference's fault kinds the core raises too (``rtl/hardware/core.py``,
#: ``rtl/hardware/control.py``); the others (step-limit, a strict machine's overflow,
#: no-finish) are the reference's own.
CORE_FAULTS = ("uncaught-jump", "illegal-instruction", "memory-address", "divide-by-zero",
               "domain-error", "tape-empty")


def _fault_events(fault: MachineFault, pc: int) -> list[tuple[str, int]]:
    return [("host__fault", 1), ("host__fault_kind", FAULT_CODE[fault.kind]),
            ("host__fault_pc", pc)]


def _edges_to_fault(kind: str, pc: int, image: Image, registers: list[int], backward: bool,
                    params: CoreParams) -> int:
    """Edges from the FETCH of the instruction at ``pc`` to the one where the core
    raises ``kind`` there (``rtl/hardware/core.py``): FETCH for a PC outside the memory, REGS for
    a word that is no instruction, the first WAIT for a memory address or an empty tape,
    the WAIT that sees the unit's fault (EXEC + the call's cycles)."""
    if kind == "illegal-instruction":
        return 1 if not 0 <= pc < params.memory_map.low_words else 3
    if kind in ("memory-address", "tape-empty"):
        return FIRST_COMMIT
    word = image.words[pc] & 0xFFFFFFFF  # divide-by-zero, domain-error: a unit's fault
    entry, operands = word_entry(word)
    template = (entry.backward if backward else entry.forward).format(**operands)
    return FIRST_COMMIT - 1 + sum(call_cycles(name, args, params.width) for name, args
                                  in traced_calls(template, params.width, R=list(registers)))


def _write(out: TextIO, params: CoreParams, events: dict[int, list[tuple[str, int]]],
           end: int, initial: dict[str, int]) -> None:
    widths = {"clk": 1, "host__busy": 1, "host__halted": 1, "host__pc": params.pc_width,
              "host__br": params.br_width, "host__dir_backward": 1, "retire__valid": 1,
              "retire__pc": params.pc_width, "retire__insn": 32, "retire__backward_in": 1,
              "retire__br": params.br_width, "retire__backward": 1, "retire__wa_en": 1,
              "retire__wb_en": 1, "retire__mem_en": 1, "retire__out_en": 1,
              "retire__push": 1, "retire__pop": 1, "retire__ov": params.width,
              "host__fault": 1, "host__fault_kind": Shape.cast(range(len(FAULT_NAMES))).width,
              "host__fault_pc": params.pc_width}
    with VCDWriter(out, timescale="1 fs", date="revasm run --vcd") as writer:
        signals = {name: writer.register_var("bench.top", name, "wire", size=size,
                                             init=initial.get(name, 0))
                   for name, size in widths.items()}
        for register in range(32):
            signals[f"bank{register}"] = writer.register_var(
                "bench.top.regfile", f"\\bank[{register}]", "wire", size=params.width,
                init=initial.get(f"bank{register}", 0))
        for edge in range(end):
            writer.change(signals["clk"], edge_time(edge), 1)
            for name, value in events.get(edge, ()):
                size = widths.get(name, params.width)
                writer.change(signals[name], edge_time(edge), value & ((1 << size) - 1))
            writer.change(signals["clk"], (edge + 1) * PERIOD, 0)
