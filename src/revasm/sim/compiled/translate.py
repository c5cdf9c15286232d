"""Table templates -> numba statements: the one definition of the semantics, translated.

A template (``isa/table.py``, ``isa/adjoint.py``; operands already substituted by the
reference's pre-decoder) is a Python statement over ``R``, ``MEM``, ``BR``, ``DIR``, the
gradient-mode banks and the vocabulary.  :class:`Translator` parses it with :mod:`ast`
and writes the same statement for a numba kernel in which

* register ``n`` of bank ``R``/``G``/``T``/``TG`` is the local ``r{n}``/``g{n}``/... (a
  machine register; ``R[0]`` reads as the constant 0), the overflow counter ``OV[0]``
  the local ``ov0`` (kept in ``CTL``; the ``overflow`` device faults when the lane's
  ``strict`` is set), a memory bank word is
  ``MEM[lane, slot]`` (``slot`` from ``addr``, see ``generate.py``);
* every word is ``uint64``, BR/DIR and ``S(...)`` are ``int64``; constants are folded
  exactly in Python and typed when they meet a word (reduced mod 2**64, which commutes
  with + - * & | ^ << and every template masks its result to W bits);
* a vocabulary call is the kernel function of the same name (``vocab.py``,
  ``overflow.py``) with the width as its last argument (``fmul(r3, r4, 64)``); which calls
  exist, what they return (a word or a pair) and whether they can fault is the primitives
  table's (``isa/primitives.py``), and a row with no kernel function is refused here
  (:class:`TranslationError`, naming it);
* the calls that can fault (the primitives with a ``Fault``, and ``addr``, ``unemit``)
  are hoisted into temporaries in Python's evaluation order, each preceded by its row's
  domain checks (``Fault.when``, translated like a template), which leave the kernel
  through the caller's ``exit`` with a code that names the row's fault
  (:data:`PRIMITIVE_FAULTS`) and the value its message names.  Nothing else can fault,
  so the first failing check is the reference's exception.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from revasm.isa.primitives import BY_NAME, FAULT_LIST, PAIRS, Fault
from revasm.isa.timing import TIMER_PREFIX

MASK64 = (1 << 64) - 1

#: Fault and pause codes the kernels report (``CTL[FCODE, lane]``).
F_MEMORY, F_TAPE, F_ILLEGAL, F_STEPS, F_JUMP, F_OVERFLOW = range(1, 7)
#: The primitives' faults: code ``PRIMITIVE_FAULT + k`` is ``FAULT_LIST[k]`` (a row and
#: one of its faults); ``aux`` is the signed first operand when the message names it.
PRIMITIVE_FAULT = 16
PRIMITIVE_FAULTS: dict[int, tuple[str, Fault]] = {
    PRIMITIVE_FAULT + k: entry for k, entry in enumerate(FAULT_LIST)}
#: Pauses (status NEEDS_ROOM): a per-lane table is full; the host grows it and resumes.
ROOM_MEMORY, ROOM_OUTPUT, ROOM_TAPE = 1, 2, 3

REGISTER_BANKS = {"R": "r", "G": "g", "T": "t", "TG": "tg", "OV": "ov"}
MEMORY_BANKS = ("MEM", "GM", "TM", "TGM")

#: The calls that can fault, hoisted behind their checks: the primitives' faulting rows
#: and the devices ``addr`` and ``unemit`` (``overflow`` has its own check).
FAULTING = frozenset(name for name, _ in FAULT_LIST) | {"addr", "unemit"}
#: Results computed together: ``fdiv`` and its overflow predicate share one division
#: (``fdiv_ovf`` returns both; LLVM does not merge two ``div`` instructions), ``fmul``
#: and ``ovf_mul`` one product.  A template that asks for both gets the second free.
FUSED = {"fdiv": "ovf_div", "fmul": "ovf_mul"}
#: Rotations and their overflow predicates by an angle: each needs the angle's *plan*
#: (``vocab.rotation_plan``: tan(theta/2) and sin(theta), two CORDIC runs, nearly all of a
#: rotation's time), computed once per instruction and angle word -- ROT's gradient-mode
#: step rotates by one angle three times (values, overflow test, gradients).
ROTATIONS = {"rot", "irot", "ovf_rot", "ovf_irot"}


@dataclass
class Value:
    """A translated expression: its code, and its kind: ``w`` (uint64 word), ``i`` (int64),
    ``b`` (bool), ``c`` (a Python integer constant, ``const``), ``s`` (a memory slot)."""

    code: str
    kind: str
    const: int = 0


class TranslationError(ValueError):
    pass


class Translator:
    """Translates the statements of one kernel (temporaries are unique per kernel).

    ``exit(code, aux)`` returns the lines that leave the kernel with a fault (``aux``: an
    int64 expression the message needs); ``room(code, aux)`` the lines that pause the lane
    before the instruction because a table is full (``aux``: which, for the host).
    """

    def __init__(self, width: int, constants: dict[str, int]) -> None:
        self.width = width
        self.mask = (1 << width) - 1
        self.constants = constants  # M, W, F, one
        self.counter = 0
        self.used: dict[str, set[int]] = {prefix: set() for prefix in REGISTER_BANKS.values()}
        self.memory_banks: set[str] = set()
        #: Operand placeholders read at run time (the interpreter kernel,
        #: ``interpreter.py``): name -> the kernel local holding it.  A register named by
        #: one is ``R[lane, <local>]`` in the bank's array instead of a machine register.
        self.operands: dict[str, Value] = {}
        self.uses_output = False
        self.uses_tape = False
        #: Set to a list by a caller whose lines run in a loop over lanes (the tile engine's
        #: step functions): each rotation plan is then remembered *across* lanes, recomputed
        #: only when a lane's angle word differs from the last lane's; the lines that set the
        #: remembered plans up, to run once before the loop, are appended to the list.
        self.hoisted: list[str] | None = None

    # --- entry point ----------------------------------------------------------------

    def statement(self, text: str, exit: Callable[[int, str], list[str]],
                  room: Callable[[int, str], list[str]]) -> list[str]:
        """The kernel lines of one instruction's template (one or more statements)."""
        self.exit, self.room = exit, room
        self.locals: dict[str, Value] = {}
        #: Calls already computed in this instruction (text -> temporary): a call whose
        #: operands have not been written since is the same value (every vocabulary
        #: function is pure), so ``fn_tan(R[b])`` twice runs one CORDIC.
        self.memo: dict[str, str] = {}
        self.lines: list[str] = []
        self.indent = ""
        for node in ast.parse(text).body:
            self._statement(node)
        return self.lines

    def cycles(self, text: str) -> list[str]:
        """The kernel lines that add a step's operand-dependent cycles to the local
        ``cycles``: ``text`` is ``isa/timing``'s expression (calls of the unit timers,
        ``sim/compiled/timing.py``, over registers the step does not write)."""
        self.exit = self.room = _cannot_leave  # a timing expression cannot fault
        self.locals, self.memo, self.lines, self.indent = {}, {}, [], ""
        value = self._expr(ast.parse(text, mode="eval").body)
        self.emit(f"cycles += {self.integer(value)}")
        return self.lines

    # --- helpers --------------------------------------------------------------------

    def fresh(self, stem: str = "_t") -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def emit_all(self, lines: list[str]) -> None:
        for line in lines:
            self.emit(line)

    def word(self, v: Value) -> str:
        if v.kind == "w":
            return v.code
        if v.kind == "c":
            return f"U({v.const & MASK64})"
        if v.kind == "i":
            return f"U({v.code})"
        if v.kind == "b":
            return f"(U(1) if {v.code} else U(0))"
        raise TranslationError(f"not a word: {v}")

    def integer(self, v: Value) -> str:
        if v.kind == "i":
            return v.code
        if v.kind == "c":
            if not -(1 << 63) <= v.const < (1 << 63):
                raise TranslationError(f"constant {v.const} does not fit int64")
            return f"I({v.const})"
        if v.kind == "w":
            return f"I({v.code})"
        raise TranslationError(f"not an integer: {v}")

    def call_code(self, name: str, args: list[str]) -> str:
        """A call of the kernel function ``name`` at this width (the width its last
        argument, a constant the inlined code folds)."""
        return f"{name}({', '.join([*args, str(self.width)])})"

    # --- statements -------------------------------------------------------------------

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Pass):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._device(node.value)
            return
        if isinstance(node, ast.AugAssign):
            value = self._binop(node.op, self._expr(_load(node.target)), self._expr(node.value))
            self._assign([node.target], [value])
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Tuple):
                if isinstance(node.value, ast.Tuple):
                    values = [self._expr(e) for e in node.value.elts]
                    # all right-hand sides first (Python's order), into temporaries
                    held = []
                    for v in values:
                        if v.kind in ("w", "i"):
                            name = self.fresh()
                            self.emit(f"{name} = {v.code}")
                            held.append(Value(name, v.kind))
                        else:
                            held.append(v)
                    self._assign(target.elts, held)
                    return
                pair = self._expr(node.value)
                if pair.kind != "pair":
                    raise TranslationError(f"cannot unpack {ast.unparse(node.value)}")
                first, second = self.fresh(), self.fresh()
                self.emit(f"{first}, {second} = {pair.code}")
                self._assign(target.elts, [Value(first, "w"), Value(second, "w")])
                return
            self._assign([target], [self._expr(node.value)])
            return
        if isinstance(node, ast.If) and not node.orelse:
            condition = self._expr(node.test)
            if condition.kind == "c" and condition.const:
                for inner in node.body:
                    self._statement(inner)
                return
            body = node.body[0] if len(node.body) == 1 else None
            if (isinstance(body, ast.Assign) and ast.unparse(body.targets[0]) == "BR"
                    and isinstance(body.value, ast.BinOp)
                    and isinstance(body.value.op, (ast.Add, ast.Sub))
                    and ast.unparse(body.value.left) == "BR"):
                # a branch: BR moves by the offset times the condition (no control flow)
                offset = self._expr(body.value.right)
                sign = "+" if isinstance(body.value.op, ast.Add) else "-"
                self.emit(f"br = br {sign} {self.integer(offset)} * I({condition.code})")
                return
            if condition.kind == "c":
                code = "True" if condition.const else "False"
            else:
                code = condition.code
            self.emit(f"if {code}:")
            self.memo = {}
            outer = self.indent
            self.indent += "    "
            start = len(self.lines)
            for inner in node.body:
                self._statement(inner)
            if len(self.lines) == start:
                self.emit("pass")
            self.indent = outer
            self.memo = {}
            return
        raise TranslationError(f"unsupported template statement: {ast.unparse(node)}")

    def _assign(self, targets: list[ast.expr], values: list[Value]) -> None:
        for target, value in zip(targets, values):
            if isinstance(target, ast.Name):
                name = target.id
                if name == "BR":
                    self.emit(f"br = {self.integer(value)}")
                elif name == "DIR":
                    self.emit(f"d = {self.integer(value)}")
                elif name.startswith("_"):
                    local = self.fresh(name + "_")
                    if value.kind == "s":
                        self.emit(f"{local} = {value.code}")
                        self.locals[name] = Value(local, "s")
                    elif value.kind == "i":
                        self.emit(f"{local} = {value.code}")
                        self.locals[name] = Value(local, "i")
                    else:
                        self.emit(f"{local} = {self.word(value)}")
                        self.locals[name] = Value(local, "w")
                else:
                    raise TranslationError(f"cannot assign {name}")
            elif isinstance(target, ast.Subscript):
                bank = target.value.id  # type: ignore[attr-defined]
                if bank in REGISTER_BANKS:
                    index = self._expr(target.slice)
                    if index.kind != "c":
                        self.emit(f"{self._runtime_register(bank, index)} = {self.word(value)}")
                        self._written(bank)  # any remembered read of the bank may alias it
                        continue
                    if bank == "R" and index.const == 0:
                        raise TranslationError("a template writes $0")
                    local = self._register(bank, index.const)
                    self.emit(f"{local} = {self.word(value)}")
                    self._written(local)
                elif bank in MEMORY_BANKS:
                    slot = self._expr(target.slice)
                    self.memory_banks.add(bank)
                    self.emit(f"{bank}[lane, {slot.code}] = {self.word(value)}")
                    self._written(bank)
                else:
                    raise TranslationError(f"unknown bank {bank}")
            else:
                raise TranslationError(f"cannot assign to {ast.unparse(target)}")

    def _written(self, name: str) -> None:
        """Forget the remembered calls that read ``name`` (a local or a memory bank)."""
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        self.memo = {k: v for k, v in self.memo.items() if not pattern.search(k)}

    def _runtime_register(self, bank: str, index: Value) -> str:
        """A register whose number is an operand read at run time: its bank's array.
        ``R[lane, 0]`` is always 0 (no legal instruction writes ``$0``)."""
        if not self.operands or bank == "OV":
            raise TranslationError("register numbers are constants")
        return f"{bank}[lane, {self.integer(index)}]"

    def _register(self, bank: str, number: int) -> str:
        prefix = REGISTER_BANKS[bank]
        self.used[prefix].add(number)
        return f"{prefix}{number}"

    # --- devices -----------------------------------------------------------------------

    def _device(self, call: ast.Call) -> None:
        name = call.func.id  # type: ignore[attr-defined]
        if name == "show":
            value = self.word(self._expr(call.args[0]))
            self.uses_output = True
            self.emit("if outlen >= OUT.shape[1]:")
            self._room(ROOM_OUTPUT)
            self.emit(f"OUT[lane, outlen] = {value}")
            self.emit("outlen += 1")
        elif name == "emit":
            value = self.word(self._expr(call.args[0]))
            self.uses_output = self.uses_tape = True
            self.emit("if outlen >= OUT.shape[1]:")
            self._room(ROOM_OUTPUT)
            self.emit("if tapelen >= TAPE.shape[1]:")
            self._room(ROOM_TAPE)
            self.emit(f"OUT[lane, outlen] = {value}")
            self.emit("outlen += 1")
            self.emit(f"TAPE[lane, tapelen] = {value}")
            self.emit("tapelen += 1")
        else:
            self._expr(call)  # a faulting call used as a statement

    def _room(self, code: int, aux: str = "I(0)") -> None:
        outer = self.indent
        self.indent += "    "
        self.emit_all(self.room(code, aux))
        self.indent = outer

    def _fault(self, code: int, aux: str) -> None:
        outer = self.indent
        self.indent += "    "
        self.emit_all(self.exit(code, aux))
        self.indent = outer

    # --- expressions ------------------------------------------------------------------

    def _expr(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            if node.value is True or node.value is False:
                return Value("True" if node.value else "False", "c", int(node.value))
            if isinstance(node.value, int):
                return Value(str(node.value), "c", node.value)
            raise TranslationError(f"constant {node.value!r}")
        if isinstance(node, ast.Name):
            name = node.id
            if name == "BR":
                return Value("br", "i")
            if name == "DIR":
                return Value("d", "i")
            if name in self.operands:
                return self.operands[name]
            if name in self.constants:
                return Value(str(self.constants[name]), "c", self.constants[name])
            if name in self.locals:
                return self.locals[name]
            raise TranslationError(f"unknown name {name}")
        if isinstance(node, ast.Subscript):
            bank = node.value.id  # type: ignore[attr-defined]
            if bank in REGISTER_BANKS:
                index = self._expr(node.slice)
                if index.kind != "c":
                    return Value(self._runtime_register(bank, index), "w")
                if bank == "R" and index.const == 0:
                    return Value("0", "c", 0)
                return Value(self._register(bank, index.const), "w")
            if bank in MEMORY_BANKS:
                slot = self._expr(node.slice)
                if slot.kind != "s":
                    raise TranslationError("memory is indexed by addr()")
                self.memory_banks.add(bank)
                return Value(f"{bank}[lane, {slot.code}]", "w")
            raise TranslationError(f"unknown bank {bank}")
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self._expr(node.left), self._expr(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self._expr(node.operand)
            if isinstance(node.op, ast.USub):
                if operand.kind == "c":
                    return Value(str(-operand.const), "c", -operand.const)
                if operand.kind == "i":
                    return Value(f"(-{operand.code})", "i")
                return Value(f"(U(0) - {self.word(operand)})", "w")
            if isinstance(node.op, ast.Invert):
                if operand.kind == "c":
                    return Value(str(~operand.const), "c", ~operand.const)
                return Value(f"(~{self.word(operand)})", "w")
            if isinstance(node.op, ast.Not):
                return Value(f"(not {operand.code})", "b")
            raise TranslationError(f"unary {ast.dump(node.op)}")
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self._expr(node.left)
            right = self._expr(node.comparators[0])
            op = _COMPARE[type(node.ops[0])]
            if left.kind == "c" and right.kind == "c":
                value = int(eval(f"{left.const} {op} {right.const}"))  # ints
                return Value(str(bool(value)), "c", value)
            if "w" in (left.kind, right.kind):
                return Value(f"({self.word(left)} {op} {self.word(right)})", "b")
            return Value(f"({self.integer(left)} {op} {self.integer(right)})", "b")
        if isinstance(node, ast.Call):
            return self._call(node)
        raise TranslationError(f"unsupported expression {ast.unparse(node)}")

    def _binop(self, op: ast.operator, left: Value, right: Value) -> Value:
        symbol = _BINARY[type(op)]
        if left.kind == "c" and right.kind == "c":
            value = eval(f"({left.const}) {symbol} ({right.const})")  # ints
            return Value(str(value), "c", value)
        wide = "w" in (left.kind, right.kind) or any(
            v.kind == "c" and not -(1 << 63) <= v.const < (1 << 63) for v in (left, right))
        if wide:
            if symbol == "&":  # x & (2**64 - 1) keeps every bit of a uint64 word
                if right.kind == "c" and right.const & MASK64 == MASK64 and right.const >= 0:
                    return Value(self.word(left), "w")
                if left.kind == "c" and left.const & MASK64 == MASK64 and left.const >= 0:
                    return Value(self.word(right), "w")
            if symbol in ("<<", ">>") and right.kind == "c" and not 0 <= right.const < 64:
                raise TranslationError(f"shift by {right.const}")
            return Value(f"({self.word(left)} {symbol} {self.word(right)})", "w")
        return Value(f"({self.integer(left)} {symbol} {self.integer(right)})", "i")

    def _call(self, node: ast.Call) -> Value:
        name = node.func.id  # type: ignore[attr-defined]
        args = [self._expr(a) for a in node.args]
        if name == "S":
            return Value(self.call_code("S", [self.word(args[0])]), "i")
        if name == "addr":  # one slot per address and instruction (the table only grows)
            key = f"addr({self.word(args[0])})"
            if key not in self.memo:
                self.memo[key] = self._addr(args[0]).code
            return Value(self.memo[key], "s")
        if name == "unemit":
            return self._unemit()
        if name == "overflow":  # the overflow device: count the event, or fault if strict
            flag = self.fresh("_ov")
            self.emit(f"{flag} = {self.word(args[0])}")
            self.emit(f"if strict and {flag} != U(0):")
            self._fault(F_OVERFLOW, "I(0)")
            return Value(flag, "w")
        if name.startswith(TIMER_PREFIX):  # a unit timer (its cycles: an int64)
            return Value(self.call_code(name, [self.word(a) for a in args]), "i")
        row = BY_NAME.get(name)
        if row is None:
            raise TranslationError(f"unknown vocabulary name {name}")
        if kernel_function(name) is None:
            raise TranslationError(
                f"the compiled engine has no implementation of the primitive {name} "
                "(isa/primitives.py): add a numba function of that name to "
                "sim/compiled/vocab.py (or overflow.py), width as its last argument")
        words = [self.word(a) for a in args]
        key = f"{name}({', '.join(words)})"
        if key in self.memo and name not in PAIRS:
            return Value(self.memo[key], "w")
        if name in FAULTING:
            held = []
            for code in words:  # evaluated once, in order, before the check
                if code.isidentifier() or code.startswith("U("):
                    held.append(code)
                else:
                    temp = self.fresh()
                    self.emit(f"{temp} = {code}")
                    held.append(temp)
            self._check(name, held)
            return Value(self._word_call(name, held, key, words), "w")
        if name in ROTATIONS:
            call = self.call_code(f"{name}_planned",
                                  [*words[:2], self._rotation_plan(words[2])])
        else:
            call = self.call_code(name, words)
        if name in PAIRS:
            return Value(call, "pair")
        if name in FUSED:
            return Value(self._word_call(name, words, key, words), "w")
        temp = self.fresh()
        self.emit(f"{temp} = {call}")
        self.memo[key] = temp
        return Value(temp, "w")

    def _rotation_plan(self, theta: str) -> str:
        """The plan of a rotation by the word ``theta`` (three locals, as call arguments),
        computed at its first use in the instruction and remembered until ``theta``'s
        words change (:meth:`_written`)."""
        key = f"rotation_plan({theta})"
        if key not in self.memo:
            plan = [self.fresh() for _ in range(3)]
            if self.hoisted is None:
                self.emit(f"{', '.join(plan)} = {self.call_code('rotation_plan', [theta])}")
            else:  # the lanes of a batch mostly share their angles (a network's parameters)
                angle = self.fresh("_angle")
                self.hoisted += [f"{angle} = U(0)",
                                 f"{', '.join(plan)} = {self.call_code('rotation_plan', ['U(0)'])}"]
                self.emit(f"if {theta} != {angle}:")
                self.emit(f"    {angle} = {theta}")
                self.emit(f"    {', '.join(plan)} = {self.call_code('rotation_plan', [angle])}")
            self.memo[key] = ", ".join(plan)
        return self.memo[key]

    def _word_call(self, name: str, args: list[str], key: str, words: list[str]) -> str:
        """A temporary holding ``name(args)``, remembered under ``key``; a :data:`FUSED`
        name also remembers its partner's result (same operand ``words``)."""
        temp = self.fresh()
        if name in FUSED:
            partner = self.fresh()
            self.emit(f"{temp}, {partner} = {self.call_code(name + '_ovf', args)}")
            self.memo[f"{FUSED[name]}({', '.join(words)})"] = partner
        else:
            self.emit(f"{temp} = {self.call_code(name, args)}")
        self.memo[key] = temp
        return temp

    def _check(self, name: str, args: list[str]) -> None:
        """The domain checks of a faulting primitive, from its row: for each of its faults
        in order, ``if <conditions>:`` leave with the fault's code."""
        row = BY_NAME[name]
        saved = self.locals
        self.locals = {**saved, **{o: Value(a, "w") for o, a in zip(row.operands, args)}}
        try:
            for fault in row.faults:
                tests = [self._expr(ast.parse(c, mode="eval").body) for c in fault.when]
                code = PRIMITIVE_FAULT + FAULT_LIST.index((name, fault))
                aux = self.call_code("S", [args[0]]) if "{x}" in fault.message else "I(0)"
                self.emit(f"if {' and '.join(self._condition(t) for t in tests)}:")
                self._fault(code, aux)
        finally:
            self.locals = saved

    def _condition(self, value: Value) -> str:
        if value.kind == "b":
            return value.code
        if value.kind == "c":
            return "True" if value.const else "False"
        return f"({self.word(value)} != U(0))"

    def _addr(self, word: Value) -> Value:
        w = self.fresh("_w")
        self.emit(f"{w} = {self.word(word)}")
        self.emit(f"if {w} < U(CODE_LENGTH) and CODE[{w}]:")  # any other word is an address
        self._fault(F_MEMORY, f"I({w})")
        slot = self.fresh("_slot")
        self.emit(f"if {w} < U(DENSE_LENGTH):")
        self.emit(f"    {slot} = DENSE[{w}]")
        self.emit("else:")  # the window's length is the bank's row less the rest
        self.emit(f"    {slot} = window_slot(KEYS, lane, {w}, DENSE_LENGTH, DENSE_WORDS, "
                  "MEM.shape[1] - DENSE_WORDS - KEYS.shape[1])")
        self.emit(f"    if {slot} < 0:")  # the table is full, or the window must grow
        outer = self.indent
        self.indent += "    "
        self._room(ROOM_MEMORY, slot)
        self.indent = outer
        return Value(slot, "s")

    def _unemit(self) -> Value:
        self.uses_output = self.uses_tape = True
        self.emit("if tapelen == 0:")
        self._fault(F_TAPE, "I(0)")
        self.emit("if outlen >= OUT.shape[1]:")
        self._room(ROOM_OUTPUT)
        temp = self.fresh()
        self.emit("tapelen -= 1")
        self.emit(f"{temp} = TAPE[lane, tapelen]")
        self.emit(f"OUT[lane, outlen] = {temp}")
        self.emit("outlen += 1")
        return Value(temp, "w")


def _load(target: ast.expr) -> ast.expr:
    """The same target read as a value (for ``x op= y``)."""
    copy = ast.parse(ast.unparse(target), mode="eval").body
    return copy


_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
            ast.GtE: ">="}


def _cannot_leave(code: int, aux: str) -> list[str]:
    raise TranslationError("a timing expression has nothing that can fault or pause")


def kernel_function(name: str) -> Any | None:
    """The compiled engine's implementation of a primitive: the numba function of that
    name the generated kernels import (``vocab.py``'s public names, ``overflow.__all__``),
    or None."""
    from . import overflow, vocab

    if name in overflow.__all__:
        return getattr(overflow, name)
    function = getattr(vocab, name, None)
    return function if hasattr(function, "py_func") else None
