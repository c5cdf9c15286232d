"""Places and operands: the register that holds a variable, an array element or a value.

A register variable is its own place; a spilled scalar or an array element is
swapped (EXCH) into a zero scratch register by a setup and back by the teardown, its
address computed from the stack pointer or the array's base register and constant
strides.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from ..errors import CompileError
from ..ir import nodes as ir
from ..ir.expr_types import expr_type
from ..ir.printer import expr_text
from .code import Instr, inverse_code, inverse_instr
from .ir_queries import is_zero
from .layout import SP
from .lowering_state import FunctionLoweringState, HeldValue, Placed


class OperandLowering(FunctionLoweringState):
    """Where a value lives, and how it is brought into a register."""

    def type_of(self, e: ir.Expr) -> ir.ScalarType:
        if isinstance(e, HeldValue):
            return ir.INT
        return expr_type(e, self.types, self.p.module.tables)

    def place(self, e: ir.Expr) -> Placed:
        """A register holding the variable/element ``e``, with setup/teardown moving it there."""
        if isinstance(e, HeldValue):
            return e.register, [], []
        if isinstance(e, ir.Var):
            slot = self.lay.scalars.get(e.name)
            if slot is None:
                raise CompileError(e.pos, f"{e.name!r} is not a scalar variable")
            if slot.register is not None:
                return slot.register, [], []
            # the address register is zero again after the setup (and the teardown), so
            # it is free for the code in between: release it at once
            reg = self.fresh(e.pos)
            mark = self.scratch_top
            addr = self.fresh(e.pos)
            calc = [self.i("ADD", addr, SP, pos=e.pos)]
            if slot.frame_offset:
                calc.append(self.i("ADDI", addr, str(slot.frame_offset), pos=e.pos))
            self.scratch_top = mark
            return (reg, *_moved(calc, self.i("EXCH", reg, addr, pos=e.pos,
                                              note=f"load {e.name}")))
        if isinstance(e, ir.Index):
            reg = self.fresh(e.pos)
            mark = self.scratch_top
            addr, calc = self.address_of(e)
            self.scratch_top = mark
            return (reg, *_moved(calc, self.i("EXCH", reg, addr, pos=e.pos,
                                              note=f"load {expr_text(e)}")))
        raise CompileError(e.pos, f"{expr_text(e)} is not a variable or array element")

    def value_place(self, e: ir.Expr) -> Placed:
        """A register holding the value of ``e`` for reading: ``place``, or with the
        module's ``read_copies`` a copy of an element (moved out, copied, moved back), so
        that memory keeps it for another read in the same statement."""
        if not (isinstance(e, ir.Index) and self.p.module.read_copies):
            return self.place(e)
        t = self.fresh(e.pos)
        mark = self.scratch_top
        r, setup, teardown = self.place(e)
        self.scratch_top = mark
        return (t, *_moved(setup, self.i("ADD", t, r, pos=e.pos,
                                         note=f"copy of {expr_text(e)}"), teardown))

    def address_of(self, e: ir.Index) -> tuple[int, list[Instr]]:
        """A register that holds ``e``'s address after ``calc``, and ``calc`` (whose inverse
        restores the register).  At -O2: a live pointer (``pointers.py``) moved by the
        constant offset, or the array's base register (or SP, for a frame array) moved by
        the index itself when the index reads no element; otherwise a zero scratch
        register the address is computed into."""
        if self.p.level >= 2:
            found = self.pointer_of(e)
            if found is not None:
                register, offset = found
                return register, ([self.i("ADDI", register, str(offset), pos=e.pos)]
                                  if offset else [])
            base = self._movable_base(e)
            if base is not None:
                return base, self.offset_code(base, e)
        addr = self.fresh(e.pos)
        return addr, self.address(addr, e)

    def _movable_base(self, e: ir.Index) -> int | None:
        """The register ``e``'s address may be formed in: its array's base register (a
        parameter) or SP (a frame array), when no index reads an element (an element
        read would use that very register while it is moved)."""
        inner = [sub for index in e.indices for sub in _walk(index)]
        if e.name in self.p.module.tables or any(isinstance(sub, ir.Index) for sub in inner):
            return None
        home = self.lay.arrays[e.name]
        if home.register is not None:
            return home.register
        # a spilled variable in an index is read at SP + its offset: SP must stay put
        spilled = any(isinstance(sub, ir.Var) and sub.name in self.lay.scalars and
                      self.lay.scalars[sub.name].register is None for sub in inner)
        return None if spilled else SP

    def offset_code(self, base: int, e: ir.Index) -> list[Instr]:
        """``base += `` the offset of ``e`` from the base register's address (the frame
        offset of a frame array, the indices times their strides)."""
        home = self.lay.arrays[e.name]
        code: list[Instr] = []
        if home.register is None and home.frame_offset:
            code.append(self.i("ADDI", base, str(home.frame_offset), pos=e.pos))
        return code + self.index_code(base, e, home.type)

    def address(self, addr: int, e: ir.Index) -> list[Instr]:
        pos = e.pos
        if e.name in self.p.module.tables:
            type_ = self.p.module.tables[e.name].type
            code = [self.i("LI", addr, f"t_{e.name}.0", pos=pos)]
        else:
            home = self.lay.arrays[e.name]
            type_ = home.type
            if home.register is not None:
                code = [self.i("ADD", addr, home.register, pos=pos)]
            else:
                code = [self.i("ADD", addr, SP, pos=pos)]
                if home.frame_offset:
                    code.append(self.i("ADDI", addr, str(home.frame_offset), pos=pos))
        return code + self.index_code(addr, e, type_)

    def index_code(self, addr: int, e: ir.Index, type_: ir.ArrayType) -> list[Instr]:
        """``addr +=`` the flat index of ``e`` (the indices times their strides)."""
        pos = e.pos
        code: list[Instr] = []
        stride = 1
        strides = []
        for extent in reversed(type_.shape):
            strides.append(stride)
            stride *= extent
        strides.reverse()
        constant = 0
        for index, stride in zip(e.indices, strides):
            if isinstance(index, ir.Const):
                constant += int(index.value) * stride
                continue
            term = index if stride == 1 else ir.BinOp(
                pos, op="*", left=index, right=ir.Const(pos, value=Fraction(stride), is_int=True))
            code += self.accumulate(addr, 1, term, ir.INT)
        if constant:
            code.append(self.i("ADDI", addr, str(constant), pos=pos))
        return code

    def operand(self, e: ir.Expr, ctx: ir.ScalarType) -> Placed:
        """A register holding the value of ``e`` in type ``ctx``, with setup and teardown."""
        if is_zero(e):
            return 0, [], []
        if isinstance(e, ir.Const) and self.pool:
            word = self._word(e, ctx)
            if word is not None and (word, ctx.kind) in self.pool:
                return self.pool[(word, ctx.kind)], [], []
        etype = self.type_of(e)
        # (types compared by kind: see ``accumulate``)
        int_etype, int_ctx = etype.kind == ir.INT.kind, ctx.kind == ir.INT.kind
        if isinstance(e, (ir.Var, ir.Index)) and (etype.kind == ctx.kind or int_ctx):
            if etype.kind != ctx.kind:
                raise CompileError(e.pos, f"{expr_text(e)} is Fixed where an Int is needed")
            return self.value_place(e)
        if isinstance(e, (ir.Var, ir.Index)) and int_etype and ctx.kind == ir.FIXED.kind:
            # one shift into a zero scratch register converts it (SLLX is an XOR)
            r, sr, tr = self.place(e)
            t = self.fresh(e.pos)
            return (t, *_moved(sr, self.i("SLLX", t, r, str(self.fmt_frac), pos=e.pos,
                                          note="Int to Fixed"), tr))
        t = self.fresh(e.pos)
        # the setup clears its own temporaries, so their registers are free after it
        if int_ctx and int_etype and _bitwise(e):
            setup = self.complete(lambda: self.xor_into(t, e))  # into a zero register
        else:
            setup = self.complete(lambda: self.accumulate(t, 1, e, ctx))
        return t, setup, inverse_code(setup)


def _moved(calc: list[Instr], move: Instr, undo: list[Instr] | None = None
           ) -> tuple[list[Instr], list[Instr]]:
    """The setup ``calc; move; undo`` and its teardown, ``inverse_code`` of the setup,
    which ends with ``undo`` itself: the instructions that undo ``calc``
    (``inverse_code(calc)``, made here unless they are given), made once."""
    if undo is None:
        undo = inverse_code(calc)
    return calc + [move] + undo, inverse_code(undo) + [inverse_instr(move)] + undo


def _walk(e: ir.Expr) -> Iterator[ir.Expr]:
    """``e`` and every expression inside it."""
    yield e
    for child in ir.children(e):  # field names looked up once per class, not per node
        yield from _walk(child)


def _bitwise(e: ir.Expr) -> bool:
    """An Int expression ``xor_into`` computes directly (bits, conditions)."""
    return isinstance(e, (ir.Compare, ir.BoolOp)) or \
        isinstance(e, ir.Unary) and e.op == "not" or \
        isinstance(e, ir.BinOp) and e.op in ("&", "|", "^", "<<", ">>")
