"""PAL source text to a program :class:`~revasm.assembler.image.Image`.

Addresses are PendVM's: every instruction or ``DATA`` line takes the next
address, starting at 0; a label names the address of its line (or of the next
line that has one).  The work is done in passes over the statements:

1. parse every line and find the word width (the caller's, else ``.width``, else
   ``DEFAULT_WIDTH``) and the mode (PendVM-compatibility when the caller or ``.pendvm``
   asks for it);
2. collect labels, constants and directives, and give each statement its
   size (a pseudo-instruction may take several words; see :func:`_layout`);
3. encode every statement, checking operands, ranges and registers;
4. check that every jump lands on an instruction that catches it;
5. find the entry point and resolve the declared names.

Every problem is recorded and the pass goes on, so that one run reports all
errors of the file; :class:`AssemblyError` is raised at the end if there was any.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NamedTuple

from revasm.isa.codec import BY_MNEMONIC, encode
from revasm.isa.encoding import IMM16, Field
from revasm.isa.fixed_point import DEFAULT_WIDTH, WIDTHS, widths_text, word_format
from revasm.isa.instruction import Instruction

from . import collector
from .checks import JUMP_KINDS, Placed, catch_problem, register_problems
from .context import Context
from .declarations import declared_names
from .diagnostics import AssemblyError, Diagnostic, DiagnosticLog
from .directives import DIRECTIVES, lookup_directive
from .image import DeferredLocations, Image, SourceLocation, SourceOrigin
from .lexer import Token, source_lines
from .literals import is_real
from .operands import OperandError, Scope, field_range, range_text, register, value
from .parser import NAME, Statement, parse_source
from .pseudo_instructions import PSEUDO_BY_MNEMONIC, PseudoInstruction, lookup_pseudo

#: Line -> the user's source a compiled line came from, or a function that makes that map.
Origins = Mapping[int, SourceOrigin] | Callable[[], Mapping[int, SourceOrigin]]

#: A data cell: ``DATA value`` (Haulund 2016, as PendVM reads it).
DATA_MNEMONIC = "DATA"

#: PendVM-compatibility mode: the instructions whose immediate PendVM reads (``IMM`` in
#: its instruction table; its ORIX reads a register) and takes whole, as a 32-bit word.
PENDVM_WIDE_IMMEDIATE = frozenset({"ADDI", "XORI", "ANDIX", "SLTIX"})
#: PendVM's word: what a wide immediate may be (signed or unsigned), and the only width
#: at which the mode takes one.
PENDVM_WORD_BITS = 32
#: How messages name the mode.
PENDVM_MODE = "PendVM-compatibility mode (.pendvm, or --pendvm)"


def assemble(source: str, filename: str = "<source>", width: int | None = None, *,
             pendvm: bool = False,
             parsed: Sequence[Statement | None] | None = None,
             origins: Origins | None = None) -> Image:
    """Assemble PAL text; raises :class:`AssemblyError` listing every error.

    The word width is ``width`` when given (it overrides the source's ``.width``: the
    caller asks for this run at that width), else the source's ``.width``, else
    :data:`DEFAULT_WIDTH`.  ``pendvm``: PendVM-compatibility mode, as if the source said
    ``.pendvm`` (docs/assembly.md, "PendVM variants").  ``parsed``: the statements of
    lines whose writer knows them (``parser.parse_source``), a compiler's shortcut;
    ``origins``: line -> the user's source it was compiled from (``SourceLocation.origin``),
    or a function that makes that map, called when the image's locations are first read
    (``image.DeferredLocations``).
    """
    if width is not None and width not in WIDTHS:
        raise ValueError(f"word width must be {widths_text()}, not {width}")
    with collector.paused():  # hundreds of thousands of objects for a long program
        return _Assembly(source, filename, width, pendvm, parsed=parsed,
                         origins=origins).run()


def assemble_file(path: str | Path, width: int | None = None, *,
                  pendvm: bool = False) -> Image:
    """Assemble a PAL file (UTF-8 text); ``pendvm`` as for :func:`assemble`."""
    path = Path(path)
    data = path.read_bytes()
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = len(source_lines(data[: exc.start].decode("utf-8") + "x"))  # \n, \r\n or \r
        raise AssemblyError([Diagnostic(str(path), line, 1, "the file is not UTF-8 text",
                                        "")]) from exc
    return assemble(source, str(path), width, pendvm=pendvm)


@dataclass(slots=True)
class _Item:
    """A statement that occupies memory: an instruction, pseudo-instruction or DATA cell."""

    statement: Statement
    ins: Instruction | None = None
    pseudo: PseudoInstruction | None = None
    data: bool = False
    valid: bool = True
    address: int = 0
    size: int = 1


@dataclass(slots=True)
class _Label:
    name: str
    slot: int  # index of the item it names (len(items) = the end of the program)
    token: Token
    line: int


class _Jump(NamedTuple):
    """A branch whose landing is checked once every address is known (a named tuple, made
    by :data:`_jump`: most of a long compiled program's lines are branches)."""

    pc: int
    target: int
    token: Token
    line: int


#: A :class:`_Jump`, and a ``Placed``, from a tuple of its fields, without the named tuple's
#: Python-level ``__new__`` (as the compiler's writer makes the lexer's tokens).
_jump = partial(tuple.__new__, _Jump)
_placed = partial(tuple.__new__, Placed)


@dataclass
class _Assembly(Context):
    source: str
    filename: str
    requested_width: int | None
    #: PendVM-compatibility mode, as the caller asks (``.pendvm`` in the source turns it
    #: on as well)
    pendvm: bool = False
    items: list[_Item] = field(default_factory=list)
    labels: dict[str, _Label] = field(default_factory=dict)
    constant_lines: dict[str, int] = field(default_factory=dict)
    declarations: list[Statement] = field(default_factory=list)
    start_directive: Statement | None = None
    #: addresses of lines with errors: no instruction to check there
    unchecked: set[int] = field(default_factory=set)
    #: PendVM-compatibility mode's wide immediates: pc -> the signed 32-bit value
    immediates: dict[int, int] = field(default_factory=dict)
    #: statements the caller parsed already (``parser.parse_source``)
    parsed: Sequence[Statement | None] | None = None
    #: line -> the user's source a compiler made it from (or what makes that map)
    origins: Origins | None = None

    def run(self) -> Image:
        self.lines = source_lines(self.source)
        self.log = DiagnosticLog(self.filename, self.lines)
        statements = parse_source(self.lines, self.log, self.parsed)
        directives = [statement for statement in statements if statement.is_directive]
        self.fmt = word_format(self._width(directives))
        self.pendvm = self._pendvm(directives) or self.pendvm
        self.scope = Scope(self.fmt)
        self._collect(statements, directives)
        self._layout()
        words, is_code, code, data, jumps = self._encode()
        for jump in jumps:
            if _caught_by_partner(jump, code):
                continue
            if jump.target in self.unchecked:
                continue  # the landing line has errors of its own
            problem = catch_problem(jump.pc, jump.target, code, data, len(words))
            if problem:
                self.error(jump.line, jump.token,
                           f"jump target {self.describe_target(jump.token, jump.target)} "
                           f"{problem}")
        entry = self._entry(code, data, len(words))
        finish = min((pc for pc, placed in code.items() if placed.ins.kind == "finish"),
                     default=None)
        names = declared_names(self, self.declarations, code)
        self.log.raise_if_errors()
        return Image(width=self.fmt.width, words=words, is_code=is_code, entry=entry,
                     finish=finish, symbols=dict(self.scope.labels),
                     locations=DeferredLocations(partial(_locations, self.filename,
                                                         self.items, self.origins)),
                     names=names, source_file=self.filename, immediates=self.immediates)

    # --- pass 1: width -----------------------------------------------------------

    def _width(self, directives: list[Statement]) -> int:
        """The width ``.width`` declares (among ``directives``, the directive statements),
        or the caller's."""
        declared: tuple[int, Statement] | None = None
        for statement in directives:
            head = statement.head
            if not (head is not None and head.text.lower() == ".width"):
                continue
            if statement.labels:
                continue  # reported with the other directives
            if not self.operand_count(statement, (1, 1), DIRECTIVES[".width"].syntax):
                continue
            token = statement.operands[0]
            if token.text not in [str(w) for w in WIDTHS]:
                self.error(statement.line, token,
                           f".width must be {widths_text()}, not {token.text!r}")
                continue
            width = int(token.text)
            if declared and declared[0] != width:
                self.error(statement.line, token, f".width {width} conflicts with .width "
                           f"{declared[0]} on line {declared[1].line}")
                continue
            declared = declared or (width, statement)
        if self.requested_width is not None:
            return self.requested_width
        return declared[0] if declared else DEFAULT_WIDTH

    def _pendvm(self, directives: list[Statement]) -> bool:
        """Whether the source says ``.pendvm`` (its errors are reported with the other
        directives')."""
        return any(statement.head is not None and statement.head.text.lower() == ".pendvm"
                   for statement in directives)

    # --- pass 2: labels, constants, directives, sizes ---------------------------

    #: Whether :meth:`_collect` takes its fast path for plain labels and instructions (off:
    #: each label through :meth:`_define_label`, each item through :meth:`_item` -- the
    #: general path the tests hold the fast one to).
    FAST_LINES = True

    def _collect(self, statements: list[Statement], directives: list[Statement]) -> None:
        directive_ids = {id(statement) for statement in directives}  # (a long program's
        # statements are nearly all instructions: a set look-up, not a property call each)
        labels, constant_lines, items = self.labels, self.constant_lines, self.items
        fast = self.FAST_LINES
        for statement in statements:
            if id(statement) in directive_ids:
                for label in statement.labels:
                    self.error(statement.line, label,
                               f"label {label.text!r} cannot name a directive; put it on an "
                               "instruction or DATA line")
                self._directive(statement)
                continue
            for label in statement.labels:  # (:meth:`_define_label`, inlined but its errors)
                name = label.text
                if not fast or name in labels or name in constant_lines:
                    self._define_label(label, statement.line)
                else:
                    labels[name] = _Label(name, len(items), label, statement.line)
            head = statement.head
            if head is None:
                continue
            # an instruction spelt in upper or lower case, with its operands: :meth:`_item`'s
            # answer without its look-ups (a long program's lines are nearly all such)
            ins = _SPELT.get(head.text) if fast else None
            if ins is not None and len(statement.operands) == len(ins.fields):
                items.append(_Item(statement, ins))
            else:
                items.append(self._item(statement))

    def _define_label(self, token: Token, line: int) -> None:
        name = token.text
        if name in self.labels:
            self.error(line, token, f"label {name!r} is already defined on line "
                                     f"{self.labels[name].line}")
        elif name in self.constant_lines:
            self.error(line, token, f"{name!r} is already a constant (line "
                                     f"{self.constant_lines[name]})")
        else:
            self.labels[name] = _Label(name, len(self.items), token, line)

    def _directive(self, statement: Statement) -> None:
        head = statement.head
        assert head is not None  # a directive is a statement with a head
        directive = lookup_directive(head.text)
        if directive is None:
            close = difflib.get_close_matches(head.text.lower(), list(DIRECTIVES), n=1)
            hint = f"; did you mean {close[0]}?" if close else \
                f" (directives: {', '.join(DIRECTIVES)})"
            self.error(statement.line, head, f"unknown directive {head.text!r}{hint}")
            return
        if directive.name == ".width":
            return  # read before everything else
        if not self.operand_count(statement, (directive.min_operands, directive.max_operands),
                                  directive.syntax):
            return
        if directive.name == ".pendvm":
            return  # read before everything else (_pendvm)
        if directive.name == ".start":
            if self.start_directive is not None:
                self.error(statement.line, head, f"a second .start (the first is on line "
                                                  f"{self.start_directive.line})")
            else:
                self.start_directive = statement
        elif directive.name in (".const", ".equ"):
            self._constant(statement)
        else:
            self.declarations.append(statement)

    def _constant(self, statement: Statement) -> None:
        name_token, value_token = statement.operands
        name = name_token.text
        if not NAME.match(name):
            self.error(statement.line, name_token, f"invalid constant name {name!r}")
            return
        if name in self.constant_lines or name in self.labels:
            first = self.constant_lines.get(name) or self.labels[name].line
            self.error(statement.line, name_token, f"{name!r} is already defined on line {first}")
            return
        bare = value_token.text.lstrip("-")
        if bare in self.labels or (NAME.match(bare) and bare not in self.scope.constants):
            self.error(statement.line, value_token,
                       f"a constant's value must be a number or an earlier constant; "
                       f"{value_token.text!r} is not")
            return
        try:
            number = value(value_token, self.scope)
        except OperandError as exc:
            self.error(statement.line, value_token, str(exc))
            return
        low, high = field_range("word", None, self.fmt.width)
        if not low <= number <= high:
            self.error(statement.line, value_token,
                       f"constant {self.shown(value_token, number)} does not fit a "
                       f"{self.fmt.width}-bit word "
                       f"({range_text(low, high)})")
            return
        self.scope.constants[name] = number
        self.constant_lines[name] = statement.line

    def _item(self, statement: Statement) -> _Item:
        head = statement.head
        assert head is not None  # only a statement with a head becomes an item
        mnemonic = head.text.upper()
        if mnemonic == DATA_MNEMONIC:
            item = _Item(statement, data=True)
            item.valid = self.operand_count(statement, (1, 1), "DATA value")
            return item
        ins = BY_MNEMONIC.get(mnemonic)  # (``lookup``, the text upper-cased already)
        if ins is not None:
            item = _Item(statement, ins=ins)
            count = len(ins.fields)  # the syntax text only for the message
            item.valid = len(statement.operands) == count or self.operand_count(
                statement, (count, count), _syntax(ins, head.text))
            return item
        pseudo = lookup_pseudo(mnemonic)
        if pseudo is not None:
            item = _Item(statement, pseudo=pseudo)
            count = len(pseudo.operands)
            item.valid = self.operand_count(statement, (count, count),
                                            _syntax(pseudo, head.text))
            return item
        self.error(statement.line, head, _unknown_mnemonic(head.text, statement))
        return _Item(statement, valid=False)

    def _layout(self) -> None:
        """Give every item its address.

        Only a pseudo-instruction can take more than one word, and how many can
        depend on a label (``LI $1 far``) whose address depends on the sizes.
        Sizes start at one word and only grow, so this reaches a fixed point
        within a few rounds; an expansion that comes out shorter than its
        place is padded (see :meth:`_expand`).
        """
        pseudos = [item for item in self.items if item.pseudo is not None and item.valid]
        changed = True
        while changed:  # ends: every round grows a size, and sizes are bounded
            self._place()
            changed = False
            for item in pseudos:
                size = self._pseudo_size(item)
                if size > item.size:
                    item.size, changed = size, True

    def _place(self) -> None:
        address = 0
        items = self.items
        for item in items:
            item.address = address
            address += item.size
        end = len(items)
        self.scope.labels = {name: (items[label.slot].address if label.slot < end else address)
                             for name, label in self.labels.items()}

    def _pseudo_size(self, item: _Item) -> int:
        try:
            operands = self._pseudo_operands(item, report=False)
        except OperandError:
            return 1
        assert item.pseudo is not None  # called for pseudo-instructions only
        return len(item.pseudo.expand(operands, self.fmt))

    # --- pass 3: encoding ------------------------------------------------------

    def _encode(self) -> tuple[list[int], list[bool], dict[int, Placed], dict[int, int],
                               list[_Jump]]:
        words: list[int] = []
        is_code: list[bool] = []
        code: dict[int, Placed] = {}
        data: dict[int, int] = {}
        jumps: list[_Jump] = []
        known: dict[tuple, tuple[dict[str, int], int]] = {}
        prefixes: dict[tuple, tuple[dict[str, int], int] | None] = {}
        for item in self.items:
            statement = item.statement
            line = statement.line
            if item.data:
                words.append(self._data_word(item) if item.valid else 0)
                is_code.append(False)
                data[item.address] = statement.line
                continue
            key: tuple | None = None
            fast: tuple[dict[str, int], int] | None = None  # (field values, word)
            ins = item.ins
            if item.valid and ins is not None and "off" not in ins.operand_kinds:
                # an instruction without an offset field encodes the same wherever it is:
                # a long compiled program repeats a few thousand spellings, each encoded
                # once here; one with errors is never kept, so each is reported
                key = (ins.mnemonic, *statement.operands)  # (texts and columns)
                fast = known.get(key)  # (Placed's fields are never changed: shared)
            elif item.valid and ins is not None and ins.mnemonic in _BRANCHES:
                fast = self._branch(item, ins, jumps, prefixes)
            if fast is not None and ins is not None:
                is_code.append(True)
                words.append(fast[1])
                code[item.address] = _placed((ins, fast[0], line))
                continue
            encoded: list[tuple[Instruction, dict[str, int]]] = []
            if item.valid and item.ins is not None:
                operands = self._operands(item, item.ins, item.address, jumps)
                if operands is not None:
                    encoded = [(item.ins, operands)]
            elif item.valid and item.pseudo is not None:
                encoded = self._expand(item)
            for offset in range(item.size):
                pc = item.address + offset
                is_code.append(True)
                if offset < len(encoded):
                    ins, operands = encoded[offset]
                    words.append(self._word(pc, ins, operands))
                    code[pc] = Placed(ins, operands, statement.line)
                    if key is not None and pc not in self.immediates:  # not a wide one
                        known[key] = (operands, words[-1])
                else:
                    words.append(0)  # a line with errors still holds its addresses
                    self.unchecked.add(pc)
        return words, is_code, code, data, jumps

    def _branch(self, item: _Item, ins: Instruction, jumps: list[_Jump],
                prefixes: dict[tuple, tuple[dict[str, int], int] | None]
                ) -> tuple[dict[str, int], int] | None:
        """A branch's field values and word when its registers are plain and its target a
        label in range (a long compiled program's branches are most of its lines: its
        registers' part, a few spellings, encoded once); None for :meth:`_operands`, which
        says the same for every other branch, and reports errors."""
        statement = item.statement
        target_token = statement.operands[-1]
        text = target_token.text
        target = self.scope.labels.get(text)
        if target is None:  # (no name is both a label and a constant: each refuses the other)
            return None
        key = (ins.mnemonic, *statement.operands[:-1])  # (texts and columns)
        prefix = prefixes.get(key)
        if prefix is None:
            if key in prefixes:  # (kept as None: not plain)
                return None
            prefix = prefixes[key] = _branch_prefix(ins, statement.operands[:-1])
            if prefix is None:
                return None
        fld = ins.fields[-1]
        offset = target - item.address
        if not fld.low <= offset <= fld.high:
            return None
        operands = dict(prefix[0])
        operands[fld.name] = offset
        jumps.append(_jump((item.address, target, target_token, statement.line)))
        return operands, prefix[1] | (offset & fld.mask) << fld.lsb  # (``fld.insert``: in
        # range, as checked)

    def _word(self, pc: int, ins: Instruction, operands: dict[str, int]) -> int:
        """The instruction word; a wide immediate (PendVM-compatibility mode) is kept in
        ``immediates`` and its low 16 bits in the word."""
        imm = operands.get("imm")
        if imm is None or IMM16.low <= imm <= IMM16.high:
            return encode(ins, operands)
        self.immediates[pc] = imm
        return encode(ins, {**operands, "imm": IMM16.extract(imm & IMM16.mask)})

    def _operands(self, item: _Item, ins: Instruction, pc: int,
                  jumps: list[_Jump]) -> dict[str, int] | None:
        """The field values of a table instruction, or None after reporting errors."""
        statement = item.statement
        operands: dict[str, int] = {}
        ok = True
        for fld, kind, token in zip(ins.fields, ins.operand_kinds, statement.operands):
            try:
                if kind == "reg":
                    operands[fld.name] = register(token)
                elif kind == "off":
                    target = value(token, self.scope, reals=False, negated_names=False)
                    offset = target - pc
                    low, high = field_range(kind, fld, self.fmt.width)
                    if not low <= offset <= high:
                        raise OperandError(
                            f"branch offset {offset} (from pc {pc} to "
                            f"{self.describe_target(token, target)}) does not fit "
                            f"{ins.mnemonic}'s signed {fld.width}-bit offset field "
                            f"({range_text(low, high)})")
                    operands[fld.name] = offset
                    jumps.append(_jump((pc, target, token, statement.line)))
                else:
                    operands[fld.name] = self._ranged(ins.mnemonic, kind, fld, token)
            except OperandError as exc:
                self.error(statement.line, token, str(exc))
                ok = False
        if not ok:
            return None
        return operands if self._registers_ok(ins, operands, statement) else None

    def _ranged(self, mnemonic: str, kind: str, fld: Field, token: Token) -> int:
        number = value(token, self.scope, reals=(kind == "imm"))
        low, high = field_range(kind, fld, self.fmt.width)
        if low <= number <= high:
            return number
        if kind == "imm":
            wide = self._wide_immediate(mnemonic, fld, token, number)
            if wide is not None:
                return wide
            raise OperandError(
                f"immediate {self.shown(token, number)} does not fit {mnemonic}'s signed "
                f"{fld.width}-bit field "
                f"({range_text(low, high)}); load larger constants with the LI "
                f"pseudo-instruction (LI $r {token.text} adds {token.text} to $r)"
                + self._pendvm_hint(mnemonic, token, number))
        if kind == "amt":
            raise OperandError(f"shift amount {number} is out of range {range_text(low, high)} "
                               f"at word width {self.fmt.width}")
        raise OperandError(f"lane k={number} is out of range {range_text(low, high)} at word "
                           f"width {self.fmt.width} ({mnemonic} adds imm << 16k)")

    def _wide_immediate(self, mnemonic: str, fld: Field, token: Token,
                        number: int) -> int | None:
        """In PendVM-compatibility mode, an immediate wider than its field as PendVM's
        1997 parser keeps it: the 32-bit word ``strtol`` gives (here as a signed value);
        None outside the mode or for an instruction PendVM reads no immediate for.
        Raises OperandError for what even PendVM's word cannot hold."""
        if not self.pendvm or mnemonic not in PENDVM_WIDE_IMMEDIATE:
            return None
        low, high = -(1 << (PENDVM_WORD_BITS - 1)), (1 << PENDVM_WORD_BITS) - 1
        if not low <= number <= high:
            raise OperandError(
                f"immediate {self.shown(token, number)} does not fit PendVM's "
                f"{PENDVM_WORD_BITS}-bit word ({range_text(low, high)}), the widest "
                f"immediate of {PENDVM_MODE}")
        if self.fmt.width != PENDVM_WORD_BITS:
            raise OperandError(
                f"immediate {self.shown(token, number)} does not fit {mnemonic}'s signed "
                f"{fld.width}-bit field ({range_text(fld.low, fld.high)}); {PENDVM_MODE} "
                f"takes a wider one at PendVM's word width W = {PENDVM_WORD_BITS} only, "
                f"and this program runs at W = {self.fmt.width}")
        half = 1 << (PENDVM_WORD_BITS - 1)
        return (number + half) % (1 << PENDVM_WORD_BITS) - half

    def _pendvm_hint(self, mnemonic: str, token: Token, number: int) -> str:
        """Outside PendVM-compatibility mode, for an immediate PendVM's 1997 parser takes
        (an integer, on one of its IMM instructions, within its word): the mode that runs
        it unchanged."""
        if self.pendvm or mnemonic not in PENDVM_WIDE_IMMEDIATE or is_real(token.text) or \
                not -(1 << (PENDVM_WORD_BITS - 1)) <= number < 1 << PENDVM_WORD_BITS:
            return ""
        return (f"; a program for PendVM's 1997 parser (ROOPL++'s output) runs unchanged "
                f"in {PENDVM_MODE}")

    def _registers_ok(self, ins: Instruction, operands: dict[str, int], statement: Statement,
                      tokens: dict[str, Token] | None = None, written_as: str = "") -> bool:
        """Whether no register rule refuses the operands (each refusal reported at its
        token: ``tokens``, by default the statement's own operands by name)."""
        problems = register_problems(ins, operands, written_as)
        if problems and tokens is None:
            tokens = dict(zip(ins.operand_names, statement.operands))
        for name, message in problems:
            assert tokens is not None
            self.error(statement.line, tokens[name], message)
        return not problems

    def _pseudo_operands(self, item: _Item, report: bool = True) -> dict[str, int]:
        """The operand values of a pseudo-instruction; raises OperandError (reported)."""
        statement, pseudo = item.statement, item.pseudo
        assert pseudo is not None  # called for pseudo-instructions only
        operands: dict[str, int] = {}
        failed: OperandError | None = None
        for spec, token in zip(pseudo.operands, statement.operands):
            try:
                if spec.kind == "reg":
                    operands[spec.name] = register(token)
                    continue
                number = value(token, self.scope)
                assert spec.bounds is not None  # every operand but a register has bounds
                low, high = spec.bounds(self.fmt.width)
                if not low <= number <= high:
                    hint = "" if spec.kind == "word" else \
                        "; load larger constants with the LI pseudo-instruction"
                    raise OperandError(
                        f"{pseudo.mnemonic} value {self.shown(token, number)} is out of "
                        f"range "
                        f"{range_text(low, high)} at word width {self.fmt.width}{hint}")
                operands[spec.name] = number
            except OperandError as exc:
                if report:
                    self.error(statement.line, token, str(exc))
                failed = exc
        if failed is not None:
            raise failed
        return operands

    def _expand(self, item: _Item) -> list[tuple[Instruction, dict[str, int]]]:
        statement, pseudo = item.statement, item.pseudo
        assert pseudo is not None  # called for pseudo-instructions only
        try:
            operands = self._pseudo_operands(item)
        except OperandError:
            return []
        steps = pseudo.expand(operands, self.fmt)
        # Only reachable when a label-dependent LI shrank after layout:
        # pad with ADDI $a 0, a no-op, to keep every later address.
        steps += [("ADDI", {"a": operands["a"], "imm": 0})] * (item.size - len(steps))
        tokens = {spec.name: token for spec, token in zip(pseudo.operands, statement.operands)}
        encoded = []
        ok = True
        for mnemonic, fields in steps:
            ins = BY_MNEMONIC[mnemonic]
            columns = {name: tokens[pseudo.sources[name]] for name in fields}
            ok &= self._registers_ok(ins, fields, statement, columns, pseudo.mnemonic)
            encoded.append((ins, fields))
        return encoded if ok else []

    def _data_word(self, item: _Item) -> int:
        word = self.word_value(item.statement, item.statement.operands[0], "DATA value")
        return 0 if word is None else word

    # --- pass 5: entry point and declared names -----------------------------------

    def _entry(self, code: dict[int, Placed], data: dict[int, int], length: int) -> int:
        starts = sorted(pc for pc, placed in code.items() if placed.ins.kind == "start")
        if self.start_directive is not None:
            statement = self.start_directive
            token = statement.operands[0]
            try:
                target = value(token, self.scope, reals=False, negated_names=False)
            except OperandError as exc:
                self.error(statement.line, token, str(exc))
                return 0
            where = self.describe_target(token, target)
            if target in data:
                self.error(statement.line, token, f".start target {where} is a DATA cell "
                                                   f"(line {data[target]}), not an instruction")
            elif target not in code and target not in self.unchecked:
                self.error(statement.line, token, f".start target {where} is outside the "
                                                   f"program (addresses 0..{length - 1})")
            return target
        if not starts:
            self.error(1, 1, "no entry point: the program has no START instruction and no "
                              ".start directive")
            return 0
        for pc in starts[1:]:
            placed = code[pc]
            column = self._head_column(placed.line)
            self.error(placed.line, column,
                       f"a second START instruction (the first is on line "
                       f"{code[starts[0]].line}); say which one is the entry with "
                       ".start LABEL")
        return starts[0]

    def _head_column(self, line: int) -> int:
        for item in self.items:
            if item.statement.line == line:
                head = item.statement.head
                assert head is not None  # every item has a head
                return head.column
        return 1


def _locations(filename: str, items: list[_Item], origins: Origins | None
               ) -> dict[int, SourceLocation]:
    """Each address of ``items`` -> its line of ``filename`` and the user's source that line
    was compiled from (``origins``, made now when it is a function)."""
    made = origins() if callable(origins) else origins
    locations: dict[int, SourceLocation] = {}
    for item in items:
        statement = item.statement
        head = statement.head
        assert head is not None  # every item has a head
        line = statement.line
        location = SourceLocation(filename, line, head.column, statement.text,
                                  made.get(line) if made else None)
        for pc in range(item.address, item.address + item.size):
            locations[pc] = location
    return locations


#: The instructions whose operands are registers and then one branch offset.
_BRANCHES = frozenset(i.mnemonic for i in BY_MNEMONIC.values()
                      if i.operand_kinds[-1:] == ("off",)
                      and all(kind == "reg" for kind in i.operand_kinds[:-1]))


def _branch_prefix(ins: Instruction, tokens: Sequence[Token]
                   ) -> tuple[dict[str, int], int] | None:
    """A branch's register field values and its word without the offset, when every
    register is valid and no register rule refuses them (whatever the offset); else None."""
    try:
        operands = {fld.name: register(token) for fld, token in zip(ins.fields, tokens)}
    except OperandError:
        return None
    offset = ins.fields[-1].name
    if offset in ins.writes or any(offset in pair for pair in ins.distinct) or \
            register_problems(ins, {**operands, offset: 0}):
        return None
    return operands, encode(ins, {**operands, offset: 0})


def _caught_by_partner(jump: _Jump, code: dict[int, Placed]) -> bool:
    """Whether ``jump`` lands on a branch back to it: caught (``catch_problem`` says None),
    as a compiled program's paired branches all are -- told here without the general
    checks' call (False: ask them)."""
    landing = code.get(jump.target)
    return landing is not None and landing.ins.kind in JUMP_KINDS and \
        jump.target + landing.operands["off"] == jump.pc


#: Each instruction's mnemonic as written in upper or in lower case -> its entry (DATA is
#: none: ``_item`` tells it first).
_SPELT = {**BY_MNEMONIC, **{mnemonic.lower(): ins for mnemonic, ins in BY_MNEMONIC.items()}}
assert DATA_MNEMONIC not in BY_MNEMONIC


def _syntax(spec: Instruction | PseudoInstruction, written: str) -> str:
    """The syntax line with the mnemonic as the user wrote it (``add $a $b``)."""
    return " ".join([written] + spec.syntax().split()[1:])


def _unknown_mnemonic(text: str, statement: Statement) -> str:
    known = list(BY_MNEMONIC) + list(PSEUDO_BY_MNEMONIC) + [DATA_MNEMONIC]
    close = difflib.get_close_matches(text.upper(), known, n=1)
    message = f"unknown instruction {text!r}"
    if close:
        return f"{message}; did you mean {close[0]}?"
    if NAME.match(text) and not statement.operands:
        return f"{message} (to define a label, write '{text}:')"
    return message
