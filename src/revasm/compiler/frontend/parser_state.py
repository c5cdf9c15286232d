"""What the function parser's mixins share: its state and each other's methods, typed.

The function parser (``parse.py``) is put together from three mixins
(``declarations.py``, ``statements.py``, ``expressions.py``) that call one
another's methods and read the state ``parse.py`` sets up.  Each mixin derives
from :class:`FunctionParserState`, which declares that state and, for the type
checker only (``TYPE_CHECKING``), the methods one mixin calls on another, so
every call is checked against one signature; at run time it adds nothing.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Protocol

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir

#: A name in scope: (its type, its kind -- "param", "ancilla", "loop variable" --, where
#: it was declared).
ScopeEntry = tuple[ir.ScalarType | ir.ArrayType, str, SourcePos]


class ModuleContext(Protocol):
    """What a function's parser reads from the module's: its source lines, constants,
    tables and the signatures of its reversible functions."""

    lines: list[str]
    constants: dict[str, ir.Const]
    tables: dict[str, ir.ConstTable]
    signatures: dict[str, ast.FunctionDef]
    routine_counter: int

    def pos(self, node: ast.AST) -> SourcePos: ...

    def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError: ...


class FunctionParserState:
    """The state of one function's parser, and the methods its mixins call on each other."""

    m: ModuleContext
    node: ast.FunctionDef
    scope: dict[str, ScopeEntry]
    routines: list[ir.Routine]
    loop_vars: list[str]
    #: id of a routine -> the ancillas it allocates (freed by its ``~routine``)
    _routine_ancillas: dict[int, list[str]]

    if TYPE_CHECKING:
        # parse.py
        def pos(self, node: ast.AST) -> SourcePos: ...

        def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError: ...

        # declarations.py
        def parse_type(self, ann: ast.expr, allow_role: bool = False
                       ) -> tuple[ir.ScalarType | ir.ArrayType, str]: ...

        def static_int(self, node: ast.expr) -> int | None: ...

        def alloc(self, target: ast.Name, call: ast.Call, s: ast.stmt) -> ir.Stmt: ...

        def free(self, call: ast.Call, s: ast.stmt) -> ir.Stmt: ...

        # statements.py
        def block(self, body: list[ast.stmt], top: bool = False) -> list[ir.Stmt]: ...

        # expressions.py
        def lvalue(self, node: ast.expr, what: str = "the target") -> ir.Expr: ...

        def subscript(self, node: ast.Subscript) -> ir.Index: ...

        def expr(self, node: ast.expr) -> ir.Expr: ...

        def type_of(self, e: ir.Expr) -> ir.ScalarType: ...
