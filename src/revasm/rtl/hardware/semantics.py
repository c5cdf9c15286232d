"""The table's semantics templates, translated into Amaranth expressions.

Every instruction's ``forward`` and ``backward`` statement (``isa/table.py``,
written in the vocabulary of ``isa/vocabulary.py``) is parsed with Python's
``ast`` and evaluated *symbolically*: register reads become the register-file
read ports, ``{imm}`` the decoded immediate, ``BR``/``DIR`` the control state,
and every arithmetic operator the matching Amaranth operator.  Amaranth
arithmetic widens exactly (it never wraps before an assignment), so an
expression means the same integer as the Python template, and the final
assignment to a W-bit register is the template's ``& M``.  Calls of the
multi-cycle units (``fmul``, ``fdiv``, ``fn_*``, ``rot``, ``irot``) are not
computed here: the evaluation records each call and its operands, in order,
and reads that call's result port.  With a shared shifter or adder in
:class:`Inputs`, the first shift/rotate and the first word sum or difference
of a template become requests for them too (:mod:`revasm.rtl.hardware.alu` then needs
one of each).  Gradient statements are compiled by ``isa/timing/microcode.py``.
The overflow counter's update (``OV[0] = (OV[0] +- overflow(event)) & M``) becomes
``Effects.ov_event`` (the event, one bit) and ``Effects.ov_down`` (backward's ``-``):
it is evaluated after the template's other statements, over the state it saw, so the
register write keeps the shared adder.  ``ovf_add``/``ovf_sub``/``ovf_sat`` are
combinational; ``ovf_mul``/``ovf_div``/``ovf_rot``/``ovf_irot`` read the overflow bit
of the unit call they name (the call of ``fmul``/``fdiv``/``rot``/``irot`` with the same
operands, or -- backward ROT/IROT -- the call of the inverse rotation whose results they
test: ``ovf_rot(irot(x, y, c), c) == ovf_irot(x, y, c)``, ``isa/rotation.py``).
Every value the evaluation builds is made through :class:`Nodes`, which records its
operation and operands: the ALU takes the expressions apart there to share logic
(Amaranth's public API has no way to take a value apart).
Nothing in this module knows a mnemonic.
"""
from __future__ import annotations

import ast
import gc
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

from amaranth.hdl import Cat, Const, Mux, Value, signed, unsigned

from revasm.isa.primitives import PAIRS, PRIMITIVES, UNIT_PREDICATES, operations

#: Constant folding of integer operands (the template's own Python operators).
_FOLD = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
         ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
         ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
         ast.BitXor: operator.xor, ast.BitAnd: operator.and_}


