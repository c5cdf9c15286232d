"""Integer products, floor quotients and remainders of two variable words (``Int`` context).

The machine's multiplier and divider are fixed point (ADDMUL rounds ``b*c / 2^F``), so
the product and the quotient of two integer words are built from PISA's bit
instructions, straight-line and reversible, as compute / use / uncompute:

* ``d += a * b`` (mod 2^W): for each bit i of b, ``mask = -(bit i of b)`` (the bit
  shifted to the top, then arithmetic-shifted back), ``d += (a << i) & mask``.
  11 instructions per bit, three scratch registers, no overflow event: the product
  wraps, as ADD does (Janus's integer rule, docs/janus.md).
* ``d += a // b`` and ``d += a % b`` (floor division, the remainder has the sign of
  b): |a| and |b| as unsigned words, restoring long division one bit at a time (the
  remainder doubles by a rotation, takes the next bit, and subtracts |b| when it is at
  least |b|, compared unsigned by flipping both sign bits; the quotient bit records
  the choice, so the step is undone by reading it back), then the signs and the floor
  correction.  A division by zero faults at the statement's line, both ways (ADDDIV
  of zero by b faults on b = 0 and otherwise adds nothing).

A mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from ..errors import CompileError
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, inverse_code
from .ir_queries import _same


class IntegerArithmeticLowering:
    """d += a * b, a // b, a % b on integer words."""

    def int_operands(self, d: int, e: ir.BinOp):
        a, sa, ta = self.operand(e.left, ir.INT)
        if _same(e.left, e.right):
            b, sb, tb = a, [], []
        else:
            b, sb, tb = self.operand(e.right, ir.INT)
        if d in (a, b):
            raise CompileError(e.pos, "the target is read by its own update",
                               "copy it into an ancilla first")
        return a, b, sa + sb, tb + ta

    def int_product(self, d: int, sign: int, e: ir.BinOp) -> list[Instr]:
        pos = e.pos
        a, b, setup, teardown = self.int_operands(d, e)
        t, mask, term = (self.fresh(pos) for _ in range(3))
        top = self.p.fmt.width - 1
        add = "ADD" if sign > 0 else "SUB"
        code: list[Instr] = []
        for i in range(top + 1):
            # mask = -(bit i of b): the bit moved to the top, then spread by SRAX
            select = [self.i("SLLX", t, b, str(top - i), pos=pos),
                      self.i("SRAX", mask, t, str(top), pos=pos),
                      self.i("SLLX", t, b, str(top - i), pos=pos)]
            partial = [self.i("SLLX", t, a, str(i), pos=pos),
                       self.i("ANDX", term, t, mask, pos=pos)]
            code += select + partial + [self.i(add, d, term, pos=pos, note=f"bit {i}")] + \
                inverse_code(partial) + inverse_code(select)
        return setup + code + teardown

    def int_division(self, d: int, sign: int, e: ir.BinOp) -> list[Instr]:
        pos = e.pos
        if not self.type_of(e.left) == self.type_of(e.right) == ir.INT:
            raise CompileError(pos, f"{expr_text(e)}: {e.op} takes integers")
        a, b, setup, teardown = self.int_operands(d, e)
        big_a, big_b, q, r, t, c, k = (self.fresh(pos) for _ in range(7))
        top = self.p.fmt.width - 1

        def op(mnemonic: str, *operands) -> Instr:
            return self.i(mnemonic, *operands, pos=pos)

        # t += 0 / b: no effect, but the machine's divider faults on b = 0, both ways (a
        # data instruction, so the code stays invertible when it is an operand's setup)
        check = [self.i("ADDDIV", t, 0, b, pos=pos, role="check",
                        note=f"division by zero in {expr_text(e)}")]

        def absolute(dst: int, src: int) -> list[Instr]:
            # dst = |src| as an unsigned word (|-2^(W-1)| is 2^(W-1)); t is src's sign mask
            return [op("SRAX", t, src, str(top)), op("XOR", dst, src), op("XOR", dst, t),
                    op("SUB", dst, t), op("SRAX", t, src, str(top))]

        core = absolute(big_a, a) + absolute(big_b, b)
        sign_bit = [op("XORI", t, "1"), op("RR", t, "1")]  # t = 2^(W-1)
        for i in range(top, -1, -1):
            # r = 2r + bit i of |a| (r < |b| <= 2^(W-1): its top bit is 0, RL doubles it)
            core += [op("RL", r, "1"), op("SRLX", t, big_a, str(i)), op("ANDIX", c, t, "1"),
                     op("SRLX", t, big_a, str(i)), op("XOR", r, c), op("ANDIX", c, r, "1")]
            # c = (r >= |b|) unsigned: both sign bits flipped, compared signed
            compare = [op("XOR", r, t), op("XOR", big_b, t), op("XORI", c, "1"),
                       op("SLTX", c, r, big_b), op("XOR", big_b, t), op("XOR", r, t)]
            core += sign_bit + compare + inverse_code(sign_bit)
            # r -= |b| when c; quotient bit i = c; then c is read back from q and cleared
            core += [op("NEG", c), op("ANDX", k, big_b, c), op("SUB", r, k),
                     op("ANDX", k, big_b, c), op("NEG", c),
                     op("SLLX", t, c, str(i)), op("XOR", q, t), op("SLLX", t, c, str(i)),
                     op("SRLX", t, q, str(i)), op("ANDIX", c, t, "1"), op("SRLX", t, q, str(i))]
        add, sub = ("ADD", "SUB") if sign > 0 else ("SUB", "ADD")
        signs = [op("SRAX", t, a, str(top)), op("SRAX", t, b, str(top))]  # -1: signs differ
        if e.op == "//":
            negate = [op("XOR", q, t)]
            result = signs + negate + [op(add, d, q), op(sub, d, t)] + inverse_code(negate)
            # floor: one less when the signs differ and the remainder is not zero
            inexact = [op("SLTX", c, 0, r), op("ANDX", k, c, t)]
            result += inexact + [op(sub, d, k)] + inverse_code(inexact) + inverse_code(signs)
        else:
            a_sign = [op("SRAX", t, a, str(top)), op("XOR", r, t)]
            result = a_sign + [op(add, d, r), op(sub, d, t)] + inverse_code(a_sign)
            # floor: add b when the signs differ and the remainder is not zero
            inexact = signs + [op("SLTX", c, 0, r), op("ANDX", k, c, t), op("SLTX", c, 0, r),
                               op("NEG", k), op("ANDX", c, b, k)]
            result += inexact + [op(add, d, c)] + inverse_code(inexact)
        return setup + check + core + result + inverse_code(core) + teardown
