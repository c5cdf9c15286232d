"""Run-time guards of array accesses: index bounds and two places naming one element.

An array element is brought into a register by ``EXCH`` (docs/abi.md), which leaves
zero in memory until the teardown puts it back.  So an index outside the array reads
or writes another variable's word, and two places of one statement that name the same
element at run time (``a[i] += a[j]`` with i == j, ``SWAP(a[i], a[j])``) see a zero
instead of the value: wrong answers that still run backward.  The compiler proves what
it can (constant indices are checked by the front end; an index built from ``for``
variables and constants has a known interval; two indices whose difference is a
non-zero constant never meet) and guards the rest: before the statement, each
unproven index is computed into a scratch register and a branch to a trap pad faults
when it is outside the array (``bounds``), or when two places' flat indices are equal
(``alias``).  The fault's message names the array, the Python line and, through the
``{$r}`` markers that ``revasm.machine.fault_place.with_values`` replaces with the register's
value, the index values.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from itertools import combinations

from ..errors import CompileError
from ..ir import nodes as ir
from ..ir.printer import expr_text
from .code import Instr, inverse_code, with_role
from .lowering_state import FunctionLoweringState, Interval

#: The kinds of run-time check; ``checks=`` / ``--no-checks`` select among them.
CHECK_KINDS = ("bounds", "alias", "ancilla", "branch", "range")



def check_kinds(checks: bool | str | Iterable[str] | None) -> frozenset[str]:
    """``True`` (every kind), ``False`` (none) or the kinds to keep, as a set."""
    if checks is True:
        return frozenset(CHECK_KINDS)
    if checks is False or checks is None:
        return frozenset()
    kinds = frozenset([checks] if isinstance(checks, str) else checks)
    unknown = sorted(kinds - set(CHECK_KINDS))
    if unknown:
        raise ValueError(f"unknown check kind {unknown[0]!r}; the kinds are "
                         + ", ".join(CHECK_KINDS))
    return kinds


def value_leaves(e: ir.Expr | None) -> list[ir.Index]:
    """The array elements an expression reads as values (not those inside an index)."""
    out: list[ir.Index] = []
    if e is not None:
        _value_leaves(e, out)
    return out


def index_nodes(e: ir.Expr | None) -> list[ir.Index]:
    """Every array element in ``e``, those inside indices first."""
    out: list[ir.Index] = []
    if e is not None:
        _index_nodes(e, out)
    return out


# The walks append to one list instead of chaining generators (``yield from`` at every
# level): each statement's expressions are walked by its guards, guard_reuse and hoisting,
# and the generators were a tenth of a long program's lowering.
def _value_leaves(e: ir.Expr, out: list[ir.Index]) -> None:
    t = type(e)
    if t is ir.Var or t is ir.Const:
        return
    if isinstance(e, ir.Index):
        out.append(e)
        return
    for child in _children(e):
        _value_leaves(child, out)


def _index_nodes(e: ir.Expr, out: list[ir.Index]) -> None:
    t = type(e)
    if t is ir.Var or t is ir.Const:
        return
    if isinstance(e, ir.Index):
        for index in e.indices:
            _index_nodes(index, out)
        out.append(e)
        return
    for child in _children(e):
        _index_nodes(child, out)


def _children(e: ir.Expr) -> Sequence[ir.Expr]:
    if isinstance(e, (ir.BinOp, ir.Compare)):
        return (e.left, e.right)
    if isinstance(e, ir.Unary):
        return (e.operand,)
    if isinstance(e, ir.BoolOp):
        return e.values
    if isinstance(e, ir.FuncCall):
        return e.args
    return ()


def simultaneous_reads(e: ir.Expr | None) -> list[tuple[ir.Index, ir.Index]]:
    """Pairs of elements held in registers at the same time while ``e`` is computed: the
    operands of one instruction or condition; a sum's terms are computed one by one."""
    if e is None or isinstance(e, ir.Index):
        return []
    children = _children(e)
    out: list[tuple[ir.Index, ir.Index]] = []
    for child in children:
        out += simultaneous_reads(child)
    if not (isinstance(e, ir.BinOp) and e.op in "+-"):
        for a, b in combinations(children, 2):
            out += [(x, y) for x in value_leaves(a) for y in value_leaves(b)]
    return out