def _parse(source: str) -> ast.Module:
    """``ast.parse`` with the garbage collector held off: Amaranth reports unused
    elaboratables from ``__del__``, and CPython 3.11.7's AST constructor fails
    ("recursion depth mismatch") when such a callback re-enters it mid-parse."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if enabled:
            gc.enable()

#: Operations of the multiply/divide unit, by vocabulary name (position = op code): the
#: primitives table's ``muldiv`` rows, in its order (``isa/primitives.py``).
MULDIV_OPS: tuple[str, ...] = operations("muldiv")
#: Operations of the function unit, by vocabulary name (position = op code): the
#: table's ``function`` rows.
FUNCTION_OPS: tuple[str, ...] = operations("function")
#: Which unit serves a call: 1 = multiply/divide, 2 = function unit.
UNIT_OF: dict[str, int] = {**{n: 1 for n in MULDIV_OPS}, **{n: 2 for n in FUNCTION_OPS}}

#: The shifts and rotates a shared funnel shifter serves.
SHIFTS = ("shl", "srl", "sra", "rotl", "rotr")

#: Placeholders of the templates and the names they become in the parsed source.
PLACEHOLDERS = {"a": "A", "b": "B", "c": "C", "imm": "IMM", "amt": "AMT", "k": "K", "off": "OFF"}


@dataclass(frozen=True)
class Node:
    """How one value was built: an operation of :data:`BUILDERS`, its operands (values, as
    Amaranth takes them: ints cast to ``Const``) and, for a ``"slice"``, its bounds (start
    and stop, within the sliced value's bits)."""

    op: str
    operands: tuple[Value, ...]
    bounds: tuple[int, int] | None = None


def _slice(value: Value, start: int, stop: int) -> Value:
    return value[start:stop]


#: How each operation of a :class:`Node` builds its value (Amaranth's public operators):
#: ``"neg"`` is unary minus, ``"bool"``/``"signed"``/``"unsigned"`` the methods of that name,
#: ``"slice"`` the bits start..stop-1 (``Nodes.make("slice", value, start, stop)``), ``"cat"``
#: is ``Cat``, ``"mux"`` is ``Mux(test, taken, other)``.
BUILDERS: dict[str, Callable[..., Value]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "neg": operator.neg, "~": operator.invert,
    "bool": Value.bool, "signed": Value.as_signed, "unsigned": Value.as_unsigned,
    "slice": _slice, "cat": Cat, "mux": Mux,
}


class Nodes:
    """The values built for templates, each with the :class:`Node` it was built from.

    A value is found by identity (Amaranth values are not hashable); the table keeps
    every value it made alive, so an identity is never reused while it is asked.  A
    value it did not make (a signal, a constant, a value built elsewhere) has no node.
    """

    def __init__(self) -> None:
        self._built: dict[int, tuple[Value, Node]] = {}

    def make(self, op: str, *operands: Value | int) -> Value:
        """The value ``op`` builds from ``operands``, recorded with its node."""
        value = BUILDERS[op](*operands)
        if op == "slice":
            base, start, stop = operands
            begin, end, _ = slice(start, stop).indices(len(Value.cast(base)))
            node = Node(op, (Value.cast(base),), (begin, end))
        else:
            node = Node(op, tuple(Value.cast(o) for o in operands))
        self._built[id(value)] = (value, node)
        return value

    def remake(self, value: Value, operands: tuple[Value, ...]) -> Value:
        """A value built as ``value`` was, from other operands (``value`` must have a node)."""
        node = self.node(value)
        if node is None:
            raise ValueError(f"{value!r} was not built by this table")
        return self.make(node.op, *operands, *(node.bounds or ()))

    def node(self, value: object) -> Node | None:
        """How ``value`` was built, or None when this table did not make it."""
        entry = self._built.get(id(value))
        return entry[1] if entry is not None and entry[0] is value else None

    def full_slice_of(self, value: Value) -> Value | None:
        """The value whose bits ``value`` is all of (``value[:len(value)]``), else None."""
        node = self.node(value)
        if node is None or node.op != "slice":
            return None
        base, = node.operands
        return base if len(base) == len(value) else None


@dataclass
class Inputs:
    """The values a template reads (Amaranth values of the datapath)."""

    width: int
    regs: dict[str, Value]  # "A", "B", "C" -> W-bit register values
    fields: dict[str, Value]  # "IMM" (W-bit word), "AMT", "K", "OFF" (signed)
    br: Value
    direction: Value  # signed, +1 or -1
    mem_rdata: Value
    tape_top: Value
    unit_results: tuple[tuple[Value, Value], ...]  # per unit call, in template order
    #: the result of a shared funnel shifter: when given, the template's shift or rotate
    #: (``shl``, ``srl``, ``sra``, ``rotl``, ``rotr``) is a request for it (``Effects.shift``)
    #: instead of a barrel shifter of its own
    shifter: Value | None = None
    #: the result of a shared adder (signed, W + 2 bits): when given, the template's first
    #: sum or difference of two words of at most W bits is a request for it (``Effects.add``)
    adder: Value | None = None
    #: per unit call, in template order: the unit's overflow bit for that call (its result
    #: does not fit); without them the ``ovf_mul``-like predicates read 0
    unit_overflows: tuple[Value, ...] | None = None
    #: where the evaluations record how they built each value (shared by every template
    #: evaluated over these inputs)
    nodes: Nodes = field(default_factory=Nodes)


@dataclass
class Effects:
    """What one template does, as Amaranth values over :class:`Inputs`."""

    writes: dict[str, Value] = field(default_factory=dict)  # "A"/"B" -> new value
    mem_addr: Value | None = None
    mem_write: Value | None = None
    br: Value | None = None
    direction: Value | None = None
    show: Value | None = None
    emit: Value | None = None
    unemit: bool = False
    calls: list[tuple[str, tuple[Value, ...]]] = field(default_factory=list)
    #: a request for the shared shifter: (high word, low word, amount); its result is the
    #: low W bits of ``Cat(low, high) >> amount``
    shift: tuple[Value, Value, Value] | None = None
    #: a request for the shared adder: (x, y, subtract); its result is x + y or x - y, exactly
    add: tuple[Value, Value, bool] | None = None
    #: the overflow event the template counts (one bit), or None when it counts none
    ov_event: Value | None = None
    #: the count goes down (``OV[0] - overflow(...)``: a backward template)
    ov_down: bool = False


#: The template's comparison and binary operators, as operations of :data:`BUILDERS`.
_COMPARISONS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
                ast.GtE: ">="}
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|",
              ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}

