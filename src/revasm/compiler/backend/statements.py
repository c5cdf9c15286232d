"""Lowering straight-line statements: updates, SWAP, ROT, ancilla allocation and release, blocks.

An ancilla's allocation and release carry guards (unless the static checks proved
them) that fault when it does not hold the stated value; a checked free of an array
checks every element.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from fractions import Fraction

from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, with_role
from .ir_queries import index_exprs
from .lowering_state import FunctionLoweringState


class StatementLowering(FunctionLoweringState):
    """Straight-line statements and nested blocks."""

    def stmt_update(self, s: ir.Update) -> list[Instr]:
        reg, setup, teardown = self.place(s.target)
        ttype = self.type_of(s.target)
        if s.op == "^":
            op = self.xor_into(reg, s.expr)
        else:
            op = self.accumulate(reg, 1 if s.op == "+" else -1, s.expr, ttype)
        return setup + op + teardown + self.pointer_steps(s)

    def stmt_swap(self, s: ir.Swap) -> list[Instr]:
        a, sa, ta = self.place(s.a)
        b, sb, tb = self.place(s.b)
        return sa + sb + [self.i("SWAP", a, b, pos=s.pos)] + tb + ta

    def stmt_rot(self, s: ir.Rot) -> list[Instr]:
        a, sa, ta = self.place(s.a)
        b, sb, tb = self.place(s.b)
        t, st, tt = self.operand(s.theta, ir.FIXED)
        name = "IROT" if s.inverse else "ROT"
        return sa + sb + st + [self.i(name, a, b, t, pos=s.pos)] + tt + tb + ta

    def stmt_show(self, s: ir.Show) -> list[Instr]:
        """``SHOW`` of each value in turn (a register as it is, an element loaded and put
        back): the run prints them going forward, and again, last first, going backward."""
        code: list[Instr] = []
        for value in s.values:
            mark = self.scratch_top
            reg, setup, teardown = self.place(value)
            code += setup + [self.i("SHOW", reg, pos=s.pos, note=s.text)] + teardown
            self.scratch_top = mark
        return code

    def stmt_alloc(self, s: ir.Alloc) -> list[Instr]:
        if isinstance(s.type, ir.ArrayType):
            return []  # frame memory is zero on entry and must be zero on exit
        reg, setup, teardown = self.place(ir.Var(s.pos, name=s.name))
        check: list[Instr] = []
        if self.p.check("ancilla") and not self.p.proofs.alloc_is_proven(self.f.name, s):
            guard = self.label("guard")
            note = (f"ancilla {s.name} allocated at line {s.pos.line} does not hold "
                    f"{expr_text(s.value)} when it is released (running backward)")
            check = [self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note, "ancilla"), pos=s.pos,
                            role="check", label=guard, note=f"ancilla {s.name} must be zero here")]
        body = self.accumulate(reg, 1, s.value, s.type)
        return setup + check + body + teardown + self.pointer_steps(s)

    def stmt_free(self, s: ir.Free) -> list[Instr]:
        if isinstance(s.type, ir.ArrayType):
            return self.array_zero_check(s, s.type) if s.checked and self.p.check("ancilla") \
                else []
        reg, setup, teardown = self.place(ir.Var(s.pos, name=s.name))
        body = with_role(self.accumulate(reg, -1, s.value, s.type), "uncompute")
        check: list[Instr] = []
        if self.p.check("ancilla") and not self.p.proofs.free_is_proven(self.f.name, s):
            guard = self.label("guard")
            note = (f"ancilla {s.name} does not hold {expr_text(s.value)} when it is freed "
                    f"at line {s.pos.line}")
            check = [self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note, "ancilla"), pos=s.pos,
                            role="check", label=guard, note=f"free({s.name}, ...) leaves it zero")]
        return setup + body + check + teardown + \
            with_role(self.pointer_steps(s), "uncompute")

    def array_zero_check(self, s: ir.Free, type_: ir.ArrayType) -> list[Instr]:
        """Each element of a freed ancilla array (of type ``type_``) must be zero (a checked
        free)."""
        code: list[Instr] = []
        for idx in index_exprs(type_.shape):
            mark = self.scratch_top
            element = ir.Index(s.pos, name=s.name,
                               indices=tuple(ir.Const(s.pos, Fraction(i), True) for i in idx))
            reg, setup, teardown = self.place(element)
            guard = self.label("guard")
            note = (f"ancilla array {s.name} is not zero at {expr_text(element)} when it is "
                    f"freed at line {s.pos.line}")
            check = self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note, "ancilla"), pos=s.pos,
                           role="check", label=guard)
            code += with_role(setup, "check") + [check] + with_role(teardown, "check")
            self.scratch_top = mark
        return code

    def stmt_routine(self, s: ir.Routine) -> list[Instr]:
        return self.block(s.body)

    def stmt_unroutine(self, s: ir.Unroutine) -> list[Instr]:
        return self.uncomputing(self.inverted_body(s))

    def stmt_block(self, s: ir.Block) -> list[Instr]:
        return self.block(self.inverted_body(s) if s.inverted else s.body)
