"""Fixed-point multiply and divide, sequential (one bit per cycle), bit-exact with
``isa/elementary.fx_mul`` / ``fx_div`` as the vocabulary's ``fmul``/``fdiv`` use them.

``fmul``: ``floor(S(x) S(y) / 2^F + 1/2)`` mod 2^W -- a shift-and-add product of
the magnitudes (W cycles), its sign, then one rounding add.
``fdiv``: ``round(S(x) 2^F / S(y))``, ties away from zero, mod 2^W -- restoring
division of ``2|x| 2^F + |y|`` by ``2|y|`` (W + F + 2 cycles), then the sign;
``y = 0`` raises ``fault`` (divide-by-zero) instead.
A sequential unit keeps the core small on an iCE40 without DSPs; the rejected
alternative (one combinational W x W product) costs about a thousand LUT4.
``overflow`` rises with ``result`` when the rounded product or quotient does not fit
W bits signed (the vocabulary's ``ovf_mul``/``ovf_div``): the product's bits above the
word, or a quotient bit shifted out of ``quot`` or a magnitude past the signed range.
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.timing.units import MULDIV_OPS, product_steps, quotient_steps

OP_MUL = MULDIV_OPS.index("fmul")
OP_DIV = MULDIV_OPS.index("fdiv")


class MulDiv(wiring.Component):
    """``start`` with ``op``, ``x``, ``y``; ``done`` rises with ``result`` (or ``fault``)."""

    def __init__(self, width: int) -> None:
        self.width = width
        super().__init__({
            "start": In(1), "op": In(range(len(MULDIV_OPS))), "x": In(width), "y": In(width),
            "done": Out(1), "fault": Out(1), "result": Out(width), "overflow": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w = self.width
        f = w // 2
        nbits = quotient_steps(w)
        sx, sy = self.x.as_signed(), self.y.as_signed()
        neg = Signal()
        count = Signal(range(nbits + 1))
        # multiply
        multiplicand = Signal(2 * w)
        multiplier = Signal(w)
        acc = Signal(2 * w)
        # divide
        numerator = Signal(nbits)
        divisor = Signal(w + 1)
        rem = Signal(w + 2)
        quot = Signal(w)
        lost = Signal()  # a quotient bit shifted out of quot

        mag_x = Signal(w)
        mag_y = Signal(w)
        m.d.comb += [mag_x.eq(magnitude(sx)), mag_y.eq(magnitude(sy))]

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [self.done.eq(0), self.fault.eq(0), self.overflow.eq(0),
                                 lost.eq(0), neg.eq(sx[w - 1] ^ sy[w - 1])]
                    with m.If(self.op == OP_MUL):
                        m.d.sync += [multiplicand.eq(mag_x), multiplier.eq(mag_y), acc.eq(0),
                                     count.eq(product_steps(w))]
                        m.next = "MUL"
                    with m.Elif(self.y == 0):
                        m.d.sync += [self.done.eq(1), self.fault.eq(1)]
                    with m.Else():
                        m.d.sync += [numerator.eq((mag_x << (f + 1)) + mag_y),
                                     divisor.eq(mag_y << 1), rem.eq(0), quot.eq(0),
                                     count.eq(nbits)]
                        m.next = "DIV"
            with m.State("MUL"):
                with m.If(count == 0):
                    product = Signal(2 * w + 1)
                    m.d.comb += product.eq(negate_if(neg, acc))
                    rounded = Signal(2 * w + 2)
                    m.d.comb += rounded.eq((product.as_signed() + (1 << (f - 1))) >> f)
                    top = rounded[w - 1:]  # all equal when the rounded product fits
                    m.d.sync += [self.result.eq(rounded), self.done.eq(1),
                                 self.overflow.eq((top != 0) & (top != (1 << len(top)) - 1))]
                    m.next = "IDLE"
                with m.Else():
                    with m.If(multiplier[0]):
                        m.d.sync += acc.eq(acc + multiplicand)
                    m.d.sync += [multiplicand.eq(multiplicand << 1),
                                 multiplier.eq(multiplier >> 1), count.eq(count - 1)]
            with m.State("DIV"):
                with m.If(count == 0):
                    # |q| fits when below 2^(W-1), or equal to it with the sign negative
                    big = quot[w - 1] & (~neg | (quot[:w - 1] != 0))
                    m.d.sync += [self.result.eq(negate_if(neg, quot)), self.done.eq(1),
                                 self.overflow.eq(lost | big)]
                    m.next = "IDLE"
                with m.Else():
                    trial = Signal(w + 2)
                    m.d.comb += trial.eq((rem << 1) | numerator[nbits - 1])
                    with m.If(trial >= divisor):
                        m.d.sync += [rem.eq(trial - divisor), quot.eq((quot << 1) | 1)]
                    with m.Else():
                        m.d.sync += [rem.eq(trial), quot.eq(quot << 1)]
                    with m.If(quot[w - 1]):
                        m.d.sync += lost.eq(1)
                    m.d.sync += [numerator.eq(numerator << 1), count.eq(count - 1)]
        return m


def magnitude(v: Value) -> Value:
    """|v| of a signed value, as an unsigned value of the same width (|min| fits)."""
    return Mux(v < 0, -v, v).as_unsigned()[:len(v)]


def negate_if(neg: Value, v: Value) -> Value:
    """``-v`` when ``neg``, else ``v`` (a signed value one bit wider than ``v``)."""
    return Mux(neg, -v, v)
