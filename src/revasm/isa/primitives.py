"""The primitives table: every function the instruction table's semantics call, declared once.

``isa/table.py`` writes each instruction's semantics as a template over a small
vocabulary (``isa/vocabulary.py``).  Below the instruction table sit the functions that
vocabulary calls -- the word operations of the ALU, the fixed-point product ``fmul`` and
quotient ``fdiv``, the elementary functions ``fn_*``, the exact rotations ``rot``/``irot``
and the overflow predicates ``ovf_*`` -- and this module is their table (docs/isa.md,
"Primitives", is generated from it):
one :class:`Primitive` row each, with

* ``name`` (the vocabulary name), ``arity`` (operands, all W-bit words, named ``x``,
  ``y``, ``z`` in that order) and ``result``: ``"word"``, ``"pair"`` (two words: the
  rotations) or ``"flag"`` (a word that is 0 or 1: the predicates and ``slt``);
* ``faults``: every way a call can fault, in the order the reference checks them -- the
  fault kind (a ``MachineFault`` kind), the condition (conjuncts over the operands in
  the vocabulary: ``S(x) <= 0``) and the message (a format over the *signed* operand
  ``x``);
* ``overflow``: the predicate that flags this primitive's result not fitting the word
  (``ovf_mul`` for ``fmul``; ``ovf_sat`` for a function that saturates); a predicate row
  names in ``tests`` the primitive whose call (same operands) it tests, when it has one;
* ``unit``: who computes it on the RTL: ``"alu"`` (combinational), ``"muldiv"`` (the
  multiply/divide unit) or ``"function"`` (the function unit); within a unit, the order
  of the rows is the unit's operation code;
* ``inverse``: the primitive that undoes it (``rot``/``irot``), for the RTL's overflow
  bits of a backward rotation;
* ``doc``, and ``error``: the documented error bound of an elementary function
  (measured as ``docs/elementary.md`` says);
* ``bind``: THE reference implementation -- given a word format it returns the function
  on unsigned W-bit words (the integer algorithms of ``isa/functions/`` and
  ``isa/rotation.py``, never floats), for any width those algorithms support.  A fault is
  raised as :class:`~revasm.isa.functions.errors.DivideByZero` or
  :class:`~revasm.isa.functions.errors.DomainError` with the row's message.

Every engine takes its dispatch and these properties from the rows (the reference
simulator runs ``bind`` itself; ``tests/isa/test_primitives.py`` proves the vector and
compiled engines' implementations equal to it row by row, and the RTL's function unit
refuses at elaboration a function-unit row it has no routine for).  Adding a primitive is
one row here (plus an instruction in ``isa/table.py`` that uses it).

* cycles: what a call takes on the RTL's unit is ``isa/timing/units.py``'s
  (``call_cycle_range(name, width)``: the fewest and most over its operands; ``docs/isa.md``
  lists them beside these rows), where the units' timing is defined once with the constants
  that size their sequencers -- it reads the rows' ``unit``, so the rows do not hold it (an
  import cycle); an ALU primitive or an overflow predicate takes none of its own (the
  instruction's cycles, ``isa/timing/schedule.py``).
"""
from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .functions.arithmetic import fx_abs, fx_div
from .functions.circular import fx_atan, fx_atan2, fx_cos, fx_sin, fx_tan
from .functions.exp_log import fx_exp, fx_log, fx_pow
from .functions.hyperbolic import fx_cosh, fx_sigmoid, fx_sinh, fx_tanh
from .functions.square_root import fx_sqrt
from .rotation import rotate, rotation_overflows, unrotate, unrotation_overflows


class Format(Protocol):
    """What a reference needs of a word format (:class:`~revasm.isa.fixed_point.WordFormat`,
    or the RTL proofs' reduced-width formats)."""

    @property
    def width(self) -> int: ...
    @property
    def frac_bits(self) -> int: ...
    @property
    def mask(self) -> int: ...
    @property
    def sign_bit(self) -> int: ...
    @property
    def one(self) -> int: ...
    @property
    def min_signed(self) -> int: ...
    @property
    def max_signed(self) -> int: ...
    def signed(self, word: int) -> int: ...