def guarded_exprs(s: ir.Stmt) -> list[ir.Expr | None]:
    """The expressions whose elements ``statement_guards`` checks before ``s``."""
    if isinstance(s, ir.Update):
        return [s.target, s.expr]
    if isinstance(s, (ir.Swap, ir.Rot)):
        return [s.a, s.b, s.theta] if isinstance(s, ir.Rot) else [s.a, s.b]
    if isinstance(s, ir.Call):
        return list(s.args)
    if isinstance(s, (ir.Alloc, ir.Free)):
        return [s.value]
    if isinstance(s, ir.If):
        return [s.pre]
    if isinstance(s, ir.While):
        return [s.pre, s.post]
    if isinstance(s, ir.For):
        return [s.start, s.stop]
    return []


class GuardLowering(FunctionLoweringState):
    """Bounds and alias guards before a statement, and the intervals that prove them away."""

    #: statement id -> (the statement, its elements): see ``statement_elements``
    statement_element_lists: dict[int, tuple[ir.Stmt, tuple[ir.Index, ...]]]

    # --- what is known about an index -------------------------------------------------

    def interval(self, e: ir.Expr) -> Interval:
        """The values ``e`` (an Int expression) can take, when the compiler knows them."""
        if isinstance(e, ir.Const):
            return (int(e.value), int(e.value)) if e.value.denominator == 1 else None
        if isinstance(e, ir.Var):
            return self.ranges.get(e.name)
        if isinstance(e, ir.Unary) and e.op == "-":
            inner = self.interval(e.operand)
            return (-inner[1], -inner[0]) if inner else None
        if isinstance(e, ir.BinOp) and e.op in "+-*":
            a, b = self.interval(e.left), self.interval(e.right)
            if a is None or b is None:
                return None
            if e.op == "+":
                return a[0] + b[0], a[1] + b[1]
            if e.op == "-":
                return a[0] - b[1], a[1] - b[0]
            products = [x * y for x in a for y in b]
            return min(products), max(products)
        return None

    def loop_range(self, s: ir.For) -> Interval:
        """The values a for loop's variable takes inside its body."""
        constant = isinstance(s.start, ir.Const) and isinstance(s.stop, ir.Const)
        if not constant and not self.p.check("range"):
            return None  # without the wrong-way guard a variable range may wrap around
        start, stop = self.interval(s.start), self.interval(s.stop)
        if start is None or stop is None:
            return None
        if s.step > 0:
            return start[0], stop[1] - 1
        return stop[0] + 1, start[1]

    def _linear(self, e: ir.Expr) -> dict[str, Fraction] | None:
        """``e`` as constant + sum of coefficient * variable (key ``""``: the constant)."""
        if isinstance(e, ir.Const):
            return {"": e.value}
        if isinstance(e, ir.Var):
            return {e.name: Fraction(1)}
        if isinstance(e, ir.Unary) and e.op == "-":
            inner = self._linear(e.operand)
            return {k: -v for k, v in inner.items()} if inner is not None else None
        if isinstance(e, ir.BinOp) and e.op in "+-":
            a, b = self._linear(e.left), self._linear(e.right)
            if a is None or b is None:
                return None
            sign = 1 if e.op == "+" else -1
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, Fraction(0)) + sign * v
            return out
        if isinstance(e, ir.BinOp) and e.op == "*":
            a, b = self._linear(e.left), self._linear(e.right)
            if a is None or b is None:
                return None
            for x, y in ((a, b), (b, a)):
                if set(x) <= {""}:
                    return {k: v * x.get("", Fraction(0)) for k, v in y.items()}
        return None

    def _differ(self, x: ir.Expr, y: ir.Expr) -> bool | None:
        """True: the two indices always differ; False: always equal; None: unknown."""
        a, b = self._linear(x), self._linear(y)
        if a is not None and b is not None:
            diff = {k: a.get(k, Fraction(0)) - b.get(k, Fraction(0)) for k in set(a) | set(b)}
            if all(v == 0 for k, v in diff.items() if k):
                return diff.get("", Fraction(0)) != 0
        ix, iy = self.interval(x), self.interval(y)
        if ix is not None and iy is not None and (ix[1] < iy[0] or iy[1] < ix[0]):
            return True
        return None

    def _attained(self, e: ir.Expr) -> bool:
        """Whether every value of ``e``'s interval occurs: linear in constant-range loop
        variables (the loops run every combination of their values)."""
        linear = self._linear(e)
        return linear is not None and all(k in self.exact_ranges for k in linear if k)

    def _shape(self, name: str) -> tuple[int, ...]:
        if name in self.p.module.tables:
            return self.p.module.tables[name].type.shape
        return self.lay.arrays[name].type.shape

    # --- the guards -------------------------------------------------------------------

    def access_guards(self, exprs: list[ir.Expr],
                      pairs: Sequence[tuple[ir.Expr, ir.Expr]],
                      elements: Sequence[ir.Index] | None = None) -> list[Instr]:
        """Bounds guards for every element in ``exprs`` (``elements``, when they are known
        already); alias guards for ``pairs``."""
        code: list[Instr] = []
        if self.p.check("bounds"):
            seen: set[ir.Index] = set()
            if elements is None:
                elements = [node for e in exprs for node in index_nodes(e)]
            for node in elements:
                for index in node.indices:
                    if not isinstance(index, ir.Const):
                        break
                else:  # constant indices were checked by the front end: no guard (nor
                    continue  # the hash of the node, a tenth of a statement's guards)
                if node not in seen:
                    seen.add(node)
                    code += self.bounds_guard(node)
        if self.p.check("alias"):
            done: set[tuple[ir.Index, ir.Index]] = set()
            for x, y in pairs:
                if not (isinstance(x, ir.Index) and isinstance(y, ir.Index)) or \
                        x.name != y.name or x == y or (x, y) in done:
                    continue
                done.add((x, y))
                code += self.alias_guard(x, y)
        return code

    def bounds_guard(self, e: ir.Index) -> list[Instr]:
        code: list[Instr] = []
        shape = self._shape(e.name)
        for dim, (index, extent) in enumerate(zip(e.indices, shape)):
            if isinstance(index, ir.Const):
                continue  # the front end checked it
            known = self.interval(index)
            low_ok = known is not None and known[0] >= 0
            high_ok = known is not None and known[1] <= extent - 1
            if low_ok and high_ok:
                continue
            if known is not None and not self.conditional and self._attained(index):
                raise CompileError(index.pos, f"index {expr_text(index)} of {expr_text(e)} "
                                              f"takes the values {known[0]}..{known[1]}; "
                                              f"{e.name} has indices 0..{extent - 1}",
                                   "check the loop's range")
            if self.is_hoisted(e, dim):
                continue  # checked once at its loop's entry (hoisting.py)
            if self.guard_is_repeated(e, dim):
                continue  # checked before and after, the index unchanged (guard_reuse.py)
            code += self.value_guard(index, e, dim, extent, low=not low_ok, high=not high_ok)
        return code

    def value_guard(self, value: ir.Expr, e: ir.Index, dim: int, extent: int, *,
                    low: bool, high: bool) -> list[Instr]:
        """Fault (a trap pad's message naming ``e``'s index ``dim``) when ``value`` is below
        zero (``low``) or at or above ``extent`` (``high``)."""
        shape = self._shape(e.name)
        index = e.indices[dim]
        mark = self.scratch_top
        t = self.fresh(e.pos)
        setup = with_role(self.accumulate(t, 1, value, ir.INT), "check")
        which = f"index {dim + 1} " if len(shape) > 1 else "index "
        where = (f"{which}{expr_text(index)} of {expr_text(e)} at line {e.pos.line} is "
                 "{value}, outside 0.." + f"{extent - 1} (array {e.name}, "
                 f"{'x'.join(map(str, shape))})")
        body: list[Instr] = []
        if low:
            guard = self.label("guard")
            note = where.replace("{value}", f"{{${t}}}")
            body.append(self.i("BLTZ", t, self.p.trap(guard, e.pos, note, "bounds"),
                               pos=e.pos, role="check", label=guard,
                               note=f"bounds of {e.name}"))
        if high:
            guard = self.label("guard")
            note = where.replace("{value}", f"{{${t}+{extent}}}")
            step = self.i("ADDI", t, str(-extent), pos=e.pos, role="check")
            body += [step,
                     self.i("BGEZ", t, self.p.trap(guard, e.pos, note, "bounds"),
                            pos=e.pos, role="check", label=guard,
                            note=f"bounds of {e.name}"),
                     self.i("ADDI", t, str(extent), pos=e.pos, role="check")]
        self.scratch_top = mark
        return setup + body + inverse_code(setup)

    def alias_guard(self, x: ir.Index, y: ir.Index) -> list[Instr]:
        verdicts = [self._differ(a, b) for a, b in zip(x.indices, y.indices)]
        if any(v is True for v in verdicts):
            return []
        if all(v is False for v in verdicts):
            raise CompileError(y.pos, f"{expr_text(x)} and {expr_text(y)} are the same "
                                      f"element of {x.name}: this statement would see a zero "
                                      "in place of its value",
                               "copy one of them into an ancilla first")
        shape = self._shape(x.name)
        mark = self.scratch_top
        tx, ty = self.fresh(x.pos), self.fresh(y.pos)
        setup = with_role(self.accumulate(tx, 1, self._flat(x, shape), ir.INT)
                          + self.accumulate(ty, 1, self._flat(y, shape), ir.INT), "check")
        guard = self.label("guard")
        at = f"{{${tx}@{','.join(map(str, shape))}}}"
        note = (f"{expr_text(x)} and {expr_text(y)} at line {y.pos.line} are the same element "
                f"{x.name}[{at}]: one statement cannot read or write an element twice (it "
                "would see a zero)")
        check = self.i("BEQ", tx, ty, self.p.trap(guard, y.pos, note, "alias"), pos=y.pos,
                       role="check", label=guard, note=f"{x.name}: distinct elements")
        self.scratch_top = mark
        return setup + [check] + inverse_code(setup)

    def _flat(self, e: ir.Index, shape: tuple[int, ...]) -> ir.Expr:
        pos = e.pos
        flat: ir.Expr | None = None
        stride = 1
        for index, extent in zip(reversed(e.indices), reversed(shape)):
            term = index if stride == 1 else ir.BinOp(
                pos, op="*", left=index, right=ir.Const(pos, value=Fraction(stride), is_int=True))
            flat = term if flat is None else ir.BinOp(pos, op="+", left=term, right=flat)
            stride *= extent
        assert flat is not None
        return flat

    def statement_elements(self, s: ir.Stmt) -> Sequence[ir.Index]:
        """``index_nodes`` of ``guarded_exprs(s)``, in order, worked out once per statement:
        guard_reuse.py asks before the statement is lowered, ``statement_guards`` when it
        is (most statements of a long program name no element, and the two walks of each
        were a third of its lowering).  The entry keeps ``s`` alive, so that its id names
        no other statement."""
        entry = self.statement_element_lists.get(id(s))
        if entry is not None and entry[0] is s:
            return entry[1]
        nodes: list[ir.Index] = []
        for e in guarded_exprs(s):
            if e is not None:
                _index_nodes(e, nodes)
        found = tuple(nodes)
        self.statement_element_lists[id(s)] = (s, found)
        return found

    def statement_guards(self, s: ir.Stmt) -> list[Instr]:
        """The guards that run before statement ``s`` (its own expressions, not its body)."""
        if not (self.p.check("bounds") or self.p.check("alias")):
            return []
        elements = self.statement_elements(s)
        if not elements:
            return []  # every guard is of an element (an alias guard's pair too)
        if isinstance(s, ir.Update):
            pairs: list[tuple[ir.Expr, ir.Expr]] = [(s.target, leaf)
                                                    for leaf in value_leaves(s.expr)]
            return self.access_guards([s.target, s.expr], [*pairs, *self.read_pairs(s.expr)],
                                      elements)
        if isinstance(s, ir.Swap):
            return self.access_guards([s.a, s.b], [(s.a, s.b)], elements)
        if isinstance(s, ir.Rot):
            pairs = [(s.a, s.b)] + [(p, leaf) for p in (s.a, s.b)
                                    for leaf in value_leaves(s.theta)]
            return self.access_guards([s.a, s.b, s.theta], pairs, elements)
        if isinstance(s, ir.Call):
            return self.access_guards(list(s.args), list(combinations(s.args, 2)), elements)
        if isinstance(s, (ir.Alloc, ir.Free)):
            return self.access_guards([s.value], self.read_pairs(s.value), elements)
        if isinstance(s, ir.If):
            return self.condition_guards([s.pre], elements)
        if isinstance(s, ir.While):
            return self.condition_guards([s.pre, s.post], elements)
        if isinstance(s, ir.For):
            return self.access_guards([s.start, s.stop], [], elements)
        return []

    def condition_guards(self, conditions: list[ir.Expr],
                         elements: Sequence[ir.Index] | None = None) -> list[Instr]:
        if not (self.p.check("bounds") or self.p.check("alias")):
            return []
        pairs = [p for c in conditions for p in self.read_pairs(c)]
        return self.access_guards(list(conditions), pairs, elements)

    def read_pairs(self, e: ir.Expr | None) -> list[tuple[ir.Index, ir.Index]]:
        """Elements read at the same time, which may alias: none when reads are copies."""
        return [] if self.p.module.read_copies else simultaneous_reads(e)
