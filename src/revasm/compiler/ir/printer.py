"""The IR as text (``revasm compile --emit ir``), in the eDSL's own notation."""
from __future__ import annotations

from fractions import Fraction

from . import nodes as ir
from .inverse import invert_block

_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
               "+": 9, "-": 9, "*": 10, "/": 10, "//": 10, "%": 10, "neg": 11,
               "**": 12}


def format_const(value: Fraction, is_int: bool) -> str:
    if is_int and value.denominator == 1:
        return str(value.numerator)
    text = repr(float(value))
    return text


def expr_text(e: ir.Expr, parent: int = 0) -> str:
    if isinstance(e, ir.Const):
        return format_const(e.value, e.is_int)
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Index):
        return f"{e.name}[{', '.join(expr_text(i) for i in e.indices)}]"
    if isinstance(e, ir.FuncCall):
        return f"{e.name}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, ir.BinOp):
        p = _PRECEDENCE[e.op]
        text = f"{expr_text(e.left, p)} {e.op} {expr_text(e.right, p + 1)}"
    elif isinstance(e, ir.Unary):
        p = _PRECEDENCE["neg" if e.op == "-" else "not"]
        text = f"-{expr_text(e.operand, p)}" if e.op == "-" else f"not {expr_text(e.operand, p)}"
    elif isinstance(e, ir.Compare):
        p = _PRECEDENCE["cmp"]
        text = f"{expr_text(e.left, p + 1)} {e.op} {expr_text(e.right, p + 1)}"
    elif isinstance(e, ir.BoolOp):
        p = _PRECEDENCE[e.op]
        text = f" {e.op} ".join(expr_text(v, p + 1) for v in e.values)
    else:
        raise TypeError(type(e).__name__)
    return f"({text})" if p < parent else text


def stmt_lines(s: ir.Stmt, indent: str = "    ") -> list[str]:
    pad = indent
    deeper = indent + "    "
    if isinstance(s, ir.Update):
        return [f"{pad}{expr_text(s.target)} {s.op}= {expr_text(s.expr)}"]
    if isinstance(s, ir.Swap):
        return [f"{pad}SWAP({expr_text(s.a)}, {expr_text(s.b)})"]
    if isinstance(s, ir.Show):
        return [f"{pad}show({', '.join(expr_text(v) for v in s.values)})"]
    if isinstance(s, ir.Rot):
        name = "IROT" if s.inverse else "ROT"
        return [f"{pad}{name}({expr_text(s.a)}, {expr_text(s.b)}, {expr_text(s.theta)})"]
    if isinstance(s, ir.Call):
        args = ", ".join(expr_text(a) for a in s.args)
        return [f"{pad}{'~' if s.uncall else ''}{s.func}({args})"]
    if isinstance(s, ir.If):
        head = (f"({expr_text(s.pre)}, {expr_text(s.post)})" if s.post_given
                else expr_text(s.pre))
        lines = [f"{pad}if {head}:"]
        lines += block_lines(s.then, deeper)
        if s.orelse:
            lines.append(f"{pad}else:")
            lines += block_lines(s.orelse, deeper)
        return lines
    if isinstance(s, ir.While):
        if s.head:  # Janus's from-loop: the head runs before every test
            return [f"{pad}while ({expr_text(s.pre)}, {expr_text(s.post)}):  # head first",
                    *block_lines(s.head, deeper), f"{pad}  # then, while the test holds:",
                    *block_lines(s.body, deeper)]
        return [f"{pad}while ({expr_text(s.pre)}, {expr_text(s.post)}):",
                *block_lines(s.body, deeper)]
    if isinstance(s, ir.For):
        return [f"{pad}for {s.var} in range({expr_text(s.start)}, {expr_text(s.stop)}, "
                f"{s.step}):", *block_lines(s.body, deeper)]
    if isinstance(s, ir.Alloc):
        return [f"{pad}{s.name} = ancilla({_value_text(s)})"]
    if isinstance(s, ir.Free):
        checked = ", checked=True" if s.checked else ""
        return [f"{pad}free({s.name}, {_value_text(s)}{checked})"]
    if isinstance(s, ir.Routine):
        return [f"{pad}with routine():  # {s.label}", *block_lines(s.body, deeper)]
    if isinstance(s, ir.Unroutine):
        return [f"{pad}~routine  # {s.label}"]
    if isinstance(s, ir.Block):
        head = "with inverse():" if s.inverted else "with block():"
        return [f"{pad}{head}", *block_lines(s.body, deeper)]
    raise TypeError(type(s).__name__)


def _value_text(s: ir.Alloc | ir.Free) -> str:
    if isinstance(s.type, ir.ArrayType):
        return f"{s.type}"
    text = expr_text(s.value)
    if s.type == ir.FIXED and isinstance(s.value, ir.Const) and s.value.is_int:
        text = format_const(s.value.value, False)
    return text


def block_lines(body: list[ir.Stmt], indent: str) -> list[str]:
    if not body:
        return [f"{indent}pass"]
    out: list[str] = []
    for s in body:
        out += stmt_lines(s, indent)
    return out


def function_text(f: ir.Function, *, inverse: bool = False) -> str:
    params = ", ".join(f"{p.name}: {p.type}" for p in f.params)
    name = f"~{f.name}" if inverse else f.name
    body = invert_block(f.body) if inverse else f.body
    return "\n".join([f"def {name}({params}):", *block_lines(body, "    ")]) + "\n"


def module_text(module: ir.Module, *, inverse: bool = False) -> str:
    parts = []
    for name, const in module.constants.items():
        parts.append(f"{name} = {expr_text(const)}\n")
    for table in module.tables.values():
        values = ", ".join(format_const(v, table.type.element == ir.INT)
                           for v in table.values)
        parts.append(f"{table.name} = ({values})  # {table.type}\n")
    for f in module.functions.values():
        parts.append(function_text(f, inverse=inverse))
    return "\n".join(parts)
