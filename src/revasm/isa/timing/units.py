"""How many clock cycles one call of a multi-cycle unit takes, from its operands.

The core's multi-cycle units are the function unit (``rtl/hardware/function_unit.py``, which also
does ``fmul``/``fdiv``) and, on a core built without it, the multiply/divide unit
(``rtl/hardware/muldiv.py``).  Their sequencers are sized by the constants of this module
(``multiplier_steps``, ``divider_steps``, ``product_steps``, ``quotient_steps``,
``CORDIC_ITERATION_CYCLES``, ``TWO_CYCLE_STATES``): the RTL imports them from here, so a
change of the hardware's timing is a change of this file.

:func:`function_unit_cycles` and :func:`muldiv_cycles` count the states a unit's sequencer
visits for one call, from the cycle it sees ``start`` (in IDLE) to the cycle whose edge
raises ``done``, both included; the branches it takes are decided by the same integer
algorithm as the unit's (``isa/functions``, ``isa/rotation.py``), so the count is exact for
every operand.  ``tests/isa/timing/test_units.py`` runs each unit alone in Amaranth's simulator
over random and edge-case operands of every operation at both widths and checks every
count.

For the simulators, :func:`fixed_call_cycles` says which calls take the same cycles for
every operand the call accepts (a faulting call retires no instruction, so its time is
never added to a run), and :func:`call_timer` gives, for the others, a function of just
the operands their time depends on (:data:`TIMING_ARGUMENTS`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from revasm.isa.elementary import TABLES, Tables, exp_k, ln_p, pi_raw, sincos_abs
from revasm.isa.fixed_point import WordFormat
from revasm.isa.primitives import UNIT_CALLS as _UNIT_OPERATIONS
from revasm.isa.primitives import Primitive, operations, primitive

#: Operations of the multiply/divide unit, by vocabulary name (position = op code): the
#: primitives table's (``isa/primitives.py``).
MULDIV_OPS: tuple[str, ...] = operations("muldiv")
#: Operations of the function unit, by vocabulary name (position = op code).
FUNCTION_OPS: tuple[str, ...] = operations("function")
#: Every vocabulary name a template calls that runs on a multi-cycle unit.
UNIT_CALLS: frozenset[str] = frozenset(_UNIT_OPERATIONS)

#: The function unit's states that drive its shared shifter.  The shifter's inputs are
#: registers, so each of these states takes two cycles: the first loads the shifter's
#: inputs and nothing else happens, the second is the state's work on the shifter's
#: output.  CORDIC_Y's input is loaded by CORDIC's second cycle, so it takes one.
#: ``FunctionUnit.elaborate`` checks this set against the states that shift.
TWO_CYCLE_STATES: frozenset[str] = frozenset({
    "BEGIN", "CORDIC", "SQRT_END", "SC_START", "SC_CORDIC", "TAN_N", "TAN_DIV", "SC_DONE",
    "ATAN", "ATAN_B", "ATAN_X", "ATAN_Y", "ATAN_CORDIC", "ARITH_MUL", "FDIV_D", "ARITH_DIV",
    "ROT", "ROT_TAN", "ROT_SHEAR", "ROT_NEG_X", "ROT_NEG_Y", "ROT_UNNEG_Y", "ROT_UNNEG_X",
    "HX_START", "HX_CORDIC", "HX_POST", "TANH_N", "TANH_DIV", "SIGMOID_N", "LOG", "LOG_E"})

def multiplier_steps(width: int) -> int:
    """Steps of one function-unit product: one bit of the W + 1-bit signed multiplier per
    cycle."""
    return width + 1


def divider_steps(width: int) -> int:
    """Steps of one function-unit quotient, one bit each: every dividend is below
    2**(W + F + 4)."""
    return width + TABLES[width].frac + 4


def product_steps(width: int) -> int:
    """Steps of one product on the multiply/divide unit: one multiplier bit per cycle."""
    return width


def quotient_steps(width: int) -> int:
    """Steps of one quotient on the multiply/divide unit, one bit each: the dividend
    ``2|x| 2^F + |y|`` has W + F + 2 bits."""
    return width + width // 2 + 2


#: Per operation, the positions of the arguments its cycles depend on (the others are
#: ignored): a rotation's time depends on its angle alone.
TIMING_ARGUMENTS: dict[str, tuple[int, ...]] = {
    name: (2,) if name in ("rot", "irot") else tuple(range(primitive(name).arity))
    for name in sorted(UNIT_CALLS)}


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


#: Cycles of one CORDIC iteration of the function unit: its states CORDIC and CORDIC_Y,
#: whose shifts both go through the shared shifter, CORDIC's in two cycles, CORDIC_Y's
#: (loaded in CORDIC) in one.
CORDIC_ITERATION_CYCLES = _states("CORDIC", "CORDIC_Y")


@dataclass(frozen=True)
class _Cost:
    """The cycles of the function unit's subroutines at one width: each is the cycles
    spent in the subroutine's state(s), the last of which returns to the caller."""

    t: Tables
    mul: int
    div: int
    circular: int
    hyperbolic: int
    sqrt: int
    pi: int  # pi in the format (the rotation's reduction)


