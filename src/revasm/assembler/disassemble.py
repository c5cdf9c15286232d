"""Images back to PAL text that re-assembles to exactly the same words.

Labels come from the image's symbols where it has them; branch targets
without a name get a synthesized one (``L12`` for address 12).  Directives
restore what the words alone do not say: ``.width``, ``.start`` when the entry
is not the one START instruction, and the declared names.
"""
from __future__ import annotations

from collections.abc import Mapping

from revasm.isa.codec import IllegalInstruction, decode
from revasm.isa.fixed_point import DEFAULT_WIDTH, word_format
from revasm.isa.instruction import Instruction

from .image import Image
from .lexer import HEADER
from .literals import format_fixed
from .parser import NAME

_INDENT = " " * 16
_COMMENT_COLUMN = 48


def _decode(word: int) -> tuple[Instruction, dict[str, int]]:
    if word >> 32:
        raise IllegalInstruction(f"word {word:#x} is wider than an instruction (32 bits)")
    return decode(word)


def _operand_text(kind: str, name: str, number: int, pc: int,
                  labels: Mapping[int, str] | None) -> str:
    if kind == "reg":
        return f"${number}"
    if kind == "off":
        target = pc + number
        return labels[target] if labels and target in labels else str(target)
    return str(number)


def instruction_text(ins: Instruction, operands: dict[str, int], pc: int,
                     labels: Mapping[int, str] | None = None) -> str:
    """Assembly text of an instruction from its field values (``BNE $3 $5 loop``: branch
    targets absolute, named by ``labels`` where one names them); it needs no word, so a
    wide immediate of PendVM-compatibility mode reads whole."""
    parts = [ins.mnemonic]
    for name, kind in zip(ins.operand_names, ins.operand_kinds):
        parts.append(_operand_text(kind, name, operands[name], pc, labels))
    return " ".join(parts)


def disassemble_word(word: int, pc: int, labels: Mapping[int, str] | None = None) -> str:
    """One instruction word as PAL (``BEQ $1 $2 7``: branch targets are absolute).

    ``labels`` (address -> name) names branch targets.  A word that is not an
    instruction reads as a DATA cell, with the reason in a comment.
    """
    try:
        ins, operands = _decode(word)
    except IllegalInstruction as exc:
        return f"DATA {word:#x}  ; not an instruction: {exc}"
    return instruction_text(ins, operands, pc, labels)


def _names_by_address(image: Image) -> dict[int, list[str]]:
    names: dict[int, list[str]] = {}
    for name, address in image.symbols.items():
        if NAME.match(name) and 0 <= address <= len(image.words):
            names.setdefault(address, []).append(name)
    return names


def disassemble(image: Image) -> str:
    """The image as PAL source; assembling it gives the same words, code map and entry."""
    fmt = word_format(image.width)
    decoded: dict[int, tuple[Instruction, dict[str, int]]] = {}
    for pc, (word, code) in enumerate(zip(image.words, image.is_code)):
        if code:
            try:
                decoded[pc] = _decode(word)
            except IllegalInstruction:
                continue
            if pc in image.immediates:  # PendVM-compatibility mode: the whole immediate
                decoded[pc][1]["imm"] = image.immediates[pc]
    names = _names_by_address(image)
    taken = {name for group in names.values() for name in group}

    def label_for(address: int) -> str:
        if address not in names:
            name = f"L{address}"
            while name in taken:
                name += "_"
            taken.add(name)
            names[address] = [name]
        return names[address][0]

    for pc, (ins, operands) in decoded.items():
        if ins.kind in ("branch", "rbra") and 0 <= pc + operands["off"] <= len(image.words):
            label_for(pc + operands["off"])
    starts = [pc for pc, (ins, _) in decoded.items() if ins.kind == "start"]
    header = [HEADER, f";; disassembled by revasm from {image.source_file}"]
    if image.width != DEFAULT_WIDTH:
        header.append(f".width {image.width}")
    if image.immediates:
        header.append(".pendvm")
    if starts != [image.entry]:
        entry = label_for(image.entry) if 0 <= image.entry <= len(image.words) else image.entry
        header.append(f".start {entry}")
    for declared in image.names.values():
        if declared.register is not None:
            where = f"${declared.register}"
        else:
            where = names[declared.address][0] if declared.address in names else \
                str(declared.address)
        line = f".{declared.role} {declared.name} {where} {'fixed' if declared.fixed else 'int'}"
        if declared.default is not None:
            default = format_fixed(declared.default, fmt) if declared.fixed else \
                str(fmt.signed(declared.default))
            line += f" = {default}"
        header.append(line)
    first_label = {address: group[0] for address, group in names.items()}
    body: list[str] = []
    for pc, (word, code) in enumerate(zip(image.words, image.is_code)):
        here = names.get(pc, [])
        body.extend(f"{name}:" for name in here[:-1])
        prefix = _INDENT
        if here:
            if len(here[-1]) + 2 <= len(_INDENT):
                prefix = f"{here[-1]}:".ljust(len(_INDENT))
            else:
                body.append(f"{here[-1]}:")
        if pc in decoded:
            ins, operands = decoded[pc]
            text = instruction_text(ins, operands, pc, first_label)
            note = f"pc {pc}"
        else:
            text = f"DATA {fmt.signed(word)}"
            note = f"pc {pc}" + ("" if not code else ": not an instruction, kept as data")
        body.append(f"{prefix}{text}".ljust(_COMMENT_COLUMN) + f" ; {note}")
    body.extend(f"{name}:" for name in names.get(len(image.words), ()))
    return "\n".join(header + body) + "\n"
