"""Lowering accumulation, ``d += e`` and ``d -= e``: sums, products, quotients, powers, functions.

Each term becomes one accumulate instruction (ADD, ADDMUL, ADDDIV, ADDSIN, ...) on
operands set up in scratch registers; small integer factors become repeated exact
additions.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from fractions import Fraction

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, fixed_literal, inverse_code, literal_word
from .ir_queries import same_expr
from .lowering_state import FunctionLoweringState

_UNARY = ("sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "abs", "atan", "sinh", "cosh")
SMALL_MULTIPLIER = 4
#: x ** n for a whole |n| up to this is a chain of products (exact, any sign of x).
_MAX_POWER = 16


class ArithmeticLowering(FunctionLoweringState):
    """d += e and d -= e."""

    def accumulate(self, d: int, sign: int, e: ir.Expr, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        add, sub = ("ADD", "SUB") if sign > 0 else ("SUB", "ADD")
        if isinstance(e, ir.Const):
            if e.value == 0:
                return []
            # (types compared by kind, here and below: the dataclass ``==`` of each operand
            # was a twentieth of a long program's lowering)
            if ctx.kind == ir.INT.kind:
                if e.value.denominator != 1:
                    raise CompileError(pos, f"{expr_text(e)} is not an integer",
                                       "Int variables hold whole numbers")
                v = self.literal_word(e, ctx) * sign
                if -32768 <= v <= 32767:
                    return [self.i("ADDI", d, str(v), pos=pos)]
                return [self.i("LI", d, str(v), pos=pos)]
            self.literal_word(e, ctx)
            return [self.i("LI", d, fixed_literal(e.value * sign), pos=pos)]
        if isinstance(e, (ir.Var, ir.Index)):
            etype = self.type_of(e)  # (only here: a sum's type is its terms' walk)
            if etype.kind == ir.FIXED.kind and ctx.kind == ir.INT.kind:
                raise CompileError(pos, f"{expr_text(e)} is Fixed; it cannot be added to an "
                                        "Int", "keep Int variables for counts and indices")
            if etype.kind == ir.INT.kind and ctx.kind == ir.FIXED.kind:
                r, setup, teardown = self.place(e)
                t = self.fresh(pos)
                conv = [self.i("SLLX", t, r, str(self.fmt_frac), pos=pos, note="Int to Fixed")]
                return setup + conv + [self.i(add, d, t, pos=pos)] + conv + teardown
            # the element itself, moved out for the one instruction that reads it: a copy
            # (``value_place``) is for operands held together, as a product's
            r, setup, teardown = self.place(e)
            if r == d:
                raise CompileError(pos, f"{expr_text(e)} is both read and written by this "
                                        "statement", "copy it into an ancilla first")
            return setup + [self.i(add, d, r, pos=pos)] + teardown
        if isinstance(e, ir.Unary) and e.op == "-":
            return self.accumulate(d, -sign, e.operand, ctx)
        if isinstance(e, ir.BinOp) and e.op in "+-":
            # the terms down the sum's left spine, left to right, each ``complete`` (its
            # temporaries free again after it), into one list: ``left + right`` at each
            # level copied the code so far (a 6*10^4-term sum took quadratic time)
            terms: list[tuple[ir.Expr, int]] = []
            while isinstance(e, ir.BinOp) and e.op in "+-":
                terms.append((e.right, sign if e.op == "+" else -sign))
                e = e.left
            terms.append((e, sign))
            mark = self.scratch_top
            code: list[Instr] = []
            try:
                for term, term_sign in reversed(terms):
                    code += self.accumulate(d, term_sign, term, ctx)
                    self.scratch_top = mark
                return code
            finally:
                self.scratch_top = mark
        if isinstance(e, ir.BinOp) and e.op == "*":
            return self.multiply(d, sign, e, ctx)
        if isinstance(e, ir.BinOp) and e.op == "/":
            if ctx == ir.INT:
                raise CompileError(pos, "integer division is not supported",
                                   "divide Fixed values")
            return self.binary_instruction(d, sign, "DIV", e.left, e.right, pos)
        if isinstance(e, ir.BinOp) and e.op in ("//", "%"):
            return self.int_division(d, sign, e)
        if isinstance(e, ir.BinOp) and e.op == "**":
            return self.power(d, sign, e, ctx)
        if isinstance(e, ir.FuncCall):
            if ctx == ir.INT:
                raise CompileError(pos, f"{e.name} gives a Fixed value; it cannot be added to "
                                        "an Int")
            return self.function(d, sign, e)
        if isinstance(e, (ir.Compare, ir.BoolOp)) or (isinstance(e, ir.Unary)
                                                      and e.op == "not") or \
                (isinstance(e, ir.BinOp) and e.op in ("&", "|", "^", "<<", ">>")):
            t = self.fresh(pos)
            setup = self.xor_into(t, e)
            r = t
            conv = []
            if ctx == ir.FIXED:
                r = self.fresh(pos)
                conv = [self.i("SLLX", r, t, str(self.fmt_frac), pos=pos, note="Int to Fixed")]
            return setup + conv + [self.i(add, d, r, pos=pos)] + conv + inverse_code(setup)
        raise CompileError(pos, f"cannot compute {expr_text(e)}")

    def literal_word(self, e: ir.Const, ctx: ir.ScalarType, *, bits: bool = False) -> int:
        """The signed raw word of a constant in its context (``code.literal_word``)."""
        integer = ctx.kind == ir.INT.kind or bits and e.is_int
        fmt = self.p.fmt
        if integer:
            # an integer that fits is itself: its text, for the error's message, and the
            # wider format's range, for the error's hint, are worked out only when it does
            # not fit (for every constant they were a tenth of a branch-heavy lowering)
            word = int(e.value)
            if fmt.min_signed <= word <= (fmt.mask if bits else fmt.max_signed):
                return word
        return literal_word(e.value, integer, fmt, e.pos, expr_text(e), bits=bits)

    @property
    def fmt_frac(self) -> int:
        return self.p.fmt.frac_bits

    def multiply(self, d: int, sign: int, e: ir.BinOp, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        left, right = e.left, e.right
        if isinstance(left, ir.Const) and not isinstance(right, ir.Const):
            left, right = right, left
        if isinstance(right, ir.Const) and right.value.denominator == 1 and \
                abs(right.value) <= SMALL_MULTIPLIER:
            # x * n for a small integer n: n exact additions (no rounding)
            n = int(right.value)
            code: list[Instr] = []
            for _ in range(abs(n)):
                code += self.complete(lambda: self.accumulate(d, sign if n > 0 else -sign,
                                                              left, ctx))
            return code
        if ctx == ir.INT:
            if isinstance(left, ir.Const) and isinstance(right, ir.Const):
                # folded, wrapped to a word as the machine's product would be
                product = self.p.fmt.signed(int(left.value * right.value) & self.p.fmt.mask)
                return self.accumulate(d, sign, ir.Const(pos, value=Fraction(product),
                                                         is_int=True), ctx)
            if not self.fits_int_factor(e):  # two words (or a wide constant): shifts, adds
                return self.int_product(d, sign, ir.BinOp(pos, op="*", left=left, right=right))
            # i * c exactly: fmul(i, c << F) == i * c (c is the constant, now on the right)
            assert isinstance(right, ir.Const)
            a, sa, ta = self.operand(left, ir.INT)
            c = self.fresh(pos)
            raw = self.literal_word(right, ir.FIXED)
            load = [self.i("LI", c, str(raw), pos=pos)]
            op = "ADDMUL" if sign > 0 else "SUBMUL"
            return sa + load + [self.i(op, d, a, c, pos=pos)] + inverse_code(load) + ta
        if self.p.for_gradient and same_expr(left, right):
            raise CompileError(pos, f"{expr_text(left)} is read twice by one product; its "
                                    "gradient would be taken once", "write sq(x) for x * x")
        return self.binary_instruction(d, sign, "MUL", left, right, pos)

    def fits_int_factor(self, e: ir.BinOp) -> bool:
        """Whether an Int product has a constant factor c with c << F a word (fmul then
        multiplies exactly)."""
        return any(isinstance(x, ir.Const) and x.value.denominator == 1 and
                   abs(x.value) < 2 ** (self.p.fmt.width - self.fmt_frac - 1)
                   for x in (e.left, e.right))

    def binary_instruction(self, d: int, sign: int, family: str, left: ir.Expr,
                           right: ir.Expr, pos: SourcePos) -> list[Instr]:
        """``d += left OP right`` (``d -= ...`` for a negative sign) by the ADD/SUB form of
        the instruction family (``MUL``, ``DIV``) on Fixed operands."""
        a, sa, ta = self.operand(left, ir.FIXED)
        if not same_expr(left, right):
            b, sb, tb = self.operand(right, ir.FIXED)
        else:
            b, sb, tb = a, [], []
        if d in (a, b):
            raise CompileError(pos, "the target is read by its own update",
                               "copy it into an ancilla first")
        op = ("ADD" if sign > 0 else "SUB") + family
        return sa + sb + [self.i(op, d, a, b, pos=pos)] + tb + ta

    def power(self, d: int, sign: int, e: ir.BinOp, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        if isinstance(e.left, ir.Const) and isinstance(e.right, ir.Const) and \
                e.right.value.denominator == 1 and abs(e.right.value) <= 4 * self.p.fmt.width \
                and (e.left.value != 0 or e.right.value >= 0):
            # a constant power is folded exactly (and its range checked as a literal)
            value = e.left.value ** int(e.right.value)
            folded = ir.Const(pos=pos, value=value, is_int=e.left.is_int and value.denominator == 1)
            return self.accumulate(d, sign, folded, ctx)
        if ctx == ir.INT:
            raise CompileError(pos, f"{expr_text(e)} gives a Fixed value; it cannot be added "
                                    "to an Int", "keep Int variables for counts and indices")
        if isinstance(e.right, ir.Const):
            n = e.right.value
            if n.denominator == 1 and 3 <= abs(n) <= _MAX_POWER:
                # a whole power is a chain of products, rounded as x * y is, for x of
                # any sign (pow's exp and log need x > 0); x ** -n is 1 / x ** n
                if n < 0:
                    one = ir.Const(pos=pos, value=Fraction(1), is_int=False)
                    return self.binary_instruction(d, sign, "DIV", one,
                                                   _power(e.left, -n, pos), pos)
                product = ir.BinOp(pos=pos, op="*", left=_power(e.left, n - 1, pos),
                                   right=e.left)
                return self.multiply(d, sign, product, ctx)
            if n == 0:
                return self.accumulate(d, sign, ir.Const(pos=pos, value=Fraction(1)), ctx)
            if n in (-1, -2):
                one = ir.Const(pos=pos, value=Fraction(1), is_int=False)
                return self.binary_instruction(d, sign, "DIV", one, _power(e.left, -n, pos), pos)
            if e.right.value == 2:
                return self.function(d, sign, ir.FuncCall(pos, name="sq", args=(e.left,)))
            if e.right.value == Fraction(1, 2):
                return self.function(d, sign, ir.FuncCall(pos, name="sqrt", args=(e.left,)))
            if e.right.value == 1:
                return self.accumulate(d, sign, e.left, ctx)
        return self.function(d, sign, ir.FuncCall(pos, name="pow", args=(e.left, e.right)))

    def function(self, d: int, sign: int, e: ir.FuncCall) -> list[Instr]:
        pos = e.pos
        prefix = "ADD" if sign > 0 else "SUB"
        if e.name == "sq":
            x = e.args[0]
            a, sa, ta = self.operand(x, ir.FIXED)
            if a == d:
                raise CompileError(pos, "the target is read by its own update")
            if self.p.for_gradient:
                # a copy keeps the product's two operands in distinct registers
                t = self.fresh(pos)
                copy = [self.i("ADD", t, a, pos=pos, note="copy for sq")]
                return sa + copy + [self.i(prefix + "MUL", d, a, t, pos=pos)] + \
                    inverse_code(copy) + ta
            return sa + [self.i(prefix + "MUL", d, a, a, pos=pos)] + ta
        if e.name in _UNARY:
            a, sa, ta = self.operand(e.args[0], ir.FIXED)
            if a == d:
                raise CompileError(pos, "the target is read by its own update")
            return sa + [self.i(prefix + e.name.upper(), d, a, pos=pos)] + ta
        if e.name in ("pow", "atan2"):
            a, sa, ta = self.operand(e.args[0], ir.FIXED)
            b, sb, tb = self.operand(e.args[1], ir.FIXED)
            if d in (a, b):
                raise CompileError(pos, "the target is read by its own update")
            return sa + sb + [self.i(prefix + e.name.upper(), d, a, b, pos=pos)] + tb + ta
        raise CompileError(pos, f"unknown function {e.name!r}")


def loads_exponent(e: ir.BinOp) -> bool:
    """Whether ``x ** y`` reads its exponent as an operand (pow); whole and half
    exponents become products, sq, sqrt or a quotient instead."""
    n = e.right.value if isinstance(e.right, ir.Const) else None
    return n is None or not (n.denominator == 1 and abs(n) <= _MAX_POWER or n == Fraction(1, 2))


def _power(x: ir.Expr, n: Fraction | int, pos: SourcePos) -> ir.Expr:
    """The expression ``x ** n`` (``x`` itself for n = 1)."""
    if n == 1:
        return x
    return ir.BinOp(pos=pos, op="**", left=x, right=ir.Const(pos=pos, value=Fraction(n)))
