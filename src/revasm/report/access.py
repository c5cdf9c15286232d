"""What an instruction reads and writes, read off the table's semantics templates.

A template such as ``R[{a}] = (R[{a}] + R[{b}]) & M`` is valid Python (``{a}``
parses as a one-element set), so its syntax tree says which register operands
are read (loads, and the target of an augmented assignment) and written
(stores), how many memory words are loaded and stored, whether the statement
only permutes words (``SWAP``, ``EXCH``, ``SWAPBR``), and which written
registers are updated by accumulation (``a = a ± term``, the adjoint of which
leaves ``g[a]`` alone).  Nothing here knows a mnemonic.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TypeGuard

from revasm.isa.instruction import Instruction
from revasm.isa.primitives import PRIMITIVES
from revasm.isa.table import INSTRUCTIONS


@dataclass(frozen=True)
class TemplateAccess:
    """Accesses of one instruction in one direction, by operand name.

    ``register_reads``/``register_writes``: register operands (``"a"``, ...)
    read / written; ``memory_reads``/``memory_writes``: memory words loaded /
    stored; ``permutation``: the statement only exchanges words (an
    irreversible machine does it with one temporary, erasing nothing else);
    ``accumulated``: written operands updated as ``x = x ± term(other words)``.
    """

    register_reads: tuple[str, ...]
    register_writes: tuple[str, ...]
    memory_reads: int
    memory_writes: int
    permutation: bool
    accumulated: tuple[str, ...]


def _operand(node: ast.AST) -> str | None:
    """``R[{a}]`` -> ``"a"``; anything else -> None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "R" and isinstance(node.slice, ast.Set)
            and len(node.slice.elts) == 1 and isinstance(node.slice.elts[0], ast.Name)):
        return node.slice.elts[0].id
    return None


def _is_memory(node: ast.AST) -> TypeGuard[ast.Subscript]:
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "MEM")


def _is_store(node: ast.AST) -> bool:
    """Whether ``node`` (a name, subscript or attribute) is written, not read."""
    return isinstance(getattr(node, "ctx", None), ast.Store)


def _same_words(targets: list[str | None], sources: list[str | None]) -> bool:
    """Whether two lists name the same words, each as often (none of them unnamed)."""
    return None not in targets and None not in sources and Counter(targets) == Counter(sources)


def _word_key(node: ast.AST) -> str | None:
    """A name for a register/memory/BR word appearing as a whole expression."""
    if isinstance(node, ast.Call) and node.args:  # S(R[a]), wrapping a plain word
        return _word_key(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):  # BR & M
        return _word_key(node.left)
    operand = _operand(node)
    if operand is not None:
        return f"R{operand}"
    if _is_memory(node):
        return "MEM:" + ast.dump(node.slice)
    if isinstance(node, ast.Name) and node.id == "BR":
        return "BR"
    return None


def _is_permutation(statement: ast.stmt) -> bool:
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and isinstance(statement.value, ast.Tuple)):
        return False
    targets = [_word_key(t) for t in statement.targets[0].elts]
    sources = [_word_key(v) for v in statement.value.elts]
    return _same_words(targets, sources)


def _accumulated(statement: ast.stmt) -> str | None:
    """``R[{a}] = (R[{a}] ± term) & M`` with ``term`` not reading a -> ``"a"``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = _operand(statement.targets[0])
    value = statement.value
    if target is None or not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitAnd)):
        return None
    inner = value.left
    if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Add, ast.Sub))
            and _operand(inner.left) == target):
        return None
    if any(_operand(node) == target for node in ast.walk(inner.right)):
        return None
    return target


@cache
def analyse_template(template: str) -> TemplateAccess:
    """The accesses of one semantics template (cached per template text)."""
    tree = ast.parse(template)
    reads: list[str] = []
    writes: list[str] = []
    memory_reads = memory_writes = 0
    permutation = False
    accumulated: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.AugAssign):
            operand = _operand(statement.target)
            if operand is not None:
                reads.append(operand)
            elif _is_memory(statement.target):
                memory_reads += 1
        if _is_permutation(statement):
            permutation = True
        name = _accumulated(statement)
        if name is not None:
            accumulated.append(name)
        for node in ast.walk(statement):
            operand = _operand(node)
            if operand is not None:
                (writes if _is_store(node) else reads).append(operand)
            elif _is_memory(node):
                if _is_store(node):
                    memory_writes += 1
                else:
                    memory_reads += 1
    return TemplateAccess(tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes)),
                          memory_reads, memory_writes, permutation, tuple(accumulated))


def access_of(instruction: Instruction, direction: int) -> TemplateAccess:
    """Accesses of ``instruction`` running in ``direction`` (+1 forward, -1 backward)."""
    return analyse_template(instruction.forward if direction > 0 else instruction.backward)


def adjoint_updates(instruction: Instruction) -> int:
    """Gradient words the instruction's adjoint rule updates (reverse-mode AD).

    For ``a += f(b, c)`` the adjoint adds into g[b] and g[c]; a written word
    that is not simply accumulated into (``a = -a``, a rotation) has its own
    gradient transformed too; pure exchanges only move gradients.  Counted
    from the forward template: its source operands plus its non-accumulated
    written operands.  Non-differentiable instructions carry no gradient.
    """
    if not instruction.differentiable or instruction.kind != "data":
        return 0
    rule = getattr(instruction, "adjoint", None)
    if isinstance(rule, str):  # the table's own adjoint rule, when it has one
        return gradient_writes(rule)
    access = access_of(instruction, 1)
    if access.permutation:
        return 0
    sources = [r for r in access.register_reads if r not in access.register_writes]
    transformed = [w for w in access.register_writes if w not in access.accumulated]
    return len(sources) + len(transformed)


_GRADIENT_BANKS = ("G", "GM")


def _gradient_word(node: ast.AST) -> str | None:
    """``G[{b}]`` -> ``"G:b"`` (an operand), ``GM[_i]`` -> ``"GM:..."`` (an address)."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id in _GRADIENT_BANKS):
        index = node.slice
        if (isinstance(index, ast.Set) and len(index.elts) == 1
                and isinstance(index.elts[0], ast.Name)):
            return f"{node.value.id}:{index.elts[0].id}"
        return node.value.id + ":" + ast.dump(index)
    return None


