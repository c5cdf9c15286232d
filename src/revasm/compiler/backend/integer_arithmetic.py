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
  pair (remainder, |a|) shifts left, the remainder subtracts |b| when it is at least
  |b|, compared unsigned by flipping both sign bits, and the quotient bit that records
  the choice enters |a| from the right, so the step is undone by reading it back; seven
  scratch registers while it runs), then the signs and the floor
  correction.  A division by zero faults at the statement's line, both ways (ADDDIV
  of zero by b faults on b = 0 and otherwise adds nothing).

A mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from ..errors import CompileError
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, Loop, inverse_code
from .ir_queries import same_expr
from .lowering_state import FunctionLoweringState


class IntegerArithmeticLowering(FunctionLoweringState):
    """d += a * b, a // b, a % b on integer words."""

    def int_operands(self, d: int, e: ir.BinOp) -> tuple[int, int, list[Instr], list[Instr]]:
        """Registers holding both operands of ``e`` (one for ``a * a``), with their setup
        and teardown."""
        a, sa, ta = self.operand(e.left, ir.INT)
        if not same_expr(e.left, e.right):
            b, sb, tb = self.operand(e.right, ir.INT)
        else:
            b, sb, tb = a, [], []
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
        top = self.p.fmt.width - 1

        def op(mnemonic: str, *operands: int | str) -> Instr:
            return self.i(mnemonic, *operands, pos=pos)

        # a and b computed into registers of their own (each operand's temporaries are
        # free again after it, and b's are allocated with only a's register held, so a
        # division nested in an operand needs one register of this one); then in place
        # |a|, |b| (unsigned words: |-2^(W-1)| is 2^(W-1)), a's sign mask and whether the
        # signs differ
        big_a = self.fresh(pos)
        prepare = self.complete(lambda: self.accumulate(big_a, 1, e.left, ir.INT))
        big_b = self.fresh(pos)
        prepare += self.complete(lambda: self.accumulate(big_b, 1, e.right, ir.INT))
        a_sign, differ = self.fresh(pos), self.fresh(pos)
        # differ += 0 / b: no effect, but the machine's divider faults on b = 0, both ways
        # (a data instruction, so the code stays invertible inside an operand's setup)
        prepare += [self.i("ADDDIV", differ, 0, big_b, pos=pos, role="check",
                           note=f"division by zero in {expr_text(e)}")]
        prepare += [op("SRAX", a_sign, big_a, str(top)), op("SRAX", differ, big_b, str(top)),
                    op("XOR", big_a, a_sign), op("SUB", big_a, a_sign),
                    op("XOR", big_b, differ), op("SUB", big_b, differ),
                    op("XOR", differ, a_sign)]
        r, t, c, counter = (self.fresh(pos) for _ in range(4))
        q = big_a  # the pair (r, |a|) shifts left; the quotient bits enter |a| from the right
        # one step, the same for every bit (so it runs as a loop of W steps):
        # (r, |a|) <<= 1: r < |b| <= 2^(W-1) has its top bit 0, so RL doubles it; |a|'s
        # top bit moves to r's bit 0 and |a|'s bit 0 is cleared for the quotient bit
        step = [op("RL", r, "1"), op("SRLX", c, big_a, str(top)), op("RL", big_a, "1"),
                op("XOR", r, c), op("ANDIX", c, r, "1"),
                op("ANDIX", t, r, "1"), op("XOR", big_a, t), op("ANDIX", t, r, "1")]
        # c = (r >= |b|) unsigned: both sign bits flipped, compared signed
        sign_bit = [op("XORI", t, "1"), op("RR", t, "1")]  # t = 2^(W-1)
        compare = [op("XOR", r, t), op("XOR", big_b, t), op("XORI", c, "1"),
                   op("SLTX", c, r, big_b), op("XOR", big_b, t), op("XOR", r, t)]
        step += sign_bit + compare + inverse_code(sign_bit)
        # r -= |b| when c; the quotient bit is c; then c is read back from it and cleared
        step += [op("NEG", c), op("ANDX", t, big_b, c), op("SUB", r, t),
                 op("ANDX", t, big_b, c), op("NEG", c),
                 op("XOR", q, c), op("ANDIX", c, q, "1")]
        core: list[Instr] = [Loop("LOOP", (), pos, self.role, "long division", body=tuple(step),
                                  count=top + 1, counter=f"${counter}", spare=f"${t}")]
        add, sub = ("ADD", "SUB") if sign > 0 else ("SUB", "ADD")
        # inexact: t = 1 when the signs differ and the remainder is not zero
        inexact = [op("SLTX", c, 0, r), op("ANDX", t, c, differ), op("SLTX", c, 0, r)]
        if e.op == "//":
            # -|q| when the signs differ ((q ^ -1) - -1), and one less when inexact (floor)
            negate = [op("XOR", q, differ)]
            result = negate + [op(add, d, q), op(sub, d, differ)] + inverse_code(negate) + \
                inexact + [op(sub, d, t)] + inverse_code(inexact)
        else:
            # floor remainder: a's sign times r, or times r - |b| when inexact (= r + b)
            adjust = inexact + [op("NEG", t), op("ANDX", c, big_b, t), op("SUB", r, c)]
            signed = [op("XOR", r, a_sign)]
            result = adjust + signed + [op(add, d, r), op(sub, d, a_sign)] + \
                inverse_code(signed) + inverse_code(adjust)
        return prepare + core + result + inverse_code(core) + inverse_code(prepare)