#: Unit calls whose results another call's predicate may test (they undo each other:
#: the rotations), from the primitives table's ``inverse`` column.
_INVERSE_CALL = {p.name: p.inverse for p in PRIMITIVES if p.inverse}


class TemplateError(ValueError):
    """A template uses a construct this translator does not know."""


_MEM_TOKEN = "<memory address>"


class _Evaluator:
    def __init__(self, inputs: Inputs) -> None:
        self.inp = inputs
        self.nodes = inputs.nodes
        self.width = inputs.width
        self.amount_bits = (inputs.width - 1).bit_length()
        self.effects = Effects()
        # current values of the state a template can assign
        self.state: dict[str, Value] = {"BR": inputs.br, "DIR": inputs.direction,
                                        **{f"R{k}": v for k, v in inputs.regs.items()}}
        self.locals: dict[str, object] = {}
        self.mem_value: Value | None = None
        self._assigned: set[str] = set()
        self._mem_assigned = False
        self._overflow: tuple[ast.expr, dict, dict] | None = None
        #: per unit call: (name, operand words, results)
        self._calls: list[tuple[str, tuple[Value, ...], tuple[Value, ...]]] = []

    # --- statements -------------------------------------------------------
    def run(self, source: str) -> Effects:
        tree = _parse(source)
        for stmt in tree.body:
            self.statement(stmt)
        eff = self.effects
        eff.br = self.state["BR"]
        eff.direction = self.state["DIR"]
        for key in self.inp.regs:
            if f"R{key}" in self._assigned:
                eff.writes[key] = self.state[f"R{key}"]
        if self._mem_assigned:
            eff.mem_write = self.mem_value
        if self._overflow is not None:
            self.count_overflow(*self._overflow)
        return eff

    def count_overflow(self, value: ast.expr, state: dict, locals_: dict) -> None:
        """``(OV[0] +- overflow(event)) & M``, over the state the statement saw."""
        inner = value.left if isinstance(value, ast.BinOp) else None
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitAnd)
                and isinstance(value.right, ast.Name) and value.right.id == "M"
                and isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Add, ast.Sub))
                and _counts_overflow(inner.left) and isinstance(inner.right, ast.Call)
                and isinstance(inner.right.func, ast.Name)
                and inner.right.func.id == "overflow" and len(inner.right.args) == 1):
            raise TemplateError(f"overflow count {ast.dump(value)}")
        saved = self.state, self.locals
        self.state, self.locals = state, locals_
        try:
            self.effects.ov_event = self.truth(self.expr(inner.right.args[0]))
        finally:
            self.state, self.locals = saved
        self.effects.ov_down = isinstance(inner.op, ast.Sub)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr):
            self.expr(stmt.value)
            return
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise TemplateError("chained assignment")
            target = stmt.targets[0]
            if _counts_overflow(target):
                if self._overflow is not None:
                    raise TemplateError("two overflow counts")
                # counted after the other statements (see count_overflow)
                self._overflow = (stmt.value, dict(self.state), dict(self.locals))
                return
            if isinstance(target, ast.Tuple):
                value = self.expr(stmt.value)
                if not isinstance(value, tuple) or len(value) != len(target.elts):
                    raise TemplateError("tuple assignment of mismatched length")
                for t, v in zip(target.elts, value):
                    self.assign(t, v)
            else:
                self.assign(target, self.expr(stmt.value))
            return
        if isinstance(stmt, ast.AugAssign):
            current = self.expr(stmt.target)
            self.assign(stmt.target, self.binop(stmt.op, current, self.expr(stmt.value)))
            return
        if isinstance(stmt, ast.If):
            test = self.truth(self.expr(stmt.test))
            saved = dict(self.state)
            for s in stmt.body:
                self.statement(s)
            taken = self.state
            self.state = dict(saved)
            for s in stmt.orelse:
                self.statement(s)
            self.state = {k: (v if taken[k] is v else self.op("mux", test, taken[k], v))
                          for k, v in self.state.items()}
            return
        raise TemplateError(f"statement {ast.dump(stmt)}")

    def assign(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            if target.id in ("BR", "DIR"):
                self.state[target.id] = self.value(value)
            else:
                self.locals[target.id] = value
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            bank = target.value.id
            if bank == "R":
                key = self.register_key(target.slice)
                self.state[f"R{key}"] = self.value(value)
                self._assigned.add(f"R{key}")
                return
            if bank == "MEM":
                self.memory_index(target.slice)
                self.mem_value = self.value(value)
                self._mem_assigned = True
                return
        raise TemplateError(f"assignment to {ast.dump(target)}")

    def register_key(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name) and node.id in self.inp.regs:
            return node.id
        raise TemplateError(f"register index {ast.dump(node)}")

    def memory_index(self, node: ast.expr) -> None:
        if not (isinstance(node, ast.Name) and self.locals.get(node.id) == _MEM_TOKEN):
            raise TemplateError("MEM indexed by something other than addr(...)")

    # --- expressions --------------------------------------------------------
    def value(self, v: object) -> Value:
        if isinstance(v, bool):
            return Const(int(v), 1)
        if isinstance(v, int):
            return Const(v)
        if isinstance(v, Value):
            return v
        raise TemplateError(f"not a value: {v!r}")

    def truth(self, v: object) -> Value:
        return self.op("bool", self.value(v))

    def op(self, name: str, *operands: Value | int) -> Value:
        """The value of operation ``name`` (:data:`BUILDERS`), recorded in the nodes."""
        return self.nodes.make(name, *operands)

    def bit(self, v: Value, index: int) -> Value:
        return self.op("slice", v, index, index + 1)

    def expr(self, node: ast.expr) -> object:
        """The node's value: an int (folded), an Amaranth value, a tuple of them, or the
        memory token of ``addr(...)``."""
        w = self.width
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int)):
                return int(node.value)
            raise TemplateError(f"constant {node.value!r}")
        if isinstance(node, ast.Name):
            name = node.id
            if name in ("BR", "DIR"):
                return self.state[name]
            if name in self.inp.fields:
                return self.inp.fields[name]
            if name == "M":
                return Const((1 << w) - 1, unsigned(w))
            if name == "W":
                return w
            if name == "F":
                return w // 2
            if name == "one":
                return Const(1 << (w // 2), unsigned(w))
            if name in self.locals:
                return self.locals[name]
            raise TemplateError(f"unknown name {name}")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            bank = node.value.id
            if bank == "R":
                return self.state[f"R{self.register_key(node.slice)}"]
            if bank == "MEM":
                self.memory_index(node.slice)
                return self.mem_value
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e) for e in node.elts)
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd)
                and isinstance(node.right, ast.Name) and node.right.id == "M"
                and isinstance(node.left, ast.BinOp)
                and isinstance(node.left.op, (ast.Add, ast.Sub))):
            # (x +- y) & M only needs x and y mod 2**W: a wider or signed operand (ADDIS's
            # imm << 16k) is cut to its low W bits, so the sum can take the shared adder
            def low_word(v):
                if isinstance(v, int) or (not v.shape().signed and len(v) <= w):
                    return v
                return self.word(v)
            inner = self.binop(node.left.op, low_word(self.expr(node.left.left)),
                               low_word(self.expr(node.left.right)))
            return self.binop(node.op, inner, self.expr(node.right))
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(node.op, ast.USub):
                if isinstance(operand, int):
                    return -operand
                if self.shareable(operand):
                    return self.add_request(Const(0, 1), operand, True)
                return self.op("neg", self.value(operand))
            if isinstance(node.op, ast.Invert):  # Python's ~x == -x - 1: complement, signed
                if isinstance(operand, int):
                    return ~operand
                v = self.value(operand)
                if v.shape().signed:
                    return self.op("~", v)
                return self.op("~", self.op("signed", self.op("cat", v, Const(0, 1))))
            if isinstance(node.op, ast.Not):
                return self.op("~", self.truth(operand))
            raise TemplateError(f"unary {ast.dump(node.op)}")
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise TemplateError("chained comparison")
            left = self.value(self.expr(node.left))
            right = self.value(self.expr(node.comparators[0]))
            op = node.ops[0]
            for kind, name in _COMPARISONS.items():
                if isinstance(op, kind):
                    return self.op(name, left, right)
            raise TemplateError(f"comparison {ast.dump(op)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.call(node.func.id, [self.expr(a) for a in node.args])
        raise TemplateError(f"expression {ast.dump(node)}")

    def shareable(self, v: object) -> bool:
        """A word the shared adder can take (unsigned, at most W bits), while it is free."""
        return (self.inp.adder is not None and self.effects.add is None and isinstance(v, Value)
                and not v.shape().signed and len(v) <= self.width)

    def wrapped_sum(self, x: Value, y: Value, subtract: bool) -> Value | None:
        """(x +- y) mod 2**W from the shared adder's request, when it made that sum or the
        one it undoes (x is (p -+ y) mod 2**W, so x +- y is p); else None."""
        adder = self.inp.adder
        if self.effects.add is None or adder is None:  # no request (none without an adder)
            return None
        ax, ay, asub = self.effects.add
        x, y, ax, ay = (self.whole(v) for v in (x, y, ax, ay))
        if _same((x, y), (ax, ay)) and asub == subtract:
            return self.word(adder)
        adder_word = self.whole(self.word(self.binop(ast.BitAnd(), adder,
                                                 Const((1 << self.width) - 1, self.width))))
        if _same((x, y), (adder_word, ay)) and asub != subtract:
            return self.word(ax)
        return None

    def add_request(self, x: Value, y: Value, subtract: bool) -> Value:
        self.effects.add = (x, y, subtract)
        return self.inp.adder

    def binop(self, op: ast.operator, left: object, right: object) -> object:
        if isinstance(left, int) and isinstance(right, int):
            return _FOLD[type(op)](left, right)
        lv, rv = self.value(left), self.value(right)
        if isinstance(op, (ast.Add, ast.Sub)) and self.shareable(left) and self.shareable(right):
            return self.add_request(lv, rv, isinstance(op, ast.Sub))
        for kind, name in _OPERATORS.items():
            if isinstance(op, kind):
                return self.op(name, lv, rv)
        raise TemplateError(f"operator {ast.dump(op)}")

    def word(self, v: object) -> Value:
        return self.op("slice", self.value(v), 0, self.width)

    def amount(self, v: object) -> Value:
        return self.op("slice", self.value(v), 0, self.amount_bits)

    def whole(self, v: Value) -> Value:
        """``v`` without slices that keep all of its bits (``word`` of a W-bit signal)."""
        while (base := self.nodes.full_slice_of(v)) is not None:
            v = base
        return v

    def unit_overflow(self, predicate: str, args: list[Value]) -> Value:
        """The overflow bit of the unit call ``predicate`` tests (see the module's doc)."""
        tested = UNIT_PREDICATES[predicate]
        for k, (name, words, results) in enumerate(self._calls):
            inverse_results = (name == _INVERSE_CALL.get(tested)
                               and _same(tuple(args[:2]), tuple(self.word(r) for r in results))
                               and _same(tuple(args[2:]), words[2:]))
            if (name == tested and _same(tuple(args), words)) or inverse_results:
                if self.inp.unit_overflows is None:
                    return Const(0, 1)
                return self.inp.unit_overflows[k]
        raise TemplateError(f"{predicate} tests no unit call of the template")

    def shift_request(self, name: str, x: Value, n: Value) -> Value:
        """A shift or rotate as one funnel shift: the low W bits of (high:low) >> s."""
        w = self.width
        zero = Const(0, w)
        up = self.rest(n)
        high, low, amount = {
            "srl": (zero, x, n),
            "sra": (self.op("mux", self.bit(x, w - 1), Const((1 << w) - 1, w), zero), x, n),
            "rotr": (x, x, n),
            "shl": (x, zero, up),  # x << n is (x:0) >> (W - n); n = 0 gives x
            "rotl": (x, x, up),
        }[name]
        self.effects.shift = (high, low, amount)
        return self.inp.shifter

    def rest(self, n: Value) -> Value:
        """W - n for a shift amount n, in the amount's width + 1 bits."""
        bits = self.amount_bits + 1
        return self.op("slice", self.op("unsigned", self.op("-", Const(self.width, unsigned(bits)),
                                                           n)), 0, bits)

    def call(self, name: str, args: list[object]) -> object:
        w = self.width
        if name == "S":
            return self.op("signed", self.word(args[0]))
        if name in SHIFTS and self.inp.shifter is not None and self.effects.shift is None:
            return self.shift_request(name, self.word(args[0]), self.amount(args[1]))
        if name == "shl":
            return self.word(self.op("<<", self.word(args[0]), self.amount(args[1])))
        if name == "srl":
            return self.op(">>", self.word(args[0]), self.amount(args[1]))
        if name == "sra":
            return self.word(self.op(">>", self.op("signed", self.word(args[0])),
                                     self.amount(args[1])))
        if name in ("rotl", "rotr"):
            x, n = self.word(args[0]), self.amount(args[1])
            rest = self.rest(n)
            if name == "rotr":
                left, right = self.op(">>", x, n), self.op("<<", x, rest)
            else:
                left, right = self.op("<<", x, n), self.op(">>", x, rest)
            return self.word(self.op("|", left, right))
        if name == "slt":
            return self.op("<", self.op("signed", self.word(args[0])),
                           self.op("signed", self.word(args[1])))
        if name in UNIT_OF:
            index = len(self.effects.calls)
            if index >= len(self.inp.unit_results):
                raise TemplateError(f"more than {len(self.inp.unit_results)} unit calls")
            words = tuple(self.word(a) for a in args)
            self.effects.calls.append((name, words))
            r0, r1 = self.inp.unit_results[index]
            result = (r0, r1) if name in PAIRS else r0
            self._calls.append((name, words, (r0, r1) if name in PAIRS else (r0,)))
            return result
        if name in ("ovf_add", "ovf_sub"):
            subtract = name == "ovf_sub"
            wrapped = self.wrapped_sum(self.word(args[0]), self.word(args[1]), subtract)
            if wrapped is not None:
                # the exact sum leaves the range when x and +-y have one sign and the
                # wrapped sum the other: sign bits only, no adder of its own
                xs, ys = self.bit(self.word(args[0]), w - 1), self.bit(self.word(args[1]), w - 1)
                ss = self.bit(wrapped, w - 1)
                same_sign = self.op("~", self.op("^", self.op("^", xs, ys), int(subtract)))
                return self.op("&", same_sign, self.op("^", ss, xs))
            x = self.op("signed", self.word(args[0]))
            y = self.op("signed", self.word(args[1]))
            exact = self.op("+" if name == "ovf_add" else "-", x, y)  # W + 1 bits, signed
            return self.op("^", self.bit(exact, w), self.bit(exact, w - 1))
        if name == "ovf_sat":
            x = self.word(args[0])
            return self.op("|", self.op("==", x, (1 << (w - 1)) - 1),
                           self.op("==", x, 1 << (w - 1)))
        if name in UNIT_PREDICATES:
            return self.unit_overflow(name, [self.word(a) for a in args])
        if name == "fneg":
            return self.word(self.op("neg", self.word(args[0])))
        if name == "fadd":
            return self.word(self.op("+", self.word(args[0]), self.word(args[1])))
        if name == "fsub":
            return self.word(self.op("-", self.word(args[0]), self.word(args[1])))
        if name == "fsign":
            x = self.word(args[0])
            one = 1 << (w // 2)
            sign = self.op("mux", self.bit(x, w - 1), Const((-one) & ((1 << w) - 1), w),
                           Const(one, w))
            return self.op("mux", self.op("==", x, 0), 0, sign)
        if name == "addr":
            if self.effects.mem_addr is None:
                self.effects.mem_addr = self.word(args[0])
                self.mem_value = self.inp.mem_rdata
            return _MEM_TOKEN
        if name == "show":
            self.effects.show = self.word(args[0])
            return 0
        if name == "emit":
            self.effects.emit = self.word(args[0])
            return 0
        if name == "unemit":
            self.effects.unemit = True
            return self.inp.tape_top
        raise TemplateError(f"call of {name}")


def _same(a: tuple[Value, ...], b: tuple[Value, ...]) -> bool:
    return len(a) == len(b) and all(repr(x) == repr(y) for x, y in zip(a, b))


def _counts_overflow(target: ast.expr) -> bool:
    """``OV[0] = ...``: the overflow counter's update (``isa/table.py``)."""
    return (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and target.value.id == "OV")


def template_source(template: str) -> str:
    """A template with its ``{placeholders}`` replaced by the names the evaluator binds."""
    return template.format(**PLACEHOLDERS)


def evaluate(template: str, inputs: Inputs) -> Effects:
    """The effects of one table template over the given datapath values."""
    return _Evaluator(inputs).run(template_source(template))


def direction_value(backward: Value) -> Value:
    """DIR as the templates see it: +1, or -1 when ``backward`` is set."""
    return Mux(backward, Const(-1, signed(2)), Const(1, signed(2)))
