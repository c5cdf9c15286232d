"""The derivatives of the accumulate families and the gradient rules derived from them.

For the accumulate family ``a ±= phi(b, c)`` the gradient-mode templates of
``isa/table.py`` are *derived* (:func:`accumulate_rules`) from phi's partial
derivatives, declared once per family below (``*_DERIVATIVES``), as
expressions in the vocabulary of ``isa/vocabulary.py`` over the operands.
The rule (NiLang's, Liu & Zhao 2020) for ``a += phi(b, c)``:

    backward step:  G[b] += G[a] * dphi/db;  G[c] += G[a] * dphi/dc;  a -= phi
    tangent:        T[a] += dphi/db * T[b] + dphi/dc * T[c]
    gradient tangent: TG[x] += TG[a] * dphi/dx
                              + G[a] * (d2phi/dx db * T[b] + d2phi/dx dc * T[c])

The banks (``G``, ``T``, ``TG``) and the order a step runs the templates in
are in ``isa/adjoint.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Derivative:
    """phi's first and second partial derivatives, as vocabulary expressions.

    ``partials`` maps an operand (``"b"``, ``"c"``) to d phi / d operand;
    ``second`` maps an ordered pair of operands to the second partial
    (missing pairs are zero; ``("b", "c")`` also serves ``("c", "b")``).
    ``"one"`` is the fixed-point 1.0 and is not multiplied out.  A second
    partial may name a first partial that is a call as ``_db`` / ``_dc``
    (the derived templates compute those first).
    """

    partials: tuple[tuple[str, str], ...]
    second: dict[tuple[str, str], str] = field(default_factory=dict)

    def second_partial(self, x: str, y: str) -> str | None:
        return self.second.get((x, y)) or self.second.get((y, x))


_B = "R[{b}]"
_C = "R[{c}]"


def _d(partials: dict[str, str], second: dict[tuple[str, str], str] | None = None) -> Derivative:
    return Derivative(tuple(partials.items()), dict(second or {}))


def _tan(x: str) -> str:
    return f"fn_tan({x})"


_ONE_PLUS_TAN2 = f"fadd(one, fmul({_tan(_B)}, {_tan(_B)}))"
_ONE_MINUS_TANH2 = f"fsub(one, fmul(fn_tanh({_B}), fn_tanh({_B})))"
_HALF_OVER_SQRT = f"fdiv(one, shl(fn_sqrt({_B}), 1))"
_ATAN_P = f"fdiv(one, fadd(one, fmul({_B}, {_B})))"
_R2 = f"fadd(fmul({_B}, {_B}), fmul({_C}, {_C}))"
_ATAN2_PB = f"fdiv({_C}, {_R2})"
_ATAN2_PC = f"fneg(fdiv({_B}, {_R2}))"
_C_MINUS_ONE = f"fsub({_C}, one)"

#: d/db of ``a ± f(b)`` for every unary function family (names as in the table).
UNARY_DERIVATIVES: dict[str, Derivative] = {
    "sin": _d({"b": f"fn_cos({_B})"}, {("b", "b"): f"fneg(fn_sin({_B}))"}),
    "cos": _d({"b": f"fneg(fn_sin({_B}))"}, {("b", "b"): f"fneg(fn_cos({_B}))"}),
    # tan' = 1 + tan^2;  tan'' = 2 tan (1 + tan^2)
    "tan": _d({"b": _ONE_PLUS_TAN2},
              {("b", "b"): f"fmul(shl({_tan(_B)}, 1), _db)"}),
    # tanh' = 1 - tanh^2;  tanh'' = -2 tanh (1 - tanh^2)
    "tanh": _d({"b": _ONE_MINUS_TANH2},
               {("b", "b"): f"fneg(fmul(shl(fn_tanh({_B}), 1), _db))"}),
    "exp": _d({"b": f"fn_exp({_B})"}, {("b", "b"): f"fn_exp({_B})"}),
    # log' = 1/x;  log'' = -1/x^2
    "log": _d({"b": f"fdiv(one, {_B})"}, {("b", "b"): f"fneg(fdiv(fdiv(one, {_B}), {_B}))"}),
    # sqrt' = 1/(2 sqrt x);  sqrt'' = -sqrt'/(2x)
    "sqrt": _d({"b": _HALF_OVER_SQRT},
               {("b", "b"): f"fneg(fdiv(_db, shl({_B}, 1)))"}),
    # abs' = sign x (0 at 0);  abs'' = 0
    "abs": _d({"b": f"fsign({_B})"}),
    # atan' = 1/(1+x^2);  atan'' = -2x/(1+x^2)^2
    "atan": _d({"b": _ATAN_P},
               {("b", "b"): "fneg(fmul(shl(R[{b}], 1), fmul(_db, _db)))"}),
    "sinh": _d({"b": f"fn_cosh({_B})"}, {("b", "b"): f"fn_sinh({_B})"}),
    "cosh": _d({"b": f"fn_sinh({_B})"}, {("b", "b"): f"fn_cosh({_B})"}),
    # sigmoid' = s (1 - s);  sigmoid'' = s' (1 - 2 s)
    "sigmoid": _d({"b": f"fmul(fn_sigmoid({_B}), fsub(one, fn_sigmoid({_B})))"},
                  {("b", "b"): f"fmul(_db, fsub(one, shl(fn_sigmoid({_B}), 1)))"}),
}

#: d/db and d/dc of ``a ± f(b, c)`` for every binary function family.
BINARY_DERIVATIVES: dict[str, Derivative] = {
    # atan2(y=b, x=c): d/dy = x/r2, d/dx = -y/r2 with r2 = x^2 + y^2;
    # d2/dy2 = -2xy/r2^2 = 2 p_b p_c, d2/dx2 = -d2/dy2, d2/dxdy = (y^2-x^2)/r2^2 = p_c^2 - p_b^2
    "atan2": _d({"b": _ATAN2_PB, "c": _ATAN2_PC},
                {("b", "b"): "shl(fmul(_db, _dc), 1)",
                 ("c", "c"): "fneg(shl(fmul(_db, _dc), 1))",
                 ("b", "c"): "fsub(fmul(_dc, _dc), fmul(_db, _db))"}),
    # pow(x=b, y=c) = x^y: d/dx = y x^(y-1), d/dy = x^y ln x; d2/dx2 = y (y-1) x^(y-2),
    # d2/dxdy = x^(y-1) (1 + y ln x), d2/dy2 = x^y ln^2 x
    "pow": _d({"b": f"fmul({_C}, fn_pow({_B}, {_C_MINUS_ONE}))",
               "c": f"fmul(fn_pow({_B}, {_C}), fn_log({_B}))"},
              {("b", "b"): f"fmul(fmul({_C}, {_C_MINUS_ONE}), "
                           f"fn_pow({_B}, fsub({_C_MINUS_ONE}, one)))",
               ("b", "c"): f"fmul(fn_pow({_B}, {_C_MINUS_ONE}), "
                           f"fadd(one, fmul({_C}, fn_log({_B}))))",
               ("c", "c"): f"fmul(fn_pow({_B}, {_C}), fmul(fn_log({_B}), fn_log({_B})))"}),
}

#: ``a ± b``, ``a ± b*c`` and ``a ± b/c``.
COPY_DERIVATIVE = _d({"b": "one"})
PRODUCT_DERIVATIVE = _d({"b": _C, "c": _B}, {("b", "c"): "one"})
# b/c: d/db = 1/c, d/dc = -b/c^2; d2/dbdc = -1/c^2, d2/dc2 = 2b/c^3
QUOTIENT_DERIVATIVE = _d(
    {"b": f"fdiv(one, {_C})", "c": f"fneg(fdiv(fdiv({_B}, {_C}), {_C}))"},
    {("b", "c"): f"fneg(fdiv(fdiv(one, {_C}), {_C}))",
     ("c", "c"): f"shl(fdiv(fdiv(fdiv({_B}, {_C}), {_C}), {_C}), 1)"})


@dataclass(frozen=True)
class GradientRules:
    """The three gradient-mode templates of one instruction (see ``isa/adjoint.py``)."""

    adjoint: str = ""
    tangent: str = ""
    adjoint_tangent: str = ""


def _times(word: str, factor: str) -> str:
    return word if factor == "one" else f"fmul({word}, {factor})"


def _sum(terms: list[str]) -> str:
    """Words added mod 2^W, as one word (fmul's operands must be canonical words)."""
    total = terms[0]
    for term in terms[1:]:
        total = f"fadd({total}, {term})"
    return total


def _name(expression: str, local: str, definitions: list[str]) -> str:
    """A call-shaped expression becomes a local definition (read once, shown once)."""
    if "(" not in expression:
        return expression
    definitions.append(f"{local} = {expression}")
    return local


def accumulate_rules(sign: str, derivative: Derivative) -> GradientRules:
    """The templates of ``a += phi`` (``sign`` ``+``) or ``a -= phi`` (``-``), from phi's partials.

    Partials that are calls are computed once into locals ``_db``, ``_dc``
    (second partials ``_dbb``, ``_dbc``, ``_dcc``) at the top of the template;
    they read only value registers, which the updates never write.
    """
    if sign not in "+-":
        raise ValueError(f"sign must be + or -, not {sign!r}")
    operands = [x for x, _ in derivative.partials]
    first_defs: list[str] = []
    partial = {x: _name(p, f"_d{x}", first_defs) for x, p in derivative.partials}
    second_defs: list[str] = []
    second: dict[tuple[str, str], str] = {}
    for i, x in enumerate(operands):
        for y in operands[i:]:
            expression = derivative.second_partial(x, y)
            if expression:
                second[(x, y)] = second[(y, x)] = _name(expression, f"_d{x}{y}", second_defs)
    adjoint, tangent, adjoint_tangent = list(first_defs), list(first_defs), list(first_defs)
    adjoint_tangent += second_defs
    for x in operands:
        adjoint.append(f"G[{{{x}}}] = (G[{{{x}}}] {sign} {_times('G[{a}]', partial[x])}) & M")
        tangent.append(f"T[{{a}}] = (T[{{a}}] {sign} {_times(f'T[{{{x}}}]', partial[x])}) & M")
        curvature = [_times(f"T[{{{y}}}]", second[(x, y)]) for y in operands if (x, y) in second]
        terms = [_times("TG[{a}]", partial[x])]
        if curvature:
            terms.append(f"fmul(G[{{a}}], {_sum(curvature)})")
        term = " + ".join(terms)
        if len(terms) > 1 and sign == "-":
            term = f"({term})"
        adjoint_tangent.append(f"TG[{{{x}}}] = (TG[{{{x}}}] {sign} {term}) & M")
    return GradientRules("\n".join(adjoint), "\n".join(tangent), "\n".join(adjoint_tangent))
