"""Pre-decoding: every code cell of an image, decoded once into table semantics.

For each address the simulator needs the table entry, its operand values, the
entry's ``forward`` and ``backward`` templates with the operands substituted
(``{a}`` -> register number, ``{imm}`` -> the immediate as a W-bit word,
``{amt}``, ``{k}``, ``{off}``), its cycles (``isa/timing``: a fixed part, and the unit
calls whose cycles depend on their operands as an expression over the registers), and,
when the cell cannot execute, why not.  Nothing here knows a mnemonic: all behaviour
comes from ``isa/table.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import CodeType

from revasm.assembler import collector
from revasm.assembler.disassemble import instruction_text as fields_text
from revasm.assembler.image import Image
from revasm.isa.adjoint import mode_template
from revasm.isa.codec import IllegalInstruction, decode
from revasm.isa.fixed_point import WordFormat, word_format
from revasm.isa.instruction import Instruction
from revasm.isa.timing import StepTiming, step_timing

#: Control kinds the block compiler places inside a block; START and FINISH
#: (which may halt the machine) always run on the single-step path.
BLOCK_CONTROL_KINDS = ("branch", "rbra", "swapbr")


@dataclass
class Decoded:
    """One code cell: the entry, its operands, its two statements, or why it is illegal."""

    pc: int
    instruction: Instruction | None
    operands: dict[str, int]
    forward: str
    backward: str
    text: str
    illegal: str | None = None
    values: dict[str, int] = field(default_factory=dict, repr=False)
    width: int = 32
    _code: dict[tuple, CodeType] = field(default_factory=dict, repr=False)
    _cycles: dict[tuple, tuple[int, CodeType | None]] = field(default_factory=dict, repr=False)

    @property
    def kind(self) -> str:
        return self.instruction.kind if self.instruction else "illegal"

    def timing(self, direction: int, gradient: bool = False) -> StepTiming | None:
        """The instruction's cycles on the RTL core (``isa/timing``) in one direction, in
        gradient mode or not (the tangent banks have no hardware: they add none);
        ``None`` for a cell that cannot execute."""
        if self.instruction is None:
            return None
        return step_timing(self.instruction, direction < 0, gradient, self.width)

    def fixed_cycles(self, direction: int, gradient: bool = False) -> int:
        """The cycles of this step that every operand gives (all of them unless
        :meth:`cycles_expression` is not ``None``)."""
        timing = self.timing(direction, gradient)
        return timing.fixed if timing is not None else 0

    def cycles_expression(self, direction: int, gradient: bool = False) -> str | None:
        """The cycles of the unit calls whose time depends on their operands, as an
        expression over ``R`` that reads only registers the step does not write (so it is
        evaluated after the step), calling ``isa/timing``'s ``timer_names``; ``None``
        when there is no such call."""
        timing = self.timing(direction, gradient)
        if timing is None or not timing.timed:
            return None
        return timing.expression(self.operands)

    def cycles(self, direction: int, gradient: bool = False) -> tuple[int, CodeType | None]:
        """:meth:`fixed_cycles` and :meth:`cycles_expression` compiled for ``eval`` (or
        ``None``), for the single-step path."""
        key = (direction, gradient)
        cycles = self._cycles.get(key)
        if cycles is None:
            expression = self.cycles_expression(direction, gradient)
            cycles = self._cycles[key] = (
                self.fixed_cycles(direction, gradient),
                None if expression is None else compile(expression, "<revasm cycles>",
                                                        "eval"))
        return cycles

    @property
    def is_data(self) -> bool:
        return self.illegal is None and self.kind == "data"

    @property
    def in_blocks(self) -> bool:
        """Whether generated blocks may contain this instruction."""
        return self.illegal is None and (self.kind == "data" or self.kind in BLOCK_CONTROL_KINDS)

    def statement(self, direction: int, gradient: bool = False, tangent: bool = False) -> str:
        """What one step executes: the value template, plus the gradient-mode
        templates of the banks that are switched on (``isa/adjoint.py``)."""
        if not (gradient or tangent) or self.instruction is None:
            return self.forward if direction > 0 else self.backward
        return mode_template(self.instruction, direction, gradient, tangent).format(**self.values)

    def code(self, direction: int, gradient: bool = False, tangent: bool = False) -> CodeType:
        """The statement compiled on its own, for the single-step path."""
        key = (direction, gradient, tangent)
        code = self._code.get(key)
        if code is None:
            code = _compile_statement(self.statement(direction, gradient, tangent))
            self._code[key] = code
        return code


_STATEMENT_CACHE: dict[str, CodeType] = {}


def _compile_statement(source: str) -> CodeType:
    code = _STATEMENT_CACHE.get(source)
    if code is None:
        if len(_STATEMENT_CACHE) > 50_000:
            _STATEMENT_CACHE.clear()
        code = compile(source, "<revasm instruction>", "exec")
        _STATEMENT_CACHE[source] = code
    return code


def operand_values(ins: Instruction, operands: dict[str, int], fmt: WordFormat) -> dict[str, int]:
    """What a template's placeholders stand for: the immediate becomes a W-bit word."""
    values = dict(operands)
    if "imm" in values:
        values["imm"] = values["imm"] & fmt.mask
    return values