Result = Literal["word", "pair", "flag"]
Unit = Literal["alu", "muldiv", "function"]
#: The operand names of a row's fault conditions and messages, in argument order.
OPERANDS = ("x", "y", "z")


@dataclass(frozen=True)
class Fault:
    """One way a primitive faults: the machine's fault ``kind``, the condition ``when``
    (conjuncts over the operand words ``x``, ``y``, ``z`` in the vocabulary, all of which
    hold), and the ``message`` (a format over the signed operand ``x``)."""

    kind: Literal["divide-by-zero", "domain-error"]
    when: tuple[str, ...]
    message: str

    def detail(self, x: int = 0) -> str:
        """The message for the signed operand ``x``."""
        return self.message.format(x=x)


@dataclass(frozen=True)
class ErrorBound:
    """The documented maximum error of an elementary function, per width, in units of
    2**-F (``metric`` ``"abs"``: |result - f(x) 2**F|; ``"mixed"``: that divided by
    max(1, |f(x)|)).  Measured as ``docs/elementary.md`` says."""

    metric: Literal["abs", "mixed"]
    ulp: dict[int, float]


@dataclass(frozen=True)
class Primitive:
    """One row of the primitives table (see the module's doc for the columns)."""

    name: str
    arity: int
    result: Result
    unit: Unit
    doc: str
    bind: Callable[[Any], Callable[..., Any]] = field(repr=False)
    faults: tuple[Fault, ...] = ()
    overflow: str | None = None
    tests: str | None = None
    inverse: str | None = None
    error: ErrorBound | None = None
    #: an elementary function's algorithm on signed raw integers (``f(x, fmt)``), which
    #: ``bind`` applies to words
    algorithm: Callable[..., int] | None = field(default=None, repr=False)

    @property
    def can_fault(self) -> bool:
        return bool(self.faults)

    @property
    def fault_kinds(self) -> frozenset[str]:
        return frozenset(f.kind for f in self.faults)

    @property
    def operands(self) -> tuple[str, ...]:
        return OPERANDS[:self.arity]

    @property
    def unit_call(self) -> bool:
        """Computed by a multi-cycle unit (``muldiv`` or ``function``), not the ALU."""
        return self.unit != "alu"

    @property
    def predicate(self) -> bool:
        return self.name.startswith("ovf_")

    def reference(self, fmt: Any) -> Callable[..., Any]:
        """The reference implementation on the words of ``fmt``."""
        return self.bind(fmt)


# --- the reference implementations, each for a word format ----------------------------------


def _signed(fmt: Format) -> Callable[[int], int]:
    sign = fmt.sign_bit
    return lambda word: word - ((word & sign) << 1)


def _shl(fmt: Format) -> Callable[[int, int], int]:
    mask, amount = fmt.mask, fmt.width - 1
    return lambda word, n: (word << (n & amount)) & mask


def _srl(fmt: Format) -> Callable[[int, int], int]:
    amount = fmt.width - 1
    return lambda word, n: word >> (n & amount)


def _sra(fmt: Format) -> Callable[[int, int], int]:
    mask, amount, s = fmt.mask, fmt.width - 1, _signed(fmt)
    return lambda word, n: (s(word) >> (n & amount)) & mask


def _rotl(fmt: Format) -> Callable[[int, int], int]:
    mask, width = fmt.mask, fmt.width

    def rotl(word: int, n: int) -> int:
        k = n & (width - 1)
        return ((word << k) | (word >> (width - k))) & mask
    return rotl


def _rotr(fmt: Format) -> Callable[[int, int], int]:
    mask, width = fmt.mask, fmt.width

    def rotr(word: int, n: int) -> int:
        k = n & (width - 1)
        return ((word >> k) | (word << (width - k))) & mask
    return rotr


def _slt(fmt: Format) -> Callable[[int, int], int]:
    s = _signed(fmt)
    return lambda x, y: 1 if s(x) < s(y) else 0


