"""The function unit: the table's elementary functions, bit-exact with ``isa/elementary.py``.

Each operation is the same integer algorithm as the Python definition, one
iteration per cycle.  Implemented so far: ``abs`` (one cycle) and ``sqrt``
(digit-by-digit, ``ceil((W - 1 + F) / 2)`` iterations, rounded to nearest
from the remainder).  Every other operation of ``semantics.FUNCTION_OPS``
answers with the ``unimplemented`` fault, which the co-simulation reports as
such (never as a result).
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .params import FAULT_CODE, FAULT_NAMES
from .semantics import FUNCTION_OPS

#: The operations this unit computes (vocabulary names).
IMPLEMENTED: frozenset[str] = frozenset({"fn_abs", "fn_sqrt"})


class FunctionUnit(wiring.Component):
    """``start`` with ``op`` (index into FUNCTION_OPS) and operands; ``done`` with results."""

    def __init__(self, width: int) -> None:
        self.width = width
        w = width
        super().__init__({
            "start": In(1), "op": In(range(len(FUNCTION_OPS))),
            "x": In(w), "y": In(w), "z": In(w),
            "done": Out(1), "r0": Out(w), "r1": Out(w),
            "fault": Out(1), "fault_kind": Out(range(len(FAULT_NAMES))),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        w = self.width
        f = w // 2
        sx = self.x.as_signed()
        sqrt_bits = (w - 1 + f + 1) // 2
        radicand = Signal(2 * sqrt_bits)
        root = Signal(sqrt_bits + 1)
        rem = Signal(sqrt_bits + 3)
        count = Signal(range(sqrt_bits + 1))

        def finish(m, value, fault=None):
            m.d.sync += [self.r0.eq(value), self.done.eq(1)]
            if fault is not None:
                m.d.sync += [self.fault.eq(1), self.fault_kind.eq(FAULT_CODE[fault])]
            m.next = "IDLE"

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [self.done.eq(0), self.fault.eq(0), self.fault_kind.eq(0)]
                    with m.Switch(self.op):
                        with m.Case(FUNCTION_OPS.index("fn_abs")):
                            maximum = (1 << (w - 1)) - 1
                            finish(m, Mux(sx >= 0, sx, Mux(sx == -(1 << (w - 1)), maximum, -sx)))
                        with m.Case(FUNCTION_OPS.index("fn_sqrt")):
                            with m.If(sx < 0):
                                finish(m, 0, "domain-error")
                            with m.Else():
                                m.d.sync += [radicand.eq(self.x << f), root.eq(0), rem.eq(0),
                                             count.eq(sqrt_bits)]
                                m.next = "SQRT"
                        with m.Default():
                            finish(m, 0, "unimplemented")
            with m.State("SQRT"):
                with m.If(count == 0):
                    finish(m, Mux(rem > root, root + 1, root))
                with m.Else():
                    shifted = Signal(sqrt_bits + 3)
                    trial = Signal(sqrt_bits + 3)
                    m.d.comb += [shifted.eq((rem << 2) | radicand[-2:]),
                                 trial.eq((root << 2) | 1)]
                    with m.If(shifted >= trial):
                        m.d.sync += [rem.eq(shifted - trial), root.eq((root << 1) | 1)]
                    with m.Else():
                        m.d.sync += [rem.eq(shifted), root.eq(root << 1)]
                    m.d.sync += [radicand.eq(radicand << 2), count.eq(count - 1)]
        return m
