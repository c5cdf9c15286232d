"""The table's semantics templates, rewritten once into functions on lane arrays.

A template (``isa/table.py``) is a Python statement over ``R``, ``MEM``, ``BR``,
``DIR`` and the vocabulary, written for one machine.  The vector engine runs
the *same text* on a group of lanes: it parses it, and rewrites

* every operator ``x OP y`` into a helper call ``_op(x, y)`` (``words.py``) that
  reconciles Python integers with ``uint64``/``int64`` arrays exactly;
* ``x OP= y`` into ``x = _op(x, y)``, so no array is ever changed in place;
* ``if C: T = V`` (branches) into ``T = _where(C, V, T)``: every lane evaluates
  the statement and keeps the new value only where its condition holds;
* ``A if C else B`` into ``_where(C, A, B)``; ``and``/``or``/``not`` into their
  element-wise forms.

The result is compiled as ``def _cell(BANK..., BR, DIR): ...; return BR, DIR``.
Nothing here knows a mnemonic, so any entry added to the table -- including
the adjoint templates of gradient mode -- runs as long as its vocabulary
names exist (``vocabulary.py`` falls back to a per-lane call of the scalar
function for names it does not vectorize).
"""
from __future__ import annotations

import ast
from functools import lru_cache
from types import CodeType

from revasm.isa.primitives import FAULTING, PAIRS, UNIT_CALLS, names

_BINARY = {
    ast.Add: "_add", ast.Sub: "_sub", ast.Mult: "_mul", ast.BitAnd: "_and",
    ast.BitOr: "_or", ast.BitXor: "_xor", ast.LShift: "_lshift", ast.RShift: "_rshift",
    ast.FloorDiv: "_floordiv", ast.Mod: "_mod",
}


#: Helpers whose result is always a new array (or a Python int), never a stored row.
_FRESH = frozenset(_BINARY.values()) | {"_neg", "_invert"}
#: Helpers with an in-place twin (``_add_``) used when their left operand is fresh.
_IN_PLACE = frozenset({"_add", "_sub", "_mul", "_and", "_or", "_xor"})


class TemplateError(ValueError):
    """A template uses a construct the vector engine cannot run on lanes."""


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _load(target: ast.expr) -> ast.expr:
    """The same target as an expression (``R[3]`` read instead of written)."""
    node = ast.parse(ast.unparse(target), mode="eval").body
    return node