def _fneg(fmt: Format) -> Callable[[int], int]:
    mask = fmt.mask
    return lambda x: -x & mask


def _fadd(fmt: Format) -> Callable[[int, int], int]:
    mask = fmt.mask
    return lambda x, y: (x + y) & mask


def _fsub(fmt: Format) -> Callable[[int, int], int]:
    mask = fmt.mask
    return lambda x, y: (x - y) & mask


def _fsign(fmt: Format) -> Callable[[int], int]:
    one, minus_one, sign = fmt.one, -fmt.one & fmt.mask, fmt.sign_bit
    return lambda x: 0 if x == 0 else minus_one if x & sign else one


def _fmul(fmt: Format) -> Callable[[int, int], int]:
    sign, frac, mask = fmt.sign_bit, fmt.frac_bits, fmt.mask
    half = 1 << (frac - 1)

    def fmul(x: int, y: int) -> int:
        # functions.arithmetic.fx_mul (floor(S(x) S(y) / 2^F + 1/2)), inlined: the
        # reference simulator's hottest call
        return ((((x - ((x & sign) << 1)) * (y - ((y & sign) << 1)) + half) >> frac) & mask)
    return fmul


def _fdiv(fmt: Format) -> Callable[[int, int], int]:
    mask, s = fmt.mask, _signed(fmt)
    return lambda x, y: fx_div(s(x), s(y), fmt) & mask  # type: ignore[arg-type]


def _unary(algorithm: Callable[[int, Any], int]) -> Callable[[Format], Callable[[int], int]]:
    """A word function from an algorithm on signed raw integers (``f(x, fmt)``)."""
    def bind(fmt: Format) -> Callable[[int], int]:
        mask, s = fmt.mask, _signed(fmt)
        return lambda x: algorithm(s(x), fmt) & mask
    return bind


def _binary(algorithm: Callable[[int, int, Any], int]
            ) -> Callable[[Format], Callable[[int, int], int]]:
    """A word function from an algorithm on two signed raw integers (``f(x, y, fmt)``)."""
    def bind(fmt: Format) -> Callable[[int, int], int]:
        mask, s = fmt.mask, _signed(fmt)
        return lambda x, y: algorithm(s(x), s(y), fmt) & mask
    return bind


def _with_format(function: Callable[..., Any]) -> Callable[[Format], Callable[..., Any]]:
    """A word function that takes the format as its last argument (``isa/rotation.py``)."""
    def bind(fmt: Format) -> Callable[..., Any]:
        return lambda *words: function(*words, fmt)
    return bind


def _ovf_add(fmt: Format) -> Callable[[int, int], int]:
    mask, top = fmt.mask, fmt.width - 1

    # the sum leaves the range exactly when both operands' signs differ from the wrapped
    # result's
    def ovf_add(x: int, y: int) -> int:
        total = (x + y) & mask
        return (((x ^ total) & (y ^ total)) >> top) & 1
    return ovf_add


def _ovf_sub(fmt: Format) -> Callable[[int, int], int]:
    mask, top = fmt.mask, fmt.width - 1

    # the difference: when x's sign differs from y's and from the result's
    def ovf_sub(x: int, y: int) -> int:
        difference = (x - y) & mask
        return (((x ^ y) & (x ^ difference)) >> top) & 1
    return ovf_sub


def _ovf_mul(fmt: Format) -> Callable[[int, int], int]:
    sign, frac = fmt.sign_bit, fmt.frac_bits
    half, lowest, highest = 1 << (frac - 1), fmt.min_signed, fmt.max_signed

    def ovf_mul(x: int, y: int) -> int:
        product = ((x - ((x & sign) << 1)) * (y - ((y & sign) << 1)) + half) >> frac
        return 0 if lowest <= product <= highest else 1
    return ovf_mul


