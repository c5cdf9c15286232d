"""Where a PC comes from: its PAL line, labels and, for compiled programs, its Janus or Python line.

The image carries PC -> PAL line (``Image.locations``); a compiled program adds PAL line
-> Python position (``CompiledProgram.lowered.lines``) and each function's variable
homes (``lowered.layouts``), so the debugger names Python variables as the compiler
placed them (docs/abi.md: registers $12..$30, spilled words at SP + offset, SP = $1).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from revasm.assembler.image import Image
from revasm.compiler.api import CompiledProgram
from revasm.compiler.ir import nodes as ir

#: The compiler's stack pointer register (docs/abi.md).
STACK_POINTER = 1


@dataclass(frozen=True)
class PythonVariable:
    """A scalar variable of a compiled function: its name, its home and whether it is real."""

    name: str
    register: int | None
    frame_offset: int | None
    fixed: bool


class SourceMap:
    """PC <-> PAL line, labels, and (compiled programs) PC <-> Python line and variables."""

    def __init__(self, image: Image, program: CompiledProgram | None = None) -> None:
        self.image = image
        self.program = program
        self.labels: dict[int, list[str]] = {}
        for name, address in sorted(image.symbols.items(), key=lambda item: item[1]):
            if address < len(image) and image.is_code[address]:
                self.labels.setdefault(address, []).append(name)
        #: the PAL file's lines (the source file, or the compiled program's PAL text)
        self.pal_lines: list[str] = (program.pal.splitlines() if program is not None
                                     else _read_lines(image.source_file))
        #: the Python file's lines, for compiled programs
        self.python_file = program.module.file if program is not None else None
        self.python_lines: list[str] = (list(program.module.source_lines)
                                        if program is not None else [])

    # --- PAL -------------------------------------------------------------------------

    @property
    def pal_file(self) -> str:
        return self.image.source_file

    def pal_line(self, pc: int) -> int | None:
        location = self.image.location(pc)
        return location.line if location else None

    def pcs_of_pal_line(self, line: int) -> list[int]:
        return [pc for pc, location in self.image.locations.items()
                if location.line == line and self.image.is_code[pc]]

    def code_label(self, name: str) -> int | None:
        """The PC of a label on an instruction (None for unknown names and DATA labels)."""
        address = self.image.symbols.get(name)
        if address is None or address >= len(self.image) or not self.image.is_code[address]:
            return None
        return address

    def label_at(self, pc: int) -> str | None:
        names = self.labels.get(pc)
        return names[0] if names else None

    def instruction_text(self, pc: int) -> str:
        location = self.image.location(pc)
        return location.text.strip() if location else ""

    # --- Python (compiled programs) ----------------------------------------------------

    def python_line(self, pc: int) -> int | None:
        if self.program is None:
            return None
        entry = self.program.source_of_pc(pc)
        return entry.pos.line if entry is not None and entry.pos is not None else None

    def pcs_of_python_line(self, line: int) -> list[int]:
        return [pc for pc in range(len(self.image))
                if self.image.is_code[pc] and self.python_line(pc) == line]

    def function_at(self, pc: int) -> str | None:
        """The compiled function whose code holds ``pc`` (by its ``f_NAME`` labels)."""
        if self.program is None:
            return None
        best: tuple[int, str] | None = None
        for name in self.program.lowered.layouts:
            start = self.image.symbols.get(f"f_{name}.top", self.image.symbols.get(f"f_{name}"))
            end = self.image.symbols.get(f"f_{name}.bot")
            if start is None or end is None:
                continue
            if start <= pc <= end and (best is None or start > best[0]):
                best = (start, name)
        return best[1] if best else None

    def variables(self, function: str) -> list[PythonVariable]:
        """The scalar variables of a compiled function, parameters first."""
        if self.program is None or function not in self.program.lowered.layouts:
            return []
        layout = self.program.lowered.layouts[function]
        out = []
        for name, slot in layout.scalars.items():
            type_ = layout.scalar_types.get(name)
            fixed = isinstance(type_, ir.ScalarType) and type_.kind == "fixed"
            out.append(PythonVariable(name, slot.register, slot.frame_offset, fixed))
        return out

    # --- the debugged file's lines --------------------------------------------------------

    def line_of(self, pc: int) -> int | None:
        """The line a person follows: Python for compiled programs, else PAL."""
        return self.python_line(pc) if self.program is not None else self.pal_line(pc)

    @property
    def language(self) -> str:
        """``janus``, ``python`` (compiled programs, by their source file) or ``pal``."""
        if self.program is None:
            return "pal"
        return "janus" if (self.python_file or "").lower().endswith(".ja") else "python"

    @property
    def file(self) -> str:
        return self.python_file if self.python_file is not None else self.pal_file

    def source_text(self, line: int) -> str:
        lines = self.python_lines if self.program is not None else self.pal_lines
        return lines[line - 1] if 0 < line <= len(lines) else ""


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return []
