"""Lowering the IR to PAL: expressions, paired branches, portal calls, the source map.

Every statement becomes straight-line code built from *setup / operation /
teardown*: operands that are not already in a register (constants, spilled
variables, array elements, sub-expressions) are computed into zeroed scratch
registers by a setup sequence and cleared again by its exact inverse, so every
scratch register is zero between statements.  Control flow follows PISA's
paired-branch discipline (docs/abi.md); guards make a failed postcondition or
a wrongly freed ancilla fault at a known PC, which the source map sends back
to the Python line.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from revasm.isa.fixed_point import WordFormat

from ..errors import CompileError, SourcePos
from ..frontend.checks import Proofs
from ..frontend.parse import expr_type
from ..ir import nodes as ir
from ..ir.inverse import invert_block
from ..ir.printer import expr_text
from .code import Instr, inverse_code, with_role
from .peephole import cancel_inverse_pairs
from .layout import (LINK, SCRATCH, SP, VARIABLE_REGISTERS, FunctionLayout,
                     layout_function)

_UNARY = ("sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "abs", "atan", "sinh", "cosh")
_NEGATE_BRANCH = {"BEQ": "BNE", "BNE": "BEQ", "BLTZ": "BGEZ", "BGEZ": "BLTZ",
                  "BGTZ": "BLEZ", "BLEZ": "BGTZ"}
_ZERO_BRANCH = {"<": "BLTZ", "<=": "BLEZ", ">": "BGTZ", ">=": "BGEZ"}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_SMALL_MULTIPLIER = 4


@dataclass
class SourceEntry:
    """What one PAL line came from: a Python position, a role, and a fault message."""

    pos: SourcePos | None
    role: str
    note: str = ""


@dataclass
class Lowered:
    """The compiled program: PAL text and the PAL line -> Python source map."""

    pal: str
    entry: str
    width: int
    lines: dict[int, SourceEntry] = field(default_factory=dict)
    layouts: dict[str, FunctionLayout] = field(default_factory=dict)
    array_labels: dict[str, list[str]] = field(default_factory=dict)


def lower_module(module: ir.Module, entry: str, width: int = 32,
                 max_registers: int | None = None, for_gradient: bool = False,
                 proofs: Proofs | None = None, checks: bool = True,
                 optimize: bool = True) -> Lowered:
    """PAL for ``entry`` and what it calls.  ``proofs`` (from the static checks) lets
    the guards they make redundant go; ``checks=False`` drops every runtime guard;
    ``optimize=False`` lowers statement by statement (no peephole, no constant pool,
    conditions recomputed in their teardown): the plain shapes, a reference for tests."""
    return _ModuleLowering(module, entry, width, max_registers, for_gradient, proofs,
                           checks, optimize).run()


class _ModuleLowering:
    def __init__(self, module: ir.Module, entry: str, width: int,
                 max_registers: int | None, for_gradient: bool,
                 proofs: Proofs | None = None, checks: bool = True,
                 optimize: bool = True) -> None:
        self.module = module
        self.optimize = optimize
        self.proofs = proofs if proofs is not None else Proofs()
        self.checks = checks
        self.entry = entry
        self.fmt = WordFormat(width)
        self.width = width
        self.for_gradient = for_gradient
        self.max_registers = max_registers
        self.layouts = {name: layout_function(f, max_registers)
                        for name, f in module.functions.items()}
        self.traps: list[Instr] = []
        self.label_counter = 0

    def label(self, kind: str) -> str:
        self.label_counter += 1
        return f"L{self.label_counter}_{kind}"

    def trap(self, guard: str, pos: SourcePos, note: str) -> str:
        """A landing pad that never catches: a jump from ``guard`` to it faults."""
        name = self.label("trap")
        self.traps.append(Instr("BNE", ("$0", "$0", guard), pos, "check", note, name))
        return name

    # --- the program ---------------------------------------------------------------

    def run(self) -> Lowered:
        if self.entry not in self.module.functions:
            raise KeyError(self.entry)
        reachable = self._reachable(self.entry)
        bodies: list[Instr] = []
        for name in self.module.functions:
            if name in reachable:
                code = _FunctionLowering(self, self.module.functions[name]).run()
                bodies += cancel_inverse_pairs(code) if self.optimize else code
        out = _Writer()
        f = self.module.functions[self.entry]
        lay = self.layouts[self.entry]
        out.comment(f";; pendulum pal file")
        out.comment(f";; compiled by revasm compile from {self.module.file}:{self.entry}")
        out.raw(f".width {self.width}")
        array_labels: dict[str, list[str]] = {}
        data: list[tuple[str, str]] = []
        for p in f.params:
            kind = "int" if (p.type == ir.INT or (isinstance(p.type, ir.ArrayType)
                                                  and p.type.element == ir.INT)) else "fixed"
            directive = {"input": ".input", "output": ".output", "loss": ".loss"}[p.role]
            if isinstance(p.type, ir.ArrayType):
                labels = []
                for flat, idx in enumerate(_indices(p.type.shape)):
                    suffix = ".".join(map(str, idx))
                    label = f"v_{p.name}.{suffix}"
                    labels.append(label)
                    out.raw(f"{directive} {p.name}.{suffix} {label} {kind}")
                    data.append((label, "0"))
                array_labels[p.name] = labels
            else:
                out.raw(f"{directive} {p.name} ${lay.scalars[p.name].register} {kind}")
        for table in self.module.tables.values():
            for flat, value in enumerate(table.values):
                text = (str(int(value)) if table.type.element == ir.INT
                        else _fixed_literal(value))
                data.append((f"t_{table.name}.{flat}", text))
        pos = f.pos
        stub = [Instr("START", (), pos, "control")]
        setup = [Instr("LI", (f"${SP}", "stack"), pos, "call", "stack pointer")]
        for p in f.params:
            if isinstance(p.type, ir.ArrayType):
                reg = lay.arrays[p.name].register
                setup.append(Instr("LI", (f"${reg}", array_labels[p.name][0]), pos, "call",
                                   f"base address of {p.name}"))
        stub += setup
        stub.append(Instr("BRA", (f"f_{self.entry}",), pos, "control", f"call {self.entry}"))
        stub += with_role(inverse_code(setup), "call")
        stub.append(Instr("FINISH", (), pos, "control"))
        for instr in stub + self.traps + bodies:
            out.instr(instr)
        for label, text in data:
            out.raw(f"{label + ':':<12} data {text}")
        out.raw(f"{'stack:':<12} data 0")
        return Lowered(out.text(), self.entry, self.width, out.map, self.layouts, array_labels)

    def _reachable(self, name: str) -> set[str]:
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += list(_callees(self.module.functions[n].body))
        return seen


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.map: dict[int, SourceEntry] = {}

    def comment(self, text: str) -> None:
        self.lines.append(text)

    def raw(self, text: str) -> None:
        self.lines.append(text)

    def instr(self, i: Instr) -> None:
        label = f"{i.label}:" if i.label else ""
        where = f"{i.pos.file.rsplit('/', 1)[-1]}:{i.pos.line}" if i.pos else ""
        comment = "; " + "; ".join(x for x in (where, i.note) if x) if (where or i.note) else ""
        self.lines.append(f"{label:<14}{i.text():<28}{comment}".rstrip())
        self.map[len(self.lines)] = SourceEntry(i.pos, i.role, i.note)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _indices(shape: tuple[int, ...]):
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in _indices(shape[1:]):
            yield (i, *rest)


def _fixed_literal(value: Fraction) -> str:
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


def _callees(body: list[ir.Stmt]):
    for s in body:
        if isinstance(s, ir.Call):
            yield s.func
        for attr in ("body", "then", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                yield from _callees(inner)


# --- one function --------------------------------------------------------------------


class _FunctionLowering:
    def __init__(self, parent: _ModuleLowering, f: ir.Function) -> None:
        self.p = parent
        self.f = f
        self.lay = parent.layouts[f.name]
        self.types = self.lay.types()
        self.scratch_top = 0
        self.role = "compute"
        self.pool: dict[tuple[int, str], int] = {}  # constant (word, kind) -> register

    # --- scratch registers -------------------------------------------------------------

    def fresh(self, pos: SourcePos) -> int:
        if self.scratch_top >= len(SCRATCH):
            raise CompileError(pos, f"this statement needs more than {len(SCRATCH)} temporary "
                                    "registers", "split the expression with an ancilla")
        reg = SCRATCH[self.scratch_top]
        self.scratch_top += 1
        return reg

    def i(self, mnemonic: str, *operands, pos: SourcePos | None = None, note: str = "",
          role: str | None = None, label: str = "") -> Instr:
        ops = tuple(f"${o}" if isinstance(o, int) else str(o) for o in operands)
        return Instr(mnemonic, ops, pos, role or self.role, note, label)

    # --- the function ---------------------------------------------------------------------

    def run(self) -> list[Instr]:
        f = self.f
        name = f"f_{f.name}"
        code = [self.i("BRA", f"{name}_bot", pos=f.pos, role="control", label=f"{name}_top",
                       note=f"return path of {f.name}"),
                self.i("SWAPBR", LINK, pos=f.pos, role="control", label=name,
                       note=f"portal of {f.name}"),
                self.i("NEG", LINK, pos=f.pos, role="control")]
        load = self.constant_pool()
        code += load + self.block(f.body) + with_role(inverse_code(load), "uncompute")
        code.append(self.i("BRA", f"{name}_top", pos=f.pos, role="control",
                           label=f"{name}_bot"))
        return code

    def constant_pool(self) -> list[Instr]:
        """Keep the constants that loops read as operands in spare variable registers.

        A constant operand costs a ``li`` and its inverse each time it is read; in a
        loop condition that is every iteration, twice.  A function that makes no calls
        (a call would save these registers too) loads the most used ones once, at its
        entry, into variable registers nothing else uses, and clears them at its exit.
        """
        if not self.p.optimize or any(True for _ in _callees(self.f.body)):
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
            text = str(word) if kind == ir.INT.kind else _fixed_literal(literals[key])
            load.append(self.i("LI", reg, text, pos=self.f.pos, role="compute",
                               note="constant kept in a register"))
        return load

    def _word(self, e: ir.Const, ctx: ir.ScalarType) -> int | None:
        if ctx == ir.INT:
            return int(e.value) if e.value.denominator == 1 else None
        return self.p.fmt.from_real(e.value)

    def _loop_constant_operands(self, body: list[ir.Stmt], in_loop: bool):
        """(constant, context) of every constant a loop reads through ``operand``."""
        for s in body:
            looped = in_loop or isinstance(s, (ir.While, ir.For))
            if looped:
                exprs = [getattr(s, a, None) for a in ("expr", "pre", "post", "theta", "a", "b")]
                for e in exprs:
                    if isinstance(e, ir.Expr):
                        yield from self._constant_operands(e)
            for attr in ("body", "then", "orelse"):
                inner = getattr(s, attr, None)
                if isinstance(inner, list):
                    yield from self._loop_constant_operands(inner, looped)

    def _constant_operands(self, e: ir.Expr):
        pairs: list[tuple[ir.Expr, ir.ScalarType]] = []
        if isinstance(e, ir.Compare):
            ctx = self._compare_type(e.left, e.right)
            pairs = [(e.left, ctx), (e.right, ctx)]
        elif isinstance(e, ir.BinOp) and e.op in ("/", "**") or (
                isinstance(e, ir.BinOp) and e.op == "*" and not any(
                    isinstance(x, ir.Const) and x.value.denominator == 1 and
                    abs(x.value) <= _SMALL_MULTIPLIER for x in (e.left, e.right))):
            pairs = [(e.left, ir.FIXED), (e.right, ir.FIXED)]
        elif isinstance(e, ir.FuncCall):
            pairs = [(a, ir.FIXED) for a in e.args]
        for x, ctx in pairs:
            if isinstance(x, ir.Const) and x.value != 0:
                yield x, ctx
        for attr in ("left", "right", "operand"):
            sub = getattr(e, attr, None)
            if isinstance(sub, ir.Expr):
                yield from self._constant_operands(sub)
        for attr in ("values", "args"):
            for sub in getattr(e, attr, ()) or ():
                if isinstance(sub, ir.Expr):
                    yield from self._constant_operands(sub)

    def block(self, body: list[ir.Stmt]) -> list[Instr]:
        out: list[Instr] = []
        for s in body:
            out += self.stmt(s)
        return out

    def stmt(self, s: ir.Stmt) -> list[Instr]:
        mark = self.scratch_top
        try:
            method = getattr(self, "stmt_" + type(s).__name__.lower())
            code = method(s)
        finally:
            self.scratch_top = mark
        return code

    def uncomputing(self, body: list[ir.Stmt]) -> list[Instr]:
        saved, self.role = self.role, "uncompute"
        try:
            return self.block(body)
        finally:
            self.role = saved

    # --- straight-line statements ------------------------------------------------------------

    def stmt_update(self, s: ir.Update) -> list[Instr]:
        reg, setup, teardown = self.place(s.target)
        ttype = self.type_of(s.target)
        if s.op == "^":
            op = self.xor_into(reg, s.expr)
        else:
            op = self.accumulate(reg, 1 if s.op == "+" else -1, s.expr, ttype)
        return setup + op + teardown

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

    def stmt_alloc(self, s: ir.Alloc) -> list[Instr]:
        if isinstance(s.type, ir.ArrayType):
            return []  # frame memory is zero on entry and must be zero on exit
        reg, setup, teardown = self.place(ir.Var(s.pos, name=s.name))
        check: list[Instr] = []
        if self.p.checks and not self.p.proofs.alloc_is_proven(self.f.name, s):
            guard = self.label("guard")
            note = (f"ancilla {s.name} allocated at line {s.pos.line} does not hold "
                    f"{expr_text(s.value)} when it is released (running backward)")
            check = [self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note), pos=s.pos,
                            role="check", label=guard, note=f"ancilla {s.name} must be zero here")]
        body = self.accumulate(reg, 1, s.value, s.type)
        return setup + check + body + teardown

    def stmt_free(self, s: ir.Free) -> list[Instr]:
        if isinstance(s.type, ir.ArrayType):
            return self.array_zero_check(s) if s.checked and self.p.checks else []
        reg, setup, teardown = self.place(ir.Var(s.pos, name=s.name))
        body = with_role(self.accumulate(reg, -1, s.value, s.type), "uncompute")
        check: list[Instr] = []
        if self.p.checks and not self.p.proofs.free_is_proven(self.f.name, s):
            guard = self.label("guard")
            note = (f"ancilla {s.name} does not hold {expr_text(s.value)} when it is freed "
                    f"at line {s.pos.line}")
            check = [self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note), pos=s.pos,
                            role="check", label=guard, note=f"free({s.name}, ...) leaves it zero")]
        return setup + body + check + teardown

    def label(self, kind: str) -> str:
        return self.p.label(kind)

    def array_zero_check(self, s: ir.Free) -> list[Instr]:
        """Each element of a freed ancilla array must be zero (a checked free)."""
        code: list[Instr] = []
        for idx in _indices(s.type.shape):
            mark = self.scratch_top
            element = ir.Index(s.pos, name=s.name,
                               indices=tuple(ir.Const(s.pos, Fraction(i), True) for i in idx))
            reg, setup, teardown = self.place(element)
            guard = self.label("guard")
            note = (f"ancilla array {s.name} is not zero at {expr_text(element)} when it is "
                    f"freed at line {s.pos.line}")
            check = self.i("BNE", reg, 0, self.p.trap(guard, s.pos, note), pos=s.pos,
                           role="check", label=guard)
            code += with_role(setup, "check") + [check] + with_role(teardown, "check")
            self.scratch_top = mark
        return code

    # --- calls -----------------------------------------------------------------------------

    def stmt_call(self, s: ir.Call) -> list[Instr]:
        callee = self.p.layouts[s.func]
        pos = s.pos
        saved_role, self.role = self.role, "call"
        try:
            loads: list[Instr] = []
            loaded: dict[int, int] = {}  # argument index -> scratch register
            for k, arg in enumerate(s.args):
                if isinstance(arg, ir.Index) or (isinstance(arg, ir.Var)
                                                 and arg.name in self.lay.scalars
                                                 and self.lay.scalars[arg.name].register is None):
                    reg, setup, _ = self.place(arg)
                    loads += setup
                    loaded[k] = reg
                elif isinstance(arg, ir.Const):
                    reg = self.fresh(pos)
                    ptype = self.p.module.functions[s.func].params[k].type
                    loads += self.accumulate(reg, 1, arg, ptype)
                    loaded[k] = reg
            own = self.lay.registers
            pushed = own + [LINK] + [loaded[k] for k in sorted(loaded)]
            n = len(pushed)
            frame = self.lay.frame_size
            enter: list[Instr] = []
            if frame:
                enter.append(self.i("ADDI", SP, str(frame), pos=pos, note="skip the frame"))
            for reg in pushed:
                enter.append(self.i("EXCH", reg, SP, pos=pos, note="push"))
                enter.append(self.i("ADDI", SP, "1", pos=pos))
            for k, arg in enumerate(s.args):
                target = callee.param_register(k)
                if k in loaded:
                    enter += self._move_from_slot(target, n - pushed.index(loaded[k]), pos)
                    continue
                name = arg.name
                if name in self.lay.arrays:
                    home = self.lay.arrays[name]
                    if home.register is not None:
                        enter += self._move_from_slot(target, n - pushed.index(home.register),
                                                      pos)
                    else:
                        enter.append(self.i("ADD", target, SP, pos=pos,
                                            note=f"address of {name}"))
                        enter.append(self.i("ADDI", target, str(-(frame + n - home.frame_offset)),
                                            pos=pos))
                elif name in self.p.module.tables:
                    enter.append(self.i("LI", target, f"t_{name}.0", pos=pos))
                else:
                    slot = self.lay.scalars[name]
                    enter += self._move_from_slot(target, n - pushed.index(slot.register), pos)
            jump = self.i("RBRA" if s.uncall else "BRA", f"f_{s.func}", pos=pos, role="control",
                          note=("uncall " if s.uncall else "call ") + s.func)
            leave = with_role(inverse_code(enter), "call")
            unloads = with_role(inverse_code(loads), "call")
            return loads + enter + [jump] + leave + unloads
        finally:
            self.role = saved_role

    def _move_from_slot(self, target: int, distance: int, pos: SourcePos) -> list[Instr]:
        return [self.i("ADDI", SP, str(-distance), pos=pos),
                self.i("EXCH", target, SP, pos=pos, note="pass an argument"),
                self.i("ADDI", SP, str(distance), pos=pos)]

    # --- blocks ------------------------------------------------------------------------------

    def stmt_routine(self, s: ir.Routine) -> list[Instr]:
        return self.block(s.body)

    def stmt_unroutine(self, s: ir.Unroutine) -> list[Instr]:
        return self.uncomputing(invert_block(s.body))

    def stmt_block(self, s: ir.Block) -> list[Instr]:
        return self.block(invert_block(s.body) if s.inverted else s.body)

    # --- control flow ---------------------------------------------------------------------------

    def paired_conditions(self, pre: ir.Expr, post: ir.Expr) -> tuple[tuple, tuple]:
        """The entry condition's and the exit assertion's (setup, branch, teardown), both
        built on the same scratch registers (each is uncomputed before the other runs)."""
        mark = self.scratch_top
        entry = self.branch(pre, False)
        self.scratch_top = mark
        exit_ = self.branch(post, True)
        self.scratch_top = mark
        return entry, exit_

    def stmt_if(self, s: ir.If) -> list[Instr]:
        pos = s.pos
        (pre_setup, pre_branch, pre_teardown), (post_setup, post_branch, post_teardown) = \
            self.paired_conditions(s.pre, s.post)
        test, out, else_, join = (self.label(k) for k in ("if", "out", "else", "join"))
        guard, bguard = self.label("guard"), self.label("bguard")
        line = pos.line
        post_text = expr_text(s.post)
        pre_text = expr_text(s.pre)
        then_fault = (f"postcondition {post_text} of the if at line {line} is false after "
                      "the then branch")
        else_fault = (f"postcondition {post_text} of the if at line {line} is true after "
                      "the else branch")
        back_fault = (f"precondition {pre_text} of the if at line {line} does not match the "
                      "branch taken (running backward)")
        code = self.roled(pre_setup, "control")
        code.append(pre_branch(test, else_, pos, "control"))
        code += self.roled(pre_teardown, "control")
        code += self.block(s.then)
        code += self.roled(post_setup, "check")
        code.append(self.i("BRA", join, pos=pos, role="control", label=out))
        if self.p.checks:
            code.append(self.i("BRA", self.p.trap(bguard, pos, back_fault), pos=pos,
                               role="check", label=bguard,
                               note="reached only running backward with a wrong precondition"))
        code.append(pre_branch(else_, test, pos, "check"))
        code += self.roled(pre_teardown, "check")
        code += self.block(s.orelse)
        code += self.roled(post_setup, "check")
        if self.p.checks:
            code.append(post_branch(guard, self.p.trap(guard, pos, else_fault), pos, "check"))
        code.append(replace(post_branch(join, out, pos, "check"), note=then_fault))
        code += self.roled(post_teardown, "check")
        return code

    def stmt_while(self, s: ir.While) -> list[Instr]:
        pos = s.pos
        (pre_setup, pre_branch, pre_teardown), (post_setup, post_branch, post_teardown) = \
            self.paired_conditions(s.pre, s.post)
        top, test, bottom, exit_ = (self.label(k) for k in ("loop", "test", "back", "exit"))
        guard, bguard = self.label("guard"), self.label("bguard")
        line = pos.line
        post_fault = (f"postcondition {expr_text(s.post)} of the loop at line {line} must be "
                      "false on entry and true after every iteration")
        pre_fault = (f"condition {expr_text(s.pre)} of the loop at line {line} is true where "
                     "the loop exits (running backward)")
        code = self.roled(post_setup, "check")
        code.append(post_branch(top, bottom, pos, "check"))
        code += self.roled(post_teardown, "check")
        code += self.roled(pre_setup, "control")
        code.append(pre_branch(test, exit_, pos, "control"))
        code += self.roled(pre_teardown, "control")
        code += self.block(s.body)
        code += self.roled(post_setup, "control")
        code.append(post_branch(bottom, top, pos, "control"))
        if self.p.checks:
            code.append(self.i("BRA", self.p.trap(guard, pos, post_fault), pos=pos,
                               role="check", label=guard, note=post_fault))
            code.append(self.i("BRA", self.p.trap(bguard, pos, pre_fault), pos=pos,
                               role="check", label=bguard, note="reached only running backward"))
        code.append(pre_branch(exit_, test, pos, "check"))
        code += self.roled(pre_teardown, "check")
        return code

    def stmt_for(self, s: ir.For) -> list[Instr]:
        pos = s.pos
        i = ir.Var(pos, name=s.var)
        step = ir.Const(pos, value=Fraction(s.step), is_int=True)
        loop = ir.While(pos, pre=ir.Compare(pos, op="!=", left=i, right=s.stop),
                        post=ir.Compare(pos, op="!=", left=i, right=s.start),
                        body=[*s.body, _Counter(pos, target=i, op="+", expr=step)])
        code: list[Instr] = []
        if self.p.checks and not (isinstance(s.start, ir.Const) and
                                  isinstance(s.stop, ir.Const)):
            code += self.empty_range_guard(s)
        code += self.roled(self.stmt(_Counter(pos, target=i, op="+", expr=s.start)), "control")
        code += self.stmt_while(loop)
        code += self.roled(self.stmt(_Counter(pos, target=i, op="-", expr=s.stop)), "control")
        return code

    def empty_range_guard(self, s: ir.For) -> list[Instr]:
        """Variable bounds: the loop counts until it meets the bound, so the range must
        not run the wrong way (stop < start with step 1); a guard faults instead of
        counting through 2^W values."""
        mark = self.scratch_top
        t = self.fresh(s.pos)
        setup = self.accumulate(t, 1, s.stop, ir.INT) + self.accumulate(t, -1, s.start, ir.INT)
        self.scratch_top = mark
        guard = self.label("guard")
        direction = "below" if s.step > 0 else "above"
        note = (f"the range of the loop at line {s.pos.line} runs the wrong way: its end "
                f"{expr_text(s.stop)} is {direction} its start {expr_text(s.start)}")
        branch = self.i("BLTZ" if s.step > 0 else "BGTZ", t, self.p.trap(guard, s.pos, note),
                        pos=s.pos, role="check", label=guard, note=note)
        return with_role(setup, "check") + [branch] + with_role(inverse_code(setup), "check")

    def stmt__counter(self, s: ir.Update) -> list[Instr]:
        return self.roled(self.stmt_update(s), "control")

    def roled(self, code: list[Instr], role: str) -> list[Instr]:
        if self.role == "uncompute" and role in ("compute", "control"):
            role = "uncompute"
        return with_role(code, role)

    # --- conditions --------------------------------------------------------------------------

    def branch(self, cond: ir.Expr, when: bool):
        """(setup, make_branch(label, target, pos, role), teardown): jump iff cond == when."""
        mnemonic, regs, setup, teardown = self.test(cond)
        if not when:
            mnemonic = _NEGATE_BRANCH[mnemonic]

        def make(label: str, target: str, pos: SourcePos, role: str) -> Instr:
            return self.i(mnemonic, *regs, target, pos=pos, role=role, label=label)
        return setup, make, teardown

    def test(self, cond: ir.Expr):
        """A branch mnemonic and registers that test ``cond`` (true -> taken)."""
        if isinstance(cond, ir.Compare):
            left, right, op = cond.left, cond.right, cond.op
            if _is_zero(left) and not _is_zero(right):
                left, right, op = right, left, _MIRROR[op]
            ctx = self._compare_type(left, right)
            if op in ("==", "!="):
                a, sa, ta = self.operand(left, ctx)
                b, sb, tb = self.operand(right, ctx)
                return ("BEQ" if op == "==" else "BNE"), (a, b), sa + sb, tb + ta
            if _is_zero(right):
                a, sa, ta = self.operand(left, ctx)
                return _ZERO_BRANCH[op], (a,), sa, ta
        if isinstance(cond, ir.Unary) and cond.op == "not":
            mnemonic, regs, setup, teardown = self.test(cond.operand)
            return _NEGATE_BRANCH[mnemonic], regs, setup, teardown
        if isinstance(cond, (ir.Var, ir.Index)):
            a, sa, ta = self.operand(cond, self.type_of(cond))
            return "BNE", (a, 0), sa, ta
        mark = self.scratch_top
        try:
            if not self.p.optimize:
                raise CompileError(cond.pos, "plain lowering")
            t, setup = self.condition_bit(cond)
        except CompileError:  # out of scratch registers: clear each part as it goes
            self.scratch_top = mark
            t = self.fresh(cond.pos)
            setup = self.xor_into(t, cond)
        return "BNE", (t, 0), setup, inverse_code(setup)

    def condition_bit(self, e: ir.Expr) -> tuple[int, list[Instr]]:
        """A scratch register holding ``e``'s truth (0 or 1), for a branch.

        Unlike ``xor_into`` the setup leaves its temporaries (operands, the parts of an
        ``and``/``or``) in place: the branch's teardown, the setup's inverse, clears
        them, so each is computed once per test instead of three times.
        """
        pos = e.pos
        if isinstance(e, ir.BoolOp):
            regs: list[int] = []
            code: list[Instr] = []
            for v in e.values:
                r, c = self.condition_bit(v)
                regs.append(r)
                code += c
            acc = regs[0]
            op = "ANDX" if e.op == "and" else "ORX"
            for r in regs[1:]:
                t = self.fresh(pos)
                code.append(self.i(op, t, acc, r, pos=pos))
                acc = t
            return acc, code
        if isinstance(e, ir.Unary) and e.op == "not":
            r, code = self.condition_bit(e.operand)
            return r, code + [self.i("XORI", r, "1", pos=pos)]
        if isinstance(e, ir.Compare) and e.op in ("<", ">", "<=", ">="):
            ctx = self._compare_type(e.left, e.right)
            a, sa, _ = self.operand(e.left, ctx)
            b, sb, _ = self.operand(e.right, ctx)
            d = self.fresh(pos)
            first, second = (a, b) if e.op in ("<", ">=") else (b, a)
            code = sa + sb
            if e.op in ("<=", ">="):
                code.append(self.i("XORI", d, "1", pos=pos))
            return d, code + [self.i("SLTX", d, first, second, pos=pos)]
        t = self.fresh(pos)
        return t, self.xor_into(t, e)

    def _compare_type(self, a: ir.Expr, b: ir.Expr) -> ir.ScalarType:
        return ir.INT if self.type_of(a) == self.type_of(b) == ir.INT else ir.FIXED

    # --- places and operands ----------------------------------------------------------------

    def type_of(self, e: ir.Expr) -> ir.ScalarType:
        return expr_type(e, self.types, self.p.module.tables)

    def place(self, e: ir.Expr):
        """A register holding the variable/element ``e``, with setup/teardown moving it there."""
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
            setup = calc + [self.i("EXCH", reg, addr, pos=e.pos, note=f"load {e.name}")] \
                + inverse_code(calc)
            self.scratch_top = mark
            return reg, setup, inverse_code(setup)
        if isinstance(e, ir.Index):
            reg = self.fresh(e.pos)
            mark = self.scratch_top
            addr = self.fresh(e.pos)
            calc = self.address(addr, e)
            setup = calc + [self.i("EXCH", reg, addr, pos=e.pos,
                                   note=f"load {expr_text(e)}")] + inverse_code(calc)
            self.scratch_top = mark
            return reg, setup, inverse_code(setup)
        raise CompileError(e.pos, f"{expr_text(e)} is not a variable or array element")

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

    def operand(self, e: ir.Expr, ctx: ir.ScalarType):
        """A register holding the value of ``e`` in type ``ctx``, with setup and teardown."""
        if _is_zero(e):
            return 0, [], []
        if isinstance(e, ir.Const) and self.pool:
            word = self._word(e, ctx)
            if (word, ctx.kind) in self.pool:
                return self.pool[(word, ctx.kind)], [], []
        etype = self.type_of(e)
        if isinstance(e, (ir.Var, ir.Index)) and (etype == ctx or ctx == ir.INT):
            if etype != ctx:
                raise CompileError(e.pos, f"{expr_text(e)} is Fixed where an Int is needed")
            return self.place(e)
        if isinstance(e, (ir.Var, ir.Index)) and etype == ir.INT and ctx == ir.FIXED:
            # one shift into a zero scratch register converts it (SLLX is an XOR)
            r, sr, tr = self.place(e)
            t = self.fresh(e.pos)
            setup = sr + [self.i("SLLX", t, r, str(self.fmt_frac), pos=e.pos,
                                 note="Int to Fixed")] + tr
            return t, setup, inverse_code(setup)
        t = self.fresh(e.pos)
        setup = self.accumulate(t, 1, e, ctx)
        return t, setup, inverse_code(setup)

    # --- accumulation: d += e, d -= e ------------------------------------------------------

    def accumulate(self, d: int, sign: int, e: ir.Expr, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        add, sub = ("ADD", "SUB") if sign > 0 else ("SUB", "ADD")
        if isinstance(e, ir.Const):
            if e.value == 0:
                return []
            if ctx == ir.INT:
                if e.value.denominator != 1:
                    raise CompileError(pos, f"{expr_text(e)} is not an integer",
                                       "Int variables hold whole numbers")
                v = int(e.value) * sign
                if -32768 <= v <= 32767:
                    return [self.i("ADDI", d, str(v), pos=pos)]
                return [self.i("LI", d, str(v), pos=pos)]
            return [self.i("LI", d, _fixed_literal(e.value * sign), pos=pos)]
        etype = self.type_of(e)
        if isinstance(e, (ir.Var, ir.Index)):
            if etype == ir.FIXED and ctx == ir.INT:
                raise CompileError(pos, f"{expr_text(e)} is Fixed; it cannot be added to an "
                                        "Int", "keep Int variables for counts and indices")
            if etype == ir.INT and ctx == ir.FIXED:
                r, setup, teardown = self.place(e)
                t = self.fresh(pos)
                conv = [self.i("SLLX", t, r, str(self.fmt_frac), pos=pos, note="Int to Fixed")]
                return setup + conv + [self.i(add, d, t, pos=pos)] + conv + teardown
            r, setup, teardown = self.place(e)
            if r == d:
                raise CompileError(pos, f"{expr_text(e)} is both read and written by this "
                                        "statement", "copy it into an ancilla first")
            return setup + [self.i(add, d, r, pos=pos)] + teardown
        if isinstance(e, ir.Unary) and e.op == "-":
            return self.accumulate(d, -sign, e.operand, ctx)
        if isinstance(e, ir.BinOp) and e.op in "+-":
            right_sign = sign if e.op == "+" else -sign
            return self.complete(lambda: self.accumulate(d, sign, e.left, ctx)) + \
                self.complete(lambda: self.accumulate(d, right_sign, e.right, ctx))
        if isinstance(e, ir.BinOp) and e.op == "*":
            return self.multiply(d, sign, e, ctx)
        if isinstance(e, ir.BinOp) and e.op == "/":
            if ctx == ir.INT:
                raise CompileError(pos, "integer division is not supported",
                                   "divide Fixed values")
            return self.binary_instruction(d, sign, "DIV", e.left, e.right, pos)
        if isinstance(e, ir.BinOp) and e.op == "**":
            return self.power(d, sign, e, ctx)
        if isinstance(e, ir.FuncCall):
            if ctx == ir.INT:
                raise CompileError(pos, f"{e.name} gives a Fixed value; it cannot be added to "
                                        "an Int")
            return self.function(d, sign, e)
        if isinstance(e, (ir.Compare, ir.BoolOp)) or (isinstance(e, ir.Unary)
                                                      and e.op == "not") or \
                (isinstance(e, ir.BinOp) and e.op in ("&", "|", "<<", ">>")):
            t = self.fresh(pos)
            setup = self.xor_into(t, e)
            r = t
            conv: list[Instr] = []
            if ctx == ir.FIXED:
                r = self.fresh(pos)
                conv = [self.i("SLLX", r, t, str(self.fmt_frac), pos=pos, note="Int to Fixed")]
            return setup + conv + [self.i(add, d, r, pos=pos)] + conv + inverse_code(setup)
        raise CompileError(pos, f"cannot compute {expr_text(e)}")

    def complete(self, build) -> list[Instr]:
        """Code that clears its own temporaries: their registers are free again after it."""
        mark = self.scratch_top
        try:
            return build()
        finally:
            self.scratch_top = mark

    @property
    def fmt_frac(self) -> int:
        return self.p.fmt.frac_bits

    def multiply(self, d: int, sign: int, e: ir.BinOp, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        left, right = e.left, e.right
        if isinstance(left, ir.Const) and not isinstance(right, ir.Const):
            left, right = right, left
        if isinstance(right, ir.Const) and right.value.denominator == 1 and \
                abs(right.value) <= _SMALL_MULTIPLIER:
            # x * n for a small integer n: n exact additions (no rounding)
            n = int(right.value)
            code: list[Instr] = []
            for _ in range(abs(n)):
                code += self.complete(lambda: self.accumulate(d, sign if n > 0 else -sign,
                                                              left, ctx))
            return code
        if ctx == ir.INT:
            if not (isinstance(right, ir.Const) and right.value.denominator == 1):
                raise CompileError(pos, "an Int product needs a constant factor",
                                   "multiply Fixed values, or scale by a constant: i * 3")
            # i * c exactly: fmul(i, c << F) == i * c
            a, sa, ta = self.operand(left, ir.INT)
            c = self.fresh(pos)
            raw = int(right.value) << self.fmt_frac
            load = [self.i("LI", c, str(raw), pos=pos)]
            op = "ADDMUL" if sign > 0 else "SUBMUL"
            return sa + load + [self.i(op, d, a, c, pos=pos)] + inverse_code(load) + ta
        if self.p.for_gradient and _same(left, right):
            raise CompileError(pos, f"{expr_text(left)} is read twice by one product; its "
                                    "gradient would be taken once", "write sq(x) for x * x")
        return self.binary_instruction(d, sign, "MUL", left, right, pos)

    def binary_instruction(self, d, sign, family, left, right, pos) -> list[Instr]:
        a, sa, ta = self.operand(left, ir.FIXED)
        if _same(left, right):
            b, sb, tb = a, [], []
        else:
            b, sb, tb = self.operand(right, ir.FIXED)
        if d in (a, b):
            raise CompileError(pos, "the target is read by its own update",
                               "copy it into an ancilla first")
        op = ("ADD" if sign > 0 else "SUB") + family
        return sa + sb + [self.i(op, d, a, b, pos=pos)] + tb + ta

    def power(self, d: int, sign: int, e: ir.BinOp, ctx: ir.ScalarType) -> list[Instr]:
        pos = e.pos
        if isinstance(e.right, ir.Const):
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

    # --- d ^= e ------------------------------------------------------------------------------

    def xor_into(self, d: int, e: ir.Expr) -> list[Instr]:
        pos = e.pos
        if isinstance(e, ir.Const):
            v = int(e.value) if e.is_int else self.p.fmt.from_real(e.value)
            if v == 0:
                return []
            if -32768 <= v <= 32767:
                return [self.i("XORI", d, str(v), pos=pos)]
            t = self.fresh(pos)
            load = [self.i("LI", t, str(v), pos=pos)]
            return load + [self.i("XOR", d, t, pos=pos)] + inverse_code(load)
        if isinstance(e, (ir.Var, ir.Index)):
            r, setup, teardown = self.place(e)
            if r == d:
                raise CompileError(pos, f"{expr_text(e)} is both read and written")
            return setup + [self.i("XOR", d, r, pos=pos)] + teardown
        if isinstance(e, ir.Unary) and e.op == "not":
            return self.xor_into(d, e.operand) + [self.i("XORI", d, "1", pos=pos)]
        if isinstance(e, ir.BinOp) and e.op in ("&", "|"):
            ctx = self._compare_type(e.left, e.right)
            a, sa, ta = self.operand(e.left, ctx)
            b, sb, tb = self.operand(e.right, ctx)
            op = "ANDX" if e.op == "&" else "ORX"
            return sa + sb + [self.i(op, d, a, b, pos=pos)] + tb + ta
        if isinstance(e, ir.BinOp) and e.op in ("<<", ">>"):
            a, sa, ta = self.operand(e.left, self.type_of(e.left))
            amount = int(e.right.value)
            op = "SLLX" if e.op == "<<" else "SRAX"
            return sa + [self.i(op, d, a, str(amount), pos=pos)] + ta
        if isinstance(e, ir.BoolOp):
            regs = [self.fresh(pos) for _ in e.values]
            setups = [self.complete(lambda t=t, v=v: self.xor_into(t, v))
                      for t, v in zip(regs, e.values)]
            op = "ANDX" if e.op == "and" else "ORX"
            code: list[Instr] = [x for s in setups for x in s]
            acc = regs[0]
            chain: list[Instr] = []
            for r in regs[1:-1]:
                t = self.fresh(pos)
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
            setup = self.accumulate(t, 1, e, self.type_of(e))
            return setup + [self.i("XOR", d, t, pos=pos)] + inverse_code(setup)
        raise CompileError(pos, f"cannot compute {expr_text(e)} with ^=")


@dataclass
class _Counter(ir.Update):
    """A loop counter update (role: control), lowered like any update."""


def _is_zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and e.value == 0


def _same(a: ir.Expr, b: ir.Expr) -> bool:
    return a == b