def _ovf_div(fmt: Format) -> Callable[[int, int], int]:
    s, lowest, highest = _signed(fmt), fmt.min_signed, fmt.max_signed

    def ovf_div(x: int, y: int) -> int:
        if y == 0:  # the division faults first
            return 0
        return 0 if lowest <= fx_div(s(x), s(y), fmt) <= highest else 1  # type: ignore[arg-type]
    return ovf_div


def _ovf_sat(fmt: Format) -> Callable[[int], int]:
    largest, sign = fmt.mask >> 1, fmt.sign_bit
    return lambda x: 1 if x == largest or x == sign else 0


# --- the table ----------------------------------------------------------------------------

_DIVIDE_BY_ZERO = Fault("divide-by-zero", ("y == 0",), "division by zero (raw dividend {x})")
_NEAR_HALF = {32: 0.51, 64: 0.501}


def _near_half(metric: Literal["abs", "mixed"] = "abs") -> ErrorBound:
    """0.5 (the final rounding) plus the CORDIC's error scaled by 2**-G."""
    return ErrorBound(metric, dict(_NEAR_HALF))


def _alu(name: str, arity: int, bind: Callable[[Format], Callable[..., Any]], doc: str,
         result: Result = "word") -> Primitive:
    return Primitive(name, arity, result, "alu", doc, bind)


def _function(name: str, arity: int, algorithm: Callable[..., int], doc: str,
              error: ErrorBound, faults: tuple[Fault, ...] = (),
              saturates: bool = False) -> Primitive:
    """An elementary function of the function unit, from its algorithm on signed integers."""
    bind = _unary(algorithm) if arity == 1 else _binary(algorithm)
    return Primitive(name, arity, "word", "function", doc, bind, faults=faults,
                     overflow="ovf_sat" if saturates else None, error=error,
                     algorithm=algorithm)


