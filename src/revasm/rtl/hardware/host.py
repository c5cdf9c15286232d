"""The host interface and the retire port: the core's two outside connections.

Host side (the NiLang co-processor protocol): while the core is idle the host
writes the image and data into memory and values into registers, reads them
back, sets the start PC and DIR, pulses ``run``, and watches ``busy``,
``halted``, ``fault``, ``fault_kind`` (``params.FAULT_NAMES``), ``fault_pc`` and
``fault_addr`` (the W-bit address of a ``memory-address`` fault: outside the memory
map's windows, ``rtl/hardware/memory_map.py``, or a code cell).  The host addresses memory by
physical cell (``mem_addr``).  With the gradient bank, ``greg_we``/``gmem_we`` write
the gradient bank at ``reg_addr``/``mem_addr``, ``greg_rdata``/``gmem_rdata`` read
it back, and ``grad`` is the gradient switch (sampled at ``run``).  ``ov`` reads the
overflow counter OV; ``ov_we`` writes it from ``reg_wdata``.

The retire port (after RISC-V's RVFI) reports every executed instruction the
cycle after it commits: its PC and word, DIR before, BR and DIR after, the
register writes (up to two), the memory write, the output word and OV after it.
"""
from __future__ import annotations

from amaranth.hdl import signed
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from .params import FAULT_NAMES, CoreParams


def host_signature(params: CoreParams) -> wiring.Signature:
    """Seen from the host (the initiator): ``Out`` members are driven by the host."""
    w, abits = params.width, params.address_bits
    grad = {"grad": Out(1), "greg_we": Out(1), "gmem_we": Out(1),
            "greg_rdata": wiring.In(w), "gmem_rdata": wiring.In(w)} if params.gradient else {}
    return wiring.Signature({
        **grad,
        "mem_addr": Out(abits), "mem_wdata": Out(w), "mem_code": Out(1), "mem_we": Out(1),
        "mem_rdata": wiring.In(w + 1),
        "reg_addr": Out(5), "reg_wdata": Out(w), "reg_we": Out(1), "reg_rdata": wiring.In(w),
        "ov_we": Out(1), "ov": wiring.In(w),
        "start_pc": Out(abits), "backward": Out(1), "run": Out(1),
        "busy": wiring.In(1), "halted": wiring.In(1), "fault": wiring.In(1),
        "fault_kind": wiring.In(range(len(FAULT_NAMES))),
        "fault_pc": wiring.In(signed(params.pc_width)), "fault_addr": wiring.In(w),
        "pc": wiring.In(signed(params.pc_width)), "br": wiring.In(signed(params.br_width)),
        "dir_backward": wiring.In(1), "tape_count": wiring.In(range(params.tape_words + 1)),
    })


def retire_signature(params: CoreParams) -> wiring.Signature:
    """Seen from the core (which drives every member)."""
    w = params.width
    return wiring.Signature({
        "valid": Out(1), "pc": Out(signed(params.pc_width)), "insn": Out(32),
        "backward_in": Out(1), "br": Out(signed(params.br_width)), "backward": Out(1),
        "wa_en": Out(1), "wa_addr": Out(5), "wa_data": Out(w),
        "wb_en": Out(1), "wb_addr": Out(5), "wb_data": Out(w),
        "mem_en": Out(1), "mem_addr": Out(w), "mem_data": Out(w),
        "out_en": Out(1), "out_data": Out(w), "push": Out(1), "pop": Out(1),
        "ov": Out(w),
    })
