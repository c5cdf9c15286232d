"""Gradient-mode steps as micro-programs of the core's gradient unit, compiled from the table.

A gradient-mode step (``isa/adjoint.mode_template``) is the entry's value
template plus its gradient statements: the adjoint before the backward
template, its inverse after the forward one.  The value part runs on the
value-mode datapath (``rtl/hardware/alu.py``) exactly as without the gradient switch;
the gradient statements are translated here into a short sequence of
micro-operations over one shared datapath (``rtl/hardware/gradient_unit.py``, which stores
these programs in its ROM at elaboration time):

* ``ADD``/``SUB`` ``dst = x ± y`` (``fadd``, ``fsub``, ``fneg``, ``+``, ``-``,
  unary ``-``, ``shl(x, 1)`` = ``x + x``; everything wraps mod 2^W, so the
  templates' ``& M`` is implicit), ``SIGN`` ``dst = fsign(x)``;
* ``CALL`` a multi-cycle unit (``fmul``, ``fdiv``, ``fn_*``, ``rot``,
  ``irot``) on ``x, y, z``; its results land in ``U0``/``U1``;
* ``ADDR`` ``maddr = x`` with the memory-address check of ``addr`` (EXCH).

Operands read a register through one of three ports (``R`` or ``G`` of the
entry's operand ``a``, ``b`` or ``c``), ``GM`` (the gradient of the word at
``maddr``), the constants ``one`` and ``zero``, ``U0``/``U1`` or a temporary;
destinations are a temporary, ``G`` of an operand, or ``GM``.  Statements run
in template order and every micro-operation reads the banks as the previous
ones left them, so the step means exactly what the Python template means
(including two operands naming one register).  Nothing here knows a mnemonic.

The programs live in the ISA layer, beside the core's schedule
(``isa/timing/schedule.py``), because their length is part of a gradient-mode step's
cycles, which every simulator counts; this module is plain Python (``ast``).
"""
from __future__ import annotations

import ast
import gc
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from revasm.isa.adjoint import mode_sequence
from revasm.isa.primitives import PAIRS
from revasm.isa.table import INSTRUCTIONS

from .units import UNIT_CALLS

#: Placeholders of the templates and the names they become in the parsed source.
PLACEHOLDERS = {"a": "A", "b": "B", "c": "C", "imm": "IMM", "amt": "AMT", "k": "K", "off": "OFF"}


class MicrocodeError(ValueError):
    """A gradient statement uses a construct the micro-operations do not have (the core
    then faults as ``unimplemented`` on that step)."""


