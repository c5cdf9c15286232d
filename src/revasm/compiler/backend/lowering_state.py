"""What the function lowering's mixins share: its state and each other's methods, typed.

One function is lowered by ``function_lowering.py`` put together from mixins
(``statements``, ``calls``, ``control_flow``, ``places``, ``arithmetic``,
``integer_arithmetic``, ``bitwise``, ``guards``) that call one another's methods.
Each mixin derives from :class:`FunctionLoweringState`, which declares the state
``function_lowering.py`` sets up and, for the type checker only
(``TYPE_CHECKING``), the methods one mixin calls on another, so every call is
checked against one signature; at run time it adds nothing.  :class:`ModuleContext`
is what a function's lowering reads from the module's (``lowering.py``, which
imports this package's modules and so is not imported here).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from revasm.isa.fixed_point import WordFormat

from ..errors import SourcePos
from ..ir import nodes as ir
from .carried_elements import PointerKey
from .code import Instr
from .layout import FunctionLayout

#: The values an Int expression can take (both ends included), when they are known.
Interval = tuple[int, int] | None

#: A register holding a value, with the setup that brings it there and the teardown
#: (the setup's inverse) that clears it again.
Placed = tuple[int, list[Instr], list[Instr]]


@dataclass(unsafe_hash=True)
class HeldValue(ir.Var):
    """An Int value the lowering keeps in ``register`` over a stretch of code (a loop's
    bound, -O2); ``name`` is the expression's text, for messages."""

    register: int = 0


class ProofQueries(Protocol):
    """What the static checks proved about ancillas (``ir/proofs.py``'s Proofs)."""

    def free_is_proven(self, function: str, s: ir.Free) -> bool: ...

    def alloc_is_proven(self, function: str, s: ir.Alloc) -> bool: ...


class ModuleContext(Protocol):
    """What one function's lowering reads from the whole program's lowering."""

    @property
    def module(self) -> ir.Module: ...

    @property
    def fmt(self) -> WordFormat: ...

    @property
    def optimize(self) -> bool: ...

    @property
    def level(self) -> int: ...

    @property
    def for_gradient(self) -> bool: ...

    @property
    def max_registers(self) -> int | None: ...

    @property
    def proofs(self) -> ProofQueries: ...

    @property
    def layouts(self) -> dict[str, FunctionLayout]: ...

    @property
    def param_ranges(self) -> dict[str, dict[str, tuple[int, int]]]: ...

    def label(self, kind: str) -> str: ...

    def registers_of_calls(self, body: list[ir.Stmt]) -> frozenset[int] | None: ...

    def call_writes(self, call: ir.Call) -> set[str]: ...

    @property
    def loop_pointers(self) -> dict[str, dict[str, PointerKey]]: ...

    def check(self, kind: str) -> bool: ...

    def trap(self, guard: str, pos: SourcePos, note: str, kind: str = "") -> str: ...


class FunctionLoweringState:
    """The state of one function's lowering, and the methods its mixins call on each other."""

    p: ModuleContext
    f: ir.Function
    lay: FunctionLayout
    #: variable -> its type (``FunctionLayout.types``)
    types: dict[str, ir.ScalarType | ir.ArrayType]
    #: the next free scratch register (an index into ``layout.SCRATCH``)
    scratch_top: int
    #: the role of the instructions being emitted (``code.py``)
    role: str
    #: constant (word, kind) -> the register that holds it (``constant_pool``)
    pool: dict[tuple[int, str], int]
    #: for variable -> the values it takes
    ranges: dict[str, Interval]
    #: for variables of constant, non-empty ranges: every value of theirs occurs
    exact_ranges: set[str]
    #: > 0 inside a branch or a loop that may run no iteration
    conditional: int
    #: registers pointers and held loop bounds take (``pointers.py``, -O2)
    reserved: set[int]
    #: (address key, constant offset) -> the live pointer that holds it (``pointers.py``)
    pointers: dict[PointerKey, int]

    if TYPE_CHECKING:
        # function_lowering.py
        def fresh(self, pos: SourcePos) -> int: ...

        def i(self, mnemonic: str, *operands: int | str, pos: SourcePos | None = None,
              note: str = "", role: str | None = None, label: str = "") -> Instr: ...

        def _word(self, e: ir.Const, ctx: ir.ScalarType) -> int | None: ...

        def block(self, body: list[ir.Stmt]) -> list[Instr]: ...

        def stmt(self, s: ir.Stmt) -> list[Instr]: ...

        def uncomputing(self, body: list[ir.Stmt]) -> list[Instr]: ...

        def label(self, kind: str) -> str: ...

        def complete(self, build: Callable[[], list[Instr]]) -> list[Instr]: ...

        # places.py
        def type_of(self, e: ir.Expr) -> ir.ScalarType: ...

        def place(self, e: ir.Expr) -> Placed: ...

        def value_place(self, e: ir.Expr) -> Placed: ...

        def operand(self, e: ir.Expr, ctx: ir.ScalarType) -> Placed: ...

        def address_of(self, e: ir.Index) -> tuple[int, list[Instr]]: ...

        # arithmetic.py
        def accumulate(self, d: int, sign: int, e: ir.Expr, ctx: ir.ScalarType
                       ) -> list[Instr]: ...

        def literal_word(self, e: ir.Const, ctx: ir.ScalarType, *, bits: bool = False
                         ) -> int: ...

        @property
        def fmt_frac(self) -> int: ...

        def fits_int_factor(self, e: ir.BinOp) -> bool: ...

        # integer_arithmetic.py
        def int_product(self, d: int, sign: int, e: ir.BinOp) -> list[Instr]: ...

        def int_division(self, d: int, sign: int, e: ir.BinOp) -> list[Instr]: ...

        # bitwise.py
        def xor_into(self, d: int, e: ir.Expr) -> list[Instr]: ...

        # statements.py
        def stmt_update(self, s: ir.Update) -> list[Instr]: ...

        # control_flow.py
        def _compare_type(self, a: ir.Expr, b: ir.Expr) -> ir.ScalarType: ...

        # pointers.py
        def spare_registers(self) -> list[int]: ...

        def shape_of(self, name: str) -> tuple[int, ...] | None: ...

        def pointer_scope(self, body: list[ir.Stmt], loop_var: str | None,
                          build: Callable[[], list[Instr]]) -> list[Instr]: ...

        def pointer_of(self, e: ir.Index) -> tuple[int, int] | None: ...

        def pointer_steps(self, s: ir.Stmt) -> list[Instr]: ...

        # hoisting.py
        def is_hoisted(self, e: ir.Index, dim: int) -> bool: ...

        def hoisted_guards(self, s: ir.For, stop: ir.Expr) -> list[Instr]: ...

        # guard_reuse.py
        def guard_is_repeated(self, e: ir.Index, dim: int) -> bool: ...

        def inverted_body(self, s: ir.Unroutine | ir.Block) -> list[ir.Stmt]: ...

        # guards.py
        def interval(self, e: ir.Expr) -> Interval: ...

        def value_guard(self, value: ir.Expr, e: ir.Index, dim: int, extent: int, *,
                        low: bool, high: bool) -> list[Instr]: ...

        def loop_range(self, s: ir.For) -> Interval: ...

        def statement_guards(self, s: ir.Stmt) -> list[Instr]: ...

        def statement_elements(self, s: ir.Stmt) -> Sequence[ir.Index]: ...

        def condition_guards(self, conditions: list[ir.Expr]) -> list[Instr]: ...
