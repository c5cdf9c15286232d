"""Declared names: ``.input/.output/.loss/.name NAME LOC [fixed|int] [= VALUE] [in LO..HI]``.

They tell the tools where a program's inputs, outputs and loss live (a register
or a memory word), how to read them (fixed point or integer) and, optionally,
the value the host loads before a run and the domain its values come from
(``in LO..HI``, both ends included: what ``revasm check --random`` draws).  They are
resolved after layout, so a declaration may name a label defined further down.
"""
from __future__ import annotations

from dataclasses import replace

from .checks import Placed
from .context import Context
from .directives import DECLARATION_ROLES, DIRECTIVES, VALUE_TYPES
from .image import DeclaredName
from .lexer import Token
from .operands import OperandError, is_register, register, value
from .parser import NAME, Statement
from .values import ValueRuleError, kind_of, word_of

Parts = tuple[Token, Token, Token | None, Token | None]
#: The domain's words: ``in LO..HI`` splits into the two ends (None when absent).
Domain = tuple[Token, Token] | None


def declared_names(ctx: Context, statements: list[Statement],
                   code: dict[int, Placed]) -> dict[str, DeclaredName]:
    names: dict[str, DeclaredName] = {}
    lines: dict[str, int] = {}
    words: dict[tuple[str, bool], int] = {}  # a value's word by its text and type, once
    type_token: Token | None
    default_token: Token | None
    for statement in statements:
        plain = _plain_parts(statement.operands)
        if plain is not None:
            domain_tokens = None
            name_token, location_token, type_token, default_token = plain
        else:
            split = _split_domain(ctx, statement)
            if split is None:
                continue
            statement, domain_tokens = split
            parts = _split(ctx, statement)
            if parts is None:
                continue
            name_token, location_token, type_token, default_token = parts
        name = name_token.text
        ok = True
        if not NAME.match(name):
            ctx.error(statement.line, name_token, f"invalid name {name!r}")
            ok = False
        elif name in names:
            ctx.error(statement.line, name_token,
                      f"{name!r} is already declared on line {lines[name]}")
            ok = False
        fixed = True
        if type_token is not None:
            kind = type_token.text.lower()
            if kind not in VALUE_TYPES:
                ctx.error(statement.line, type_token,
                          f"expected 'fixed' or 'int', got {type_token.text!r}")
                ok = False
            fixed = VALUE_TYPES.get(kind, True)
        default = None
        if default_token is not None:
            key = (default_token.text, fixed)
            default = words.get(key)
            if default is None:
                default = _value_word(ctx, statement, default_token, fixed, name,
                                      "default value")
                if default is not None:  # (a label's or constant's word is one word too)
                    words[key] = default
            ok &= default is not None
        domain = None
        if domain_tokens is not None:
            domain = _domain(ctx, statement, domain_tokens, default, fixed, name)
            ok &= domain is not None
        where = _location(ctx, statement, location_token, code)
        if ok and where is not None:
            register_number, address = where
            role = DECLARATION_ROLES[_head(statement).text.lower()]
            names[name] = DeclaredName(name, role, register_number, address, fixed, default,
                                       domain)
            lines[name] = statement.line
    return names


def _plain_parts(operands: list[Token]) -> Parts | None:
    """``NAME LOC TYPE = VALUE`` (as a compiler writes each element of an array), split
    as :func:`_split_domain` and :func:`_split` split it, without their lists; None for
    any other shape."""
    if len(operands) != 5 or operands[3].text != "=":
        return None
    for token in operands:
        if token.text.lower() == "in":
            return None
    name, location, kind, _, value = operands
    if name.text.startswith("=") or location.text.startswith("=") or \
            kind.text.startswith("="):
        return None
    return name, location, kind, value


def _names_a_word(ctx: Context, text: str) -> bool:
    """Whether a value's text is a label or a named constant (``-name`` too)."""
    bare = text[1:] if text.startswith("-") else text
    return bare in ctx.scope.labels or bare in ctx.scope.constants


def _head(statement: Statement) -> Token:
    """The directive of a declaration (``declared_names`` is given directives only)."""
    if statement.head is None:
        raise ValueError(f"line {statement.line} holds no directive")
    return statement.head