class _Vectorize(ast.NodeTransformer):
    def __init__(self) -> None:
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"_v{self.counter}"

    # --- expressions -------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        name = _BINARY.get(type(node.op))
        if name is None:
            raise TemplateError(f"operator {type(node.op).__name__} is not supported on lanes")
        # Constant folding keeps pure-immediate arithmetic (imm << 16*k) in Python ints.
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            return node
        # The left operand is another operator's fresh result: reuse its storage
        # (numpy's own temporary elision, decided here from the expression tree).
        if (name in _IN_PLACE and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id in _FRESH):
            return _call(name + "_", node.left, node.right)
        return _call(name, node.left, node.right)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.operand, ast.Constant):
            return node
        if isinstance(node.op, ast.USub):
            return _call("_neg", node.operand)
        if isinstance(node.op, ast.Invert):
            return _call("_invert", node.operand)
        if isinstance(node.op, ast.Not):
            return _call("_not", node.operand)
        return node.operand

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        name = "_land" if isinstance(node.op, ast.And) else "_lor"
        result = node.values[0]
        for value in node.values[1:]:
            result = _call(name, result, value)
        return result

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        result: ast.expr = parts[0]
        for part in parts[1:]:
            result = _call("_land", result, part)
        return result

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        return _call("_where", node.test, node.body, node.orelse)

    # --- statements ----------------------------------------------------------

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.Assign:
        value = self.visit(node.value)
        target = node.target
        current = self.visit(_load(target))
        name = _BINARY.get(type(node.op))
        if name is None:
            raise TemplateError(f"operator {type(node.op).__name__}= is not supported on lanes")
        return ast.Assign(targets=[target], value=_call(name, current, value))

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        test = self.visit(node.test)
        flag = self.fresh()
        out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=flag, ctx=ast.Store())],
                                          value=test)]
        out += self._guarded(node.body, ast.Name(id=flag, ctx=ast.Load()))
        if node.orelse:
            out += self._guarded(node.orelse, _call("_not", ast.Name(id=flag, ctx=ast.Load())))
        return out

    def _guarded(self, body: list[ast.stmt], condition: ast.expr) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in body:
            if isinstance(statement, ast.If):
                inner = self.visit(statement.test)
                flag = self.fresh()
                out.append(ast.Assign(targets=[ast.Name(id=flag, ctx=ast.Store())],
                                      value=_call("_land", condition, inner)))
                out += self._guarded(statement.body, ast.Name(id=flag, ctx=ast.Load()))
                if statement.orelse:
                    other = _call("_land", condition,
                                  _call("_not", self.visit(_load(statement.test))))
                    out += self._guarded(statement.orelse, other)
                continue
            if isinstance(statement, ast.Pass):
                continue
            if isinstance(statement, ast.AugAssign):
                assignment = self.visit_AugAssign(statement)
            elif isinstance(statement, ast.Assign):
                assignment = ast.Assign(targets=statement.targets,
                                        value=self.visit(statement.value))
            else:
                raise TemplateError("only assignments may be conditional on lanes, not "
                                    f"{ast.unparse(statement)!r}")
            out += self._guarded_assign(assignment, condition)
        return out

    def _guarded_assign(self, statement: ast.Assign, condition: ast.expr) -> list[ast.stmt]:
        if len(statement.targets) != 1:
            raise TemplateError("chained assignment is not supported on lanes")
        target = statement.targets[0]
        if isinstance(target, ast.Tuple):
            temp = self.fresh()
            out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())],
                                              value=statement.value)]
            for i, element in enumerate(target.elts):
                part = ast.Subscript(value=ast.Name(id=temp, ctx=ast.Load()),
                                     slice=ast.Constant(i), ctx=ast.Load())
                out.append(ast.Assign(targets=[element],
                                      value=_call("_where", condition, part, _load(element))))
            return out
        return [ast.Assign(targets=[target],
                           value=_call("_where", condition, statement.value, _load(target)))]


def _bank_names(tree: ast.AST) -> set[str]:
    return {node.value.id for node in ast.walk(tree)
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)}


_CACHE: dict[tuple[str, tuple[str, ...]], CodeType] = {}


def vector_source(statement: str, banks: tuple[str, ...]) -> str:
    """The vectorized function's source for one template statement (for reading)."""
    tree = ast.parse(statement)
    unknown = _bank_names(tree) - set(banks) - {"_v"}
    if unknown:
        raise TemplateError(f"the template uses {', '.join(sorted(unknown))}, which the "
                            f"vector engine does not hold (it has {', '.join(banks)})")
    body: list[ast.stmt] = []
    transformer = _Vectorize()
    for statement_node in tree.body:
        result = transformer.visit(statement_node)
        body += result if isinstance(result, list) else [result]
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    text = "\n".join("    " + line for line in ast.unparse(module).split("\n") if line)
    params = ", ".join(banks)
    return f"def _cell({params}, BR, DIR):\n{text or '    pass'}\n    return BR, DIR\n"


def compile_template(statement: str, banks: tuple[str, ...]) -> CodeType:
    """Compiled code that defines ``_cell``; cached by statement text."""
    key = (statement, banks)
    code = _CACHE.get(key)
    if code is None:
        if len(_CACHE) > 20_000:
            _CACHE.clear()
        code = compile(vector_source(statement, banks), "<revasm vector template>", "exec")
        _CACHE[key] = code
    return code


#: Vocabulary names that can neither fault nor touch a device, so a straight-line run
#: of templates using only these may be fused into one function (see ``fused_source``):
#: the constants, ``S``, and every primitive whose row declares no fault
#: (``isa/primitives.py``).
FUSABLE_NAMES = (frozenset({"S", "one", "M", "W", "F", "True", "False"})
                 | frozenset(names(can_fault=False)))

#: The primitives that may fault on some lanes (``fdiv``, ``fn_sqrt``, ...: pure functions
#: of register words).  A fused block may hold them behind a
#: guard (``_snap``): the rows the template writes are kept before it runs, and a fault
#: puts them back and stops the block there (``VectorMachine._run_fused``).
GUARDED_NAMES = FAULTING | {"addr", "overflow"}
#: (``addr``: a memory address, which in a fused block must be the same legal address
#: on every lane of the tile; any other tile stops there and runs the template alone.
#: ``overflow``: the overflow-event device, which faults only on a strict machine.)