def instruction_text(ins: Instruction, operands: dict[str, int], pc: int,
                     labels: dict[int, str] | None = None) -> str:
    """Assembly text of a decoded instruction, e.g. ``BNE $3 $5 loop``: the assembler's
    disassembler's.  Branch offsets are shown as their target (a label if one names it),
    as the source would write them.
    """
    return fields_text(ins, operands, pc, labels)


def _problem(ins: Instruction, operands: dict[str, int]) -> str | None:
    """Operands the table forbids: writing $0, or aliasing ``distinct`` registers.

    Both would break reversibility (``SWAP $0 $5`` loses $5, ``ADD $3 $3``
    cannot be undone), so the machine refuses to execute them, as the
    assembler refuses to assemble them.
    """
    for name in ins.writes:
        if operands.get(name) == 0:
            return f"it writes ${name} = $0, which always reads zero"
    for first, second in ins.distinct:
        if operands[first] == operands[second]:
            return (f"operands {first} and {second} must be different registers "
                    f"(both are ${operands[first]})")
    return None


def decode_cell(image: Image, pc: int, fmt: WordFormat,
                labels: dict[int, str] | None = None) -> Decoded:
    word = image.words[pc]
    if not image.is_code[pc]:
        return Decoded(pc, None, {}, "", "", f"DATA {word}",
                       illegal="holds a DATA cell, not an instruction")
    try:
        ins, operands = decode(word & 0xFFFFFFFF)
    except IllegalInstruction as exc:
        return Decoded(pc, None, {}, "", "", f"word {word & 0xFFFFFFFF:#010x}",
                       illegal=f"word {word & 0xFFFFFFFF:#010x} is not an instruction: {exc}")
    if pc in image.immediates:  # PendVM-compatibility mode: the word holds its low bits
        operands["imm"] = image.immediates[pc]
    text = instruction_text(ins, operands, pc, labels)
    values = operand_values(ins, operands, fmt)
    problem = _problem(ins, operands)
    return Decoded(pc, ins, operands, ins.forward.format(**values),
                   ins.backward.format(**values), text,
                   illegal=f"{text} is illegal: {problem}" if problem else None, values=values,
                   width=fmt.width)


def decode_image(image: Image) -> list[Decoded]:
    """Every cell of the image, decoded (DATA cells and bad words marked illegal)."""
    fmt = word_format(image.width)
    labels: dict[int, str] = {}
    for name, address in sorted(image.symbols.items()):
        labels.setdefault(address, name)
    with collector.paused():  # a cell's objects each, for every word of a long image
        return [decode_cell(image, pc, fmt, labels) for pc in range(len(image))]
