"""How many clock cycles a call of a multi-cycle unit takes, from its operands.

One function per unit: :func:`muldiv_cycles` (``rtl/muldiv.py``, the multiply/divide
unit of a core built without the function unit) and :func:`function_unit_cycles`
(``rtl/function_unit.py``, which also does ``fmul``/``fdiv`` on a core that has it).
Each counts the states the unit's sequencer visits for one call, from the cycle it sees
``start`` (in IDLE) to the cycle whose edge raises ``done``, both included; the branches
it takes are decided by the same integer algorithm as the unit's (``isa/elementary.py``,
``isa/rotation.py``), and the lengths of its loops come from the unit's own constants
(``multiplier_steps``, ``divider_steps``, ``CORDIC_ITERATION_CYCLES``, the CORDIC tables),
and a state that drives the shared shifter takes two cycles (``TWO_CYCLE_STATES``), so the
count is exact for every operand.  The core (``rtl/core.py``) starts the unit in
EXEC and commits one cycle after ``done`` is seen in WAIT: a step with one unit call
commits this many cycles later than one without (``rtl/schedule.py``).

``tests/test_unit_timing.py`` runs each unit alone in Amaranth's simulator over random and
edge-case operands of every operation at both widths and checks every count: whoever
changes a unit's sequencer sees it fail and updates the one function here.
"""
from __future__ import annotations

from revasm.isa.elementary import TABLES as _TABLES
from revasm.isa.elementary import ln_p as _ln_p
from revasm.isa.elementary import sincos_abs as _sincos_abs
from revasm.isa.functions.cordic import Tables as _Tables
from revasm.isa.functions.exp_log import exp_k as _exp_k
from revasm.isa.rotation import pi_raw as _pi_raw

from .function_unit import (
    CORDIC_ITERATION_CYCLES,
    TWO_CYCLE_STATES,
    divider_steps,
    multiplier_steps,
)
from .muldiv import product_steps, quotient_steps
from .semantics import FUNCTION_OPS, MULDIV_OPS
from .table_rendering import word_format


def muldiv_cycles(op: str, x: int, y: int, width: int) -> int:
    """Cycles of ``fmul``/``fdiv`` of the words ``x``, ``y`` on the multiply/divide unit:
    IDLE, then one cycle per bit of the shift-and-add product or of the restoring
    division, then the cycle that rounds and signs the result; a division by zero faults
    in IDLE."""
    if op not in MULDIV_OPS:
        raise ValueError(f"the multiply/divide unit has no operation {op!r}")
    if op == "fmul":
        return 1 + product_steps(width) + 1
    if y & ((1 << width) - 1) == 0:
        return 1
    return 1 + quotient_steps(width) + 1


def _states(*names: str) -> int:
    """Cycles of one visit of each of the function unit's states ``names``."""
    return sum(2 if name in TWO_CYCLE_STATES else 1 for name in names)


class _Cost:
    """The cycles of the function unit's subroutines for one width: each is the cycles
    spent in the subroutine's state(s), the last of which returns to the caller."""

    def __init__(self, t: _Tables) -> None:
        w = t.width
        self.mul = multiplier_steps(w) + 1
        self.div = divider_steps(w) + 1
        self.circular = CORDIC_ITERATION_CYCLES * len(t.circular)
        self.hyperbolic = CORDIC_ITERATION_CYCLES * len(t.hyperbolic)
        # one root bit per cycle, then the rounding
        self.sqrt = t.sqrt_bits + _states("SQRT_END")


def _signed(word: int, width: int) -> int:
    word &= (1 << width) - 1
    return word - ((word >> (width - 1)) << width)


def _sincos(angle: int, tan: bool, t: _Tables, cost: _Cost) -> int:
    """SC_START .. SC_DONE for a signed angle: two products (quadrant, reduction), the
    circular rotation, and for tan one division unless its denominator is 0."""
    cycles = (2 * cost.mul + cost.circular
              + _states("SC_START", "SC_Q", "SC_R", "SC_CORDIC", "SC_DONE"))
    if tan:
        c, s, q = _sincos_abs(abs(angle), t)
        if (-s if q & 1 else c) != 0:
            cycles += _states("TAN_N", "TAN_DIV") + cost.div
    return cycles


def _exponential(op: str, z: int, t: _Tables, cost: _Cost) -> int:
    """HX_START .. HX_POST for the P-bit argument ``z`` of ``_exp_from_p`` or
    ``_hyperbolic_abs`` (the callers saturate beyond its range): two products (k, r),
    the hyperbolic rotation, e**-r scaled, and for tanh a division unless it rounds to
    one."""
    # HX_POST finishes, or divides
    cycles = (2 * cost.mul + cost.hyperbolic
              + _states("HX_START", "HX_K", "HX_R", "HX_CORDIC", "HX_EP", "HX_POST"))
    if op == "fn_tanh":
        k = _exp_k(z, t)
        if k < t.frac // 2 + 2:
            cycles += _states("TANH_N", "TANH_DIV") + cost.div
    return cycles


def _logarithm(x: int, t: _Tables, cost: _Cost) -> int:
    """LOG .. LOG_E for ``x > 0``: normalisation, the hyperbolic vectoring unless the
    mantissa is a power of two, and the product e ln 2."""
    s = t.prec - 1
    shift = s - (x.bit_length() - 1)
    a = x << shift if shift >= 0 else x >> -shift
    exact = a == 1 << s  # v == 0 in _ln_p (a < 2 << s): no CORDIC
    return (0 if exact else cost.hyperbolic) + cost.mul + _states("LOG", "LOG_Z", "LOG_E")


