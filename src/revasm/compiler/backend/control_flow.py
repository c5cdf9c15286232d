"""Lowering control flow: if, while and for as PISA paired branches, and their conditions.

Each construct tests its entry condition and asserts its exit condition with a pair
of branches (docs/abi.md); guards make a violated postcondition, or a precondition
that does not match the branch taken when running backward, fault at a known PC.  A
for loop is a while loop over a counter.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, inverse_code, with_role
from .guards import index_nodes
from .ir_queries import callees_of, is_zero
from .lowering_state import FunctionLoweringState, HeldValue
from .pointers import accesses

_NEGATE_BRANCH = {"BEQ": "BNE", "BNE": "BEQ", "BLTZ": "BGEZ", "BGEZ": "BLTZ",
                  "BGTZ": "BLEZ", "BLEZ": "BGTZ"}
_ZERO_BRANCH = {"<": "BLTZ", "<=": "BLEZ", ">": "BGTZ", ">=": "BGEZ"}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

#: A condition's (setup, make_branch(label, target, pos, role), teardown): the branch is
#: taken iff the condition has the value asked for.
Condition = tuple[list[Instr], Callable[[str, str, SourcePos, str], Instr], list[Instr]]


class ControlFlowLowering(FunctionLoweringState):
    """if, while, for and the branches that test conditions."""

    #: the statement whose guards are being made (``function_lowering.stmt``)
    current: ir.Stmt | None

    def paired_conditions(self, pre: ir.Expr, post: ir.Expr) -> tuple[Condition, Condition]:
        """The entry condition's and the exit assertion's (setup, branch, teardown), both
        built on the same scratch registers (each is uncomputed before the other runs)."""
        mark = self.scratch_top
        entry = self.branch(pre, False)
        self.scratch_top = mark
        exit_ = self.branch(post, True)
        self.scratch_top = mark
        return entry, exit_

    def stmt_if(self, s: ir.If) -> list[Instr]:
        if self.p.level >= 2 and not s.post_given:
            held = self.if_on_held_condition(s)
            if held is not None:
                return held
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
        self.conditional += 1
        code += self.block(s.then)
        checked_post = self.roled(post_setup, "check")  # (the same at the join, made once)
        code += checked_post
        code.append(self.i("BRA", join, pos=pos, role="control", label=out))
        if self.p.check("branch"):
            code.append(self.i("BRA", self.p.trap(bguard, pos, back_fault), pos=pos,
                               role="check", label=bguard,
                               note="reached only running backward with a wrong precondition"))
        code.append(pre_branch(else_, test, pos, "check"))
        code += self.roled(pre_teardown, "check")
        code += self.block(s.orelse)
        self.conditional -= 1
        code += checked_post
        if self.p.check("branch"):
            code.append(post_branch(guard, self.p.trap(guard, pos, else_fault), pos, "check"))
        code.append(replace(post_branch(join, out, pos, "check"), note=then_fault))
        code += self.roled(post_teardown, "check")
        return code + self.post_guards(s)

    def post_guards(self, s: ir.If) -> list[Instr]:
        """The guards of the elements an ``if``'s assertion reads, made after the join.

        They belong to the ``if`` (``current``), so that at -O2 an ``if c:`` in a loop
        -- whose assertion is its condition, unchanged by the branches -- has them hoisted
        with its test's (``hoisting.py``): the same expression, the same elements."""
        saved = self.current
        self.current = s
        try:
            post = s.pre if not s.post_given and s.post == s.pre else s.post
            return self.condition_guards([post])
        finally:
            self.current = saved

    def int_into(self, register: int, e: ir.Expr) -> list[Instr]:
        """``register += e`` (an Int), its temporaries cleared again."""
        return self.complete(lambda: self.accumulate(register, 1, e, ir.INT))

    def if_on_held_condition(self, s: ir.If) -> list[Instr] | None:
        """``if c:`` (-O2) with c's truth computed once into a register the branches keep.

        The plain ``if`` computes its condition four times on each path (the test and its
        teardown, the assertion at the join and its teardown).  When the assertion is
        the condition itself (``if c:``, whose branches may not change what c reads: the
        static checks make sure, docs/language.md) --
        one bit, computed before the test (every element it reads moved back to memory)
        and cleared after the join, serves the test, the landing and the join's paired
        branch.  The bit lives in a variable register this function leaves free; a branch
        with a call keeps the plain form (the callee uses those registers).  None when
        no register is free."""
        spare = self.spare_registers()
        if not spare or any(True for _ in callees_of(s.then + s.orelse)):
            return None
        pos = s.pos
        self.reserved.add(spare[0])
        try:
            bit, setup = self.condition_register(s, spare[0])
            test, out, else_, join = (self.label(k) for k in ("if", "out", "else", "join"))
            bguard = self.label("bguard")
            line = pos.line
            then_fault = (f"postcondition {expr_text(s.post)} of the if at line {line} is "
                          "false after the then branch")
            back_fault = (f"precondition {expr_text(s.pre)} of the if at line {line} does not "
                          "match the branch taken (running backward)")
            code = self.roled(setup, "control")
            code.append(self.i("BEQ", bit, 0, else_, pos=pos, role="control", label=test))
            self.conditional += 1
            code += self.block(s.then)
            code.append(self.i("BRA", join, pos=pos, role="control", label=out))
            if self.p.check("branch"):
                code.append(self.i("BRA", self.p.trap(bguard, pos, back_fault), pos=pos,
                                   role="check", label=bguard,
                                   note="reached only running backward with a wrong "
                                        "precondition"))
            code.append(self.i("BEQ", bit, 0, test, pos=pos, role="check", label=else_))
            code += self.block(s.orelse)
            self.conditional -= 1
            code.append(self.i("BNE", bit, 0, out, pos=pos, role="check", label=join,
                               note=then_fault))
            code += self.roled(inverse_code(setup), "control")
        finally:
            self.reserved.discard(spare[0])
        return code + self.post_guards(s)

    def condition_register(self, s: ir.If, spare: int) -> tuple[int, list[Instr]]:
        """The register an ``if c:``'s branches test, and the code that sets it up (its
        inverse clears it): a variable in a register is tested where it is (the branches
        may not change it); an element of an array the branches do not name is moved into
        ``spare`` for the whole ``if`` (its word and its gradient word, by one EXCH each
        way); anything else is computed into ``spare`` as a bit."""
        c = s.pre
        home = self.lay.scalars.get(c.name) if isinstance(c, ir.Var) else None
        if home is not None and home.register is not None:
            return home.register, []
        if isinstance(c, ir.Index) and c.name in self.lay.arrays and \
                not any(True for index in c.indices for _ in index_nodes(index)) and \
                all(e.name != c.name for e, _ in accesses(s.then + s.orelse)):
            def move() -> list[Instr]:
                address, calc = self.address_of(c)
                return calc + [self.i("EXCH", spare, address, pos=c.pos,
                                      note=f"load {expr_text(c)}")] + inverse_code(calc)
            return spare, self.complete(move)
        return spare, self.complete(lambda: self.xor_into(spare, c))

    def stmt_while(self, s: ir.While, counted: bool = False) -> list[Instr]:
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
        self.conditional += 0 if counted else 1
        code += self.block(s.head)  # Janus's do-part: before every test of pre
        code += self.roled(pre_setup, "control")
        code.append(pre_branch(test, exit_, pos, "control"))
        code += self.roled(pre_teardown, "control")
        code += self.block(s.body)
        self.conditional -= 0 if counted else 1
        code += self.condition_guards([s.pre, s.post])  # the next test's elements
        code += self.roled(post_setup, "control")
        code.append(post_branch(bottom, top, pos, "control"))
        if self.p.check("branch"):
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
        code: list[Instr] = []
        if self.p.check("range") and not (isinstance(s.start, ir.Const) and
                                  isinstance(s.stop, ir.Const)):
            code += self.empty_range_guard(s)
        (start, stop), hold, held = self.held_bounds(s)
        loop = ir.While(pos, pre=ir.Compare(pos, op="!=", left=i, right=stop),
                        post=ir.Compare(pos, op="!=", left=i, right=start),
                        body=[*s.body, _Counter(pos, target=i, op="+", expr=step)])
        code += hold
        code += self.roled(self.stmt(_Counter(pos, target=i, op="+", expr=s.start)), "control")
        saved = self.ranges.get(s.var), set(self.exact_ranges), self.conditional
        self.ranges[s.var] = self.loop_range(s)
        self.exact_ranges.discard(s.var)
        if isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const) and \
                (s.stop.value - s.start.value) * s.step > 0:
            self.exact_ranges.add(s.var)
        else:
            self.conditional += 1  # the loop may run no iteration
        try:
            code += self.hoisted_guards(s, stop)
            code += self.pointer_scope(s.body, s.var,
                                       lambda: self.counted_loop(s, loop, start, stop))
        finally:
            self.ranges[s.var], self.exact_ranges, self.conditional = saved
            self.reserved -= held
        code += self.roled(self.stmt(_Counter(pos, target=i, op="-", expr=s.stop)), "control")
        return code + inverse_code(hold)

    def counted_loop(self, s: ir.For, loop: ir.While, start: ir.Expr, stop: ir.Expr
                     ) -> list[Instr]:
        """The loop's iterations: at -O2, when both bounds are in registers, a loop that
        tests once per iteration; otherwise the while loop's three tests.

        The while form tests the exit before each iteration (``test``) besides the two
        paired branches of the back edge.  A counted loop whose bounds are registers may
        test at the bottom instead -- ``top: bne i start bottom``, the body, ``bottom: bne
        i stop top`` -- since its counter is the start on entry and never the start again
        until it leaves: running backward, the same two branches find the way.  It must
        run at least once: a range that may be empty is skipped by a paired branch, taken
        when the counter, at the start, equals the stop, and landing where the counter,
        at the stop, equals the start (docs/abi.md)."""
        if self.p.level < 2:
            return self.stmt_while(loop, counted=True)
        pos = s.pos
        mark = self.scratch_top
        enters, enter_branch, enters_after = self.branch(loop.post, True)  # i != start
        repeat_branch: Callable[[str, str, SourcePos, str], Instr]
        if _down_to_zero(s):
            # i != -1 is i >= 0 while i runs start .. 0, -1: a sign test, no bound register
            counter, *_ = self.place(ir.Var(pos, name=s.var))
            repeats: list[Instr] = []
            repeats_after: list[Instr] = []
            repeat_branch = self._sign_branch(counter)
        else:
            repeats, repeat_branch, repeats_after = self.branch(loop.pre, True)  # i != stop
        self.scratch_top = mark
        if enters or enters_after or repeats or repeats_after:
            return self.stmt_while(loop, counted=True)  # a bound to compute at each test
        top, bottom = self.label("top"), self.label("bottom")
        # which address each live pointer holds over the loop (carried_elements.py)
        self.p.loop_pointers[top] = {f"${register}": (key, offset)
                                     for (key, offset), register in self.pointers.items()}
        code = [enter_branch(top, bottom, pos, "control")]
        code += self.block(loop.body)
        code.append(repeat_branch(bottom, top, pos, "control"))
        if isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const) and \
                (s.stop.value - s.start.value) * s.step > 0:
            return code  # constant bounds that run at least once
        # entering, the counter is the start: the range is empty when it is the stop too;
        # leaving, it is the stop: the range was empty when it is the start too
        counter, *_ = self.place(ir.Var(pos, name=s.var))
        first, *_ = self.operand(start, ir.INT)
        last, *_ = self.operand(stop, ir.INT)
        self.scratch_top = mark  # registers all three (the branches above needed no setup)
        skip, back = self.label("skip"), self.label("empty")
        return ([self.i("BEQ", counter, last, skip, pos=pos, role="control", label=back,
                        note="an empty range: no iteration")] + code +
                [self.i("BEQ", counter, first, back, pos=pos, role="control", label=skip)])

    def _sign_branch(self, counter: int) -> Callable[[str, str, SourcePos, str], Instr]:
        def make(label: str, target: str, pos: SourcePos, role: str) -> Instr:
            return self.i("BGEZ", counter, target, pos=pos, role=role, label=label)
        return make

    def held_bounds(self, s: ir.For) -> tuple[tuple[ir.Expr, ir.Expr], list[Instr], set[int]]:
        """The loop's (start, stop) for its tests, the code that puts those worth keeping
        in registers for the whole loop (-O2: every iteration tests both, and a bound such
        as ``j - 1`` or ``98`` would be computed and cleared each time), and the registers.

        The body may not change what a bound reads (docs/language.md, ``range``), so the
        register keeps the bound's value; the inverse of the code clears it after the
        loop.  Constant zero, a constant of the constant pool and a variable in a register
        are tested where they are."""
        bounds: list[ir.Expr] = [s.start, s.stop]
        if self.p.level < 2:
            return (s.start, s.stop), [], set()
        # a callee may use a spare register: only those no callee names (callee_registers)
        blocked = self.p.registers_of_calls(s.body) if any(True for _ in callees_of(s.body)) \
            else frozenset()
        if blocked is None:
            return (s.start, s.stop), [], set()  # a callee whose registers are not known
        code: list[Instr] = []
        held: set[int] = set()
        for k, bound in enumerate(bounds):
            if k == 1 and _down_to_zero(s):
                continue  # tested by its sign (counted_loop)
            if isinstance(bound, ir.Var) and bound.name in self.lay.scalars and \
                    self.lay.scalars[bound.name].register is not None:
                continue
            if isinstance(bound, ir.Const) and (bound.value == 0 or (
                    bound.value.denominator == 1 and (int(bound.value), ir.INT.kind)
                    in self.pool)):
                continue
            spare = [r for r in self.spare_registers() if r not in blocked]
            if not spare:
                break
            register = spare[0]
            self.reserved.add(register)
            held.add(register)
            code += self.int_into(register, bound)
            bounds[k] = HeldValue(bound.pos, name=expr_text(bound), register=register)
        return (bounds[0], bounds[1]), self.roled(code, "control"), held

    def empty_range_guard(self, s: ir.For) -> list[Instr]:
        """Variable bounds: the loop counts until it meets the bound, so the range must
        not run the wrong way (stop < start with step 1); a guard faults instead of
        counting through 2^W values.  At -O2 no guard when the bounds' ranges prove the
        direction (the Givens network's ``range(N - 2, j - 1, -1)`` with j in 0..N-1)."""
        if self.p.level >= 2:
            span = self.interval(ir.BinOp(s.pos, op="-", left=s.stop, right=s.start))
            if span is not None and (span[0] >= 0 if s.step > 0 else span[1] <= 0):
                return []
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

    def branch(self, cond: ir.Expr, when: bool) -> Condition:
        """(setup, make_branch(label, target, pos, role), teardown): jump iff cond == when."""
        mnemonic, regs, setup, teardown = self.test(cond)
        if not when:
            mnemonic = _NEGATE_BRANCH[mnemonic]

        def make(label: str, target: str, pos: SourcePos, role: str) -> Instr:
            return self.i(mnemonic, *regs, target, pos=pos, role=role, label=label)
        return setup, make, teardown

    def test(self, cond: ir.Expr) -> tuple[str, tuple[int, ...], list[Instr], list[Instr]]:
        """A branch mnemonic and registers that test ``cond`` (true -> taken)."""
        if isinstance(cond, ir.Compare):
            left, right, op = cond.left, cond.right, cond.op
            if is_zero(left) and not is_zero(right):
                left, right, op = right, left, _MIRROR[op]
            ctx = self._compare_type(left, right)
            if op in ("==", "!="):
                a, sa, ta = self.operand(left, ctx)
                b, sb, tb = self.operand(right, ctx)
                return ("BEQ" if op == "==" else "BNE"), (a, b), sa + sb, tb + ta
            if is_zero(right):
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
            if _element_read_twice(cond):
                # condition_bit keeps each part's operands in registers until the branch:
                # a second read of an element already moved into a register would read 0
                raise CompileError(cond.pos, "an element read by two parts")
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
        # (kinds compared: a dataclass ``==`` costs a call)
        both_int = self.type_of(a).kind == ir.INT.kind == self.type_of(b).kind
        return ir.INT if both_int else ir.FIXED


def _down_to_zero(s: ir.For) -> bool:
    """Whether a loop counts down from a constant start >= 0 to 0 (``range(4, -1, -1)``,
    the inverse of ``range(5)``): its bottom test ``i != -1`` is ``i >= 0``."""
    return s.step == -1 and isinstance(s.stop, ir.Const) and s.stop.value == -1 and \
        isinstance(s.start, ir.Const) and s.start.value.denominator == 1 and s.start.value >= 0


def _element_read_twice(cond: ir.Expr) -> bool:
    """Whether two parts of a condition read elements of the same array."""
    names = [e.name for e in index_nodes(cond)]
    return len(names) != len(set(names))


@dataclass
class _Counter(ir.Update):
    """A loop counter update (role: control), lowered like any update."""
