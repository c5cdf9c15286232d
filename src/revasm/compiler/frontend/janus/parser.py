"""Reading Janus source (the jana interpreter's dialect) into the tree of ``tree.py``.

A hand-written lexer and recursive-descent parser: the grammar is small and its
errors must name the file, line and column of the token that does not fit.
Operator precedence follows jana's parser, from the loosest: ``&& ||``; ``& | ^``;
``< <= > >= = !=``; ``+ -``; ``* / %``; prefix ``!``.  Each level is
left-associative; a ``-`` directly before a number is part of the number.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from ...errors import CompileError, SourcePos
from . import tree as t

KEYWORDS = {
    "procedure", "int", "stack", "bool", "true", "false", "if", "then", "else", "fi", "from",
    "do", "loop", "until", "push", "pop", "local", "delocal", "call", "uncall", "skip",
    "empty", "top", "size", "show", "print", "printf", "nil", "assert", "error", "external",
    "iterate", "ancilla", "constant",
}
#: Keywords of other jana versions this front end does not accept, and what to write instead.
UNSUPPORTED = {
    "bool": "declare an int; conditions are comparisons (x != 0)",
    "error": "use an assertion: assert e",
    "external": "every procedure must be defined in the file",
    "iterate": "write the loop as from i = a do ... loop ... until i = b",
    "ancilla": "use local int x = e ... delocal int x = e",
    "constant": "use local int x = e ... delocal int x = e",
    "nil": "a stack starts empty; test it with empty(s)",
}
#: A token and the spaces after it (one match a token), a line end, any other character
#: (an error), or the end.  Spaces after, not before: ``finditer`` then walks the text
#: with the token at each match's start, and the spaces at the file's start are skipped
#: by ``_SPACES`` first.
_TOKEN = re.compile(r"""
    (?: (?P<newline>\n)
      | (?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)
      | (?P<number>\d+)
      | (?P<name>[A-Za-z][A-Za-z0-9_']*)
      | (?P<string>"[^"\n]*")
      | (?P<op><=>|\+=|-=|\^=|<=|>=|!=|&&|\|\||[-+*/%&|^<>=!(){}\[\],])
      | (?P<other>.)
      | (?P<end>\Z))
    [ \t\r\f\v]*
""", re.VERBOSE)
_SPACES = re.compile(r"[ \t\r\f\v]*")
_LEVELS = (("&&", "||"), ("&", "|", "^"), ("<", "<=", ">", ">=", "=", "!="), ("+", "-"),
           ("*", "/", "%"))
_LEVEL_OF = {op: level for level, ops in enumerate(_LEVELS) for op in ops}


class Token(NamedTuple):
    """A token (a named tuple: a long program has millions).  Its position is made when
    asked for: most tokens (operators, brackets) never give a node or an error theirs,
    and making a SourcePos for each was half of reading a long program."""

    kind: str  # name | keyword | number | string | op | end
    text: str
    file: str
    line: int
    column: int

    @property
    def pos(self) -> SourcePos:
        return SourcePos(self.file, self.line, self.column)


def tokenize(text: str, filename: str) -> list[Token]:
    """The tokens of ``text``; an unknown character or an unclosed comment is an error."""
    tokens: list[Token] = []
    append = tokens.append
    new = tuple.__new__  # a Token without NamedTuple's Python-level __new__
    line, line_start = 1, 0
    keywords = KEYWORDS
    for m in _TOKEN.finditer(text, _SPACES.match(text).end()):  # type: ignore[union-attr]
        kind = m.lastgroup or ""
        start = m.start()
        if kind == "newline":
            line, line_start = line + 1, start + 1
            continue
        if kind == "name":
            value = m.group(kind)
            append(new(Token, ("keyword" if value in keywords else "name", value, filename,
                               line, start - line_start + 1)))
            continue
        if kind == "end":
            break
        value = m.group(kind)
        if kind == "comment":
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = start + value.rindex("\n") + 1
            continue
        if kind == "other":
            raise CompileError(SourcePos(filename, line, start - line_start + 1),
                               f"unexpected character {value!r}")
        if kind == "op" and value == "/" and text.startswith("/*", start):  # no */ after it
            raise CompileError(SourcePos(filename, line, start - line_start + 1),
                               "comment /* is never closed", "close it with */")
        append(new(Token, (kind, value, filename, line, start - line_start + 1)))
    at = len(text)
    tokens.append(Token("end", "end of file", filename, line, at - line_start + 1))
    return tokens


def parse_janus_file(path: str | Path) -> t.Program:
    """Parse a ``.ja`` file; a CompileError names the place of the first problem."""
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise CompileError(SourcePos(str(path), 1, 1), "not a text file") from None
    return parse_janus(text, str(path))


def parse_janus(text: str, filename: str = "<janus>") -> t.Program:
    """Parse Janus source text into a :class:`tree.Program`."""
    lines = text.splitlines()
    try:
        return _Parser(tokenize(text, filename), filename, lines).program()
    except CompileError as exc:
        if not exc.source_line and 0 < exc.pos.line <= len(lines):
            exc.source_line = lines[exc.pos.line - 1]
        raise


class _Parser:
    def __init__(self, tokens: list[Token], filename: str, lines: list[str]) -> None:
        self.tokens = tokens
        self.at = 0
        self.filename = filename
        self.lines = lines

    # --- tokens ---

    @property
    def token(self) -> Token:
        return self.tokens[self.at]

    def next(self) -> Token:
        tok = self.tokens[self.at]
        if tok.kind != "end":
            self.at += 1
        return tok

    # is_, accept and expect compare the text alone: they are asked for operators and
    # keywords, and no other token has such a text (a name that is a keyword is a keyword
    # token; the end's text is "end of file"), so the kind need not be looked at -- these
    # run for most tokens, and the two look-ups each were a tenth of parsing
    def is_(self, text: str) -> bool:
        return self.tokens[self.at].text == text

    def accept(self, text: str) -> bool:
        if self.tokens[self.at].text == text:
            self.at += 1  # never the end (its text is no operator)
            return True
        return False

    def expect(self, text: str, what: str = "") -> Token:
        tok = self.tokens[self.at]
        if tok.text != text:
            self.fail(f"expected '{text}'{what}")
        self.at += 1
        return tok

    def fail(self, message: str, hint: str = "") -> None:
        tok = self.token
        found = "the end of the file" if tok.kind == "end" else f"'{tok.text}'"
        raise CompileError(tok.pos, f"{message}, found {found}", hint)

    def name(self, what: str) -> Token:
        tok = self.tokens[self.at]
        if tok.kind != "name":
            if tok.kind == "keyword" and tok.text in UNSUPPORTED:
                self.unsupported()
            self.fail(f"expected {what}")
        self.at += 1
        return tok

    def unsupported(self) -> None:
        tok = self.token
        raise CompileError(tok.pos, f"'{tok.text}' is not part of the Janus dialect revasm "
                                    "compiles", UNSUPPORTED[tok.text])

    # --- program ---

    def program(self) -> t.Program:
        procedures: dict[str, t.Procedure] = {}
        main: t.Procedure | None = None
        if self.token.kind == "end":
            raise CompileError(self.token.pos, "the file has no procedures",
                               "a program needs procedure main()")
        while self.token.kind != "end":
            if not self.is_("procedure"):
                self.fail("expected 'procedure'")
            proc = self.procedure()
            if proc.name in procedures or (main and proc.name == "main"):
                raise CompileError(proc.pos, f"procedure {proc.name} is defined twice")
            if proc.name == "main":
                main = proc
            else:
                procedures[proc.name] = proc
        if main is None:
            raise CompileError(SourcePos(self.filename, 1, 1), "no procedure main()",
                               "the program runs procedure main(), which declares its "
                               "variables: procedure main() int x ...")
        return t.Program(self.filename, main, procedures, self.lines)

    def procedure(self) -> t.Procedure:
        self.expect("procedure")
        name_tok = self.name("a procedure name")
        self.expect("(", " after the procedure name")
        params: list[t.Decl] = []
        if name_tok.text == "main":
            if not self.is_(")"):
                raise CompileError(self.token.pos, "procedure main() takes no parameters",
                                   "declare main's variables after main(): int x")
        elif not self.is_(")"):
            params.append(self.decl(parameter=True))
            while self.accept(","):
                params.append(self.decl(parameter=True))
        self.expect(")", " to close the parameter list")
        if name_tok.text == "main":
            while self.is_("int") or self.is_("stack"):
                params.append(self.decl(parameter=False, main=True))
        body = self.statements(("procedure",), name_tok.pos)
        return t.Procedure(name_tok.pos, name_tok.text, tuple(params), body)

    def decl(self, parameter: bool, main: bool = False, local: bool = False) -> t.Decl:
        pos = self.token.pos
        if self.token.kind == "keyword" and self.token.text in UNSUPPORTED:
            self.unsupported()
        if not (self.is_("int") or self.is_("stack")):
            self.fail("expected a type, int or stack")
        type_ = self.next().text
        name = self.name("a variable name")
        dims: list[int | None] = []
        while type_ == "int" and self.accept("["):
            if parameter and self.is_("]"):
                dims.append(None)
            else:
                tok = self.token
                size = self.expr()
                if not isinstance(size, t.Number) or size.value <= 0:
                    raise CompileError(tok.pos, "an array size must be a positive number")
                dims.append(size.value)
            self.expect("]", " to close the array size")
        init: t.Expr | tuple | None = None
        if (main or local) and self.accept("="):
            if type_ == "stack":
                raise CompileError(name.pos, "a stack starts empty; it takes no initial value")
            init = self.array_literal() if dims else self.expr()
        elif local:
            self.fail("expected '=' and the value of the local variable")
        return t.Decl(pos, type_, name.text, tuple(dims), init)

    def array_literal(self):
        if self.accept("{"):
            items = [self.array_literal()]
            while self.accept(","):
                items.append(self.array_literal())
            self.expect("}", " to close the array value")
            return tuple(items)
        return self.expr()

    # --- statements ---

    def statements(self, enders: tuple[str, ...], start: SourcePos) -> tuple[t.Stmt, ...]:
        body: list[t.Stmt] = []
        tokens = self.tokens
        while True:
            tok = tokens[self.at]
            if tok.kind == "end" or tok.text in enders:  # is_ of each ender (keywords)
                break
            body.append(self.statement())
        if not body:
            self.fail("expected a statement", "write skip for a statement that does nothing")
        return tuple(body)

    def statement(self) -> t.Stmt:
        tok = self.token
        if tok.kind == "name":
            return self.update_or_swap()
        if tok.kind != "keyword":
            self.fail("expected a statement")
        word = tok.text
        if word in UNSUPPORTED:
            self.unsupported()
        if word == "if":
            return self.if_()
        if word == "from":
            return self.from_()
        if word in ("push", "pop"):
            self.next()
            self.expect("(", f" after {word}")
            var = self.name("a variable")
            self.expect(",", f" between the variable and the stack of {word}")
            stack = self.name("a stack")
            self.expect(")", f" to close {word}")
            return t.Push(tok.pos, var.text, stack.text, pop=word == "pop")
        if word == "local":
            return self.local()
        if word in ("call", "uncall"):
            self.next()
            callee = self.name("a procedure name")
            self.expect("(", " after the procedure name")
            args: list[t.Name] = []
            if not self.is_(")"):
                args.append(self.argument())
                while self.accept(","):
                    args.append(self.argument())
            self.expect(")", " to close the argument list")
            return t.Call(tok.pos, callee.text, tuple(args), uncall=word == "uncall")
        if word == "skip":
            self.next()
            return t.Skip(tok.pos)
        if word == "assert":
            self.next()
            return t.Assert(tok.pos, self.expr())
        if word == "show":
            self.next()
            self.expect("(", " after show")
            names = [self.name("a variable").text]
            while self.accept(","):
                names.append(self.name("a variable").text)
            self.expect(")", " to close show")
            return t.Show(tok.pos, tuple(names))
        if word in ("print", "printf"):
            self.next()
            self.expect("(", f" after {word}")
            if self.token.kind != "string":
                self.fail("expected a string in double quotes")
            text = self.next().text[1:-1].replace("\\n", "\n").replace("\\t", "\t")
            names = []
            while word == "printf" and self.accept(","):
                names.append(self.name("a variable").text)
            self.expect(")", f" to close {word}")
            return t.Show(tok.pos, tuple(names), text)
        self.fail("expected a statement")
        raise AssertionError  # unreachable: fail raises

    def argument(self) -> t.Name:
        tok = self.token
        if tok.kind == "name" and self.tokens[self.at + 1].text in (",", ")"):
            self.next()
            return t.Name(tok.pos, tok.text)
        raise CompileError(tok.pos, "an argument of call and uncall must be a variable name",
                           "copy the value into a local variable and pass that: "
                           "local int t = e  call f(t)  delocal int t = e")

    def place(self) -> t.Place:
        tok = self.name("a variable")
        if self.tokens[self.at].text != "[":
            return t.Name(tok.pos, tok.text)
        indices = []
        while self.accept("["):
            indices.append(self.expr())
            self.expect("]", " to close the index")
        return t.Element(tok.pos, tok.text, tuple(indices))

    def update_or_swap(self) -> t.Stmt:
        target = self.place()
        tok = self.token
        if tok.text in ("+=", "-=", "^="):
            self.next()
            return t.Update(target.pos, target, tok.text[0], self.expr())
        if tok.text == "<=>":
            self.next()
            return t.Swap(target.pos, target, self.place())
        if tok.text == "=":
            raise CompileError(tok.pos, "assignment '=' overwrites a value, which is not "
                                        "reversible", "update instead: x += e, x -= e, x ^= e")
        self.fail("expected +=, -=, ^= or <=> after the variable")
        raise AssertionError

    def if_(self) -> t.If:
        pos = self.expect("if").pos
        test = self.expr()
        self.expect("then", " after the condition of if")
        then = self.statements(("else", "fi"), pos)
        orelse: tuple[t.Stmt, ...] = ()
        if self.accept("else"):
            orelse = self.statements(("fi",), pos)
        if not self.is_("fi"):
            self.fail(f"expected 'fi' to close the if at line {pos.line}")
        self.next()
        return t.If(pos, test, then, orelse, self.expr())

    def from_(self) -> t.From:
        pos = self.expect("from").pos
        entry = self.expr()
        do: tuple[t.Stmt, ...] = ()
        loop: tuple[t.Stmt, ...] = ()
        if self.accept("do"):
            do = self.statements(("loop", "until"), pos)
        if self.accept("loop"):
            loop = self.statements(("until",), pos)
        if not self.is_("until"):
            self.fail(f"expected 'until' to close the loop at line {pos.line}")
        self.next()
        return t.From(pos, entry, do, loop, self.expr())

    def local(self) -> t.Local:
        pos = self.expect("local").pos
        decls = [self.decl(parameter=False, local=True)]
        while self.accept(","):
            decls.append(self.decl(parameter=False, local=True))
        body = self.statements(("delocal",), pos)
        if not self.is_("delocal"):
            self.fail(f"expected 'delocal' to close the local at line {pos.line}")
        self.next()
        delocals = [self.decl(parameter=False, local=True)]
        for _ in decls[1:]:
            self.expect(",", " before the next delocal declaration")
            delocals.append(self.decl(parameter=False, local=True))
        # local a, b ... delocal a', b' nests as local a (local b ... delocal b') delocal a'
        for d, dd in reversed(list(zip(decls, delocals))):
            body = (t.Local(pos, d, body, dd),)
        return body[0]  # type: ignore[return-value]

    # --- expressions ---

    def expr(self, level: int = 0) -> t.Expr:
        """An expression of operators at ``level`` (an index of ``_LEVELS``) or tighter,
        by precedence climbing: a leaf costs one call, not one per level."""
        left = self.unary()
        tokens = self.tokens
        while True:
            tok = tokens[self.at]
            tighter = _LEVEL_OF.get(tok.text, -1)  # only operators have these texts
            if tighter < level:
                return left
            self.at += 1
            left = t.Binary(left.pos, tok.text, left, self.expr(tighter + 1))

    def unary(self) -> t.Expr:
        tok = self.tokens[self.at]
        kind = tok.kind  # the two most common leaves first (the cases are disjoint)
        if kind == "number":
            self.at += 1
            return t.Number(tok.pos, int(tok.text))
        if kind == "name":
            return self.place()
        if self.accept("!"):
            return t.Not(tok.pos, self.unary())
        if self.accept("("):
            e = self.expr()
            self.expect(")", " to close the parenthesis")
            return e
        if tok.text == "-" and self.tokens[self.at + 1].kind == "number":
            self.next()
            return t.Number(tok.pos, -int(self.next().text))
        if self.accept("true") or self.accept("false"):
            return t.Boolean(tok.pos, tok.text == "true")
        if tok.text in ("empty", "top", "size") and tok.kind == "keyword":
            self.next()
            self.expect("(", f" after {tok.text}")
            name = self.name("a variable")
            self.expect(")", f" to close {tok.text}")
            return t.StackQuery(tok.pos, tok.text, name.text)
        if tok.kind == "keyword" and tok.text in UNSUPPORTED:
            return self.place()
        self.fail("expected an expression")
        raise AssertionError