_FUSABLE: dict[tuple[str, tuple[str, ...]], bool] = {}
_FUSED: dict[tuple, CodeType] = {}


def fusable(statement: str, register_banks: tuple[str, ...]) -> bool:
    """Whether a template may run inside a fused block (cached by text)."""
    key = (statement, register_banks)
    answer = _FUSABLE.get(key)
    if answer is None:
        answer = _FUSABLE[key] = _fusable(statement, register_banks)
    return answer


def fused_code(statements: tuple[str, ...], banks: tuple[str, ...]) -> CodeType:
    """Compiled ``fused_source`` (defines ``_block``), cached by the statements."""
    key = (statements, banks)
    code = _FUSED.get(key)
    if code is None:
        if len(_FUSED) > 2_000:
            _FUSED.clear()
        code = _FUSED[key] = compile(fused_source(list(statements), banks),
                                     "<revasm vector block>", "exec")
    return code


@lru_cache(maxsize=4096)
def guarded(statement: str) -> bool:
    """Whether a fusable template calls a name that may fault (``GUARDED_NAMES``)."""
    return any(isinstance(node, ast.Name) and node.id in GUARDED_NAMES
               for node in ast.walk(ast.parse(statement)))


@lru_cache(maxsize=4096)
def _may_repeat_a_call(statement: str) -> bool:
    """A cheap test before ``_share_calls``: some costly name is called twice."""
    return any(statement.count(name + "(") > 1 for name in _SHARED_CALLS)


def _fusable(statement: str, register_banks: tuple[str, ...]) -> bool:
    """Whether a template may run inside a fused block: register banks at constant
    indexes only, and only names that touch no device or memory (those that may fault
    run behind a guard)."""
    tree = ast.parse(statement)
    if _bank_names(tree) - set(register_banks):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)):
            return False
        if isinstance(node, ast.Subscript) and _slot(node) is None and not (
                isinstance(node.value, ast.Name) and node.value.id.endswith("M")
                and isinstance(node.slice, ast.Name)):
            return False  # a register at a computed index; memory is MEM[_i]
        if isinstance(node, ast.Assign) and not _exchange_or_register(node):
            return False
        if isinstance(node, ast.Name) and not node.id.startswith("_"):
            if (node.id not in FUSABLE_NAMES and node.id not in GUARDED_NAMES
                    and node.id not in register_banks):
                return False
    return True


def _exchange_or_register(node: ast.Assign) -> bool:
    """A store into memory only as an exchange (``R[a], MEM[_i] = MEM[_i], R[a]``): rows
    then move between slots and are never shared, so a fused block's store need not
    look through the memory's rows for a second holder (``VectorMachine`` ``_store``)."""
    targets = [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    if not any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
               and t.value.id.endswith("M") for t in targets):
        return True
    if len(node.targets) != 1 or not isinstance(node.value, ast.Tuple):
        return False
    written = sorted(ast.unparse(t) for t in targets)
    return written == sorted(ast.unparse(e) for e in node.value.elts)


def _snap(index: int) -> ast.stmt:
    """``_snap(i)``: from here the block's stores keep the rows they replace."""
    return ast.Expr(value=_call("_snap", ast.Constant(index)))


def _unsnap() -> ast.stmt:
    """``_unsnap()``: the guarded template is done; stores stop keeping rows."""
    return ast.Expr(value=_call("_unsnap"))


def _is_snap(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in ("_snap", "_unsnap"))