@cache
def gradient_writes(rule: str) -> int:
    """Distinct gradient words an adjoint template updates (a pure exchange counts 0)."""
    if not rule.strip():
        return 0
    written: set[str] = set()
    for statement in ast.parse(rule).body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Tuple):
            targets = [_gradient_word(t) for t in getattr(statement.targets[0], "elts", [])]
            sources = [_gradient_word(v) for v in statement.value.elts]
            if _same_words(targets, sources):
                continue  # gradients exchanged, as their values are
        for node in ast.walk(statement):
            word = _gradient_word(node)
            if word is not None and _is_store(node):
                written.add(word)
    return len(written)


@cache
def call_classes() -> dict[str, str]:
    """The energy class of each primitive a multi-cycle unit computes (the primitives
    table's ``unit``, ``isa/primitives.py``): the class of the ISA table's instructions
    that call it (``fmul``: ``mul``, ``fdiv``: ``div``, ``fn_sin`` and ``rot``: ``func``).
    Any other call an adjoint rule makes counts as an ALU operation."""
    classes: dict[str, str] = {}
    for row in PRIMITIVES:
        if not row.unit_call:
            continue
        call = re.compile(rf"\b{row.name}\(")
        found = {ins.energy_class for ins in INSTRUCTIONS
                 if call.search(f"{ins.forward} {ins.backward}")}
        if len(found) != 1:
            raise ValueError(f"primitive {row.name} ({row.unit} unit) is called by "
                             f"instructions of energy classes {sorted(found)}, not one")
        classes[row.name] = found.pop()
    return classes


@dataclass(frozen=True)
class AdjointAccess:
    """What an adjoint rule does on top of the value step, in gradient mode.

    ``gradient_reads``/``gradient_writes``: the register operands (``"a"``,
    ...) whose gradient words (``G``) are loaded / stored;
    ``memory_gradient_reads``/``..._writes``: memory-gradient words (``GM``)
    loaded / stored; ``operations``: arithmetic by energy class (``fmul`` ->
    mul, ``fdiv`` -> div, ``fn_*``/``rot`` -> func, additions, negations and
    other helpers -> alu).
    """

    gradient_reads: tuple[str, ...]
    gradient_writes: tuple[str, ...]
    memory_gradient_reads: int
    memory_gradient_writes: int
    operations: tuple[tuple[str, int], ...]


@cache
def analyse_adjoint(rule: str) -> AdjointAccess:
    """The accesses and operations of one adjoint template."""
    reads: set[str] = set()
    writes: set[str] = set()
    operations: dict[str, int] = {}

    def add(energy_class: str) -> None:
        operations[energy_class] = operations.get(energy_class, 0) + 1

    for node in ast.walk(ast.parse(rule)) if rule.strip() else ():
        word = _gradient_word(node)
        if word is not None:
            (writes if _is_store(node) else reads).add(word)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name == "addr":
                continue
            add(call_classes().get(name, "alu"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            add("alu")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            add("alu")
    return AdjointAccess(
        tuple(sorted(w[2:] for w in reads if w.startswith("G:"))),
        tuple(sorted(w[2:] for w in writes if w.startswith("G:"))),
        sum(1 for w in reads if w.startswith("GM:")),
        sum(1 for w in writes if w.startswith("GM:")), tuple(sorted(operations.items())))


def adjoint_access(instruction: Instruction) -> AdjointAccess:
    """The adjoint rule of ``instruction`` (empty when the table has none)."""
    rule = getattr(instruction, "adjoint", None)
    return analyse_adjoint(rule if isinstance(rule, str) else "")
