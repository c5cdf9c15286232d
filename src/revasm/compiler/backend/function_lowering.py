"""Lowering one function: its portal, the scratch registers, the constant pool, dispatch.

Every statement becomes straight-line code built from *setup / operation /
teardown*; ``stmt`` sends each IR statement to its ``stmt_<kind>`` method in
one of the mixins (``statements``, ``calls``, ``control_flow``) and resets the
scratch registers after it.  Operands come from ``places``, accumulation from
``arithmetic``, ``d ^= e`` from ``bitwise``.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from .arithmetic import SMALL_MULTIPLIER, ArithmeticLowering, loads_exponent
from .bitwise import BitwiseLowering
from .calls import CallLowering
from .code import Instr, fixed_literal, inverse_code, with_role
from .control_flow import ControlFlowLowering
from .guard_reuse import GuardReuse
from .guards import GuardLowering
from .hoisting import HoistLowering
from .integer_arithmetic import IntegerArithmeticLowering
from .layout import LINK, SCRATCH, VARIABLE_REGISTERS
from .lowering_state import ModuleContext
from .places import OperandLowering
from .pointers import PointerLowering
from .statements import StatementLowering

#: "$0" ... "$63": a register operand's text (``i`` is called for every instruction made)
_REGISTER_TEXT = tuple(f"${r}" for r in range(64))
#: Statements with no statements inside them, and expressions with none inside them
#: that ``_constant_operands`` looks at (an element's indices are not operands).
_NO_BODY = (ir.Update, ir.Swap, ir.Rot, ir.Show, ir.Call, ir.Alloc, ir.Free)
_LEAVES = (ir.Const, ir.Var, ir.Index)
#: statement class -> the name of the method that lowers it (``stmt``)
_METHOD_NAMES: dict[type, str] = {}


class FunctionLowering(StatementLowering, CallLowering, ControlFlowLowering, OperandLowering,
                        ArithmeticLowering, IntegerArithmeticLowering, BitwiseLowering,
                        GuardLowering, PointerLowering, HoistLowering, GuardReuse):
    """One function: its portal, scratch registers, constant pool and statement dispatch."""

    # ``parent`` is lowering.py's _ModuleLowering (not imported: that module imports this one).
    def __init__(self, parent: ModuleContext, f: ir.Function) -> None:
        self.p = parent
        self.f = f
        self.lay = parent.layouts[f.name]
        self.types = self.lay.types()
        self.scratch_top = 0
        self.role = "compute"
        self.pool = {}  # constant (word, kind) -> register
        # for variable -> its values; Int parameters' from every call (param_ranges.py)
        self.ranges = dict(parent.param_ranges.get(f.name, {}))
        self.exact_ranges = set()
        self.conditional = 0
        self.pointers = {}  # address key -> pointer register (pointers.py, -O2)
        self.address_keys = {}  # element id -> its address key (pointers.py)
        self.statement_element_lists = {}  # statement id -> its elements (guards.py)
        self.reserved = set()  # registers pointers and loop bounds hold
        self.hoisted = set()  # bounds checks made once at a loop's entry (hoisting.py)
        self.current = None  # the statement whose guards are being made
        self.repeated_guards = {}  # guards made at their run's ends (guard_reuse.py)
        self.inverted_bodies = {}
        self.made_in_statement = set()

    def fresh(self, pos: SourcePos) -> int:
        if self.scratch_top >= len(SCRATCH):
            raise CompileError(pos, f"this statement needs more than {len(SCRATCH)} temporary "
                                    "registers", "split the expression with an ancilla")
        reg = SCRATCH[self.scratch_top]
        self.scratch_top += 1
        return reg

    def i(self, mnemonic: str, *operands: int | str, pos: SourcePos | None = None, note: str = "",
          role: str | None = None, label: str = "") -> Instr:
        ops = tuple([_REGISTER_TEXT[o] if type(o) is int and 0 <= o < len(_REGISTER_TEXT)
                     else f"${o}" if isinstance(o, int) else str(o) for o in operands])
        return Instr(mnemonic, ops, pos, role or self.role, note, label)

    def run(self) -> list[Instr]:
        f = self.f
        # f_NAME is the portal; its return path's labels take a "." that no function
        # name has, so that two functions (g and g_top) never define one label twice
        name = f"f_{f.name}"
        code = [self.i("BRA", f"{name}.bot", pos=f.pos, role="control", label=f"{name}.top",
                       note=f"return path of {f.name}"),
                self.i("SWAPBR", LINK, pos=f.pos, role="control", label=name,
                       note=f"portal of {f.name}"),
                self.i("NEG", LINK, pos=f.pos, role="control")]
        load = self.constant_pool()
        code += load + self.pointer_scope(f.body, None, lambda: self.block(f.body)) + \
            with_role(inverse_code(load), "uncompute")
        code.append(self.i("BRA", f"{name}.top", pos=f.pos, role="control",
                           label=f"{name}.bot"))
        return code

    def constant_pool(self) -> list[Instr]:
        """Keep the constants that loops read as operands in spare variable registers.

        A constant operand costs a ``li`` and its inverse each time it is read; in a
        loop condition that is every iteration, twice.  A function that makes no calls
        (a call would save these registers too) loads the most used ones once, at its
        entry, into variable registers nothing else uses, and clears them at its exit.
        """
        if not self.p.optimize or _makes_calls(self.f.body):
            return []
        limit = self.p.max_registers
        available = list(VARIABLE_REGISTERS[:limit] if limit else VARIABLE_REGISTERS)
        spare = [r for r in available if r not in self.lay.registers]
        if not spare or self.lay.frame_size:
            return []
        uses: dict[tuple[int, str], int] = {}
        literals: dict[tuple[int, str], Fraction] = {}
        for e, ctx in self._loop_constant_operands(self.f.body, False):
            word = self._word(e, ctx)
            if word is not None:
                uses[(word, ctx.kind)] = uses.get((word, ctx.kind), 0) + 1
                literals[(word, ctx.kind)] = e.value
        chosen = sorted(uses, key=lambda k: -uses[k])[:len(spare)]
        load: list[Instr] = []
        for key, reg in zip(chosen, spare):
            self.pool[key] = reg
            word, kind = key
            text = str(word) if kind == ir.INT.kind else fixed_literal(literals[key])
            load.append(self.i("LI", reg, text, pos=self.f.pos, role="compute",
                               note="constant kept in a register"))
        return load

    def _word(self, e: ir.Const, ctx: ir.ScalarType) -> int | None:
        if ctx == ir.INT and e.value.denominator != 1:
            return None
        return self.literal_word(e, ctx)

    def _loop_constant_operands(self, body: list[ir.Stmt], in_loop: bool
                                ) -> list[tuple[ir.Const, ir.ScalarType]]:
        """(constant, context) of every constant a loop reads through ``operand``."""
        out: list[tuple[ir.Const, ir.ScalarType]] = []
        self._loop_constants_into(body, in_loop, out)
        return out

    # The walks append to one list (no generator at each level) and skip what has nothing
    # to yield: a statement outside loops with no statements inside it, a leaf expression.
    # They were a fifth of a long program's lowering of loops.
    def _loop_constants_into(self, body: list[ir.Stmt], in_loop: bool,
                             out: list[tuple[ir.Const, ir.ScalarType]]) -> None:
        for s in body:
            looped = in_loop or isinstance(s, (ir.While, ir.For))
            simple = isinstance(s, _NO_BODY)
            if not looped and simple:
                continue
            if looped:
                for name in _operand_fields(type(s)):
                    e = getattr(s, name)
                    if isinstance(e, ir.Expr):
                        self._constant_operands(e, out)
            if simple:
                continue
            for attr in ir.BODY_FIELDS:
                inner = getattr(s, attr, None)
                if isinstance(inner, list):
                    self._loop_constants_into(inner, looped, out)

    def _constant_operands(self, e: ir.Expr, out: list[tuple[ir.Const, ir.ScalarType]]
                           ) -> None:
        if isinstance(e, _LEAVES):
            return  # none of the cases below, and no operand inside
        pairs: list[tuple[ir.Expr, ir.ScalarType]] = []
        if isinstance(e, ir.Compare):
            ctx = self._compare_type(e.left, e.right)
            pairs = [(e.left, ctx), (e.right, ctx)]
        elif isinstance(e, ir.BinOp) and e.op == "**":
            pairs = [(e.left, ir.FIXED)] + ([(e.right, ir.FIXED)] if loads_exponent(e) else [])
        elif isinstance(e, ir.BinOp) and (e.op in ("//", "%") or e.op == "*" and
                                          self.type_of(e) == ir.INT and
                                          (not self.fits_int_factor(e) or
                                           isinstance(e.left, ir.Const) and
                                           isinstance(e.right, ir.Const))):
            pairs = []  # integer words: their constants are loaded where they are used
        elif isinstance(e, ir.BinOp) and e.op == "/" or (
                isinstance(e, ir.BinOp) and e.op == "*" and not any(
                    isinstance(x, ir.Const) and x.value.denominator == 1 and
                    abs(x.value) <= SMALL_MULTIPLIER for x in (e.left, e.right))):
            pairs = [(e.left, ir.FIXED), (e.right, ir.FIXED)]
        elif isinstance(e, ir.FuncCall):
            pairs = [(a, ir.FIXED) for a in e.args]
        for x, ctx in pairs:
            if isinstance(x, ir.Const) and x.value != 0:
                out.append((x, ctx))
        for attr in ("left", "right", "operand"):
            sub = getattr(e, attr, None)
            if isinstance(sub, ir.Expr):
                self._constant_operands(sub, out)
        for attr in ("values", "args"):
            for sub in getattr(e, attr, ()) or ():
                if isinstance(sub, ir.Expr):
                    self._constant_operands(sub, out)

    def block(self, body: list[ir.Stmt], guards_found: bool = False) -> list[Instr]:
        """``body``'s code.  ``guards_found``: ``body`` is part of a block whose repeated
        guards were found already (a part's runs are parts of the whole's: finding them
        again for the rest of a block after each ancilla was quadratic in its length)."""
        if not guards_found:
            self.find_repeated_guards(body)
        out: list[Instr] = []
        k = 0
        while k < len(body):
            s = body[k]
            out += self.stmt(s)
            k += 1
            if self.p.level >= 2 and isinstance(s, ir.Alloc) and s.type == ir.INT:
                # from an Int ancilla's allocation to its release, addresses that read it
                # may be kept in pointers (pointers.py): the statements between are a scope
                end = next((j for j in range(k, len(body)) if _frees(body[j], s.name)),
                           len(body))
                out += self._scoped_block(body[k:end])
                k = end
        return out

    def _scoped_block(self, inner: list[ir.Stmt]) -> list[Instr]:
        """``inner`` lowered as a scope of its own pointers (pointers.py)."""
        return self.pointer_scope(inner, None, lambda: self.block(inner, guards_found=True))

    def stmt(self, s: ir.Stmt) -> list[Instr]:
        mark = self.scratch_top
        outer, self.current = self.current, s
        try:
            kind = type(s)
            name = _METHOD_NAMES.get(kind)
            if name is None:
                name = _METHOD_NAMES[kind] = "stmt_" + kind.__name__.lower()
            method = getattr(self, name)
            self.made_in_statement = set()
            guards = self.statement_guards(s)
            self.scratch_top = mark
            self.current = outer
            code = guards + method(s)
        finally:
            self.scratch_top = mark
            self.current = outer
        return code

    def uncomputing(self, body: list[ir.Stmt]) -> list[Instr]:
        saved, self.role = self.role, "uncompute"
        try:
            return self.block(body)
        finally:
            self.role = saved

    def label(self, kind: str) -> str:
        return self.p.label(kind)

    def complete(self, build: Callable[[], list[Instr]]) -> list[Instr]:
        """Code that clears its own temporaries: their registers are free again after it."""
        mark = self.scratch_top
        try:
            return build()
        finally:
            self.scratch_top = mark


def _makes_calls(body: list[ir.Stmt]) -> bool:
    """Whether ``body`` or a body inside it holds a call (``callees_of``, without its
    look-ups of the bodies a simple statement lacks: it walks the whole function)."""
    return any(isinstance(s, ir.Call) or not isinstance(s, _NO_BODY) and
               any(_makes_calls(inner) for inner in ir.nested_bodies(s)) for s in body)


def _operand_fields(kind: type) -> tuple[str, ...]:
    """Those of a loop's statement's fields whose constants ``constant_pool`` counts, in
    order, looked up once per class (a ``getattr`` of a field the class lacks raises and
    catches an AttributeError inside: six per statement of a loop)."""
    names = _OPERAND_FIELDS.get(kind)
    if names is None:
        present = ir.field_names(kind)
        names = _OPERAND_FIELDS[kind] = tuple(
            a for a in ("expr", "pre", "post", "theta", "a", "b") if a in present)
    return names


_OPERAND_FIELDS: dict[type, tuple[str, ...]] = {}


def _frees(s: ir.Stmt, name: str) -> bool:
    return isinstance(s, ir.Free) and s.name == name