@dataclass(frozen=True)
class _AnyWidth(WordFormat):
    """A word format of any even width: the function unit is also built, and proved, at
    reduced widths (``rtl/verification/unit_proofs.py``); only its fraction bits are read here."""

    def __post_init__(self) -> None:
        if self.width < 4 or self.width % 2:
            raise ValueError(f"no function unit of width {self.width}")


@cache
def _cost(width: int) -> _Cost:
    t = TABLES[width]
    return _Cost(t, mul=multiplier_steps(width) + 1, div=divider_steps(width) + 1,
                 circular=CORDIC_ITERATION_CYCLES * len(t.circular),
                 hyperbolic=CORDIC_ITERATION_CYCLES * len(t.hyperbolic),
                 # one root bit per cycle, then the rounding
                 sqrt=t.sqrt_bits + _states("SQRT_END"),
                 pi=pi_raw(_AnyWidth(width)))



#: The sub-sums of the function unit's routines (the states each visits once).
_BEGIN = ("IDLE", "BEGIN")  # the operands loaded, then what they decide
_SINCOS = ("SC_START", "SC_Q", "SC_R", "SC_CORDIC", "SC_DONE")
_TAN_DIVISION = ("TAN_N", "TAN_DIV")
_ATAN_ZERO = ("ATAN", "ATAN_B", "ATAN_N")
_ATAN = (*_ATAN_ZERO, "ATAN_X", "ATAN_Y", "ATAN_CORDIC")
_EXPONENTIAL = ("HX_START", "HX_K", "HX_R", "HX_CORDIC", "HX_EP", "HX_POST")
_TANH_DIVISION = ("TANH_N", "TANH_DIV")
_SIGMOID_DIVISION = ("SIGMOID_N", "TANH_DIV")  # the numerator e**r or e**-r, tanh's division
_LOGARITHM = ("LOG", "LOG_Z", "LOG_E")
_NEGATION = {"rot": ("ROT_NEG_X", "ROT_NEG_Y", "ROT_SHEAR"),  # then back to ROT_SHEAR
             "irot": ("ROT_UNNEG_Y", "ROT_UNNEG_X")}  # after the shears


@dataclass(frozen=True)
class CallCosts:
    """The cycles of every path through the function unit's routines at one width, and
    the limits that choose the path (each a test of the unit's, on the operand words).

    A call of an operation that does not fault takes (``begin`` counts IDLE and BEGIN,
    where faults, saturations and ``abs`` finish):

    * ``fn_tan``: ``sincos``, + ``tan_division`` unless its denominator is 0;
    * ``fn_atan2``: ``atan``, or ``atan2_zero`` for (0, 0);
    * ``fn_exp``, ``fn_sinh``, ``fn_cosh``: ``exponential`` when ``|x| < exp_limit``,
      else ``begin``; ``fn_tanh``: ``exponential`` when ``|x| < tanh_limit``, +
      ``tanh_division`` when exp's ``k < tanh_k_limit``, else ``begin`` (``k`` =
      ``(|x| 2**k_shift * inv_ln2_k + 2**(2 k_bits - 1)) >> 2 k_bits``, exp's estimate of
      ``|x| / ln 2`` from ``|x| << G``);
    * ``fn_sigmoid``: ``exponential + sigmoid_division`` when ``|x| < sigmoid_limit``,
      else ``begin`` (exactly one or zero);
    * ``fn_log``: ``log``, or ``log_exact`` when the mantissa is exactly one;
    * ``fn_pow``: ``begin`` for x = 0, else its logarithm (``log``/``log_exact``) +
      ``pow_extra``, + ``exponential - begin`` when ``|y ln x| < pow_limit`` at P bits;
    * ``rot``/``irot``: ``rotation``, + ``reduction`` when ``|theta| > half_pi``, +
      ``negation[op]`` when that takes an odd number of turns of ``pi``.
    """

    width: int
    begin: int
    sincos: int
    tan_division: int
    atan: int
    atan2_zero: int
    exponential: int
    tanh_division: int
    sigmoid_division: int
    log: int
    log_exact: int
    pow_extra: int
    rotation: int
    reduction: int
    negation: dict[str, int]
    exp_limit: int
    tanh_limit: int
    tanh_k_limit: int
    sigmoid_limit: int
    k_shift: int
    inv_ln2_k: int
    k_bits: int
    pow_limit: int
    pi: int
    half_pi: int


