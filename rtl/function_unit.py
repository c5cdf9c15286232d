"""The function unit: the table's elementary functions, bit-exact with ``isa/elementary.py``.

Each operation is the same integer algorithm as the Python definition (same
constants, from ``isa/elementary``'s tables, same iteration order and
rounding), one step per cycle, on a shared datapath: a shift-and-add
multiplier, a restoring divider and a CORDIC stage, each a small subroutine
of the sequencer (a return-state register picks where to go on).

Implemented: ``abs``; ``sqrt`` (digit by digit); ``sin``, ``cos``, ``tan``
(quadrant reduction with the wide pi/2, circular CORDIC in rotation mode, one
division for tan); ``atan``, ``atan2`` (octant reduction, leading-one
normalisation, circular CORDIC in vectoring mode); ``rot``/``irot`` (the
reduction by pi, tan(theta/2) and sin(theta) through the same routines, three
rounded products).  The hyperbolic family (``exp``, ``log``, ``pow``,
``sinh``, ``cosh``, ``tanh``) answers with the ``unimplemented`` fault, which
the co-simulation reports as such -- never as a result.
"""
from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.elementary import _TABLES
from revasm.isa.fixed_point import WordFormat
from revasm.isa.rotation import _pi_raw

from .params import FAULT_CODE, FAULT_NAMES
from .semantics import FUNCTION_OPS

#: The operations this unit computes (vocabulary names).
IMPLEMENTED: frozenset[str] = frozenset({
    "fn_abs", "fn_sqrt", "fn_sin", "fn_cos", "fn_tan", "fn_atan", "fn_atan2", "rot", "irot"})

OP = {name: code for code, name in enumerate(FUNCTION_OPS)}
# what the sin/cos/tan routine computes, and where it goes when done
FN_SIN, FN_COS, FN_TAN = 0, 1, 2
CONT_RESULT, CONT_ROT_TAN, CONT_ROT_SIN = 0, 1, 2