def function_unit_cycles(op: str, x: int, y: int, z: int, width: int) -> int:
    """Cycles of one call of the function unit: operation ``op`` (a vocabulary name of
    ``FUNCTION_OPS``, or ``fmul``/``fdiv`` of ``MULDIV_OPS``, which the unit does with
    its ``arith`` input) on the words ``x``, ``y``, ``z`` (its ports; ``rot``/``irot``:
    the two words and the angle).  Faults (domain, divide-by-zero) and the results
    decided from the operand alone (saturation, abs) finish in BEGIN, the state after
    IDLE."""
    if op not in FUNCTION_OPS and op not in MULDIV_OPS:
        raise ValueError(f"the function unit has no operation {op!r}")
    t = _TABLES[width]
    cost = _Cost(t)
    sx, sy, sz = (_signed(v, width) for v in (x, y, z))
    f, g = t.frac, t.guard
    begin = _states("IDLE", "BEGIN")  # the operands loaded, then what they decide
    if op == "fmul":
        return begin + cost.mul + _states("ARITH_MUL")
    if op == "fdiv":
        return begin if sy == 0 else begin + _states("FDIV_D", "ARITH_DIV") + cost.div
    if op == "fn_abs":
        return begin
    if op == "fn_sqrt":
        return begin if sx < 0 else begin + cost.sqrt
    if op in ("fn_sin", "fn_cos", "fn_tan"):
        return begin + _sincos(sx, op == "fn_tan", t, cost)
    if op in ("fn_atan", "fn_atan2"):
        if op == "fn_atan2" and sx == 0 and sy == 0:
            return begin + _states("ATAN", "ATAN_B", "ATAN_N")
        return begin + cost.circular + _states("ATAN", "ATAN_B", "ATAN_N", "ATAN_X", "ATAN_Y",
                                               "ATAN_CORDIC")
    if op in ("rot", "irot"):
        return begin + _rotation(op, sz, t, cost)
    lim = (width + 2) << f  # _exp_from_p's and _hyperbolic_abs's range, tested in BEGIN
    if op == "fn_exp":
        return begin if not -lim < sx < lim else begin + _exponential(op, sx << g, t, cost)
    if op in ("fn_sinh", "fn_cosh", "fn_tanh"):
        limit = (f + 4) << f if op == "fn_tanh" else lim
        return begin if abs(sx) >= limit else begin + _exponential(op, abs(sx) << g, t, cost)
    if op == "fn_log":
        return begin if sx <= 0 else begin + _logarithm(sx, t, cost)
    if op == "fn_pow":
        if sx <= 0:
            return begin
        power = (sy * _ln_p(sx, t) + (1 << (f - 1))) >> f  # y ln x at P bits
        # the logarithm, the product y ln x (MUL, POW_Z: saturates), then exp of it
        cycles = begin + _logarithm(sx, t, cost) + cost.mul + _states("POW_Z")
        p_lim = (width + 2) << t.prec
        return cycles if not -p_lim < power < p_lim else cycles + _exponential(
            "fn_exp", power, t, cost)
    raise ValueError(f"no cycle model for the function unit's {op!r}")  # pragma: no cover


def _rotation(op: str, theta: int, t: _Tables, cost: _Cost) -> int:
    """ROT .. the finish of rot/irot by the signed angle ``theta``: the reduction by pi
    (a division and a product) when |theta| > pi/2, tan(theta'/2) and sin(theta'), then
    three shears of one product each and the finishing step."""
    pi = _pi_raw(word_format(t.width))
    half_pi = pi >> 1
    cycles = _states("ROT")
    reduced = theta
    if theta > half_pi or theta < -half_pi:
        span = theta - half_pi if theta > 0 else -half_pi - theta
        turns = (span + pi - 1) // pi
        reduced = theta - turns * pi if theta > 0 else theta + turns * pi
        cycles += cost.div + cost.mul + _states("ROT_TURNS", "ROT_REDUCED")
        if turns & 1:  # the negation by pi, a word at a time, then back to ROT_SHEAR
            cycles += (_states("ROT_NEG_X", "ROT_NEG_Y", "ROT_SHEAR") if op == "rot"
                       else _states("ROT_UNNEG_Y", "ROT_UNNEG_X"))
    cycles += _states("ROT_TAN")
    cycles += _sincos(reduced >> 1, True, t, cost) + _sincos(reduced, False, t, cost)
    # three shears (ROT_SHEAR, MUL, FMUL), then ROT_SHEAR finishes (irot: after
    # ROT_SHEAR sends it to ROT_UNNEG_Y)
    return cycles + 3 * (cost.mul + _states("ROT_SHEAR", "FMUL")) + _states("ROT_SHEAR")


def call_cycles(name: str, args: tuple[int, ...], width: int, *,
                function_unit: bool = True) -> int:
    """Cycles of one unit call as a template names it (``fmul(x, y)``, ``fn_sin(x)``,
    ``rot(x, y, theta)``, ...) on a core built with the function unit (which serves every
    call, ``fmul``/``fdiv`` included) or, ``function_unit=False``, without it (``fmul``/
    ``fdiv`` on the multiply/divide unit; the functions fault there, so are refused)."""
    words = (*args, 0, 0, 0)[:3]
    if function_unit:
        return function_unit_cycles(name, *words, width)
    if name not in MULDIV_OPS:
        raise ValueError(f"a core without the function unit has no {name!r} "
                         "(it faults as unimplemented)")
    return muldiv_cycles(name, words[0], words[1], width)