@cache
def call_costs(width: int) -> CallCosts:
    """The function unit's :class:`CallCosts` at ``width``."""
    c = _cost(width)
    t = c.t
    begin = _states(*_BEGIN)
    sincos = 2 * c.mul + c.circular + _states(*_SINCOS)  # two products, the CORDIC
    tan_division = _states(*_TAN_DIVISION) + c.div
    log = c.mul + _states(*_LOGARITHM)  # normalisation, the product e ln 2
    # ROT, ROT_TAN, tan(theta'/2) (always divides: |theta'/2| <= pi/4, far from a pole)
    # and sin(theta'), then three shears (ROT_SHEAR, MUL, FMUL) and ROT_SHEAR again
    rotation = (_states("ROT", "ROT_TAN") + 2 * sincos + tan_division
                + 3 * (c.mul + _states("ROT_SHEAR", "FMUL")) + _states("ROT_SHEAR"))
    return CallCosts(
        width=width, begin=begin, sincos=begin + sincos, tan_division=tan_division,
        atan=begin + c.circular + _states(*_ATAN), atan2_zero=begin + _states(*_ATAN_ZERO),
        # two products (k, r), the hyperbolic rotation, e**-r scaled (HX_POST finishes)
        exponential=begin + 2 * c.mul + c.hyperbolic + _states(*_EXPONENTIAL),
        tanh_division=_states(*_TANH_DIVISION) + c.div,
        sigmoid_division=_states(*_SIGMOID_DIVISION) + c.div,
        log=begin + log + c.hyperbolic, log_exact=begin + log,
        pow_extra=c.mul + _states("POW_Z"),  # the product y ln x, POW_Z (saturates)
        rotation=begin + rotation,
        reduction=c.div + c.mul + _states("ROT_TURNS", "ROT_REDUCED"),
        negation={op: _states(*names) for op, names in _NEGATION.items()},
        exp_limit=(width + 2) << t.frac,  # _exp_from_p's and _hyperbolic_abs's range
        tanh_limit=(t.frac + 4) << t.frac, tanh_k_limit=t.frac // 2 + 2,
        sigmoid_limit=(t.frac + 4) << (t.frac + 1),  # fx_sigmoid's: |x| / 2 < F + 4
        k_shift=t.k_bits - t.frac, inv_ln2_k=t.inv_ln2_k, k_bits=t.k_bits,
        pow_limit=(width + 2) << t.prec, pi=c.pi, half_pi=c.pi >> 1)


#: Below this |r| (units of 2**-P) an odd quadrant's sin r might be 0 and tan's
#: division be skipped: it is decided by the CORDIC itself; above it, sin r is far from
#: 0 (the rotation's error is a few dozen units), so the reduction alone decides.
TAN_POLE_WINDOW = 1 << 12


def tan_divides(ax: int, t: Tables) -> bool:
    """Whether tan of ``ax >= 0`` divides (its denominator, cos r or -sin r at an odd
    quadrant, is not 0): the quadrant reduction of ``sincos_abs`` decides, and only an
    angle next to a pole needs the CORDIC's sin r."""
    q = (ax * t.two_over_pi + (1 << (t.frac + t.width - 1))) >> (t.frac + t.width)
    if not q & 1:
        return True  # cos r, |r| <= pi/4 (within one q of the nearest), is far from 0
    extra = t.reduce_extra
    r = ((ax << (t.guard + extra)) - q * t.half_pi_wide + (1 << (extra - 1))) >> extra
    if r >= TAN_POLE_WINDOW or r <= -TAN_POLE_WINDOW:
        return True
    _c, s, _q = sincos_abs(ax, t)
    return s != 0


