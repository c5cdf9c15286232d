"""The table's templates run on symbolic words: the specification side of the formal proofs.

:mod:`revasm.rtl.hardware.semantics` translates each template into the datapath the core runs; a
proof that compared the core with that same translation would prove nothing about it.
The proofs (:mod:`revasm.rtl.verification.formal`) compare the core with this second, independent
rendering instead: the template's Python text is *executed*, as the reference simulator
executes it (``exec`` in the namespace of :func:`revasm.isa.vocabulary.vocabulary`), but
on Amaranth values instead of integers.  Amaranth arithmetic is exact -- it widens and
never wraps -- so every operator and every vocabulary function means the same integer as
in Python, and the solver sees the table's statement itself.

Three things cannot run on a value as they are, and are restated here:

* a Python conditional: the vocabulary's ``slt``, ``fsign`` and ``ovf_sat`` (``1 if ...
  else 0``) become ``Mux``; ``rotl``/``rotr`` shift by ``W - n``, a signed amount Amaranth
  refuses, so they are written with an unsigned one; a branch's ``if c: BR = BR + off``
  becomes ``BR = Mux(c, BR + off, BR)`` (an AST rewrite of the template); ``shl``, ``srl``
  and ``sra`` run as they are, given their amount already masked to its log2(W) bits (a
  shift by a W-bit value would widen the result to 2^W bits);
* the multi-cycle units (``fmul``, ``fdiv``, ``fn_*``, ``rot``, ``irot``) and the overflow
  bits of their calls (``ovf_mul``, ``ovf_div``, ``ovf_rot``, ``ovf_irot``): a
  :class:`UnitModel` answers them -- free results, so a proof holds for *every* unit (the
  units are proved against ``isa/elementary.py`` on their own);
* the engine's devices: ``addr`` (the one memory word a step may touch), ``show``,
  ``emit``, ``unemit`` (the tape) and ``overflow`` (a machine without the strict switch:
  the event itself).

Every word a template stores must fit W bits (its ``& M``): the rendering records that as
an obligation instead of cutting the value, so a template that forgot its mask fails.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from amaranth.hdl import Const, Mux, Value

from revasm.isa.fixed_point import WordFormat
from revasm.isa.primitives import PAIRS, UNIT_CALLS, UNIT_PREDICATES, primitive
from revasm.isa.vocabulary import vocabulary
from revasm.rtl.hardware.params import word_format

# UNIT_CALLS (what a :class:`UnitModel` answers) and UNIT_PREDICATES (the overflow
# predicates that test a unit call) come from the primitives table (isa/primitives.py).
#: Placeholders of a template and the names the rendering binds them to.
_PLACEHOLDERS = {"a": '"a"', "b": '"b"', "c": '"c"', "imm": "IMM", "amt": "AMT", "k": "K",
                 "off": "OFF"}


class RenderError(ValueError):
    """A template uses something the symbolic state does not model."""


Obligation = tuple[str, Value]


def as_value(v: object) -> Value:
    """An int, bool or Amaranth value as a value (negative ints as signed constants)."""
    if isinstance(v, Value):
        return v
    if isinstance(v, (bool, int)):
        return Const(int(v))
    raise RenderError(f"not a word: {v!r}")


#: A bank's keys: register names (``a``, ``b``, ``c``) or cell numbers (``OV[0]``).
Key = TypeVar("Key", str, int)


class Bank(Generic[Key]):
    """Some words of one bank (registers a, b, c of R or G; OV[0]) and what was written."""

    def __init__(self, name: str, words: dict[Key, Value], width: int,
                 obligations: list[Obligation]) -> None:
        self.name = name
        self.words: dict[Key, Value] = dict(words)
        self.width = width
        self.written: set[Key] = set()
        self.obligations = obligations

    def __getitem__(self, key: Key) -> Value:
        if key not in self.words:
            raise RenderError(f"{self.name}[{key}] is not modelled")
        return self.words[key]

    def __setitem__(self, key: Key, value: object) -> None:
        if key not in self.words:
            raise RenderError(f"{self.name}[{key}] is not modelled")
        self.words[key] = _stored(self.name, value, self.width, self.obligations)
        self.written.add(key)


class MemoryWord:
    """The one memory word a step may touch (MEM or GM), at the address ``address``.

    ``addr(x)`` returns a token; indexing with it is the modelled word, and the
    obligation that ``x`` is that address is recorded."""

    def __init__(self, name: str, word: Value, width: int, obligations: list[Obligation]) -> None:
        self.name = name
        self.word = word
        self.width = width
        self.written = False
        self.obligations = obligations

    def __getitem__(self, token: object) -> Value:
        if not isinstance(token, _Address):
            raise RenderError(f"{self.name} indexed by something other than addr(...)")
        return self.word

    def __setitem__(self, token: object, value: object) -> None:
        if not isinstance(token, _Address):
            raise RenderError(f"{self.name} indexed by something other than addr(...)")
        self.word = _stored(self.name, value, self.width, self.obligations)
        self.written = True


@dataclass(frozen=True)
class _Address:
    value: Value


def _stored(name: str, value: object, width: int, obligations: list[Obligation]) -> Value:
    """``value`` as the W-bit word a bank stores, with the obligation that it fits."""
    v = as_value(value)
    obligations.append((f"{name} gets a {width}-bit word", v == v[:width]))
    return v[:width]


class UnitModel(Protocol):
    """Answers the unit calls of a template (see the module docstring)."""

    def call(self, name: str, args: tuple[Value, ...]) -> Value | tuple[Value, Value]:
        """The result (or, for ``rot``/``irot``, the two results) of one call."""
        ...

    def overflow(self, predicate: str, args: tuple[Value, ...]) -> Value:
        """The overflow bit ``predicate`` (``ovf_mul`` ...) tests for these operands."""
        ...

    def finish(self) -> None:
        """Called after the template ran (a model may check its predicates then)."""
        ...


@dataclass
class SymbolicState:
    """What one step of a template reads and writes, as Amaranth values.

    ``R``, ``G``: registers ``a``, ``b``, ``c``; ``MEM``, ``GM``: the memory word at
    ``address`` (its gradient); ``OV``: the overflow counter; ``fields``: ``IMM`` (the
    immediate as a W-bit word), ``AMT``, ``K``, ``OFF``; ``tape_top``: the word a pop
    returns.  After :func:`render`: ``shown``, ``emitted`` (words), ``popped``."""

    width: int
    R: Bank[str]
    MEM: MemoryWord
    G: Bank[str]
    GM: MemoryWord
    OV: Bank[int]
    BR: Value
    DIR: Value
    fields: dict[str, Value]
    address: Value
    tape_top: Value
    obligations: list[Obligation]
    shown: list[Value] = field(default_factory=list)
    emitted: list[Value] = field(default_factory=list)
    popped: bool = False
    addressed: bool = False

    @classmethod
    def build(cls, width: int, regs: dict[str, Value], mem: Value, grads: dict[str, Value],
              gmem: Value, ov: Value, br: Value, direction: Value, fields: dict[str, Value],
              address: Value, tape_top: Value) -> SymbolicState:
        """A state over the given words; ``regs``/``grads`` are keyed ``a``, ``b``, ``c``."""
        obligations: list[Obligation] = []
        return cls(width, Bank("R", regs, width, obligations),
                   MemoryWord("MEM", mem, width, obligations),
                   Bank("G", grads, width, obligations),
                   MemoryWord("GM", gmem, width, obligations),
                   Bank("OV", {0: ov}, width, obligations), br, direction, fields, address,
                   tape_top, obligations)

    def copy(self) -> SymbolicState:
        """The state as it is now, with nothing written yet (for the next step)."""
        new = SymbolicState.build(self.width, dict(self.R.words), self.MEM.word,
                                  dict(self.G.words), self.GM.word, self.OV.words[0], self.BR,
                                  self.DIR, self.fields, self.address, self.tape_top)
        new.obligations = self.obligations
        for bank in (new.R, new.MEM, new.G, new.GM, new.OV):
            bank.obligations = self.obligations
        return new


class _Conditional(ast.NodeTransformer):
    """``if c: X = e`` (a branch) becomes ``X = _choose(c, e, X)``."""

    def visit_If(self, node: ast.If) -> ast.Assign:
        body = node.body
        if (node.orelse or len(body) != 1 or not isinstance(body[0], ast.Assign)
                or len(body[0].targets) != 1 or not isinstance(body[0].targets[0], ast.Name)):
            raise RenderError("only `if c: NAME = value` is rendered")
        name = body[0].targets[0].id
        choose = ast.Call(func=ast.Name(id="_choose", ctx=ast.Load()),
                          args=[node.test, body[0].value, ast.Name(id=name, ctx=ast.Load())],
                          keywords=[])
        return ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                            value=choose), node)


def _restated(fmt: WordFormat) -> dict[str, Callable]:
    """The vocabulary functions whose Python text cannot run on a value (module doc)."""
    w, one = fmt.width, fmt.one
    amount_bits = (w - 1).bit_length()

    def S(x: object) -> Value:  # the vocabulary's name
        return as_value(x)[:w].as_signed()

    def rotate(x: object, n: object, left: bool) -> Value:
        word, amount = as_value(x)[:w], as_value(n)[:amount_bits]
        back = (Const(w, amount_bits + 1) - amount).as_unsigned()
        if left:
            return ((word << amount) | (word >> back))[:w]
        return ((word >> amount) | (word << back))[:w]

    words = vocabulary(fmt)

    def narrow(n: object) -> Value:
        # the amount as the vocabulary masks it (& (W - 1)), on the bits that can be set: a
        # shift by a W-bit value would widen its result to 2^W bits
        return (as_value(n) & (w - 1))[:amount_bits]

    def shift(name: str) -> Callable[[object, object], object]:
        function = words[name]
        if not callable(function):
            raise RenderError(f"the vocabulary's {name} is not a function")
        return lambda x, n: function(x, narrow(n))

    return {
        "shl": shift("shl"), "srl": shift("srl"), "sra": shift("sra"),
        "slt": lambda x, y: Mux(S(x) < S(y), 1, 0),
        "fsign": lambda x: Mux(as_value(x)[:w] == 0, 0,
                               Mux(as_value(x)[w - 1], Const(-one & fmt.mask, w), Const(one, w))),
        "ovf_sat": lambda x: Mux((as_value(x)[:w] == fmt.mask >> 1)
                                 | (as_value(x)[:w] == fmt.sign_bit), 1, 0),
        "rotl": lambda x, n: rotate(x, n, True),
        "rotr": lambda x, n: rotate(x, n, False),
    }


def render(template: str, state: SymbolicState, units: UnitModel) -> SymbolicState:
    """Run one table template on ``state`` (changed in place, and returned)."""
    if not template:
        return state
    fmt = word_format(state.width)
    namespace: dict[str, object] = dict(vocabulary(fmt))
    namespace.update(_restated(fmt))

    def addr(x: object) -> _Address:
        state.obligations.append(("the step addresses the modelled memory word",
                                  as_value(x)[:state.width] == state.address))
        state.addressed = True
        return _Address(as_value(x)[:state.width])

    def show(x: object) -> None:
        state.shown.append(as_value(x)[:state.width])

    def emit(x: object) -> None:
        state.emitted.append(as_value(x)[:state.width])

    def unemit() -> Value:
        state.popped = True
        return state.tape_top

    def words(args: tuple) -> tuple[Value, ...]:
        return tuple(as_value(a)[:state.width] for a in args)

    def unit_call(name: str) -> Callable:
        return lambda *args: units.call(name, words(args))

    def unit_predicate(name: str) -> Callable:
        return lambda *args: units.overflow(name, words(args))

    namespace.update({name: unit_call(name) for name in UNIT_CALLS})
    namespace.update({name: unit_predicate(name) for name in UNIT_PREDICATES})
    namespace.update(R=state.R, MEM=state.MEM, G=state.G, GM=state.GM, OV=state.OV,
                     BR=state.BR, DIR=state.DIR, addr=addr, show=show, emit=emit,
                     unemit=unemit, overflow=lambda flag: flag,
                     _choose=lambda test, taken, other: Mux(as_value(test).bool(),
                                                            as_value(taken), as_value(other)),
                     **state.fields)
    tree = _Conditional().visit(ast.parse(template.format(**_PLACEHOLDERS)))
    exec(compile(ast.fix_missing_locations(tree), "<table template>", "exec"), namespace)
    state.BR = as_value(namespace["BR"])
    state.DIR = as_value(namespace["DIR"])
    units.finish()
    return state


class FreeUnit:
    """At most one unit call per step, whose results and overflow bit are free words.

    A proof then holds for every unit, provided the core makes *the same call* (operation
    and operands): the proof compares :attr:`calls` with the core's request.  An overflow
    predicate must test the call -- same operands, or (``ovf_rot``/``ovf_irot`` of a
    backward rotation) the results of the inverse call, whose bit it is by
    ``isa/rotation.py``'s identity ``ovf_irot(x, y, c) == ovf_rot(*irot(x, y, c), c)``."""

    def __init__(self, results: tuple[Value, Value], overflow: Value,
                 obligations: list[Obligation]) -> None:
        self.results = results
        self.overflow_bit = overflow
        self.obligations = obligations
        self.calls: list[tuple[str, tuple[Value, ...]]] = []
        self.predicates: list[tuple[str, tuple[Value, ...]]] = []

    def call(self, name: str, args: tuple[Value, ...]) -> Value | tuple[Value, Value]:
        if self.calls:
            raise RenderError("more than one unit call in one step")
        self.calls.append((name, args))
        return self.results if name in PAIRS else self.results[0]

    def overflow(self, predicate: str, args: tuple[Value, ...]) -> Value:
        self.predicates.append((predicate, args))
        return self.overflow_bit

    def finish(self) -> None:
        for predicate, args in self.predicates:
            if len(self.calls) != 1:
                raise RenderError(f"{predicate} without a unit call")
            (name, call_args), = self.calls
            tested = UNIT_PREDICATES[predicate]
            if name == tested:
                same = _all_equal(args, call_args)
            elif name == primitive(tested).inverse:
                same = _all_equal(args, (*self.results, *call_args[2:]))
            else:
                raise RenderError(f"{predicate} tests no {tested} call")
            self.obligations.append((f"{predicate} tests the step's {name} call", same))


def _all_equal(xs: tuple[Value, ...], ys: tuple[Value, ...]) -> Value:
    if len(xs) != len(ys):
        return Const(0, 1)
    out: Value = Const(1, 1)
    for x, y in zip(xs, ys):
        out = out & (x == y)
    return out
