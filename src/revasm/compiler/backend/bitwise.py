"""Lowering ``d ^= e``: constants, bits (and, or, shifts), booleans and comparisons as 0/1.

A mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from functools import partial

from ..errors import CompileError
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, inverse_code
from .lowering_state import FunctionLoweringState


class BitwiseLowering(FunctionLoweringState):
    """d ^= e."""

    def xor_into(self, d: int, e: ir.Expr) -> list[Instr]:
        pos = e.pos
        if isinstance(e, ir.Const):
            fmt = self.p.fmt
            v = fmt.signed(self.literal_word(e, ir.INT if e.is_int else ir.FIXED, bits=True)
                           & fmt.mask)  # 2**W - 1 is the word -1: LI's inverse negates it
            if v == 0:
                return []
            if -32768 <= v <= 32767:
                return [self.i("XORI", d, str(v), pos=pos)]
            t = self.fresh(pos)
            load = [self.i("LI", t, str(v), pos=pos)]
            return load + [self.i("XOR", d, t, pos=pos)] + inverse_code(load)
        if isinstance(e, (ir.Var, ir.Index)):
            r, setup, teardown = self.place(e)  # (one instruction reads it: no copy)
            if r == d:
                raise CompileError(pos, f"{expr_text(e)} is both read and written")
            return setup + [self.i("XOR", d, r, pos=pos)] + teardown
        if isinstance(e, ir.Unary) and e.op == "not":
            return self.xor_into(d, e.operand) + [self.i("XORI", d, "1", pos=pos)]
        if isinstance(e, ir.BinOp) and e.op == "^":
            return self.xor_into(d, e.left) + self.xor_into(d, e.right)
        if isinstance(e, ir.BinOp) and e.op in ("&", "|"):
            ctx = self._compare_type(e.left, e.right)
            left, right = (e.right, e.left) if isinstance(e.left, ir.Const) else \
                (e.left, e.right)
            if ctx == ir.INT and isinstance(right, ir.Const) and \
                    right.value.denominator == 1 and -32768 <= right.value <= 32767:
                # the immediate forms: one register fewer than a loaded constant
                a, sa, ta = self.operand(left, ctx)
                op = "ANDIX" if e.op == "&" else "ORIX"
                return sa + [self.i(op, d, a, str(int(right.value)), pos=pos)] + ta
            a, sa, ta = self.operand(e.left, ctx)
            b, sb, tb = self.operand(e.right, ctx)
            op = "ANDX" if e.op == "&" else "ORX"
            return sa + sb + [self.i(op, d, a, b, pos=pos)] + tb + ta
        if isinstance(e, ir.BinOp) and e.op in ("<<", ">>"):
            if not isinstance(e.right, ir.Const):  # the front end only makes constant shifts
                raise CompileError(e.right.pos, "shift amounts must be integer constants")
            a, sa, ta = self.operand(e.left, self.type_of(e.left))
            amount = int(e.right.value)
            if not 0 <= amount < self.p.fmt.width:
                raise CompileError(e.right.pos, f"shift amount {amount} is outside 0.."
                                                f"{self.p.fmt.width - 1}")
            op = "SLLX" if e.op == "<<" else "SRAX"
            return sa + [self.i(op, d, a, str(amount), pos=pos)] + ta
        if isinstance(e, ir.BoolOp):
            regs = [self.fresh(pos) for _ in e.values]
            # -O2: the chain's registers are taken before the operands' setups, so that no
            # setup's temporary shares one with the chain, and the peephole can cancel
            # what a setup's teardown clears against the same code in the undo
            ahead = [self.fresh(pos) for _ in regs[1:-1]] if self.p.level >= 2 else []
            setups = [self.complete(partial(self.xor_into, t, v)) for t, v in zip(regs, e.values)]
            op = "ANDX" if e.op == "and" else "ORX"
            code: list[Instr] = [x for s in setups for x in s]
            acc = regs[0]
            chain: list[Instr] = []
            for n, r in enumerate(regs[1:-1]):
                t = ahead[n] if ahead else self.fresh(pos)
                chain.append(self.i(op, t, acc, r, pos=pos))
                acc = t
            final = [self.i(op, d, acc, regs[-1], pos=pos)]
            undo = inverse_code(chain) + [x for s in reversed(setups) for x in inverse_code(s)]
            return code + chain + final + undo
        if isinstance(e, ir.Compare):
            ctx = self._compare_type(e.left, e.right)
            op = e.op
            if op in ("<", ">", "<=", ">="):
                a, sa, ta = self.operand(e.left, ctx)
                b, sb, tb = self.operand(e.right, ctx)
                first, second = (a, b) if op in ("<", ">=") else (b, a)
                code = sa + sb
                if op in ("<=", ">="):
                    code.append(self.i("XORI", d, "1", pos=pos))
                return code + [self.i("SLTX", d, first, second, pos=pos)] + tb + ta
            if self.p.level >= 2:
                direct = self.compare_both_ways(d, e, ctx)
                if direct is not None:
                    return direct
            # a == b: t = a - b, u = (t < 0) | (t > 0), d ^= u (^ 1 for ==)
            t = self.fresh(pos)
            diff = self.accumulate(t, 1, e.left, ctx) + self.accumulate(t, -1, e.right, ctx)
            u = self.fresh(pos)
            sign_bits = [self.i("SLTX", u, t, 0, pos=pos), self.i("SLTX", u, 0, t, pos=pos)]
            core = [self.i("XOR", d, u, pos=pos)]
            if op == "==":
                core.append(self.i("XORI", d, "1", pos=pos))
            return diff + sign_bits + core + inverse_code(sign_bits) + inverse_code(diff)
        if isinstance(e, (ir.BinOp, ir.FuncCall, ir.Unary)):
            t = self.fresh(pos)
            setup = self.complete(lambda: self.accumulate(t, 1, e, self.type_of(e)))
            return setup + [self.i("XOR", d, t, pos=pos)] + inverse_code(setup)
        raise CompileError(pos, f"cannot compute {expr_text(e)} with ^=")

    def compare_both_ways(self, d: int, e: ir.Compare, ctx: ir.ScalarType
                          ) -> list[Instr] | None:
        """``d ^= (a != b)`` as ``d ^= a < b; d ^= b < a`` (-O2; ``== `` adds ``^ 1``):
        exactly one of the two holds when the words differ, neither when they are equal,
        so no difference is computed and cleared around the sign tests.  None when ``d``
        is an operand's register (the tests would read what they write)."""
        pos = e.pos
        mark = self.scratch_top
        a, sa, ta = self.operand(e.left, ctx)
        b, sb, tb = self.operand(e.right, ctx)
        if d in (a, b) or a == b:
            self.scratch_top = mark
            return None
        code = sa + sb + [self.i("SLTX", d, a, b, pos=pos), self.i("SLTX", d, b, a, pos=pos)]
        if e.op == "==":
            code.append(self.i("XORI", d, "1", pos=pos))
        return code + tb + ta

