"""The function unit: the table's elementary functions, bit-exact with ``isa/elementary.py``.

Each operation is the same integer algorithm as the Python definition (same
constants, from ``isa/elementary``'s tables, same iteration order and
rounding), one step per cycle, on a shared datapath: a signed shift-and-add
multiplier (one bit per cycle, one adder), a restoring divider (sqrt on its
registers and comparator) and a CORDIC stage, each a small subroutine of the
sequencer (a return-state register picks where to go on), and one shifter
(floor or rounded half-up, then negated or not) that every state drives for
its scaling, normalisation, rounding, magnitudes and negations -- and the
CORDIC for both shifts of an iteration, which takes three cycles.  The
shifter's inputs are registers, so a state that drives it takes two cycles,
the first with the sequencer held (``TWO_CYCLE_STATES``): that splits the
unit's longest path for 25 MHz on the iCE40 (docs/decisions.md).  The
multiplier starts from the preload 2**(s-1), so a rounded product is
``acc >> s`` as ``isa/elementary`` writes it.  Values that many states drive
reach their register or the shifter through one input each (the shifter's
inputs are deduplicated, the result is a constant or the shifter's output),
which is where the unit's area went (docs/rtl.md, ``rtl/synthesis/area.py``).  With
``arith`` the unit does the multiply/divide unit's ``fmul``/``fdiv`` (``op``
then indexes MULDIV_OPS), so a core with this unit needs no other
(docs/decisions.md; cycles per function: docs/rtl.md, ``isa/timing/units.py``, whose
constants -- ``TWO_CYCLE_STATES``, ``multiplier_steps``, ``divider_steps`` -- size this
unit's sequencer).

Implemented: ``abs``; ``sqrt`` (digit by digit); ``sin``, ``cos``, ``tan``
(quadrant reduction with the wide pi/2, circular CORDIC in rotation mode, one
division for tan); ``atan``, ``atan2`` (octant reduction, leading-one
normalisation, circular CORDIC in vectoring mode); ``rot``/``irot`` (the
reduction by pi, tan(theta/2) and sin(theta) through the same routines, three
rounded products); ``exp``, ``sinh``, ``cosh``, ``tanh`` (reduction by ln 2,
hyperbolic CORDIC in rotation mode, one division for tanh); ``sigmoid`` (the same
routine on ``|x| / 2``, then tanh's division of ``e**r`` or ``4**-k e**-r`` by their
sum); ``log``
(leading-one normalisation, hyperbolic CORDIC in vectoring mode); ``pow``
(``exp(y ln x)`` through the same two routines).  An operation code outside
the table's list answers with the ``unimplemented`` fault.

The operation list is the primitives table's ``function`` rows (``isa/primitives.py``;
the position is the op code).  A row with no routine here is refused when the unit is
built (:class:`MissingRoutine`), so a new primitive cannot reach the hardware as a
silent fault: it needs its routine, or its rows belong to another unit.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from amaranth.hdl import Array, Cat, Const, EnableInserter, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from revasm.isa.elementary import TABLES, Tables, pi_raw
from revasm.isa.timing.units import TWO_CYCLE_STATES, divider_steps, multiplier_steps

from .params import FAULT_CODE, FAULT_NAMES, word_format
from .semantics import FUNCTION_OPS, MULDIV_OPS

#: The operations this unit has a routine for (vocabulary names).
IMPLEMENTED: frozenset[str] = frozenset({
    "fn_abs", "fn_sqrt", "fn_sin", "fn_cos", "fn_tan", "fn_atan", "fn_atan2", "rot", "irot",
    "fn_exp", "fn_sinh", "fn_cosh", "fn_tanh", "fn_log", "fn_pow", "fn_sigmoid"})


class MissingRoutine(NotImplementedError):
    """The primitives table gives the function unit an operation it has no routine for."""


def check_routines(operations: tuple[str, ...] | None = None) -> None:
    """Refuse a function-unit operation list (default: the table's, ``FUNCTION_OPS``) with
    a primitive this unit cannot compute (:class:`MissingRoutine`, naming each), or a
    routine the table does not list."""
    if operations is None:
        operations = FUNCTION_OPS
    missing = [name for name in operations if name not in IMPLEMENTED]
    if missing:
        raise MissingRoutine(
            f"the function unit has no routine for {', '.join(missing)}: the primitives "
            "table (isa/primitives.py) puts them on the function unit, so the RTL cannot be "
            "built until rtl/hardware/function_unit.py computes them (a state sequence added to "
            "FunctionUnit.elaborate and the names to IMPLEMENTED), bit for bit as their "
            "reference implementation")
    unknown = sorted(IMPLEMENTED - set(operations))
    if unknown:
        raise MissingRoutine(f"the function unit has routines for {', '.join(unknown)}, "
                             "which the primitives table does not put on it")

OP = {name: code for code, name in enumerate(FUNCTION_OPS)}
# what the sin/cos/tan routine computes, and where it goes when done
FN_SIN, FN_COS, FN_TAN = 0, 1, 2
CONT_RESULT, CONT_ROT_TAN, CONT_ROT_SIN = 0, 1, 2
# what the exp routine finishes as
HX_OPS = ("fn_exp", "fn_sinh", "fn_cosh", "fn_tanh")
HX_EXP, HX_SINH, HX_COSH, HX_TANH = range(4)
HX_SIGMOID = 4  # the exp routine on |x| / 2, then a division (fx_sigmoid)
# the states a subroutine (MUL, DIV, CORDIC) returns to
_RETURNS = ("SC_Q", "SC_R", "SC_CORDIC", "TAN_DIV", "ROT_TURNS", "ROT_REDUCED", "FMUL",
            "ATAN_CORDIC", "HX_K", "HX_R", "HX_CORDIC", "TANH_DIV", "LOG_Z", "LOG_E", "POW_Z",
            "ARITH_MUL", "ARITH_DIV")


def multiplicand_bits(width: int) -> int:
    """Bits of the multiplicand register: the widest of pi/2 at P + E bits (the
    reduction of sin/cos/tan), ln 2 at P + 8 bits, y ln x's ln x (W + 12 bits), signed."""
    t = TABLES[width]
    return max(t.half_pi_wide.bit_length(), t.ln2_wide.bit_length(), width + 11) + 1


def _repeats(t: Tables) -> tuple[int, ...]:
    """The hyperbolic iterations (positions in ``t.hyperbolic``) that repeat a shift."""
    shifts = [i for i, _, _ in t.hyperbolic]
    return tuple(k for k in range(1, len(shifts)) if shifts[k] == shifts[k - 1])


def _leading_angles(t: Tables) -> int:
    """How many leading CORDIC iterations have an angle other than 2**(P - i): beyond
    them atan(2**-i) and atanh(2**-i) round to 2**-i at P bits, a decoded power of two."""
    def differs(table):
        return [k for k, (i, _, a) in enumerate(table) if a != 1 << (t.prec - i)]
    return max(differs(t.circular) + differs(t.hyperbolic)) + 1


def cordic_schedule(t: Tables, k: int, hyper: bool) -> tuple[int, int]:
    """Iteration ``k``'s shift and angle as the unit forms them: the shift k (circular)
    or k + 1 less the repeats so far (hyperbolic); the angle from a table of the leading
    iterations, else 2**(P - shift).  ``tests/rtl/hardware/test_units.py`` checks every
    iteration against the CORDIC tables of ``isa/elementary``."""
    shift = k + 1 - sum(k >= r for r in _repeats(t)) if hyper else k
    if k < _leading_angles(t):
        return shift, (t.hyperbolic if hyper else t.circular)[k][2]
    return shift, 1 << (t.prec - shift)


class FunctionUnit(wiring.Component):
    """``start`` with ``op`` (index into FUNCTION_OPS) and operands; ``done`` with results."""

    def __init__(self, width: int) -> None:
        self.width = width
        w = width
        super().__init__({
            "start": In(1), "op": In(range(max(len(FUNCTION_OPS), len(MULDIV_OPS)))),
            # 1: ``op`` indexes MULDIV_OPS (fmul, fdiv: the multiply/divide unit's work)
            "arith": In(1),
            "x": In(w), "y": In(w), "z": In(w),
            # r0 (and overflow, fault) hold until the next call is done; r1, rot/irot's
            # second word, is the unit's y register: it holds until the next start
            "done": Out(1), "r0": Out(w), "r1": Out(w),
            # with done after rot/irot: the rotation wrapped (ovf_rot/ovf_irot); else 0
            "overflow": Out(1),
            "fault": Out(1), "fault_kind": Out(range(len(FAULT_NAMES))),
        })

    def elaborate(self, platform: object) -> Module:  # one sequencer
        check_routines()
        # the sequencer's registers hold in the first cycle of a two-cycle state (``stall``);
        # the shifter's input registers and the phase are outside it, in ``outer``
        outer = Module()
        m = Module()
        w = self.width
        t = TABLES[w]
        f, p, g, e = t.frac, t.prec, t.guard, t.reduce_extra
        pi = pi_raw(word_format(w))
        half_pi = pi >> 1
        wide = 2 * w + 8
        div_bits = divider_steps(w)
        maximum, minimum = t.max_signed, t.min_signed
        op = Signal.like(self.op)
        arith = Signal()
        # operands kept for the whole operation
        ox, oy, oz = Signal(w, name="ox"), Signal(w, name="oy"), Signal(w, name="oz")
        sx = ox.as_signed()
        # --- multiply subroutine: acc = preload + mul_a * mul_b (signed) ------------------
        # shift-and-add from the multiplier's low bit: the running sum's top part ``hi``
        # takes mul_a once per multiplier bit (subtracts it for the sign bit), then hi:lo
        # shifts right, so the product's low bits fill ``lo`` as the multiplier leaves it
        mul_a = Signal(signed(multiplicand_bits(w)))
        preload_bits = f + w  # the largest preload is 2**(F + W - 1)
        hi = Signal(signed(max(len(mul_a), preload_bits + 1) + 1))
        lo = Signal(w + 1)  # the multiplier (signed), then the product's low bits
        acc = Signal(signed(len(hi) + len(lo)))
        m.d.comb += acc.eq(Cat(lo, hi))
        # --- divide subroutine: quot, rem = divmod(div_n, div_d) (unsigned) ------------
        # the quotient's bits shift into div_n as the dividend's leave it (quot is div_n);
        # sqrt runs on the same registers and comparator: the radicand in div_n, the root
        # in div_d, the remainder in rem
        # every dividend is below 2**(W + F + 4), every divisor below 2**(W + 4)
        div_n = Signal(div_bits)
        div_d = Signal(w + 4)
        quot = div_n
        rem = Signal(w + 4)
        # --- CORDIC subroutine --------------------------------------------------------------
        cx, cy = Signal(signed(w + 4), name="cx"), Signal(signed(w + 4), name="cy")
        cz = Signal(signed(w + 6))  # also exp's argument, below (W + 2) 2**P
        # round(y >> i), the first half of an iteration; after the hyperbolic rotation,
        # round(e**-r * 4**-k * 2**P) (em_scaled)
        cdx = Signal(signed(w + 6))
        vectoring = Signal()
        count = Signal(range(wide + 1))
        ret = Signal(range(len(_RETURNS)))
        # --- sin/cos/tan routine state ---------------------------------------------------
        fn = Signal(range(3))
        cont = Signal(range(3))
        arg = Signal(signed(w + 2))  # the routine's argument, then its magnitude (ax)
        arg_neg = Signal()
        ax = arg
        q = Signal(w + 1)
        tan_neg = Signal()  # the quotient's sign (tan, tanh)
        result = Signal(signed(w))  # the routine's result, saturated
        # a rounded quotient: the divider gives floor(2 n 2**F / d) for floor((2 n 2**F + d) /
        # (2 d)) = (that + 1) >> 1, one rounded shift on the shifter; ``strict`` rounds a
        # tie down instead (tanh's negative numerator, floor division)
        strict = Signal()
        quot_tie = Signal()
        quot_big = Signal()  # the rounded quotient is at least 2**(W + 5): beyond any word
        m.d.comb += [quot_tie.eq(quot[0] & (rem == 0)), quot_big.eq(quot[w + 6:].any())]
        # --- atan2 ---------------------------------------------------------------------------
        swap = Signal()
        ay_neg, ax_neg = Signal(name="ay_neg"), Signal(name="ax_neg")
        # --- rotation ------------------------------------------------------------------------
        # the angle theta, then theta reduced by pi to [-pi/2, pi/2]
        reduced = Signal(signed(w + 1))
        theta = reduced
        negate = Signal()
        coef_t = Signal(signed(w + 1), name="coef_t")  # tan(theta / 2)
        vx, vy = ox, oy  # rot's words: the operands x, y as loaded
        m.d.comb += self.r1.eq(vy)  # rot/irot's second word (a copy would be a register)
        rstep = Signal(range(4))
        # --- exp family and log ----------------------------------------------------------------
        hyper = Signal()
        hfn = Signal(range(HX_SIGMOID + 1))
        # the exp routine's argument z, within +-lim (the callers saturate beyond), waits
        # in cz until the reduction r = z - k ln 2 replaces it there
        hz = cz
        # exp's k (|k| < (W + 2) / ln 2 + 1); log's exponent e before it
        kk = Signal(signed(8))
        ee = kk
        h_neg = Signal()
        # a signed product rounded to a shift s, acc >> s (see start_mul), narrowed to
        # the W + 8 bits every consumer needs: one negation for all of them
        pterm = Signal(signed(w + 8))
        # --- sqrt ------------------------------------------------------------------------------
        sqrt_bits = t.sqrt_bits
        radicand, root, srem = div_n, div_d, rem

        # --- the shared shifter: sh_out = +-(sh_in * 2**-sh_amount), floor or rounded -------------
        # one barrel for every scaling, normalisation and rounding of the pre- and
        # post-processing and for one of the CORDIC's two shifts (each state drives it)
        sw = w + 8
        sh_in = Signal(signed(sw))
        sh_amount = Signal(signed(8))  # > 0: right shift; <= 0: left shift by -sh_amount
        sh_round = Signal()  # a right shift rounds half-up (floor((v + 2**(n-1)) / 2**n))
        sh_negate = Signal()
        # round a tie of a shift by G down instead (then negated: the half-up rounding of
        # the negated value, -floor((v + 2**(G-1) - 1) / 2**G)): sin/cos of quadrants 1-3
        sh_half_down = Signal()
        sh_out = Signal(signed(sw))
        # the inputs as the state drove them in the cycle before (TWO_CYCLE_STATES)
        sh_in_r = Signal.like(sh_in)
        sh_amount_r = Signal.like(sh_amount)
        sh_round_r, sh_negate_r, sh_half_down_r = Signal(), Signal(), Signal()
        outer.d.sync += [sh_in_r.eq(sh_in), sh_amount_r.eq(sh_amount), sh_round_r.eq(sh_round),
                       sh_negate_r.eq(sh_negate), sh_half_down_r.eq(sh_half_down)]
        sh_left = p - 1  # the largest left shift (atan's and log's normalisation)
        rounding = Signal()
        funnel_shift = Signal(range(sh_left + w + 6))
        shifted = Signal(signed(sw + 1))
        rounded = Signal(signed(sw + 1))
        # a rounded shift by n is a floor shift by n - 1, then (v + 1) >> 1: no mask, no decoder
        m.d.comb += [rounding.eq(sh_round_r & (sh_amount_r > 0)),
                     funnel_shift.eq(sh_left + sh_amount_r - rounding),
                     shifted.eq((sh_in_r << sh_left) >> funnel_shift),
                     rounded.eq(Mux(rounding, (shifted + ~(sh_half_down_r & (sh_in_r[:g - 1] == 0)))
                                    >> 1, shifted)),
                     sh_out.eq(Mux(sh_negate_r, -rounded, rounded))]

        # the shifter's distinct inputs, in the order of first use: one multiplexer input
        # each, however many states shift the same value (picked by sh_source)
        sh_sources: list[Value] = []
        sh_source = Signal(range(32))
        # a two-cycle state's second cycle (phase) or first (stall)
        phase, stall = Signal(), Signal()
        # the state being described, and the states that shift (checked: TWO_CYCLE_STATES)
        describing: list[str] = []
        shifting_states: set[str] = set()

        @contextmanager
        def state(name: str) -> Iterator[None]:
            describing[:] = [name]
            with m.State(name):
                yield

        def shift(value: Value, amount: Value | int, *, round_half_up: Value | bool = False,
                  negate: Value | None = None) -> None:
            """Drive the shared shifter in the current state (its result: ``sh_out``, in
            the state's second cycle)."""
            shifting_states.add(describing[0])
            index = next((k for k, known in enumerate(sh_sources) if known is value), None)
            if index is None:
                index = len(sh_sources)
                sh_sources.append(value)
            m.d.comb += [sh_source.eq(index), sh_amount.eq(amount),
                         sh_round.eq(round_half_up if isinstance(round_half_up, Value)
                                     else int(round_half_up))]
            if negate is not None:
                m.d.comb += sh_negate.eq(negate)

        # two of the shifter's inputs pick a register: cx or cy, ox or oy
        pick_y = Signal()
        cxy = Signal(signed(w + 4))
        pick_oy = Signal()
        oxy = Signal(w)
        oxy_signed = oxy.as_signed()
        m.d.comb += [cxy.eq(Mux(pick_y, cy, cx)), oxy.eq(Mux(pick_oy, oy, ox))]

        # --- the shared leading-one detector (atan's and log's normalisation) ----------------
        lo_in = Signal(w)
        length = Signal(range(w + 1))  # bit_length(lo_in)
        for bit in range(w):
            with m.If(lo_in[bit]):
                m.d.comb += length.eq(bit + 1)

        iterations = len(t.circular)
        h_iterations = len(t.hyperbolic)

        RET = {name: i for i, name in enumerate(_RETURNS)}

        # the CORDIC's iteration k: its shift and angle (cordic_schedule, in gates)
        leading = _leading_angles(t)
        index_bits = (leading - 1).bit_length()
        angle_table = Array(Const(table[k][2] if k < leading else 0, signed(w + 4))
                            for table in (t.circular, t.hyperbolic) for k in range(1 << index_bits))

        def cordic_step(k: Value, hyperbolic: Value) -> tuple[Signal, Signal]:
            shift_v = Signal(range(w))
            angle_v = Signal(signed(w + 4))
            m.d.comb += shift_v.eq(Mux(hyperbolic, k + 1 - sum(k >= r for r in _repeats(t)), k))
            m.d.comb += angle_v.eq(Mux(k < leading, angle_table[Cat(k[:index_bits], hyperbolic)],
                                       Const(1 << p, w + 4) >> shift_v))
            return shift_v, angle_v

        i, angle = cordic_step(count, hyper)

        def call(name: str, back: str) -> None:
            m.d.sync += ret.eq(RET[back])
            m.next = name

        # the result: a constant, or the shifter's output saturated or wrapped to W bits, so
        # that r0 has three sources however many states finish
        finishing = Signal()
        fin_shifted = Signal()
        fin_wrap = Signal()
        fin_const = Signal(w)

        def finish(value: Value | int | None = None, fault: str | None = None, *,
                   wrap: bool = False) -> None:
            """Finish with the constant ``value``, or without one with the shifter's output
            (driven in this state): saturated, or ``wrap`` its low W bits."""
            m.d.comb += finishing.eq(1)
            if value is None:
                m.d.comb += [fin_shifted.eq(1), fin_wrap.eq(int(wrap))]
            else:
                m.d.comb += fin_const.eq(value)
            m.d.sync += self.done.eq(1)
            if fault is not None:
                m.d.sync += [self.fault.eq(1), self.fault_kind.eq(FAULT_CODE[fault])]
            m.next = "IDLE"

        def start_mul(a: Value, b: Value, back: str, preload: int = 0) -> None:
            """acc = preload + a*b, signed (``b`` fits W + 1 bits signed): with the preload
            2**(s-1), ``rounded_product(s)`` = floor(a*b / 2**s + 1/2) at ``back``."""
            m.d.sync += [mul_a.eq(a), lo.eq(b), hi.eq(preload), count.eq(multiplier_steps(w))]
            call("MUL", back)

        # a magnitude from the shifter times 2**(F + 1) (fdiv's |x|, tan's |num|, tanh's |num|):
        # one input of div_n for all three (each fits the W + 7 bits)
        shifted_dividend = sh_out.as_unsigned()[:w + 7] << (f + 1)

        def start_div(n: Value, d: Value, back: str) -> None:
            # every dividend here is below 2**(W + F + 4): start with its top bit
            m.d.sync += [div_n.eq(n), div_d.eq(d), rem.eq(0), count.eq(div_bits)]
            call("DIV", back)

        def start_sincos(angle: Value, which: int, then: int) -> None:
            """sin/cos/tan of a signed angle (the routine of fx_sin/fx_cos/fx_tan)."""
            m.d.sync += [arg.eq(angle), fn.eq(which), cont.eq(then)]
            m.next = "SC_START"

        # the shifter's output beyond a signed word: its bits from W - 1 up differ (a test
        # of the bits, not two comparators)
        sh_beyond = Signal()
        m.d.comb += sh_beyond.eq(sh_out[w - 1:].any() & ~sh_out[w - 1:].all())

        def saturate(v: Value) -> Value:
            assert v is sh_out
            return Mux(sh_beyond, Mux(sh_out[-1], minimum, maximum), sh_out[:w])

        def rounded_quotient(negative: Value) -> None:
            """Drive the shifter with +-(the rounded quotient) (saturate unless quot_big)."""
            shift(quot, 1, round_half_up=~(strict & quot_tie), negate=negative)

        def rounded_product(s: int) -> Signal:
            """acc >> s, narrowed to W + 8 bits: with the preload 2**(s-1), floor(a*b / 2**s
            + 1/2) of the last start_mul."""
            m.d.comb += pterm.eq(acc >> s)
            return pterm

        sigma = Signal()  # the CORDIC's direction: +1 when z >= 0 (rotation) or y < 0 (vectoring)
        m.d.comb += sigma.eq(Mux(vectoring, cy < 0, cz >= 0))

        # one adder for x: the CORDIC's x -+ dy (x_dy; dy waits in cdx), and the exp family's
        # post-processing, cx -+ (cy or em_scaled: hx_em), below
        x_dy = Signal()
        hx_sub, hx_em = Signal(name="hx_sub"), Signal(name="hx_em")
        hx_sum = Signal(signed(w + 7))
        x_operand = Signal(signed(w + 8))
        x_sub = Signal()
        m.d.comb += [x_operand.eq(Mux(x_dy | hx_em, cdx, cy)),
                     x_sub.eq(Mux(x_dy, sigma ^ hyper, hx_sub)),
                     hx_sum.eq(cx + Mux(x_sub, ~x_operand, x_operand) + x_sub)]

        # the CORDIC's start angle, one subtractor: r = ax 2**G - (q pi/2 rounded) for
        # sin/cos/tan, r = z - k ln 2 (z waiting in cz) for the exp family; mod 2**(W + 6).
        # The same adder updates z in a CORDIC iteration: z -+ the angle (z_angle).
        reduce_from_ax = Signal()
        z_angle = Signal()
        z_sub = Signal()
        z_operand = Signal(signed(w + 6))
        reduced_z_v = Signal(signed(w + 6))
        # (z_load: 0 + the product, pow's y ln x, so that z has one input from this adder)
        z_load = Signal()
        # (z_atan: atan's z +- its offset K, below)
        z_atan = Signal()
        # pi/2 - a when swapped, then pi - that when x < 0: K +- a
        atan_offset = Array(Const(k, w + 2) for k in (
            0, t.half_pi_p, t.pi_p, t.pi_p - t.half_pi_p))[Cat(swap, ax_neg)]
        atan_minus = Signal()
        m.d.comb += atan_minus.eq(swap ^ ax_neg)
        m.d.comb += [z_sub.eq(Mux(z_atan, atan_minus, ~z_load & (~z_angle | sigma))),
                     z_operand.eq(Mux(z_angle, angle, Mux(z_atan, atan_offset, pterm))),
                     reduced_z_v.eq(Mux(z_load, 0, Mux(reduce_from_ax, (ax << g)[:w + 6], cz))
                                    + Mux(z_sub, ~z_operand, z_operand) + z_sub)]

        def reduced_z(s: int) -> Signal:
            rounded_product(s)
            return reduced_z_v

        def start_exp(z: Value, which: Value | int) -> None:
            """The routine of _exp_from_p / _hyperbolic_abs on a P-bit argument z."""
            m.d.sync += [hz.eq(z), hfn.eq(which)]
            m.next = "HX_START"

        def start_fmul(a: Value, b: Value) -> None:
            """fx_mul(S(a), S(b)); the FMUL return finishes it."""
            start_mul(a.as_signed(), b.as_signed(), "FMUL", 1 << (f - 1))

        with m.FSM() as fsm:
            with state("IDLE"):  # the call's operands, in the cycle of start
                with m.If(self.start):
                    m.d.sync += [self.done.eq(0), self.fault.eq(0), self.fault_kind.eq(0),
                                 self.overflow.eq(0), op.eq(self.op), arith.eq(self.arith),
                                 ox.eq(self.x), oy.eq(self.y), oz.eq(self.z)]
                    m.next = "BEGIN"
            with state("BEGIN"):  # what the operands decide; |x| through the shifter
                # |x|: abs (-min saturates to max), fdiv, sinh, cosh, tanh; x for exp
                is_exp = ~arith & (op == OP["fn_exp"])
                is_fmul = arith & (op == MULDIV_OPS.index("fmul"))
                # fmul's multiplicand x as it is (the multiplicand's one variable input
                # is the shifter's output)
                shift(sx, 0, negate=(sx < 0) & ~is_exp & ~is_fmul)
                abs_x = sh_out
                with m.If(arith):
                    # fmul: floor(S(x) S(y) / 2**F + 1/2); fdiv: round(S(x) 2**F / S(y)), ties
                    # away from zero, as floor((2|x| 2**F + |y|) / (2|y|)) with the sign
                    with m.If(op == MULDIV_OPS.index("fmul")):
                        start_mul(sh_out, oy.as_signed(), "ARITH_MUL", 1 << (f - 1))
                    with m.Elif(oy == 0):
                        finish(0, "divide-by-zero")
                    with m.Else():
                        # |x| 2**(F+1) now, |y| through the shifter next (FDIV_D)
                        m.d.sync += [tan_neg.eq(ox[-1] ^ oy[-1]), strict.eq(0),
                                     div_n.eq(shifted_dividend)]
                        m.next = "FDIV_D"
                with m.Else():
                    with m.Switch(op):
                        with m.Case(OP["fn_abs"]):
                            finish()
                        with m.Case(OP["fn_sqrt"]):
                            with m.If(sx < 0):
                                finish(0, "domain-error")
                            with m.Else():
                                # the radicand x 2**F at the top of div_n
                                top = f + div_bits - 2 * sqrt_bits
                                m.d.sync += [radicand.eq(ox << top),
                                             root.eq(0), srem.eq(0), count.eq(sqrt_bits)]
                                m.next = "SQRT"
                        with m.Case(OP["fn_sin"]):
                            start_sincos(sx, FN_SIN, CONT_RESULT)
                        with m.Case(OP["fn_cos"]):
                            start_sincos(sx, FN_COS, CONT_RESULT)
                        with m.Case(OP["fn_tan"]):
                            start_sincos(sx, FN_TAN, CONT_RESULT)
                        with m.Case(OP["fn_atan"]):
                            m.d.sync += oy.eq(1 << f)  # atan2(x, 1)
                            m.next = "ATAN"
                        with m.Case(OP["fn_atan2"]):  # atan2(y=b, x=c): ox, oy as loaded
                            m.next = "ATAN"
                        with m.Case(OP["rot"], OP["irot"]):
                            m.d.sync += theta.eq(oz.as_signed())
                            m.next = "ROT"
                        with m.Case(*(OP[name] for name in HX_OPS)):
                            # exp takes x (abs_x is x then), sinh/cosh/tanh |x|; the bound
                            # checks of _exp_from_p (x << G against +-(W + 2) << P) and of
                            # fx_sinh, fx_cosh, fx_tanh
                            is_tanh = op == OP["fn_tanh"]
                            with m.If(is_exp & (sx <= -((w + 2) << f))):
                                finish(0)
                            with m.Elif(abs_x >= Mux(is_tanh, (f + 4) << f, (w + 2) << f)):
                                negative = (sx < 0) & ~is_exp
                                finish(Mux(is_tanh, Mux(negative, -t.one, t.one),
                                           Mux(negative & (op == OP["fn_sinh"]),
                                               minimum, maximum)))
                            with m.Else():
                                m.d.sync += h_neg.eq(sx < 0)
                                which = HX_EXP
                                for name in HX_OPS[1:]:
                                    which = Mux(op == OP[name], HX_OPS.index(name),
                                                which)
                                start_exp(abs_x << g, which)
                        with m.Case(OP["fn_sigmoid"]):
                            # fx_sigmoid: |x| / 2 at P bits (exact: |x| << (G - 1)); one or
                            # zero once |x| / 2 >= F + 4 (-min_signed as 2**(W - 1), beyond)
                            with m.If(abs_x >= (f + 4) << (f + 1)):
                                finish(Mux(sx < 0, 0, t.one))
                            with m.Else():
                                m.d.sync += h_neg.eq(sx < 0)
                                start_exp(abs_x << (g - 1), HX_SIGMOID)
                        with m.Case(OP["fn_log"]):
                            with m.If(sx <= 0):
                                finish(0, "domain-error")
                            with m.Else():
                                m.next = "LOG"
                        with m.Case(OP["fn_pow"]):
                            sy = oy.as_signed()
                            with m.If(sx < 0):
                                finish(0, "domain-error")
                            with m.Elif(sx == 0):
                                with m.If(sy < 0):
                                    finish(0, "divide-by-zero")
                                with m.Elif(sy == 0):
                                    finish(t.one)
                                with m.Else():
                                    finish(0)
                            with m.Else():
                                m.next = "LOG"
                        with m.Default():
                            finish(0, "unimplemented")

            # --- subroutines ---------------------------------------------------------------
            def go_back() -> None:
                with m.Switch(ret):
                    for name, code in RET.items():
                        with m.Case(code):
                            m.next = name

            with state("MUL"):  # one multiplier bit per cycle, its sign bit last
                with m.If(count == 0):
                    go_back()
                with m.Else():
                    subtract = (count == 1) & lo[0]
                    addend = Mux(lo[0], mul_a, 0)
                    total = Signal(signed(len(hi) + 1))
                    m.d.comb += total.eq(hi + Mux(subtract, ~addend, addend) + subtract)
                    m.d.sync += [hi.eq(total >> 1), lo.eq(Cat(lo[1:], total[0])),
                                 count.eq(count - 1)]
            # one comparator and subtractor for the divider's and the square root's steps:
            # divide: trial (rem << 1 | next bit) against d; sqrt: (rem << 2 | next two
            # bits) against (root << 2 | 1)
            is_sqrt = Signal()
            trial = Signal(w + 5)
            subtrahend = Signal(w + 6)
            fits = Signal()
            m.d.comb += [trial.eq(Mux(is_sqrt, (rem << 2) | div_n[-2:], (rem << 1) | div_n[-1])),
                         subtrahend.eq(Mux(is_sqrt, (root << 2) | 1, div_d)),
                         fits.eq(trial >= subtrahend)]
            with state("DIV"):
                with m.If(count == 0):
                    go_back()
                with m.Else():
                    m.d.sync += [rem.eq(Mux(fits, trial - subtrahend, trial)),
                                 div_n.eq(Cat(fits, div_n[:-1])), count.eq(count - 1)]
            # one iteration in two cycles, both shifts on the shared shifter:
            # circular: x -= sigma dy; hyperbolic: x += sigma dy; both y += sigma dx,
            # z -= sigma a; sigma = +1 when z >= 0 (rotation) or y < 0 (vectoring)
            # (a caller starts it with count 0 and at least one iteration)
            with state("CORDIC"):
                # y in the first cycle; in the second, x: CORDIC_Y's input (x and the
                # iteration do not change here)
                m.d.comb += pick_y.eq(~phase)
                shift(cxy, i, round_half_up=True)
                m.d.sync += cdx.eq(sh_out)  # dy
                m.next = "CORDIC_Y"
            with state("CORDIC_Y"):
                with m.If(count == Mux(hyper, h_iterations, iterations) - 1):
                    go_back()
                with m.Else():
                    m.next = "CORDIC"
                dx = sh_out
                # one adder per register, the subtraction as a + ~b + 1 (an add and a
                # subtract under a multiplexer cost two adders and the multiplexer)
                y_sub = ~sigma
                m.d.comb += x_dy.eq(1)
                m.d.sync += [cx.eq(hx_sum),
                             cy.eq(cy + Mux(y_sub, ~dx, dx) + y_sub),
                             cz.eq(reduced_z_v)]
                m.d.comb += z_angle.eq(1)
                m.d.sync += count.eq(count + 1)

            # --- sqrt --------------------------------------------------------------------------
            with state("SQRT"):  # one root bit a cycle (count starts at sqrt_bits >= 1)
                m.d.comb += is_sqrt.eq(1)
                m.d.sync += [srem.eq(Mux(fits, trial - subtrahend, trial)),
                             root.eq(Cat(fits, root[:-1])),
                             radicand.eq(radicand << 2), count.eq(count - 1)]
                with m.If(count == 1):
                    m.next = "SQRT_END"
            with state("SQRT_END"):
                # root + 1 when the remainder exceeds the root, (2 root + c + 1) >> 1: the
                # step's comparator, the radicand used up (two zero bits), tests
                # 4 rem >= 4 root + 1
                m.d.comb += is_sqrt.eq(1)
                shift(Cat(fits, root), 1, round_half_up=True)
                finish()

            # --- sin / cos / tan (fx_sin, fx_cos, fx_tan) -----------------------------------------
            # the routine's result: the shifter's output saturated, or (result_big) the
            # minimum or the maximum -- one input of the result register for every state
            result_big, result_neg = Signal(), Signal()
            result_v = Signal(signed(w))
            m.d.comb += result_v.eq(Mux(result_big, Mux(result_neg, minimum, maximum),
                                        saturate(sh_out)))
            with state("SC_START"):
                shift(arg, 0, negate=arg < 0)
                magnitude = sh_out.as_unsigned()[:w + 1]
                m.d.sync += [arg_neg.eq(arg < 0), ax.eq(magnitude)]  # arg becomes |arg|
                start_mul(sh_out, t.two_over_pi, "SC_Q", 1 << (f + w - 1))
            with state("SC_Q"):
                qv = acc >> (f + w)  # rounded by the preload
                m.d.sync += q.eq(qv)
                # floor((ax 2**(G+E) - q pi/2 + 2**(E-1)) / 2**E) = ax 2**G - floor((q pi/2 +
                # 2**(E-1) - 1) / 2**E): the preload rounds, and r fits W + 6 bits
                start_mul(Const(t.half_pi_wide), qv, "SC_R", (1 << (e - 1)) - 1)
            with state("SC_R"):
                m.d.comb += reduce_from_ax.eq(1)
                m.d.sync += [cz.eq(reduced_z(e)), cx.eq(t.circular_x0),
                             cy.eq(0), vectoring.eq(0), hyper.eq(0), count.eq(0)]
                call("CORDIC", "SC_CORDIC")
            with state("SC_CORDIC"):
                c, s = cx, cy
                # sin by quadrant: s, c, -s, -c; cos: c, -s, -c, s (the one for tan unused)
                is_cos = fn == FN_COS
                use_c = q[0] ^ is_cos
                minus = q[1] ^ (q[0] & is_cos)
                m.d.comb += sh_half_down.eq(minus)
                m.d.comb += pick_y.eq(~use_c)
                shift(cxy, g, round_half_up=True,
                      negate=minus ^ (arg_neg & (fn == FN_SIN)))
                with m.Switch(fn):
                    with m.Case(FN_SIN, FN_COS):
                        m.d.sync += result.eq(result_v)
                        m.next = "SC_DONE"
                    with m.Case(FN_TAN):
                        # (num, den) = (s, c), or (c, -s) in odd quadrants: by magnitudes,
                        # |den| through the shifter now, |num| next cycle (TAN_N)
                        num_neg = Mux(q[0], c < 0, s < 0)
                        m.d.comb += pick_y.eq(q[0])
                        d = cxy
                        m.d.sync += tan_neg.eq(num_neg ^ Mux(q[0], s > 0, c < 0) ^ arg_neg)
                        with m.If(d == 0):
                            m.d.comb += [result_big.eq(1), result_neg.eq(num_neg ^ arg_neg)]
                            m.d.sync += result.eq(result_v)
                            m.next = "SC_DONE"
                        with m.Else():
                            shift(d, 0, negate=d < 0)
                            m.d.sync += [div_d.eq(sh_out), strict.eq(0)]
                            m.next = "TAN_N"
            with state("TAN_N"):
                m.d.comb += pick_y.eq(~q[0])
                n = cxy
                shift(n, 0, negate=n < 0)
                start_div(shifted_dividend, div_d, "TAN_DIV")
            with state("TAN_DIV"):
                # saturate: |quot| >= 2**(W-1) gives min or max (-2**(W-1) is min itself)
                rounded_quotient(tan_neg)
                m.d.comb += [result_big.eq(quot_big), result_neg.eq(tan_neg)]
                m.d.sync += result.eq(result_v)
                m.next = "SC_DONE"
            with state("SC_DONE"):
                value = result
                shift(result, 0)
                with m.Switch(cont):
                    with m.Case(CONT_RESULT):
                        finish()
                    with m.Case(CONT_ROT_TAN):
                        m.d.sync += coef_t.eq(value)
                        shift(reduced, 0)  # the routine's argument from the shifter, too
                        start_sincos(sh_out, FN_SIN, CONT_ROT_SIN)
                    with m.Case(CONT_ROT_SIN):
                        m.d.sync += rstep.eq(0)  # sin(theta) stays in result
                        m.next = "ROT_SHEAR"

            # --- atan2 (fx_atan2; atan(x) = atan2(x, 1)) ------------------------------------------
            # (|x|, |y|) with ox = y, oy = x, made magnitudes by the shifter one a cycle (ATAN,
            # ATAN_B); the larger is big, normalised to P - 1 bits
            ay_v, ax_v = ox, oy
            norm = Signal(signed(8))  # P - 1 - bit_length(big): the left shift
            with state("ATAN"):
                shift(oxy_signed, 0, negate=ox[-1])
                m.d.sync += [ox.eq(sh_out), ay_neg.eq(ox[-1])]
                m.next = "ATAN_B"
            with state("ATAN_B"):
                m.d.comb += pick_oy.eq(1)
                shift(oxy_signed, 0, negate=oy[-1])
                m.d.sync += [oy.eq(sh_out), ax_neg.eq(oy[-1])]
                m.next = "ATAN_N"
            with state("ATAN_N"):
                swap_v = ay_v > ax_v
                m.d.sync += swap.eq(swap_v)
                m.d.comb += lo_in.eq(Mux(swap_v, ay_v, ax_v))
                with m.If(lo_in == 0):
                    finish(0)
                with m.Else():
                    m.d.sync += norm.eq(p - 1 - length)
                    m.next = "ATAN_X"
            with state("ATAN_X"):
                m.d.comb += pick_oy.eq(~swap)  # big
                shift(oxy, -norm)
                m.d.sync += cx.eq(sh_out)
                m.next = "ATAN_Y"
            with state("ATAN_Y"):
                m.d.comb += pick_oy.eq(swap)  # small
                shift(oxy, -norm)
                m.d.sync += [cy.eq(sh_out), cz.eq(0), vectoring.eq(1), hyper.eq(0), count.eq(0)]
                call("CORDIC", "ATAN_CORDIC")
            with state("ATAN_CORDIC"):
                # K +- a on z's adder: K + z, or K - z = -(z - K), whose half-up rounding is the
                # negated half-down rounding of z - K (sh_half_down)
                m.d.comb += [z_atan.eq(1), sh_half_down.eq(atan_minus)]
                shift(reduced_z_v, g, round_half_up=True, negate=ay_neg ^ atan_minus)
                finish()

            # --- fmul, fdiv (the vocabulary's; overflow: ovf_mul, ovf_div) -----------------------
            with state("ARITH_MUL"):
                # the rounded product acc >> F fits W bits signed when its bits from W - 1
                # up are all equal (the sign); |S(x) S(y)| <= 2**(2W - 2), so acc's bits from
                # 2W - 1 up are its sign already
                top = acc[f + w - 1:2 * w]
                m.d.sync += self.overflow.eq(top.any() & ~top.all())
                shift(rounded_product(f), 0)
                finish(wrap=True)
            with state("FDIV_D"):
                m.d.comb += pick_oy.eq(1)
                shift(oxy_signed, 0, negate=oy[-1])
                start_div(div_n, sh_out, "ARITH_DIV")  # |y| <= 2**(W-1)
            with state("ARITH_DIV"):
                # the quotient fits W bits signed below 2**(W-1), or at it when negative
                rounded_quotient(tan_neg)
                m.d.sync += self.overflow.eq(quot_big | sh_beyond)
                finish(wrap=True)

            # --- rot / irot (isa/rotation.py) -----------------------------------------------------
            # the shears' adder: x or y (oxy; or theta: shear_theta) -+ acc >> F (shear_sub)
            shear_theta, shear_sub = Signal(), Signal()
            sheared = Signal(signed(w + 11))  # a shear's exact sum
            product = pterm  # rounded_product(f) in both states
            m.d.comb += sheared.eq(Mux(shear_theta, theta, oxy_signed)
                                   + Mux(shear_sub, ~product, product) + shear_sub)
            with state("ROT"):
                # turns = ceil((|theta| - pi/2) / pi), for theta of either sign
                shift(theta, 0, negate=theta < 0)
                abs_theta = sh_out.as_unsigned()[:w]
                with m.If(abs_theta > half_pi):
                    start_div(abs_theta + (pi - 1 - half_pi), pi, "ROT_TURNS")
                with m.Else():
                    m.d.sync += negate.eq(0)
                    m.next = "ROT_TAN"
            with state("ROT_TURNS"):
                m.d.sync += negate.eq(quot[0])
                # turns pi 2**F, so that turns pi is the shears' rounded product acc >> F
                start_mul(Const(pi << f), quot, "ROT_REDUCED")
            with state("ROT_REDUCED"):
                # theta -+ turns pi (|theta| - |reduced| < 2**(W + 1)) on the shears' adder
                rounded_product(f)
                m.d.comb += [shear_theta.eq(1), shear_sub.eq(theta > 0)]
                m.d.sync += reduced.eq(sheared)
                m.next = "ROT_TAN"
            with state("ROT_TAN"):
                shift(reduced, 1)  # floor(theta / 2)
                start_sincos(sh_out, FN_TAN, CONT_ROT_TAN)
            # negating a word wraps when it is -2**(W-1): -x beyond the word (sh_beyond),
            # tested as each word is negated
            # x or y reaches the shifter, the multiplier and the shear's adder as oxy
            with state("ROT_SHEAR"):
                is_rot = op == OP["rot"]
                # rot: negate first, then x -= t*y; y += s*x; x -= t*y
                # irot: x += t*y; y -= s*x; x += t*y, then negate
                # overflow (isa/rotation.py): negating -2^(W-1), or a shear's exact sum
                # outside the signed range; rot negates first, irot last
                # the negation by pi goes through the shifter, a word a cycle (ROT_NEG_X,
                # ROT_NEG_Y; irot: ROT_UNNEG_Y, then the finish negates x)
                with m.Switch(rstep):
                    with m.Case(0, 1, 2):
                        with m.If(is_rot & negate):
                            m.next = "ROT_NEG_X"
                        with m.Else():  # t*y, s*x, t*y
                            m.d.comb += pick_oy.eq(~rstep[0])
                            start_fmul(Mux(rstep[0], result, coef_t[:w].as_signed()), oxy)
                    with m.Case(3):
                        with m.If(~is_rot & negate):
                            m.next = "ROT_UNNEG_Y"
                        with m.Else():
                            shift(oxy_signed, 0)
                            finish(wrap=True)  # r1 is vy
            with state("ROT_NEG_X"):
                with m.If(sh_beyond):
                    m.d.sync += self.overflow.eq(1)
                shift(oxy_signed, 0, negate=1)
                m.d.sync += vx.eq(sh_out)
                m.next = "ROT_NEG_Y"
            with state("ROT_NEG_Y"):
                with m.If(sh_beyond):
                    m.d.sync += self.overflow.eq(1)
                m.d.comb += pick_oy.eq(1)
                shift(oxy_signed, 0, negate=1)
                m.d.sync += [vy.eq(sh_out), negate.eq(0)]  # done: the shears next
                m.next = "ROT_SHEAR"
            with state("ROT_UNNEG_Y"):
                with m.If(sh_beyond):
                    m.d.sync += self.overflow.eq(1)
                m.d.comb += pick_oy.eq(1)
                shift(oxy_signed, 0, negate=1)
                m.d.sync += vy.eq(sh_out)
                m.next = "ROT_UNNEG_X"
            with state("ROT_UNNEG_X"):
                with m.If(sh_beyond):
                    m.d.sync += self.overflow.eq(1)
                shift(oxy_signed, 0, negate=1)
                finish(wrap=True)  # r1 is vy
            with state("FMUL"):
                is_rot = op == OP["rot"]
                # rot: x -= t*y (steps 0, 2), y += s*x (step 1); irot the opposite signs.
                # One adder gives the shear's exact sum; its low W bits are the new word.
                rounded_product(f)
                m.d.comb += [shear_sub.eq(is_rot ^ (rstep == 1)), pick_oy.eq(rstep == 1)]
                with m.If(rstep == 1):
                    m.d.sync += vy.eq(sheared[:w])
                with m.Else():
                    m.d.sync += vx.eq(sheared[:w])
                beyond = sheared[w - 1:]  # the sum fits W bits when these are all the sign
                with m.If(beyond.any() & ~beyond.all()):
                    m.d.sync += self.overflow.eq(1)
                m.d.sync += rstep.eq(rstep + 1)
                m.next = "ROT_SHEAR"

            # --- exp, sinh, cosh, tanh (_exp_from_p, _hyperbolic_abs) --------------------------
            with state("HX_START"):  # |hz| < (W + 2) << P: the callers saturate beyond
                shift(hz, p - t.k_bits)
                start_mul(sh_out, Const(t.inv_ln2_k), "HX_K", 1 << (2 * t.k_bits - 1))
            with state("HX_K"):
                k_v = rounded_product(2 * t.k_bits)
                m.d.sync += kk.eq(k_v)
                start_mul(Const(t.ln2_wide), k_v[:16].as_signed(), "HX_R", 1 << 7)
            with state("HX_R"):
                m.d.sync += [cz.eq(reduced_z(8)), cx.eq(t.hyperbolic_x0), cy.eq(0),
                             vectoring.eq(0), hyper.eq(1), count.eq(0)]
                call("CORDIC", "HX_CORDIC")
            # the post-processing on x's adder: cx -+ (cy or em_scaled); after HX_EP, cx holds
            # e**r * 2**P = cosh r + sinh r
            em_scaled = cdx
            with state("HX_CORDIC"):
                two_k = Mux(kk > (w + 4) // 2, w + 4, Mux(kk < 0, 0, kk * 2))
                m.d.comb += hx_sub.eq(1)  # e**-r 2**P = cosh r - sinh r, scaled by 4**-k
                shift(hx_sum, two_k, round_half_up=True)
                m.d.sync += em_scaled.eq(sh_out)
                m.next = "HX_EP"
            with state("HX_EP"):
                m.d.sync += cx.eq(hx_sum)
                m.next = "HX_POST"
            with state("HX_POST"):
                m.d.comb += hx_em.eq(1)
                with m.Switch(hfn):
                    with m.Case(HX_EXP):
                        with m.If(kk >= w - f):
                            finish(maximum)
                        with m.Elif(kk <= -f - 2):
                            finish(0)
                        with m.Else():
                            shift(cxy, g - kk, round_half_up=True)
                            finish()
                    with m.Case(HX_SINH):
                        with m.If(kk > w - f):
                            finish(Mux(h_neg, minimum, maximum))
                        with m.Else():
                            m.d.comb += hx_sub.eq(1)
                            shift(hx_sum, g + 1 - kk, round_half_up=True, negate=h_neg)
                            finish()
                    with m.Case(HX_COSH):
                        with m.If(kk > w - f):
                            finish(maximum)
                        with m.Else():
                            shift(hx_sum, g + 1 - kk, round_half_up=True)
                            finish()
                    with m.Case(HX_TANH):
                        with m.If(kk >= f // 2 + 2):
                            finish(Mux(h_neg, -t.one, t.one))
                        with m.Else():
                            shift(hx_sum, 0)  # the divisor's one variable input: sh_out
                            m.d.sync += div_d.eq(sh_out)  # den, then num in TANH_N
                            m.next = "TANH_N"
                    with m.Case(HX_SIGMOID):
                        # the divisor e**r + 4**-k e**-r (2**P), as tanh's; never saturates
                        shift(hx_sum, 0)
                        m.d.sync += div_d.eq(sh_out)
                        m.next = "SIGMOID_N"
            with state("TANH_N"):
                m.d.comb += [hx_em.eq(1), hx_sub.eq(1)]
                num = hx_sum
                # floor division by den > 0: a negative numerator rounds its magnitude's
                # ties down
                m.d.sync += [tan_neg.eq((num < 0) ^ h_neg), strict.eq(num < 0)]
                shift(num, 0, negate=num < 0)
                start_div(shifted_dividend, div_d, "TANH_DIV")
            with state("TANH_DIV"):
                rounded_quotient(tan_neg)
                finish()  # |tanh| <= 1 and 0 <= sigmoid <= 1 fit
            with state("SIGMOID_N"):
                # the numerator, >= 0: e**r 2**P (cx) for x >= 0, its partner 4**-k e**-r 2**P
                # (em_scaled) for x < 0; the quotient rounds half up (not strict), positive
                m.d.sync += [tan_neg.eq(0), strict.eq(0)]
                with m.If(h_neg):
                    shift(em_scaled, 0)
                with m.Else():
                    shift(cxy, 0)  # pick_y = 0: cx
                start_div(shifted_dividend, div_d, "TANH_DIV")

            # --- log and pow (ln_p, fx_pow) ------------------------------------------------------
            with state("LOG"):
                s_bits = p - 1
                a = Signal(w + 2)
                m.d.comb += lo_in.eq(ox)
                shift(oxy, length - 1 - s_bits)  # m * 2**S, m in [1, 2)
                m.d.comb += a.eq(sh_out)
                e_v = Signal(signed(16))
                m.d.comb += e_v.eq(length - 1 - f)
                high = a >= t.sqrt2_s
                u = a + Mux(high, 2 << s_bits, 1 << s_bits)
                vv = a - Mux(high, 2 << s_bits, 1 << s_bits)
                m.d.sync += [ee.eq(Mux(high, e_v + 1, e_v)), cx.eq(u), cy.eq(vv), cz.eq(0),
                             vectoring.eq(1), hyper.eq(1), count.eq(0)]
                with m.If(vv == 0):
                    m.next = "LOG_Z"
                with m.Else():
                    call("CORDIC", "LOG_Z")
            with state("LOG_Z"):
                start_mul(Const(t.ln2_wide), ee, "LOG_E", 1 << 7)
            with state("LOG_E"):
                lnp = Signal(signed(w + 12))
                m.d.comb += lnp.eq(rounded_product(8) + 2 * cz)
                with m.If(op == OP["fn_log"]):
                    shift(lnp, g, round_half_up=True)
                    finish()
                with m.Else():
                    shift(lnp, 0)  # |ln x| 2**P < 2**(W + 7)
                    m.d.comb += pick_oy.eq(1)  # y as oxy: the shears' multiplier input
                    start_mul(sh_out, oxy_signed, "POW_Z", 1 << (f - 1))
            with state("POW_Z"):  # z = y ln x at P bits; _exp_from_p saturates |z| >= lim
                # z is acc >> F; it is in range when it fits the W + 8 bits kept and lies
                # within +-lim there
                power = rounded_product(f)
                # (the product of the W + 8-bit ln x and the word y fits 2W + 8 bits)
                top = acc[f + len(power) - 1:len(sh_out) + w]
                lim = (w + 2) << p
                with m.If((top.any() & ~top.all()) | (power >= lim) | (power <= -lim)):
                    finish(Mux(acc[-1], 0, maximum))
                with m.Else():
                    m.d.comb += z_load.eq(1)
                    start_exp(reduced_z_v, HX_EXP)  # the power

        assert len(sh_sources) <= 32
        with m.Switch(sh_source):
            for index, value in enumerate(sh_sources):
                with m.Case(index):
                    m.d.comb += sh_in.eq(value)

        with m.If(finishing):
            m.d.sync += self.r0.eq(Mux(fin_shifted, Mux(fin_wrap, sh_out[:w], saturate(sh_out)),
                                       fin_const))

        # a two-cycle state's first cycle: the sequencer holds, the shifter's inputs load
        if shifting_states != TWO_CYCLE_STATES:
            raise AssertionError("TWO_CYCLE_STATES is not the states that shift: "
                                 f"{sorted(shifting_states ^ TWO_CYCLE_STATES)}")
        m.d.comb += stall.eq(~phase & Cat(*(fsm.ongoing(name)
                                            for name in sorted(TWO_CYCLE_STATES))).any())
        outer.d.sync += phase.eq(stall)
        outer.submodules.sequencer = EnableInserter({"sync": ~stall})(m)
        return outer
