"""Lowering the IR to PAL: expressions, paired branches, portal calls, the source map.

Every statement becomes straight-line code built from *setup / operation /
teardown*: operands that are not already in a register (constants, spilled
variables, array elements, sub-expressions) are computed into zeroed scratch
registers by a setup sequence and cleared again by its exact inverse, so every
scratch register is zero between statements.  Control flow follows PISA's
paired-branch discipline (docs/abi.md); guards make a failed postcondition or
a wrongly freed ancilla fault at a known PC, which the source map sends back
to the Python line.

This module lowers the program: the entry stub (START, stack pointer, array
bases, the call of the entry function, FINISH), the trap landing pads, the
data words, and the PAL text with its source map.  One function is lowered by
``function_lowering.py`` and the mixins it names.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, partial

from revasm.assembler.lexer import Token
from revasm.assembler.literals import is_number
from revasm.assembler.parser import LABEL, Statement
from revasm.isa.fixed_point import WordFormat, word_format
from revasm.isa.table import INSTRUCTIONS

from ..errors import SourcePos
from ..ir import nodes as ir
from ..ir.proofs import Proofs
from .callee_registers import callee_first, named_registers, registers_of_calls
from .carried_elements import PointerKey, carry_elements
from .code import (
    Instr,
    expand_loops,
    fixed_literal,
    instruction_text,
    inverse_code,
    literal_word,
    with_role,
)
from .function_lowering import FunctionLowering
from .guards import check_kinds
from .immediates import IMMEDIATE_RANGE, combine_immediates, widened_immediates
from .immediates import WINDOW as IMMEDIATE_WINDOW
from .induction import merge_inductions
from .ir_queries import callees_of, index_exprs
from .layout import SP, VARIABLE_REGISTERS, FunctionLayout, layout_function
from .param_ranges import call_writes, changed_variables, param_ranges
from .peephole import COMPILED_FROM, cancel_exchange_pairs, cancel_inverse_pairs
from .stack_slots import cancel_stack_exchanges


@dataclass(slots=True)
class SourceEntry:
    """What one PAL line came from: a Python position, a role, and a fault message."""

    pos: SourcePos | None
    role: str
    note: str = ""
    check: str = ""  # the kind of run-time check a trap pad belongs to


@dataclass
class Lowered:
    """The compiled program: PAL text and the PAL line -> Python source map."""

    pal: str
    entry: str
    width: int
    lines: dict[int, SourceEntry] = field(default_factory=dict)
    layouts: dict[str, FunctionLayout] = field(default_factory=dict)
    array_labels: dict[str, list[str]] = field(default_factory=dict)
    #: the assembler's statement of each line of ``pal`` the writer knows (None: read it)
    statements: list[Statement | None] | None = None


#: The optimisation levels: 0 lowers statement by statement (no peephole, no constant
#: pool, conditions recomputed in their teardown), the plain shapes every level is checked
#: against; 1 adds the peephole, the constant pool and single-pass conditions; 2 adds the
#: -O2 passes (docs/language.md, *Optimisation levels*, names their modules).
LEVELS = (0, 1, 2)
DEFAULT_LEVEL = 2


def lower_module(module: ir.Module, entry: str, width: int = 32,
                 max_registers: int | None = None, for_gradient: bool = False,
                 proofs: Proofs | None = None, checks: bool | Iterable[str] = True,
                 level: int = DEFAULT_LEVEL, reference: ir.Module | None = None) -> Lowered:
    """PAL for ``entry`` and what it calls.  ``proofs`` (from the static checks) lets
    the guards they make redundant go; ``checks=False`` drops every runtime guard, a set
    of kinds (``guards.CHECK_KINDS``) keeps only those; ``level`` is one of ``LEVELS``;
    ``reference`` is the module as -O0 lowers it, whose variables keep their homes
    (``layout.layout_function``)."""
    return _ModuleLowering(module, entry, width, max_registers, for_gradient, proofs,
                           checks, level, reference).run()


class _ModuleLowering:
    def __init__(self, module: ir.Module, entry: str, width: int,
                 max_registers: int | None, for_gradient: bool,
                 proofs: Proofs | None = None, checks: bool | Iterable[str] = True,
                 level: int = DEFAULT_LEVEL, reference: ir.Module | None = None) -> None:
        self.module = module
        self.level = level
        self.optimize = level >= 1
        self.proofs = proofs if proofs is not None else Proofs()
        self.checks = check_kinds(checks)
        self.entry = entry
        self.fmt = word_format(width)
        self.width = width
        self.for_gradient = for_gradient
        self.max_registers = max_registers
        before = reference.functions if reference is not None else {}
        self.layouts = {name: layout_function(f, max_registers, before.get(name))
                        for name, f in module.functions.items()}
        self.traps: list[Instr] = []
        self.label_counter = 0
        # (both only about calls: a program without any needs neither walk of its code)
        calls = any(True for f in module.functions.values() for _ in callees_of(f.body))
        #: function -> the variables it may change (a call changes only those arguments)
        self.changes = changed_variables(module, callee_first(module, set(module.functions))) \
            if calls else {}
        #: Int parameters' values from every call (-O2, ``param_ranges.py``)
        self.param_ranges = param_ranges(module, entry, self.changes) \
            if level >= 2 and calls else {}
        #: each lowered function's code, and the registers it names (worked out when a
        #: caller first asks: ``registers_named``)
        self.lowered: dict[str, list[Instr]] = {}
        self.named_registers: dict[str, frozenset[int]] = {}
        #: a counted loop's top label -> register -> the address its pointer holds there
        self.loop_pointers: dict[str, dict[str, PointerKey]] = {}

    def label(self, kind: str) -> str:
        self.label_counter += 1
        return f"L{self.label_counter}_{kind}"

    def _free_register(self, code: list[Instr], lay: FunctionLayout) -> str | None:
        """A variable register that holds none of the function's variables (a parameter
        the body never names still holds its argument: an array's base address) and that
        ``code`` never names (within ``max_registers``)."""
        named = named_registers(code) | set(lay.registers)
        limit = self.max_registers
        available = VARIABLE_REGISTERS[:limit] if limit else VARIABLE_REGISTERS
        free = [r for r in available if r not in named]
        return f"${free[0]}" if free else None

    def call_writes(self, call: ir.Call) -> set[str]:
        """The variables ``call`` may change (``param_ranges.call_writes``)."""
        return call_writes(call, self.module, self.changes)

    def registers_of_calls(self, body: list[ir.Stmt]) -> frozenset[int] | None:
        """The registers the calls in ``body`` may change; None while one is not known."""
        return registers_of_calls(self.module, body, self.registers_named)

    def registers_named(self, name: str) -> frozenset[int] | None:
        """The registers function ``name``'s own code names (``callee_registers.py``); None
        while it is not lowered.  Worked out on a caller's first question: a function no
        one calls (the entry) is never walked for them, a pass over a long program's
        whole code."""
        known = self.named_registers.get(name)
        if known is None and name in self.lowered:
            known = self.named_registers[name] = named_registers(self.lowered[name])
        return known

    def check(self, kind: str) -> bool:
        """Whether the run-time checks of ``kind`` (``guards.CHECK_KINDS``) are on."""
        return kind in self.checks

    def trap(self, guard: str, pos: SourcePos, note: str, kind: str = "") -> str:
        """A landing pad that never catches: a jump from ``guard`` to it faults."""
        name = self.label("trap")
        self.traps.append(Instr("BNE", ("$0", "$0", guard), pos, "check", note, name, kind))
        return name

    # --- the program ---------------------------------------------------------------

    def run(self) -> Lowered:
        if self.entry not in self.module.functions:
            raise KeyError(self.entry)
        reachable = self._reachable(self.entry)
        lowered = self.lowered
        # callees first (-O2): a caller may keep a value in a register its callees leave
        # alone (callee_registers.py); the bodies are written in the module's order
        order = callee_first(self.module, reachable) if self.level >= 2 else \
            [name for name in self.module.functions if name in reachable]
        for name in order:
            code = expand_loops(FunctionLowering(self, self.module.functions[name]).run(),
                                self.label)
            if self.level >= 2:
                code = merge_inductions(_stack_pairs_cancelled(code))
                if self.loop_pointers:  # (else nothing to carry: no pass for a free register)
                    code = carry_elements(code, self.loop_pointers,
                                          self._free_register(code, self.layouts[name]),
                                          self.label)
                code = _combined_and_cancelled(code)
            elif self.optimize:
                code = _inverse_pairs_cancelled(code)
            code = widened_immediates(code)
            lowered[name] = code
        bodies = [instr for name in self.module.functions if name in lowered
                  for instr in lowered[name]]
        out = _Writer()
        f = self.module.functions[self.entry]
        lay = self.layouts[self.entry]
        out.comment(";; pendulum pal file")
        out.comment(f";; compiled by revasm compile from {self.module.file}:{self.entry}")
        out.raw(f".width {self.width}")
        array_labels: dict[str, list[str]] = {}
        data: list[tuple[str, str]] = []
        for p in f.params:
            kind = "int" if (p.type == ir.INT or (isinstance(p.type, ir.ArrayType)
                                                  and p.type.element == ir.INT)) else "fixed"
            directive = {"input": ".input", "output": ".output", "loss": ".loss"}[p.role]
            if isinstance(p.type, ir.ArrayType):
                labels = []
                for flat, idx in enumerate(index_exprs(p.type.shape)):
                    suffix = ".".join(map(str, idx))
                    label = f"v_{p.name}.{suffix}"
                    labels.append(label)
                    out.words(f"{directive} {p.name}.{suffix} {label} {kind}"
                              f"{_default_and_domain(p, flat, kind, self.fmt)}")
                    data.append((label, "0"))
                array_labels[p.name] = labels
            else:
                out.raw(f"{directive} {p.name} ${lay.scalars[p.name].register} {kind}"
                        f"{_default_and_domain(p, 0, kind, self.fmt)}")
        for table in self.module.tables.values():
            for flat, value in enumerate(table.values):
                integer = table.type.element == ir.INT
                literal_word(value, integer, self.fmt, table.pos,
                             f"element {flat} of {table.name} ({float(value):g})")
                text = str(int(value)) if integer else fixed_literal(value)
                data.append((f"t_{table.name}.{flat}", text))
        pos = f.pos
        stub = [Instr("START", (), pos, "control")]
        setup = [Instr("LI", (f"${SP}", "stack"), pos, "call", "stack pointer")]
        for p in f.params:
            if isinstance(p.type, ir.ArrayType):
                reg = lay.arrays[p.name].register
                setup.append(Instr("LI", (f"${reg}", array_labels[p.name][0]), pos, "call",
                                   f"base address of {p.name}"))
        stub += setup
        stub.append(Instr("BRA", (f"f_{self.entry}",), pos, "control", f"call {self.entry}"))
        stub += with_role(inverse_code(setup), "call")
        stub.append(Instr("FINISH", (), pos, "control"))
        for instr in self._with_traps(stub, bodies):
            out.instr(instr)
        for label, text in data:
            out.data(label, text)
        out.data("stack", "0")
        return Lowered(out.text(), self.entry, self.width, out.map, self.layouts, array_labels,
                       out.statements)

    def _with_traps(self, stub: list[Instr], bodies: list[Instr]) -> list[Instr]:
        """The program with its trap pads: after the entry stub (where no code falls
        through to them), or -- in a program too long for every guard to reach them there
        with a 16-bit branch offset -- in islands after each :data:`ISLAND_SPACING`
        instructions, each holding the pads of the guards since the last one and skipped by
        a pair of jumps (``BRA`` over it, caught by a ``BRA`` back: a no-op both ways)."""
        traps = self.traps
        if len(stub) + len(traps) + len(bodies) <= ISLAND_SPACING:
            return stub + traps + bodies
        pads: dict[str, list[Instr]] = {}
        for pad in traps:
            pads.setdefault(pad.operands[-1], []).append(pad)
        out = list(stub)
        waiting: list[Instr] = []
        since = 0
        for instr in bodies:
            if since >= ISLAND_SPACING and waiting:
                out += self._island(waiting)
                waiting, since = [], 0
            out.append(instr)
            since += 1
            if instr.label in pads:
                waiting += pads.pop(instr.label)
        for left in pads.values():  # (a guard that is not in the code: none is)
            waiting += left
        return out + (self._island(waiting) if waiting else [])

    def _island(self, pads: list[Instr]) -> list[Instr]:
        """``pads`` between a jump over them and the jump that catches it.  The two jumps
        have no source line: a line step passes them, as it passes every PC without one
        (the pads keep their checks' lines, for the faults they report)."""
        over, back = self.label("island"), self.label("island_end")
        return [Instr("BRA", (back,), None, "control", "over the trap pads", over), *pads,
                Instr("BRA", (over,), None, "control", "", back)]

    def _reachable(self, name: str) -> set[str]:
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += list(callees_of(self.module.functions[n].body))
        return seen


def _inverse_pairs_cancelled(code: list[Instr], compiled_from: int | None = None
                             ) -> list[Instr]:
    """The peephole's inverse pairs cancelled (compiled for long code: ``pair_scans.py``;
    ``compiled_from`` instructions, by default ``peephole.COMPILED_FROM``)."""
    if len(code) >= (COMPILED_FROM if compiled_from is None else compiled_from):
        from .pair_scans import pairs_cancelled
        done = pairs_cancelled(code, exchanges=False)
        if done is not None:
            return done
    return cancel_inverse_pairs(code)


def _combined_and_cancelled(code: list[Instr], compiled_from: int | None = None
                            ) -> list[Instr]:
    """``_inverse_pairs_cancelled(combine_immediates(code))`` (-O2): long code
    (``compiled_from`` instructions) runs both in the compiled loops of ``pair_scans.py``
    on one numbering of the code."""
    if len(code) >= (COMPILED_FROM if compiled_from is None else compiled_from):
        from .pair_scans import combined_and_cancelled
        done = combined_and_cancelled(code, IMMEDIATE_WINDOW, IMMEDIATE_RANGE)
        if done is not None:
            return done
    return _inverse_pairs_cancelled(combine_immediates(code, compiled_from), compiled_from)


def _pairs_cancelled(code: list[Instr], compiled_from: int | None = None) -> list[Instr]:
    """The peephole's inverse pairs and exchange pairs (-O2) until neither finds more:
    a cancelled exchange pair can bring an instruction and its inverse together, and the
    other way round.  Long code (``compiled_from`` instructions) is scanned by the compiled
    loop of ``pair_scans.py``, which drops the same pairs."""
    if len(code) >= (COMPILED_FROM if compiled_from is None else compiled_from):
        from .pair_scans import pairs_cancelled
        done = pairs_cancelled(code, exchanges=True)
        if done is not None:
            return done
    code = cancel_inverse_pairs(code)  # (already until none is left)
    while True:
        before = len(code)
        code = cancel_exchange_pairs(code)
        if len(code) == before:  # neither finds more: no second look for inverse pairs
            return code
        code = cancel_inverse_pairs(code)


def _stack_pairs_cancelled(code: list[Instr], compiled_from: int | None = None
                           ) -> list[Instr]:
    """``cancel_stack_exchanges(_pairs_cancelled(code))`` (-O2): long code (``compiled_from``
    instructions) runs the stack slots' scan in the compiled loop of ``pair_scans.py`` too,
    right after the pair scans, on the same numbering."""
    if len(code) >= (COMPILED_FROM if compiled_from is None else compiled_from):
        from .pair_scans import pairs_cancelled
        done = pairs_cancelled(code, exchanges=True, stack=True)
        if done is not None:
            return done
    return cancel_stack_exchanges(_pairs_cancelled(code, compiled_from))


def _default_and_domain(p: ir.Param, flat: int, kind: str, fmt: WordFormat) -> str:
    """`` = DEFAULT in LO..HI`` for a declaration (element ``flat`` of an array); a value
    the word cannot hold is a CompileError at the parameter."""
    def literal(value: Fraction) -> str:
        if kind == "int":
            if value.denominator == 1 and fmt.min_signed <= value <= fmt.max_signed:
                return str(int(value))  # (each element of a long array: no message made)
        elif fmt.min_signed <= fmt.from_real(value) <= fmt.max_signed:
            return fixed_literal(value)
        literal_word(value, kind == "int", fmt, p.pos,
                     f"{p.name}'s default or domain end {float(value):g}")
        return str(int(value)) if kind == "int" else fixed_literal(value)
    text = ""
    if p.default is not None:
        text += f" = {literal(p.default[flat])}"
    if p.exact and p.default is not None:
        text += f" in {literal(p.default[flat])}..{literal(p.default[flat])}"
    elif p.domain is not None:
        text += f" in {literal(p.domain[0][flat])}..{literal(p.domain[1][flat])}"
    return text


#: Trap pads go after the entry stub unless the program is longer than this; then in
#: islands this many instructions apart (a guard's branch offset has 16 bits: the
#: instructions between a guard and its pad, some of them two words, must stay within
#: 32 767 words).
ISLAND_SPACING = 8192
#: The width of the label column and of an instruction's mnemonic and operands.
LABEL_COLUMNS, CODE_COLUMNS = 14, 28
#: What no word the writer hands the assembler as a token without its lexer may hold
#: (assembler/lexer.py): a character that separates, ends or comments a token.
_NOT_PLAIN = re.compile(r"[\s,;:]")


class _Writer:
    """The PAL text, its map to the user's source, and the assembler's statement for each
    instruction line (``parser.parse_source``'s ``parsed``): the writer knows where each
    token starts, so a long program's lines need not be read again."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.map: dict[int, SourceEntry] = {}
        self.statements: list[Statement | None] = []
        self.file_names: dict[str, str] = {}  # a source path -> its last part
        self.entry: SourceEntry | None = None  # the last line's
        self.note = ""  # its comment: the user's file and line, and the note

    def comment(self, text: str) -> None:
        self.lines.append(text)
        self.statements.append(None)

    def raw(self, text: str) -> None:
        self.lines.append(text)
        self.statements.append(None)

    def words(self, text: str) -> None:
        """A line of words one space apart (a declaration: an array's makes one a
        element), with the statement ``parser.parse_line`` reads in it, from the words'
        columns, when each is a plain word."""
        self.lines.append(text)
        words = text.split(" ")
        if _NOT_PLAIN.search(text.replace(" ", "")) or not all(words):
            self.statements.append(None)
            return
        tokens, column = [], 1
        for word in words:
            tokens.append(_token((word, column)))
            column += len(word) + 1
        self.statements.append(Statement(len(self.lines), text, [], tokens[0], tokens[1:]))

    def data(self, label: str, value: str) -> None:
        """``label: data value`` (an array element's cell), with its statement when the
        label and the value are plain words."""
        text = f"{label + ':':<12} data {value}"
        self.lines.append(text)
        if not (value and LABEL.match(label)) or is_number(label) or _NOT_PLAIN.search(value):
            self.statements.append(None)
            return
        at = max(len(label) + 1, 12) + 2  # (the column of ``data``)
        self.statements.append(Statement(len(self.lines), text, [_token((label, 1))],
                                         _token(("data", at)), [_token((value, at + 5))]))

    def instr(self, i: Instr) -> None:
        # one call per instruction of the program: kept to plain string work
        pos, note, role, check, label = i.pos, i.note, i.role, i.check, i.label
        entry = self.entry  # the lines of one statement share their entry (when equal)
        if entry is None or entry.note != note or entry.role != role \
                or entry.check != check or not (entry.pos is pos or entry.pos == pos):
            entry = self.entry = SourceEntry(pos, role, note, check)
            if pos is not None:
                name = self.file_names.get(pos.file)
                if name is None:
                    name = self.file_names[pos.file] = pos.file.rsplit("/", 1)[-1]
                self.note = (f"; {name}:{pos.line}; {note}" if note
                             else f"; {name}:{pos.line}").rstrip()
            else:
                self.note = f"; {note}".rstrip() if note else ""
        mnemonic, operands = i.mnemonic, i.operands
        if label:
            column = max(len(label) + 1, LABEL_COLUMNS) + 1
            head = (label + ":").ljust(LABEL_COLUMNS)
        else:
            column, head = LABEL_COLUMNS + 1, _NO_LABEL
        if mnemonic in _BRANCHES:
            code, padded, words = _branch_spelled(column, mnemonic, operands)
        else:
            code, padded, words = _spelling(column, mnemonic, operands)
        # the label's, the code's and the comment's columns (LABEL_COLUMNS, CODE_COLUMNS),
        # no white space at the end (the comment has none: ``self.note``)
        tail = self.note
        text = head + padded + tail if tail else (head + code).rstrip()
        self.lines.append(text)
        number = len(self.lines)
        self.map[number] = entry
        # what ``parser.parse_line`` reads in the line, from the columns each word was
        # written at (None: the assembler reads the line, for a word its lexer would
        # split or refuse)
        if words is None:
            self.statements.append(None)
        elif not label:
            self.statements.append(Statement(number, text, [], *words))
        elif _plain_label(label):
            self.statements.append(Statement(number, text, [_token((label, 1))], *words))
        else:
            self.statements.append(None)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


_token = partial(tuple.__new__, Token)  # a Token without NamedTuple's Python-level __new__
#: The label column of a line without a label.
_NO_LABEL = " " * LABEL_COLUMNS

#: An instruction's spelling: its text, the text padded to CODE_COLUMNS, and its head and
#: operand tokens (None when the lexer would not read each word whole).
Spelling = tuple[str, str, tuple[Token, list[Token]] | None]


def _plain_label(label: str) -> bool:
    """Whether the parser reads ``label:`` as this label (``LABEL``, and not a number).
    An identifier is one (no white space, ``,;:``, nor a sign or a digit first), a test a
    tenth as long as the pattern's: a long program has a label on most lines."""
    return label.isidentifier() or bool(LABEL.match(label)) and not is_number(label)


def _spelled(column: int, mnemonic: str, operands: tuple[str, ...]) -> Spelling:
    """An instruction's :data:`Spelling` when written from ``column`` on."""
    code = instruction_text(mnemonic, operands)
    padded = code.ljust(CODE_COLUMNS)
    if _NOT_PLAIN.search(mnemonic + "".join(operands)) or not (mnemonic and all(operands)):
        return code, padded, None
    head = _token((mnemonic.lower(), column))
    column += max(len(mnemonic), 7) + 1
    tokens = []
    for operand in operands:
        tokens.append(_token((operand, column)))
        column += len(operand) + 1
    return code, padded, (head, tokens)


#: :func:`_spelled`, kept: a long program repeats a few thousand spellings, and the lines
#: of one share their text and tokens (the assembler only reads them).  Not for a branch:
#: each names a label of its own.
_spelling = lru_cache(maxsize=1 << 16)(_spelled)
_BRANCHES = frozenset(i.mnemonic for i in INSTRUCTIONS if "off" in i.operand_kinds)


def _branch_spelled(column: int, mnemonic: str, operands: tuple[str, ...]) -> Spelling:
    """:func:`_spelled` of a branch, whose last operand is a label of its own: the rest
    (mnemonic and registers, a few spellings in a long program) kept, the label added."""
    target = operands[-1] if operands else ""
    if not (target.isidentifier() or target and not _NOT_PLAIN.search(target)):
        return _spelled(column, mnemonic, operands)
    text, words, at = _branch_prefix(column, mnemonic, operands[:-1])
    code = text + target  # (as instruction_text writes it: no white space to strip)
    padded = code.ljust(CODE_COLUMNS)
    if words is None:
        return code, padded, None
    return code, padded, (words[0], [*words[1], _token((target, at))])


@lru_cache(maxsize=1 << 12)
def _branch_prefix(column: int, mnemonic: str, registers: tuple[str, ...]
                   ) -> tuple[str, tuple[Token, list[Token]] | None, int]:
    """A branch's text up to its label, its tokens up to it (None when the lexer would not
    read each word whole) and the label's column."""
    text = f"{mnemonic.lower():<7} " + "".join(r + " " for r in registers)
    at = column + max(len(mnemonic), 7) + 1 + sum(len(r) + 1 for r in registers)
    _, _, words = _spelled(column, mnemonic, registers)
    return text, words, at