def log_mantissa_is_one(x: int, width: int) -> bool:
    """Whether ``ln_p`` of ``x > 0`` skips its CORDIC: the mantissa normalised to
    S = P - 1 bits is exactly one (x a power of two, or at the widest, W - 1 bits, the
    one bit below the mantissa's set too)."""
    s = TABLES[width].prec - 1
    shift = s - (x.bit_length() - 1)
    return (x << shift if shift >= 0 else x >> -shift) == 1 << s


def rotation_turns(theta: int, costs: CallCosts) -> int:
    """How many turns of pi the rotation unit takes out of the signed angle ``theta``
    (``isa/rotation.rotation_plan``): 0 within [-pi/2, pi/2]."""
    if -costs.half_pi <= theta <= costs.half_pi:
        return 0
    span = theta - costs.half_pi if theta > 0 else -costs.half_pi - theta
    return -(-span // costs.pi)


def fixed_call_cycles(op: str, width: int, *, function_unit: bool = True) -> int | None:
    """The cycles of every call of ``op`` that does not fault, when they do not depend on
    its operands; ``None`` when they do (:func:`call_timer` times those)."""
    if not function_unit:
        if op not in MULDIV_OPS:
            raise ValueError(f"a core without the function unit has no {op!r} "
                             "(it faults as unimplemented)")
        return muldiv_cycles(op, 1, 1, width)  # fdiv by 0 faults
    c = _cost(width)
    begin = _states(*_BEGIN)
    if op == "fmul":
        return begin + c.mul + _states("ARITH_MUL")
    if op == "fdiv":  # by a non-zero word (0 faults)
        return begin + _states("FDIV_D", "ARITH_DIV") + c.div
    if op == "fn_abs":
        return begin
    if op == "fn_sqrt":  # of x >= 0 (below 0 it faults)
        return begin + c.sqrt
    if op in ("fn_sin", "fn_cos"):
        return call_costs(width).sincos
    if op == "fn_atan":
        return call_costs(width).atan
    if op not in FUNCTION_OPS:
        raise ValueError(f"the function unit has no operation {op!r}")
    return None


def function_unit_cycles(op: str, x: int, y: int, z: int, width: int) -> int:
    """Cycles of one call of the function unit: operation ``op`` (a vocabulary name of
    ``FUNCTION_OPS``, or ``fmul``/``fdiv`` of ``MULDIV_OPS``, which the unit does with
    its ``arith`` input) on the words ``x``, ``y``, ``z`` (its ports; ``rot``/``irot``:
    the two words and the angle).  Faults (domain, divide-by-zero) and the results
    decided from the operand alone (saturation, abs) finish in BEGIN, the state after
    IDLE."""
    if op not in FUNCTION_OPS and op not in MULDIV_OPS:
        raise ValueError(f"the function unit has no operation {op!r}")
    sx, sy = _signed(x, width), _signed(y, width)
    if (op == "fdiv" and sy == 0) or (op in ("fn_sqrt", "fn_log", "fn_pow") and sx < 0) or (
            op == "fn_log" and sx == 0):
        return _states(*_BEGIN)  # the fault, found in BEGIN
    fixed = fixed_call_cycles(op, width)
    if fixed is not None:
        return fixed
    return _timer(op, width)(*((x, y, z)[i] for i in TIMING_ARGUMENTS[op]))


def call_cycles(name: str, args: tuple[int, ...], width: int, *,
                function_unit: bool = True) -> int:
    """Cycles of one unit call as a template names it (``fmul(x, y)``, ``fn_sin(x)``,
    ``rot(x, y, theta)``, ...) on a core built with the function unit (which serves every
    call, ``fmul``/``fdiv`` included) or, ``function_unit=False``, without it (``fmul``/
    ``fdiv`` on the multiply/divide unit; the functions fault there, so are refused)."""
    x, y, z = (*args, 0, 0, 0)[:3]
    if function_unit:
        return function_unit_cycles(name, x, y, z, width)
    if name not in MULDIV_OPS:
        raise ValueError(f"a core without the function unit has no {name!r} "
                         "(it faults as unimplemented)")
    return muldiv_cycles(name, x, y, width)


def call_timer(op: str, width: int) -> Callable[..., int]:
    """The cycles of a call of ``op`` on the function unit as a function of the words
    its time depends on (``TIMING_ARGUMENTS[op]``, in that order), for a call that does
    not fault; a call of fixed cycles gets a function of no argument."""
    fixed = fixed_call_cycles(op, width)
    if fixed is not None:
        return lambda: fixed
    return _timer(op, width)


def _signed(word: int, width: int) -> int:
    word &= (1 << width) - 1
    return word - ((word >> (width - 1)) << width)


@cache
def _timer(op: str, width: int) -> Callable[..., int]:
    """:func:`call_timer` of an operation whose cycles depend on its operands: the
    paths of :class:`CallCosts`, chosen by the unit's own tests on the words."""
    k = call_costs(width)
    t = TABLES[width]
    mask, sign = (1 << width) - 1, 1 << (width - 1)

    def signed(word: int) -> int:
        word &= mask
        return word - ((word & sign) << 1)

    def logarithm(x: int) -> int:  # x > 0
        return k.log_exact if log_mantissa_is_one(x, width) else k.log

    if op == "fn_tan":
        return lambda x: k.sincos + k.tan_division * tan_divides(abs(signed(x)), t)
    if op == "fn_atan2":
        return lambda x, y: k.atan if (x | y) & mask else k.atan2_zero
    if op in ("rot", "irot"):
        negation = k.negation[op]

        def rotation(theta: int) -> int:
            turns = rotation_turns(signed(theta), k)
            return (k.rotation + k.reduction * bool(turns)) + negation * (turns & 1)
        return rotation
    if op in ("fn_exp", "fn_sinh", "fn_cosh"):
        return lambda x: k.exponential if -k.exp_limit < signed(x) < k.exp_limit else k.begin
    if op == "fn_tanh":
        def tanh(x: int) -> int:
            ax = abs(signed(x))
            if ax >= k.tanh_limit:
                return k.begin
            divides = exp_k(ax << t.guard, t) < k.tanh_k_limit
            return k.exponential + k.tanh_division * divides
        return tanh
    if op == "fn_sigmoid":
        return lambda x: (k.exponential + k.sigmoid_division
                          if -k.sigmoid_limit < signed(x) < k.sigmoid_limit else k.begin)
    if op == "fn_log":
        return lambda x: logarithm(signed(x))  # x > 0: log faults below
    if op == "fn_pow":
        def power(x: int, y: int) -> int:
            sx = signed(x)
            if sx <= 0:
                return k.begin  # 0 ** y, found in BEGIN (x < 0 faults there)
            z = (signed(y) * ln_p(sx, t) + (1 << (t.frac - 1))) >> t.frac  # y ln x, P bits
            cycles = logarithm(sx) + k.pow_extra
            return cycles + (k.exponential - k.begin) if -k.pow_limit < z < k.pow_limit \
                else cycles
        return power
    raise ValueError(f"no cycle model for the function unit's {op!r}")  # pragma: no cover


def primitive_cycles(row: Primitive, width: int) -> tuple[int, int] | None:
    """A primitives-table row's cycles on the RTL at ``width``: :func:`call_cycle_range`
    of a unit call; ``None`` for an ALU primitive or an overflow predicate (it reads the
    overflow bit of the call it tests)."""
    if not row.unit_call or row.predicate:
        return None
    return call_cycle_range(row.name, width)


def call_cycle_range(op: str, width: int) -> tuple[int, int]:
    """The fewest and the most cycles a call of ``op`` that does not fault takes on the
    function unit, over every operand: each branch of its routine, taken or not."""
    fixed = fixed_call_cycles(op, width)
    if fixed is not None:
        return fixed, fixed
    k = call_costs(width)
    if op == "fn_tan":
        return k.sincos, k.sincos + k.tan_division
    if op == "fn_atan2":
        return k.atan2_zero, k.atan
    if op in ("rot", "irot"):
        return k.rotation, k.rotation + k.reduction + k.negation[op]
    if op in ("fn_exp", "fn_sinh", "fn_cosh"):
        return k.begin, k.exponential
    if op == "fn_tanh":
        return k.begin, k.exponential + k.tanh_division
    if op == "fn_sigmoid":
        return k.begin, k.exponential + k.sigmoid_division
    if op == "fn_log":
        return k.log_exact, k.log
    if op == "fn_pow":
        return k.begin, k.log + k.pow_extra + k.exponential - k.begin
    raise ValueError(f"no cycle model for the function unit's {op!r}")  # pragma: no cover