class _Store(ast.NodeTransformer):
    """``B[k] = v`` -> ``_store(B, k, v)``: whole rows, checked and recycled (fused blocks).

    With ``in_place``, ``B[k] = (B[k] OP x) ...`` updates row ``B[k]`` itself (``_op_``),
    like numpy's ``a += b``; only allowed when no template local holds a row.
    """

    def __init__(self, in_place: bool) -> None:
        self.counter = 0
        self.in_place = in_place

    def _update_in_place(self, target: ast.Subscript, value: ast.expr) -> None:
        node = value
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id.rstrip("_")
            if name not in _IN_PLACE or len(node.args) != 2:
                return
            left = node.args[0]
            if isinstance(left, ast.Subscript):
                if ast.unparse(left) == ast.unparse(target) and not node.func.id.endswith("_"):
                    node.func = ast.Name(id=name + "_", ctx=ast.Load())
                return
            node = left

    def visit_Assign(self, node: ast.Assign) -> list[ast.stmt] | ast.stmt:
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            if self.in_place:
                self._update_in_place(target, node.value)
            return ast.Expr(value=_call("_store", target.value, target.slice, node.value))
        if isinstance(target, ast.Tuple) and any(isinstance(e, ast.Subscript)
                                                 for e in target.elts):
            self.counter += 1
            temp = f"_f{self.counter}"
            out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=temp, ctx=ast.Store())],
                                              value=node.value)]
            for i, element in enumerate(target.elts):
                part = ast.Subscript(value=ast.Name(id=temp, ctx=ast.Load()),
                                     slice=ast.Constant(i), ctx=ast.Load())
                if isinstance(element, ast.Subscript):
                    out.append(ast.Expr(value=_call("_store", element.value, element.slice,
                                                    part)))
                else:
                    out.append(ast.Assign(targets=[element], value=part))
            return out
        return node


#: Vocabulary calls worth computing once when a template repeats them (pure, costly): the
#: guarded names and the units' calls of one word.
_SHARED_CALLS = GUARDED_NAMES | (frozenset(UNIT_CALLS) - PAIRS)


def _share_calls(nodes: list[ast.stmt], index: int) -> list[ast.stmt]:
    """Compute a repeated costly call of one template once (ADDDIV's gradient step
    divides ``R[b]`` by ``R[c]`` twice): ``_s<i>_<k> = call`` before the statement that
    first uses it, while none of its slots has been written since.  The calls are pure,
    so only the order in which two of them might fault changes, and in a fused block
    a fault only stops the block (the template then runs on its own)."""
    def key(node: ast.AST) -> str | None:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _SHARED_CALLS and not node.keywords):
            return ast.unparse(node)
        return None

    def reads(node: ast.expr) -> set:
        return {_slot(n) for n in ast.walk(node)} - {None}

    def written(node: ast.stmt) -> set:
        targets = node.targets if isinstance(node, ast.Assign) else []
        return {_slot(e) for t in targets
                for e in (t.elts if isinstance(t, ast.Tuple) else [t])} - {None}

    counts: dict[str, int] = {}
    live: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            k = key(sub)
            if k is not None:
                counts[k] = counts.get(k, 0) + 1
    shared = {k for k, c in counts.items() if c > 1}
    if not shared:
        return nodes
    names: dict[str, str] = {}
    out: list[ast.stmt] = []

    class Replace(ast.NodeTransformer):
        def __init__(self) -> None:
            self.hoisted: list[ast.stmt] = []

        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            k = key(node)
            if k not in shared:
                return node
            if k not in live:
                names[k] = f"_s{index}_{len(names)}"
                self.hoisted.append(ast.Assign(
                    targets=[ast.Name(id=names[k], ctx=ast.Store())], value=node))
                live.add(k)
            return ast.Name(id=names[k], ctx=ast.Load())

    slots_of = {k: reads(ast.parse(k, mode="eval").body) for k in shared}
    for node in nodes:
        replace = Replace()
        if isinstance(node, ast.Assign):
            node = ast.Assign(targets=node.targets, value=replace.visit(node.value))
        out += replace.hoisted + [node]
        for slot in written(node):
            live -= {k for k in live if slot in slots_of[k]}
    return out