def _split_domain(ctx: Context,
                  statement: Statement) -> tuple[Statement, Domain] | None:
    """The statement without its ``in LO..HI`` tail, and the tail's two ends."""
    operands = list(statement.operands)
    at = next((i for i, t in enumerate(operands) if t.text.lower() == "in"), None)
    if at is None:
        return statement, None
    tail = operands[at + 1:]
    text = "".join(t.text for t in tail)
    low, dots, high = text.partition("..")
    if not tail or not dots or not low or not high or ".." in high:
        column = tail[0].column if tail else statement.end_column()
        ctx.error(statement.line, column, "expected a domain LO..HI after 'in' "
                  "(both ends included: in 1..20, in -1.0..1.0)")
        return None
    if _head(statement).text.lower() != ".input":
        ctx.error(statement.line, operands[at], "only an .input has a domain (in LO..HI)")
        return None
    column = tail[0].column
    ends = (Token(low, column), Token(high, column + len(low) + 2))
    return replace(statement, operands=operands[:at]), ends


def _value_word(ctx: Context, statement: Statement, token: Token, fixed: bool, name: str,
                what: str) -> int | None:
    """The word a declaration's value stores, by the one value rule (``values.word_of``):
    an int name takes an integer (2.0 is 2, 2.5 an error), a fixed name a real (1 is 1.0),
    ``raw:N`` the raw word N -- as ``--set`` and the API read a value for the name.  A
    label or named constant (``-name`` too) is the word it denotes, as in an operand.  None
    after reporting why not at the token."""
    if _names_a_word(ctx, token.text):
        return ctx.word_value(statement, token, what)
    try:
        return word_of(token.text, ctx.fmt, kind_of(fixed), name)
    except ValueRuleError as exc:
        ctx.error(statement.line, token, f"{what} of {name}: {exc}")
        return None


def _domain(ctx: Context, statement: Statement, ends: tuple[Token, Token],
            default: int | None, fixed: bool, name: str) -> tuple[int, int] | None:
    """The domain's ends as signed words (by the value rule, as the default), low <= high,
    the default inside."""
    low_word, high_word = (_value_word(ctx, statement, token, fixed, name, "domain end")
                           for token in ends)
    if low_word is None or high_word is None:
        return None
    low, high = ctx.fmt.signed(low_word), ctx.fmt.signed(high_word)
    if low > high:
        ctx.error(statement.line, ends[0], f"the domain {ends[0].text}..{ends[1].text} is "
                  "empty: its low end is above its high end")
        return None
    if default is not None and not low <= ctx.fmt.signed(default) <= high:
        ctx.error(statement.line, ends[0], f"the default is outside the domain "
                  f"{ends[0].text}..{ends[1].text}")
        return None
    return low, high


def _split(ctx: Context, statement: Statement) -> Parts | None:
    """NAME LOC [fixed|int] [= VALUE] -> the four tokens (None where absent)."""
    operands = list(statement.operands)
    default = None
    equals = next((i for i, t in enumerate(operands) if t.text.startswith("=")), None)
    syntax = DIRECTIVES[_head(statement).text.lower()].syntax
    if equals is not None:
        sign = operands[equals]
        after = operands[equals + 1:]
        if sign.text != "=":
            after.insert(0, Token(sign.text[1:], sign.column + 1))
        if len(after) != 1:
            column = after[1].column if after else statement.end_column()
            ctx.error(statement.line, column, f"expected one value after '=' ({syntax})")
            return None
        default = after[0]
        operands = operands[:equals]
    if len(operands) not in (2, 3):
        column = operands[3].column if len(operands) > 3 else statement.end_column()
        ctx.error(statement.line, column, f"{_head(statement).text} takes NAME LOC, an "
                  f"optional type and an optional '= VALUE' ({syntax})")
        return None
    return operands[0], operands[1], operands[2] if len(operands) == 3 else None, default


def _location(ctx: Context, statement: Statement, token: Token,
              code: dict[int, Placed]) -> tuple[int | None, int | None] | None:
    """(register, None) or (None, address) for LOC, or None after reporting why not."""
    try:
        if is_register(token):
            number = register(token)
            if number == 0:
                raise OperandError("$0 always reads zero; it cannot hold a value")
            return number, None
        address = value(token, ctx.scope, reals=False, negated_names=False)
    except OperandError as exc:
        ctx.error(statement.line, token, str(exc))
        return None
    if address < 0:
        ctx.error(statement.line, token, f"memory address {address} is negative")
        return None
    if address in code:
        ctx.error(statement.line, token, f"{ctx.describe_target(token, address)} holds an "
                  f"instruction (line {code[address].line}), not a memory word")
        return None
    return None, address