def _abs(v):
    return Mux(v < 0, -v, v)


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

    def elaborate(self, platform) -> Module:  # noqa: C901 - one sequencer
        m = Module()
        w = self.width
        t = _TABLES[w]
        f, p, g, e = t.frac, t.prec, t.guard, t.reduce_extra
        pi = _pi_raw(WordFormat(w))
        half_pi = pi >> 1
        wide = 2 * w + 8
        maximum, minimum = t.max_signed, t.min_signed
        sx = self.x.as_signed()

        op = Signal.like(self.op)
        # operands kept for the whole operation
        ox, oy, oz = Signal(w), Signal(w), Signal(w)
        # --- multiply subroutine: acc = mul_a * mul_b (unsigned) --------------------
        mul_a = Signal(wide)
        mul_b = Signal(w + 1)
        acc = Signal(wide)
        # --- divide subroutine: quot, rem = divmod(div_n, div_d) (unsigned) ------------
        div_n = Signal(wide)
        div_d = Signal(wide)
        quot = Signal(wide)
        rem = Signal(wide + 1)
        # --- CORDIC subroutine --------------------------------------------------------------
        cx, cy, cz = (Signal(signed(w + 4)) for _ in range(3))
        vectoring = Signal()
        count = Signal(range(wide + 1))
        ret = Signal(range(16))
        # --- sin/cos/tan routine state ---------------------------------------------------
        fn = Signal(range(3))
        cont = Signal(range(3))
        arg = Signal(signed(w + 1))  # the routine's argument
        arg_neg = Signal()
        ax = Signal(w + 1)
        q = Signal(w + 1)
        tan_neg = Signal()
        result = Signal(signed(wide + 2))
        # --- atan2 ---------------------------------------------------------------------------
        swap = Signal()
        ay_neg, ax_neg = Signal(), Signal()
        # --- rotation ------------------------------------------------------------------------
        theta = Signal(signed(w))
        reduced = Signal(signed(w + 1))
        negate = Signal()
        coef_t, coef_s = Signal(signed(w + 1)), Signal(signed(w + 1))
        vx, vy = Signal(w), Signal(w)
        rstep = Signal(range(4))
        fm_neg = Signal()
        # --- sqrt ------------------------------------------------------------------------------
        sqrt_bits = t.sqrt_bits
        radicand = Signal(2 * sqrt_bits)
        root = Signal(sqrt_bits + 1)
        srem = Signal(sqrt_bits + 3)

        angles = Array(Const(a, signed(w + 4)) for (_, _, a) in t.circular)
        shifts = Array(Const(i, range(w)) for (i, _, _) in t.circular)
        iterations = len(t.circular)

        RET = {name: i for i, name in enumerate(
            ("SC_Q", "SC_R", "SC_CORDIC", "TAN_DIV", "ROT_TURNS", "ROT_REDUCED", "FMUL",
             "ATAN_CORDIC"))}

        def call(name: str, back: str) -> None:
            m.d.sync += ret.eq(RET[back])
            m.next = name

        def finish(value, fault: str | None = None, second=None) -> None:
            m.d.sync += [self.r0.eq(value), self.done.eq(1)]
            if second is not None:
                m.d.sync += self.r1.eq(second)
            if fault is not None:
                m.d.sync += [self.fault.eq(1), self.fault_kind.eq(FAULT_CODE[fault])]
            m.next = "IDLE"

        def start_mul(a, b, back: str) -> None:
            m.d.sync += [mul_a.eq(a), mul_b.eq(b), acc.eq(0), count.eq(w + 1)]
            call("MUL", back)

        def start_div(n, d, back: str) -> None:
            m.d.sync += [div_n.eq(n), div_d.eq(d), quot.eq(0), rem.eq(0), count.eq(wide)]
            call("DIV", back)

        def start_sincos(angle, which: int, then: int) -> None:
            """sin/cos/tan of a signed angle (the routine of fx_sin/fx_cos/fx_tan)."""
            m.d.sync += [arg.eq(angle), fn.eq(which), cont.eq(then)]
            m.next = "SC_START"

        def saturate(v):
            return Mux(v > maximum, maximum, Mux(v < minimum, minimum, v))

        def round_p(v):
            return (v + t.half_guard) >> g

        def start_fmul(a, b) -> None:
            """fx_mul(S(a), S(b)) via magnitudes; the FMUL return finishes it."""
            m.d.sync += fm_neg.eq(a[-1] ^ b[-1])
            start_mul(_abs(a.as_signed()).as_unsigned(), _abs(b.as_signed()).as_unsigned(),
                      "FMUL")

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [self.done.eq(0), self.fault.eq(0), self.fault_kind.eq(0),
                                 op.eq(self.op), ox.eq(self.x), oy.eq(self.y), oz.eq(self.z)]
                    with m.Switch(self.op):
                        with m.Case(OP["fn_abs"]):
                            finish(Mux(sx >= 0, sx, Mux(sx == minimum, maximum, -sx)))
                        with m.Case(OP["fn_sqrt"]):
                            with m.If(sx < 0):
                                finish(0, "domain-error")
                            with m.Else():
                                m.d.sync += [radicand.eq(self.x << f), root.eq(0), srem.eq(0),
                                             count.eq(sqrt_bits)]
                                m.next = "SQRT"
                        with m.Case(OP["fn_sin"]):
                            start_sincos(sx, FN_SIN, CONT_RESULT)
                        with m.Case(OP["fn_cos"]):
                            start_sincos(sx, FN_COS, CONT_RESULT)
                        with m.Case(OP["fn_tan"]):
                            start_sincos(sx, FN_TAN, CONT_RESULT)
                        with m.Case(OP["fn_atan"]):
                            m.d.sync += [ox.eq(self.x), oy.eq(1 << f)]  # atan2(x, 1)
                            m.next = "ATAN"
                        with m.Case(OP["fn_atan2"]):
                            m.d.sync += [ox.eq(self.x), oy.eq(self.y)]  # atan2(y=b, x=c)
                            m.next = "ATAN"
                        with m.Case(OP["rot"], OP["irot"]):
                            m.d.sync += [theta.eq(self.z.as_signed()), vx.eq(self.x),
                                         vy.eq(self.y)]
                            m.next = "ROT"
                        with m.Default():
                            finish(0, "unimplemented")

            # --- subroutines ---------------------------------------------------------------
            def go_back() -> None:
                with m.Switch(ret):
                    for name, code in RET.items():
                        with m.Case(code):
                            m.next = name

            with m.State("MUL"):
                with m.If(count == 0):
                    go_back()
                with m.Else():
                    with m.If(mul_b[0]):
                        m.d.sync += acc.eq(acc + mul_a)
                    m.d.sync += [mul_a.eq(mul_a << 1), mul_b.eq(mul_b >> 1),
                                 count.eq(count - 1)]
            with m.State("DIV"):
                with m.If(count == 0):
                    go_back()
                with m.Else():
                    trial = Signal(wide + 1)
                    m.d.comb += trial.eq((rem << 1) | div_n[-1])
                    with m.If(trial >= div_d):
                        m.d.sync += [rem.eq(trial - div_d), quot.eq((quot << 1) | 1)]
                    with m.Else():
                        m.d.sync += [rem.eq(trial), quot.eq(quot << 1)]
                    m.d.sync += [div_n.eq(div_n << 1), count.eq(count - 1)]
            with m.State("CORDIC"):
                with m.If(count == iterations):
                    go_back()
                with m.Else():
                    i = shifts[count]
                    half = (Const(1, w + 1) << i) >> 1
                    dy = ((cy + half) >> i)
                    dx = ((cx + half) >> i)
                    sigma = Mux(vectoring, cy < 0, cz >= 0)
                    with m.If(sigma):
                        m.d.sync += [cx.eq(cx - dy), cy.eq(cy + dx), cz.eq(cz - angles[count])]
                    with m.Else():
                        m.d.sync += [cx.eq(cx + dy), cy.eq(cy - dx), cz.eq(cz + angles[count])]
                    m.d.sync += count.eq(count + 1)

            # --- sqrt --------------------------------------------------------------------------
            with m.State("SQRT"):
                with m.If(count == 0):
                    finish(Mux(srem > root, root + 1, root))
                with m.Else():
                    shifted = Signal(sqrt_bits + 3)
                    trial_s = Signal(sqrt_bits + 3)
                    m.d.comb += [shifted.eq((srem << 2) | radicand[-2:]),
                                 trial_s.eq((root << 2) | 1)]
                    with m.If(shifted >= trial_s):
                        m.d.sync += [srem.eq(shifted - trial_s), root.eq((root << 1) | 1)]
                    with m.Else():
                        m.d.sync += [srem.eq(shifted), root.eq(root << 1)]
                    m.d.sync += [radicand.eq(radicand << 2), count.eq(count - 1)]

            # --- sin / cos / tan (fx_sin, fx_cos, fx_tan) ------------------------------------------
            with m.State("SC_START"):
                magnitude = _abs(arg).as_unsigned()[:w + 1]
                m.d.sync += [arg_neg.eq(arg < 0), ax.eq(magnitude)]
                start_mul(magnitude, t.two_over_pi, "SC_Q")
            with m.State("SC_Q"):
                qv = (acc + (1 << (f + w - 1))) >> (f + w)
                m.d.sync += q.eq(qv)
                start_mul(t.half_pi_wide, qv, "SC_R")
            with m.State("SC_R"):
                wide_r = Signal(signed(wide + 2))
                m.d.comb += wide_r.eq((ax << (g + e)) - acc)
                m.d.sync += [cz.eq((wide_r + (1 << (e - 1))) >> e), cx.eq(t.circular_x0),
                             cy.eq(0), vectoring.eq(0), count.eq(0)]
                call("CORDIC", "SC_CORDIC")
            with m.State("SC_CORDIC"):
                c, s = cx, cy
                quadrant = q[:2]
                sin_sel = Signal(signed(w + 5))
                cos_sel = Signal(signed(w + 5))
                with m.Switch(quadrant):
                    for k, (sv, cv) in enumerate(((s, c), (c, -s), (-s, -c), (-c, s))):
                        with m.Case(k):
                            m.d.comb += [sin_sel.eq(sv), cos_sel.eq(cv)]
                sin_v = round_p(sin_sel)
                with m.Switch(fn):
                    with m.Case(FN_SIN):
                        m.d.sync += result.eq(Mux(arg_neg, -sin_v, sin_v))
                        m.next = "SC_DONE"
                    with m.Case(FN_COS):
                        m.d.sync += result.eq(round_p(cos_sel))
                        m.next = "SC_DONE"
                    with m.Case(FN_TAN):
                        num = Mux(q[0], c, s)
                        den = Mux(q[0], -s, c)
                        m.d.sync += tan_neg.eq((num < 0) ^ (den < 0) ^ arg_neg)
                        with m.If(den == 0):
                            m.d.sync += result.eq(Mux((num < 0) ^ arg_neg, -(maximum + 1),
                                                      maximum + 1))
                            m.next = "SC_DONE"
                        with m.Else():
                            n_abs = _abs(num).as_unsigned()
                            d_abs = _abs(den).as_unsigned()
                            start_div((n_abs << (f + 1)) + d_abs, d_abs << 1, "TAN_DIV")
            with m.State("TAN_DIV"):
                m.d.sync += result.eq(Mux(tan_neg, -quot, quot))
                m.next = "SC_DONE"
            with m.State("SC_DONE"):
                value = Mux(fn == FN_TAN, saturate(result), result)
                with m.Switch(cont):
                    with m.Case(CONT_RESULT):
                        finish(value)
                    with m.Case(CONT_ROT_TAN):
                        m.d.sync += coef_t.eq(value)
                        start_sincos(reduced, FN_SIN, CONT_ROT_SIN)
                    with m.Case(CONT_ROT_SIN):
                        m.d.sync += [coef_s.eq(value), rstep.eq(0)]
                        m.next = "ROT_SHEAR"

            # --- atan2 (fx_atan2; atan(x) = atan2(x, 1)) ---------------------------------------------
            with m.State("ATAN"):
                yv, xv = ox.as_signed(), oy.as_signed()  # ox = y, oy = x
                ay_v, ax_v = _abs(yv).as_unsigned()[:w], _abs(xv).as_unsigned()[:w]
                swap_v = ay_v > ax_v
                big = Mux(swap_v, ay_v, ax_v)
                small = Mux(swap_v, ax_v, ay_v)
                m.d.sync += [swap.eq(swap_v), ay_neg.eq(yv < 0), ax_neg.eq(xv < 0)]
                with m.If(big == 0):
                    finish(0)
                with m.Else():
                    # shift = P - 1 - bit_length(big)
                    length = Signal(range(w + 1))
                    for bit in range(w):
                        with m.If(big[bit]):
                            m.d.comb += length.eq(bit + 1)
                    shift = Signal(signed(8))
                    m.d.comb += shift.eq(p - 1 - length)
                    with m.If(shift >= 0):
                        m.d.sync += [cx.eq(big << shift.as_unsigned()),
                                     cy.eq(small << shift.as_unsigned())]
                    with m.Else():
                        m.d.sync += [cx.eq(big >> (-shift).as_unsigned()),
                                     cy.eq(small >> (-shift).as_unsigned())]
                    m.d.sync += [cz.eq(0), vectoring.eq(1), count.eq(0)]
                    call("CORDIC", "ATAN_CORDIC")
            with m.State("ATAN_CORDIC"):
                a1 = Mux(swap, t.half_pi_p - cz, cz)
                a2 = Mux(ax_neg, t.pi_p - a1, a1)
                v = round_p(a2)
                finish(Mux(ay_neg, -v, v))

            # --- rot / irot (isa/rotation.py) ------------------------------------------------------------
            with m.State("ROT"):
                with m.If(theta > half_pi):
                    start_div(theta - half_pi + pi - 1, pi, "ROT_TURNS")
                with m.Elif(theta < -half_pi):
                    start_div(-half_pi - theta + pi - 1, pi, "ROT_TURNS")
                with m.Else():
                    m.d.sync += [reduced.eq(theta), negate.eq(0)]
                    start_sincos(theta >> 1, FN_TAN, CONT_ROT_TAN)
            with m.State("ROT_TURNS"):
                m.d.sync += negate.eq(quot[0])
                start_mul(pi, quot, "ROT_REDUCED")
            with m.State("ROT_REDUCED"):
                r = Mux(theta > 0, theta - acc, theta + acc)
                m.d.sync += reduced.eq(r)
                start_sincos(r >> 1, FN_TAN, CONT_ROT_TAN)
            with m.State("ROT_SHEAR"):
                is_rot = op == OP["rot"]
                # rot: negate first, then x -= t*y; y += s*x; x -= t*y
                # irot: x += t*y; y -= s*x; x += t*y, then negate
                with m.Switch(rstep):
                    with m.Case(0):
                        with m.If(is_rot & negate):
                            m.d.sync += [vx.eq(-vx), vy.eq(-vy)]
                            start_fmul(coef_t[:w], (-vy)[:w])
                        with m.Else():
                            start_fmul(coef_t[:w], vy)
                    with m.Case(1):
                        start_fmul(coef_s[:w], vx)
                    with m.Case(2):
                        start_fmul(coef_t[:w], vy)
                    with m.Case(3):
                        with m.If(~is_rot & negate):
                            finish((-vx)[:w], second=(-vy)[:w])
                        with m.Else():
                            finish(vx, second=vy)
            with m.State("FMUL"):
                is_rot = op == OP["rot"]
                prod = Mux(fm_neg, -acc, acc)
                term = Signal(w)
                m.d.comb += term.eq((prod + (1 << (f - 1))) >> f)
                with m.Switch(rstep):
                    with m.Case(0, 2):
                        m.d.sync += vx.eq(Mux(is_rot, vx - term, vx + term))
                    with m.Case(1):
                        m.d.sync += vy.eq(Mux(is_rot, vy + term, vy - term))
                m.d.sync += rstep.eq(rstep + 1)
                m.next = "ROT_SHEAR"
        return m