def fused_source(statements: list[str], banks: tuple[str, ...]) -> str:
    """One function for a straight-line run of fusable templates on whole rows.

    A template that may fault (``guarded``) runs between ``_snap(i)`` and ``_unsnap()``
    and writes fresh rows only (no in-place update); its stores keep the rows they
    replace, so if it faults they are put back and the block stops as if it had been
    split before template ``i``."""
    parts: list[tuple[int, bool, list[ast.stmt]]] = []
    for index, statement in enumerate(statements):
        transformer = _Vectorize()
        nodes: list[ast.stmt] = []
        for node in ast.parse(statement).body:
            result = transformer.visit(node)
            nodes += result if isinstance(result, list) else [result]
        if _may_repeat_a_call(statement):
            nodes = _share_calls(nodes, index)
        parts.append((index, guarded(statement), nodes))
    body = [node for _, _, nodes in parts for node in nodes]
    # A local bound to a bare row (``_x = R[3]``) would see an in-place update.
    holds_row = any(isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and any(isinstance(n, ast.Subscript) for n in ast.walk(node.value))
                    and not isinstance(node.value, ast.Call)
                    for node in body)
    store, fresh_only = _Store(in_place=not holds_row), _Store(in_place=False)
    stored: list[ast.stmt] = []
    for index, is_guarded, nodes in parts:
        if is_guarded:
            stored.append(_snap(index))
        for node in nodes:
            result = (fresh_only if is_guarded else store).visit(node)
            stored += result if isinstance(result, list) else [result]
        if is_guarded:
            stored.append(_unsnap())
    if not holds_row:
        stored = _defer_masks(stored)
    module = ast.fix_missing_locations(ast.Module(body=stored, type_ignores=[]))
    text = "\n".join("    " + line for line in ast.unparse(module).split("\n") if line)
    return f"def _block({', '.join(banks)}):\n{text or '    pass'}\n"


#: Operations whose low W bits depend only on the low W bits of their operands.
_RING = frozenset({"_add", "_sub", "_mul", "_and", "_or", "_xor"})


def _slot(node: ast.AST) -> tuple[str, int] | None:
    """``B[k]`` (a bank name and a constant index) as a key, else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
        return node.value.id, node.slice.value
    return None


def _ring_only(node: ast.expr) -> bool:
    if _slot(node) is not None:
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return node.id == "M"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id.rstrip("_") in _RING and len(node.args) == 2
            and not node.keywords and all(_ring_only(a) for a in node.args))


def _mask_statement(bank: str, index: int) -> ast.stmt:
    slot = ast.Subscript(value=ast.Name(id=bank, ctx=ast.Load()), slice=ast.Constant(index),
                         ctx=ast.Load())
    return ast.Expr(value=_call("_store", ast.Name(id=bank, ctx=ast.Load()),
                                ast.Constant(index),
                                _call("_and_", slot, ast.Name(id="M", ctx=ast.Load()))))


def _defer_masks(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Drop the ``& M`` of ring-only stores (+ - * & | ^ of words and integers) and mask
    once, in place, before a row is read by anything else and at the end of the block.

    Bits above W are then garbage in between, which only ring operations see, and their
    low W bits depend only on the operands' low W bits: one pass over the row per
    instruction instead of two at W = 32.  Only for blocks made of ``_store(B, k, v)``
    statements (no template locals)."""
    # a guard (``_snap``/``_unsnap``), or a store: the call and the slot it writes
    stores: list[ast.stmt | tuple[ast.Call, tuple[str, int]]] = []
    for node in statements:
        if _is_snap(node):
            stores.append(node)
            continue
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "_store" and len(call.args) == 3):
            return statements
        bank_name, index_constant = call.args[0], call.args[1]
        index = index_constant.value if isinstance(index_constant, ast.Constant) else None
        if not (isinstance(bank_name, ast.Name) and isinstance(index, int)
                and type(index) is int):
            return statements
        stores.append((call, (bank_name.id, index)))
    out: list[ast.stmt] = []
    dirty: set[tuple[str, int]] = set()
    for item in stores:
        if not isinstance(item, tuple):  # a guard: every row clean when it is kept
            out += [_mask_statement(bank, index) for bank, index in sorted(dirty)]
            dirty.clear()
            out.append(item)
            continue
        call, target = item
        value = call.args[2]
        reads = {slot for n in ast.walk(value) if (slot := _slot(n)) is not None}
        if _ring_only(value):
            masked = False
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id.rstrip("_") == "_and"
                    and isinstance(value.args[1], ast.Name) and value.args[1].id == "M"):
                masked, value = True, value.args[0]
            if masked or reads & dirty:
                dirty.add(target)
            else:
                dirty.discard(target)
            out.append(ast.Expr(value=_call("_store", call.args[0], call.args[1], value)))
            continue
        for bank, index in sorted(reads & dirty):
            out.append(_mask_statement(bank, index))
            dirty.discard((bank, index))
        out.append(ast.Expr(value=call))
        dirty.discard(target)
    out += [_mask_statement(bank, index) for bank, index in sorted(dirty)]
    return out