PRIMITIVES: tuple[Primitive, ...] = (
    # --- the ALU: combinational word operations -------------------------------------------
    _alu("shl", 2, _shl, "x << (y mod W), wrapped"),
    _alu("srl", 2, _srl, "x >> (y mod W), logical"),
    _alu("sra", 2, _sra, "x >> (y mod W), arithmetic"),
    _alu("rotl", 2, _rotl, "x rotated left by y mod W"),
    _alu("rotr", 2, _rotr, "x rotated right by y mod W"),
    _alu("slt", 2, _slt, "1 if S(x) < S(y) else 0", result="flag"),
    _alu("fneg", 1, _fneg, "-x mod 2^W"),
    _alu("fadd", 2, _fadd, "x + y mod 2^W"),
    _alu("fsub", 2, _fsub, "x - y mod 2^W"),
    _alu("fsign", 1, _fsign, "1.0, -1.0 or 0 by the sign of x (the derivative of abs)"),
    # --- the multiply/divide unit ----------------------------------------------------------
    Primitive("fmul", 2, "word", "muldiv", "fixed-point product, rounded half up: "
              "floor(S(x) S(y) / 2^F + 1/2)", _fmul, overflow="ovf_mul"),
    Primitive("fdiv", 2, "word", "muldiv", "fixed-point quotient, rounded half away from "
              "zero: round(S(x) 2^F / S(y))", _fdiv, faults=(_DIVIDE_BY_ZERO,),
              overflow="ovf_div"),
    # --- the function unit (this order is its operation code: append new rows last) ------
    _function("fn_sin", 1, fx_sin, "sin x: reduction by pi/2, circular CORDIC (rotation)",
              _near_half()),
    _function("fn_cos", 1, fx_cos, "cos x: reduction by pi/2, circular CORDIC (rotation)",
              _near_half()),
    # tan: 0.5 away from the poles; up to ~3 (relative) where |tan| nears 2**(W-1-F)
    _function("fn_tan", 1, fx_tan, "tan x = sin/cos from one CORDIC run and one division; "
              "saturates", ErrorBound("mixed", {32: 4.0, 64: 4.0}), saturates=True),
    _function("fn_tanh", 1, fx_tanh, "tanh x: reduction by ln 2, hyperbolic CORDIC, one "
              "division", _near_half()),
    _function("fn_exp", 1, fx_exp, "e^x: reduction by ln 2, hyperbolic CORDIC; saturates",
              _near_half("mixed"), saturates=True),
    _function("fn_log", 1, fx_log, "ln x: leading-one normalisation, hyperbolic CORDIC "
              "(vectoring)", _near_half(),
              faults=(Fault("domain-error", ("S(x) <= 0",),
                            "log of non-positive value (raw {x})"),)),
    _function("fn_sqrt", 1, fx_sqrt, "sqrt x, correctly rounded: digit-by-digit root",
              ErrorBound("abs", {32: 0.5, 64: 0.5}),
              faults=(Fault("domain-error", ("S(x) < 0",), "sqrt of negative value (raw {x})"),)),
    _function("fn_abs", 1, fx_abs, "|x|; |min| saturates to max",
              ErrorBound("abs", {32: 0.0, 64: 0.0}), saturates=True),
    _function("fn_atan", 1, fx_atan, "atan x = atan2(x, 1): circular CORDIC (vectoring)",
              _near_half()),
    _function("fn_sinh", 1, fx_sinh, "sinh x from one hyperbolic CORDIC run; saturates",
              _near_half("mixed"), saturates=True),
    _function("fn_cosh", 1, fx_cosh, "cosh x from one hyperbolic CORDIC run; saturates",
              _near_half("mixed"), saturates=True),
    _function("fn_atan2", 2, fx_atan2, "atan2(x, y) in (-pi, pi] (x the ordinate); "
              "atan2(0, 0) = 0", _near_half()),
    # pow: 0.5 + |y| e_ln 2**-G with e_ln <= ~26 units of 2**-P, the error of the internal
    # ln x; reached only for x within a few ulp of 1 and |y| near 2**(W-1-F)
    _function("fn_pow", 2, fx_pow, "x^y = exp(y ln x); saturates",
              ErrorBound("mixed", {32: 24.0, 64: 48.0}), saturates=True,
              faults=(Fault("domain-error", ("S(x) < 0",), "pow of negative base (raw {x})"),
                      Fault("divide-by-zero", ("x == 0", "S(y) < 0"),
                            "0 ** negative exponent"))),
    Primitive("rot", 3, "pair", "function", "(x, y) rotated by the angle z: three lifting "
              "shears after a reduction by pi, exactly undone by irot",
              _with_format(rotate), overflow="ovf_rot", inverse="irot"),
    Primitive("irot", 3, "pair", "function", "(x, y) rotated by -z: the exact inverse of rot",
              _with_format(unrotate), overflow="ovf_irot", inverse="rot"),
    _function("fn_sigmoid", 1, fx_sigmoid, "the logistic sigmoid 1 / (1 + e^-x): "
              "reduction by ln 2, hyperbolic CORDIC, one division", _near_half()),
    # --- the overflow predicates (0 or 1; docs/isa.md, "Overflow events") ------------------
    Primitive("ovf_add", 2, "flag", "alu", "the exact signed sum x + y leaves the range",
              _ovf_add),
    Primitive("ovf_sub", 2, "flag", "alu", "the exact signed difference x - y leaves the "
              "range", _ovf_sub),
    Primitive("ovf_mul", 2, "flag", "muldiv", "fmul's rounded product does not fit",
              _ovf_mul, tests="fmul"),
    Primitive("ovf_div", 2, "flag", "muldiv", "fdiv's rounded quotient does not fit (0 for "
              "y = 0: the division faults first)", _ovf_div, tests="fdiv"),
    Primitive("ovf_sat", 1, "flag", "alu", "x sits at an end of the range: a saturating "
              "function's result did not fit", _ovf_sat),
    Primitive("ovf_rot", 3, "flag", "function", "a shear of rot (or its reduction's "
              "negation) wraps", _with_format(rotation_overflows), tests="rot"),
    Primitive("ovf_irot", 3, "flag", "function", "a shear of irot (or its negation) wraps",
              _with_format(unrotation_overflows), tests="irot"),
)