def parse_template(source: str) -> ast.Module:
    """``ast.parse`` with the garbage collector held off: the RTL compiles these programs
    while elaborating, where Amaranth reports unused elaboratables from ``__del__``, and
    CPython 3.11.7's AST constructor fails ("recursion depth mismatch") when such a
    callback re-enters it mid-parse."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if enabled:
            gc.enable()


#: micro-operations
OPS = ("ADD", "SUB", "SIGN", "CALL", "ADDR")
#: operand sources (a temporary is ``T0``, ``T1``, ...)
SOURCES = ("ZERO", "ONE", "R", "G", "GM", "U0", "U1")
#: which register of the entry an ``R``/``G`` operand or destination names
REGS = ("A", "B", "C")
#: destinations (besides temporaries)
DESTS = ("NONE", "G", "GM")


@dataclass(frozen=True)
class Operand:
    source: str  # one of SOURCES or "T"
    reg: str = "A"  # for R/G: "A"/"B"/"C"; for T: the temporary's number as text

    @property
    def volatile(self) -> bool:
        return self.source in ("U0", "U1")

    def reads_bank(self) -> bool:
        return self.source in ("G", "GM")


ZERO = Operand("ZERO")
ONE = Operand("ONE")


@dataclass(frozen=True)
class MicroOp:
    op: str
    x: Operand = ZERO
    y: Operand = ZERO
    z: Operand = ZERO
    dst: Operand | None = None  # Operand("G", reg), Operand("GM"), Operand("T", n) or None
    unit: str | None = None  # the vocabulary name of a CALL
    arity: int = 0  # the operands a CALL passes (the unit ignores the others)

    def used(self, slot: str) -> bool:
        """Whether the operation reads its operand ``slot`` ("x", "y" or "z")."""
        return "xyz".index(slot) < len(self.reads())

    def reads(self) -> tuple[Operand, ...]:
        if self.op == "CALL":
            return (self.x, self.y, self.z)[:self.arity]
        if self.op in ("SIGN", "ADDR"):
            return (self.x,)
        return (self.x, self.y)


@dataclass(frozen=True)
class _Pending:
    """An ALU operation not emitted yet (its consumer picks the destination)."""

    op: str
    x: Operand
    y: Operand = ZERO


_ADDR = object()  # the value of ``_i = addr(...)``


def _has_unit_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in UNIT_CALLS
               for n in ast.walk(node))


@dataclass
class _Compiler:
    ops: list[MicroOp] = field(default_factory=list)
    locals: dict[str, object] = field(default_factory=dict)
    temps: int = 0

    def temp(self) -> Operand:
        self.temps += 1
        return Operand("T", str(self.temps - 1))

    def emit(self, op: MicroOp) -> None:
        self.ops.append(op)

    def realize(self, v: Any, dst: Operand | None = None) -> Operand:
        """``v`` as an operand; a pending operation is emitted into ``dst`` (or a temporary)."""
        if isinstance(v, _Pending):
            dst = dst or self.temp()
            self.emit(MicroOp(v.op, v.x, v.y, dst=dst))
            return dst
        if isinstance(v, Operand):
            if dst is not None:
                self.emit(MicroOp("ADD", v, ZERO, dst=dst))
                return dst
            return v
        raise MicrocodeError(f"not a word: {v!r}")

    def stable(self, v: Any, later: Sequence[ast.AST]) -> Operand:
        """An operand that survives the evaluation of ``later`` (unit results are copied
        when a later argument calls a unit again)."""
        operand = self.realize(v)
        if operand.volatile and any(_has_unit_call(n) for n in later):
            return self.realize(operand, self.temp())
        return operand

    # --- statements ---------------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Tuple):
                values = self.expr(stmt.value)
                if not isinstance(values, tuple) or len(values) != len(target.elts):
                    raise MicrocodeError("tuple assignment of mismatched length")
                # Python evaluates the whole right side first: a bank word that an earlier
                # target of the tuple may overwrite is kept in a temporary
                banks = [t.value.id
                         if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                         else None for t in target.elts]
                kept = [self.realize(v, self.temp()) if isinstance(v, Operand) and v.reads_bank()
                        and v.source in banks[:i] else v for i, v in enumerate(values)]
                for t, v in zip(target.elts, kept):
                    self.assign(t, v)
                return
            self.assign(target, self.expr(stmt.value))
            return
        if isinstance(stmt, ast.AugAssign):
            self.assign(stmt.target, self.binop(stmt.op, self.expr(stmt.target), stmt.value))
            return
        raise MicrocodeError(f"gradient statement {ast.dump(stmt)}")

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            if value is _ADDR:
                self.locals[target.id] = _ADDR
            else:  # a local keeps its value in a temporary (the banks may change meanwhile)
                operand = self.realize(value)
                if operand.source not in ("T", "ZERO", "ONE", "R"):
                    operand = self.realize(operand, self.temp())
                self.locals[target.id] = operand
            return
        dst = self.place(target)
        self.realize(value, dst)

    def place(self, node: ast.expr) -> Operand:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            bank = node.value.id
            if bank == "G":
                return Operand("G", self.register(node.slice))
            if bank == "GM":
                if not (isinstance(node.slice, ast.Name)
                        and self.locals.get(node.slice.id) is _ADDR):
                    raise MicrocodeError("GM indexed by something other than addr(...)")
                return Operand("GM")
            if bank == "R":
                return Operand("R", self.register(node.slice))
        raise MicrocodeError(f"place {ast.dump(node)}")

    def register(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name) and node.id in REGS:
            return node.id
        raise MicrocodeError(f"register index {ast.dump(node)}")

    # --- expressions ----------------------------------------------------------------
    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            if node.id == "one":
                return ONE
            if node.id in self.locals:
                return self.locals[node.id]
            raise MicrocodeError(f"name {node.id} in a gradient statement")
        if isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool):
            return ZERO
        if isinstance(node, ast.Subscript):
            place = self.place(node)
            return place
        if isinstance(node, ast.Tuple):
            return tuple(self.args(node.elts))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return _Pending("SUB", ZERO, self.realize(self.expr(node.operand)))
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.BitAnd):
                if isinstance(node.right, ast.Name) and node.right.id == "M":
                    return self.expr(node.left)  # every micro-operation wraps mod 2^W
                raise MicrocodeError("& with something other than M")
            return self.binop(node.op, self.expr(node.left), node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.call(node.func.id, node.args)
        raise MicrocodeError(f"expression {ast.dump(node)}")

    def binop(self, op: ast.operator, left: Any, right_node: ast.expr) -> _Pending:
        kind = {ast.Add: "ADD", ast.Sub: "SUB"}.get(type(op))
        if kind is None:
            raise MicrocodeError(f"operator {ast.dump(op)} in a gradient statement")
        x = self.stable(left, [right_node])
        y = self.realize(self.expr(right_node))
        return _Pending(kind, x, y)

    def args(self, nodes: list[ast.expr]) -> list[Operand]:
        out = []
        for i, n in enumerate(nodes):
            out.append(self.stable(self.expr(n), nodes[i + 1:]))
        return out

    def call(self, name: str, nodes: list[ast.expr]) -> Any:
        if name in UNIT_CALLS:
            x, y, z = self.args(nodes) + [ZERO] * (3 - len(nodes))
            self.emit(MicroOp("CALL", x, y, z, unit=name, arity=len(nodes)))
            return (Operand("U0"), Operand("U1")) if name in PAIRS else Operand("U0")
        if name in ("fadd", "fsub") and len(nodes) == 2:
            x, y = self.args(nodes)
            return _Pending("ADD" if name == "fadd" else "SUB", x, y)
        if name == "fneg" and len(nodes) == 1:
            return _Pending("SUB", ZERO, self.realize(self.expr(nodes[0])))
        if name == "fsign" and len(nodes) == 1:
            return _Pending("SIGN", self.realize(self.expr(nodes[0])))
        if name == "shl" and len(nodes) == 2 and isinstance(nodes[1], ast.Constant) \
                and nodes[1].value == 1:
            x = self.realize(self.expr(nodes[0]))
            return _Pending("ADD", x, x)
        if name == "addr" and len(nodes) == 1:
            self.emit(MicroOp("ADDR", self.realize(self.expr(nodes[0]))))
            return _ADDR
        raise MicrocodeError(f"call of {name} in a gradient statement")


def _assigns_value_state(stmt: ast.stmt) -> bool:
    """True for a statement of the value template (it writes R, MEM, BR or DIR, or shows)."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            targets += t.elts if isinstance(t, ast.Tuple) else [t]
    elif isinstance(stmt, ast.AugAssign):
        targets = [stmt.target]
    else:
        return True
    for t in targets:
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                and t.value.id in ("G", "GM"):
            return False
    return not all(isinstance(t, ast.Name) and t.id.startswith("_") for t in targets)


