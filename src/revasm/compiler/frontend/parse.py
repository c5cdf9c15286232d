"""The front end: ``@reversible`` Python functions, read with :mod:`ast`, to the IR.

The source is parsed, never executed.  Anything outside the grammar of
docs/language.md is a :class:`CompileError` at its file, line and column,
with a hint saying what to write instead.

This module reads a file's module level (``@reversible`` functions, constants
and constant tables) and puts one function's parser together from
``declarations.py``, ``statements.py`` and ``expressions.py``; the operator and
name tables are in ``syntax.py``.
"""
from __future__ import annotations

import ast
import math
import warnings
from fractions import Fraction
from pathlib import Path

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from .declarations import DeclarationParser
from .expressions import ExpressionParser
from .statements import StatementParser
from .syntax import ELEMENTARY  # noqa: F401 - re-exported


def parse_file(path: str | Path) -> ir.Module:
    """Parse every ``@reversible`` function of a Python file."""
    path = Path(path)
    if path.is_dir():
        raise CompileError(SourcePos(str(path), 1, 1), "is a directory: the compiler reads a "
                           "Python source file (SRC.py)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CompileError(SourcePos(str(path), 1, 1),
                           f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + data[:exc.start].count(b"\r") \
            - data[:exc.start].count(b"\r\n") + 1
        column = exc.start - max(data.rfind(b"\n", 0, exc.start),
                                 data.rfind(b"\r", 0, exc.start))
        raise CompileError(SourcePos(str(path), line, column),
                           f"the file is not UTF-8 text (byte {data[exc.start]:#04x})") from None
    return parse_source(text, str(path))


def parse_source(text: str, filename: str = "<source>") -> ir.Module:
    """Every ``@reversible`` function of a Python source text (line ends \\n, \\r\\n or \\r)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    nul = text.find("\0")
    if nul >= 0:  # (ast.parse refuses it with a SyntaxError or, before Python 3.11.4, a
        # ValueError: said here alike on every interpreter)
        line = text.count("\n", 0, nul) + 1
        start = text.rfind("\n", 0, nul) + 1
        raise CompileError(SourcePos(filename, line, nul - start + 1),
                           "Python syntax error: the source holds a NUL character (\\x00)",
                           source_line=text[start:].split("\n", 1)[0].replace("\0", "\\x00"))
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like: not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        pos = SourcePos(filename, exc.lineno or 1, exc.offset or 1)
        raise CompileError(pos, f"Python syntax error: {exc.msg}",
                           source_line=(exc.text or "").rstrip("\n")) from None
    return _ModuleParser(text, filename).parse(tree)


class _ModuleParser:
    def __init__(self, text: str, filename: str) -> None:
        self.lines = text.split("\n")  # as Python counts lines (not at \\f, \\x1c, ...)
        self.file = filename
        self.constants: dict[str, ir.Const] = {}
        self.tables: dict[str, ir.ConstTable] = {}
        self.signatures: dict[str, ast.FunctionDef] = {}
        self.routine_counter = 0

    # --- errors -------------------------------------------------------------------

    def pos(self, node: ast.AST) -> SourcePos:
        return SourcePos(self.file, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1)

    def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError:
        pos = self.pos(node)
        line = self.lines[pos.line - 1] if 0 < pos.line <= len(self.lines) else ""
        return CompileError(pos, message, hint, line)

    # --- the module ---------------------------------------------------------------

    def parse(self, tree: ast.Module) -> ir.Module:
        functions: list[ast.FunctionDef] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    self._is_reversible(d) for d in node.decorator_list):
                if node.name in self.signatures:
                    raise self.error(node, f"a second reversible function named {node.name!r}")
                self.signatures[node.name] = node
                functions.append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                self._module_constant(node.targets[0].id, node.value, node)
        if not functions:
            raise CompileError(SourcePos(self.file, 1, 1),
                               "no function marked @reversible in this file",
                               "decorate the function: from revasm.compiler import reversible; "
                               "@reversible def f(x: Fixed): ...")
        module = ir.Module(self.file, {}, self.constants, self.tables, self.lines)
        for node in functions:
            module.functions[node.name] = _FunctionParser(self, node).parse()
        return module

    def _is_reversible(self, decorator: ast.expr) -> bool:
        if isinstance(decorator, ast.Name):
            return decorator.id == "reversible"
        return isinstance(decorator, ast.Attribute) and decorator.attr == "reversible"

    def _module_constant(self, name: str, value: ast.expr, node: ast.AST) -> None:
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return  # not a constant the compiler uses; ignore
        if isinstance(literal, float) and not math.isfinite(literal):
            raise self.error(node, f"constant {name!r} is {literal}, not a finite number")
        if isinstance(literal, bool):
            self.constants[name] = ir.Const(self.pos(node), Fraction(int(literal)), True)
        elif isinstance(literal, (int, float)):
            self.constants[name] = ir.Const(self.pos(node), Fraction(literal),
                                            isinstance(literal, int))
        elif isinstance(literal, (tuple, list)) and literal:
            shape, flat = _table_shape(literal)
            if shape is None:
                raise self.error(node, f"table {name!r} must be a rectangular tuple of numbers")
            if any(isinstance(v, float) and not math.isfinite(v) for v in flat):
                raise self.error(node, f"table {name!r} holds a number that is not finite "
                                 "(inf or nan)")
            is_int = all(isinstance(v, int) for v in flat)
            element = ir.INT if is_int else ir.FIXED
            self.tables[name] = ir.ConstTable(name, ir.ArrayType(element, shape),
                                              tuple(Fraction(v) for v in flat), self.pos(node))


def _table_shape(literal: object) -> tuple[tuple[int, ...] | None, list[int | float]]:
    """(shape, the numbers row-major) of a nested tuple of numbers; (None, []) when it is
    not a rectangular one."""
    if isinstance(literal, (int, float)) and not isinstance(literal, bool):
        return (), [literal]
    if not isinstance(literal, (tuple, list)) or not literal:
        return None, []
    shapes: set[tuple[int, ...]] = set()
    flat: list[int | float] = []
    for item in literal:
        shape, values = _table_shape(item)
        if shape is None:
            return None, []
        shapes.add(shape)
        flat += values
    if len(shapes) != 1:
        return None, []
    return (len(literal), *shapes.pop()), flat


class _FunctionParser(DeclarationParser, StatementParser, ExpressionParser):
    """One ``@reversible`` function to an :class:`ir.Function` (``parse``)."""

    def __init__(self, module: _ModuleParser, node: ast.FunctionDef) -> None:
        self.m = module
        self.node = node
        self.scope = {}  # name -> (type, kind, pos)
        self.routines = []
        self.loop_vars = []
        self._routine_ancillas = {}

    def error(self, node: ast.AST, message: str, hint: str = "") -> CompileError:
        return self.m.error(node, message, hint)

    def pos(self, node: ast.AST) -> SourcePos:
        return self.m.pos(node)