BY_NAME: dict[str, Primitive] = {p.name: p for p in PRIMITIVES}


def primitive(name: str) -> Primitive:
    """The row of ``name``; a :class:`KeyError` naming the table for any other name."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a primitive (isa/primitives.py)") from None


def names(*, unit: Unit | None = None, can_fault: bool | None = None,
          result: Result | None = None) -> tuple[str, ...]:
    """The rows' names, in table order, filtered by unit, faulting and result shape."""
    return tuple(p.name for p in PRIMITIVES
                 if (unit is None or p.unit == unit)
                 and (can_fault is None or p.can_fault == can_fault)
                 and (result is None or p.result == result))


def operations(unit: Unit) -> tuple[str, ...]:
    """A unit's operations (its predicates left out), in the order of their codes."""
    return tuple(p.name for p in PRIMITIVES if p.unit == unit and not p.predicate)


#: The calls a multi-cycle unit answers (``fmul``, ``fdiv``, ``fn_*``, ``rot``, ``irot``).
UNIT_CALLS: tuple[str, ...] = operations("muldiv") + operations("function")
#: The predicates that test a unit call (same operands), and the call they test.
UNIT_PREDICATES: dict[str, str] = {p.name: p.tests for p in PRIMITIVES if p.tests}
#: Every call that can fault.
FAULTING: frozenset[str] = frozenset(names(can_fault=True))
#: The rows whose result is a pair of words.
PAIRS: frozenset[str] = frozenset(names(result="pair"))
#: Each primitive's faults in the table's order, numbered from 0: (name, fault).
FAULT_LIST: tuple[tuple[str, Fault], ...] = tuple(
    (p.name, fault) for p in PRIMITIVES for fault in p.faults)


def bound(fmt: Any) -> dict[str, Callable[..., Any]]:
    """Every row's reference implementation, bound for ``fmt``."""
    return {p.name: p.bind(fmt) for p in PRIMITIVES}


def fault_holds(fault: Fault, words: tuple[int, ...], fmt: Any) -> bool:
    """Whether ``fault``'s condition holds for the operand words (evaluated with ``S``)."""
    env: dict[str, Any] = {"S": fmt.signed, **dict(zip(OPERANDS, words))}
    return all(eval(_compiled(c), env) for c in fault.when)  # the table's own text


_CODE: dict[str, Any] = {}


def _compiled(text: str) -> Any:
    code = _CODE.get(text)
    if code is None:
        code = _CODE[text] = compile(text, "<primitive fault>", "eval")
    return code


def _check() -> None:
    """The table's own consistency, at import: a bad row is an error here, not in an engine."""
    for p in PRIMITIVES:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", p.name):
            raise ValueError(f"primitive name {p.name!r}")
        for other in (p.overflow, p.tests, p.inverse):
            if other is not None and other not in BY_NAME:
                raise ValueError(f"{p.name} names {other!r}, which is not a row")
        if p.tests and BY_NAME[p.tests].arity != p.arity:
            raise ValueError(f"{p.name} tests {p.tests} with other operands")
        for fault in p.faults:
            fields = {f for _, f, _, _ in string.Formatter().parse(fault.message) if f}
            if not fields <= {"x"}:
                raise ValueError(f"{p.name}'s fault message may name only x: {fault.message}")
            for condition in fault.when:
                used = {n.id for n in ast.walk(ast.parse(condition, mode="eval"))
                        if isinstance(n, ast.Name)}
                if not used <= {"S", *p.operands}:
                    raise ValueError(f"{p.name}'s fault condition {condition!r} reads {used}")
        if p.unit == "function" and p.name.startswith("fn_") and p.error is None:
            raise ValueError(f"{p.name} has no documented error bound")


_check()

__all__ = ["BY_NAME", "FAULTING", "FAULT_LIST", "OPERANDS", "PAIRS", "PRIMITIVES",
           "UNIT_CALLS", "UNIT_PREDICATES", "ErrorBound", "Fault", "Primitive", "bound",
           "fault_holds", "names", "operations", "primitive"]