def _split(source: str) -> list[tuple[bool, list[ast.stmt]]]:
    """The template's statements in runs of (value?, statements); a local definition
    (``_t = ...``, ``_x, _y = ...``) belongs to the run of the statement after it."""
    runs: list[tuple[bool, list[ast.stmt]]] = []
    waiting: list[ast.stmt] = []
    for stmt in parse_template(source).body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else None
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        is_local = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and all(isinstance(n, ast.Name) and n.id.startswith("_") for n in names))
        if is_local:
            waiting.append(stmt)
            continue
        value = _assigns_value_state(stmt)
        if runs and runs[-1][0] == value:
            runs[-1][1].extend(waiting + [stmt])
        else:
            runs.append((value, waiting + [stmt]))
        waiting = []
    if waiting:
        raise MicrocodeError("a template ends with a local definition")
    return runs


@dataclass(frozen=True)
class Step:
    """One entry's gradient-mode step in one direction."""

    ops: tuple[MicroOp, ...]  # the gradient micro-program (empty: value step only)
    value_first: bool  # the value step runs before the micro-program


def _allocate(ops: list[MicroOp]) -> tuple[MicroOp, ...]:
    """Temporaries renumbered by liveness (a temporary is free after its last read)."""
    last_read: dict[str, int] = {}
    for i, op in enumerate(ops):
        for r in op.reads():
            if r.source == "T":
                last_read[r.reg] = i
    mapping: dict[str, str] = {}
    free: list[int] = []
    used = 0
    out = []
    for i, op in enumerate(ops):
        reads = [replace(r, reg=mapping[r.reg]) if r.source == "T" else r
                 for r in (op.x, op.y, op.z)]
        for name in {r.reg for r in op.reads() if r.source == "T" and last_read[r.reg] == i}:
            free.append(int(mapping[name]))  # read for the last time: free for the dst
        dst = op.dst
        if dst is not None and dst.source == "T":
            if free:
                n = min(free)
                free.remove(n)
            else:
                n = used
                used += 1
            mapping[dst.reg] = str(n)
            dst = Operand("T", str(n))
        out.append(replace(op, x=reads[0], y=reads[1], z=reads[2], dst=dst))
    return tuple(out)


@cache
def step(index: int, backward: bool) -> Step:
    """The micro-program of entry ``INSTRUCTIONS[index]`` in gradient mode.

    Raises :class:`MicrocodeError` when the template is not a value run and a gradient
    run (in either order) or uses a construct the micro-operations do not have.
    """
    ins = INSTRUCTIONS[index]
    source = mode_sequence(ins, -1 if backward else 1, gradient=True).format(**PLACEHOLDERS)
    runs = _split(source)
    value = ins.backward if backward else ins.forward
    value_runs = [stmts for is_value, stmts in runs if is_value]
    grad_runs = [stmts for is_value, stmts in runs if not is_value]
    if len(value_runs) > 1 or len(grad_runs) > 1:
        raise MicrocodeError(f"{ins.mnemonic}: value and gradient statements interleave")
    if value_runs:
        got = [ast.dump(s) for s in value_runs[0]]
        want = [ast.dump(s) for s in parse_template(value.format(**PLACEHOLDERS)).body]
        if got != want:  # the value run is executed by the value datapath: it must be it
            raise MicrocodeError(f"{ins.mnemonic}: the value statements are not the value template")
    if not grad_runs:
        return Step((), False)
    compiler = _Compiler()
    for stmt in grad_runs[0]:
        compiler.statement(stmt)
    value_first = bool(runs[0][0]) if value_runs else False
    return Step(_allocate(compiler.ops), value_first)


def temporaries(ops: tuple[MicroOp, ...]) -> int:
    return 1 + max((int(o.reg) for op in ops for o in (*op.reads(), op.dst or ZERO)
                    if o.source == "T"), default=-1)
