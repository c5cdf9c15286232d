"""The block compiler: straight-line runs of the program turned into Python functions.

A *block* starts either at a control instruction (branch, RBRA, SWAPBR) or at
the first data instruction of a run, and goes on through the following
maximal run of ``data`` instructions up to and including the next control
instruction.  Its generated function has one statement line per instruction,
the table's ``forward`` templates in program order for DIR = +1, or the
``backward`` templates in reverse program order for DIR = -1.  The backward
block of PendVM's fib loop, entered at its bottom branch (pc 10)::

    def _b10(R, MEM, BR, DIR, ComeFromViolation=ComeFromViolation, M=M):
        _br = BR
        if R[3] != R[5]: BR = BR - -6  # pc 10: maybe the landing of a jump
        if BR:
            if _br: raise ComeFromViolation(10, BR, DIR)
            return (10 - (BR or 1), BR, DIR, 1, 1)   # a jump: leave the block
        R[3] = (R[3] - 1) & M  # pc 9
        R[1] ^= R[2]  # pc 8
        R[2] ^= R[1]  # pc 7
        R[1] ^= R[2]  # pc 6
        R[2] = (R[2] - R[1]) & M  # pc 5
        if R[3] != R[0]: BR = BR - 6  # pc 4: the block's last instruction
        return (4 - (BR or 1), BR, DIR, 7, 7)

Each block function returns ``(next pc, BR, DIR, instructions executed, cycles)``, where
the cycles are the instructions' fixed cycles on the RTL core (``isa/timing``); an
instruction with a unit call whose cycles depend on its operands (tan, exp, a rotation,
...) adds those after its statement, ``CYCLES[0] += cycles_fn_tan(R[2])``, from registers
the step does not write, so a block with none of them pays nothing for its timing.  Data
instructions never touch BR or DIR, so inside a block BR = 0 and DIR is the
block's direction; a block whose first instruction is data declines
(returns ``None``) when entered with BR != 0, leaving that landing, which can
only fault, to the single-step path.  START and FINISH, which may halt the
machine, never enter a block.  Blocks are capped at ``MAX_BLOCK`` instructions
so that the machine can honour ``max_steps`` exactly by single-stepping the
last few instructions.

If a template raises (a bad address, division by zero, ...), the traceback's
line number inside the generated code names the instruction; ``line_map``
gives its PC, its position in the block and the cycles spent before it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from revasm.machine.next_pc import next_pc_source

from .predecode import Decoded

#: Longest block, in instructions (see the module docstring).
MAX_BLOCK = 128

#: Names every block may use besides the vocabulary.
PARAMETERS = ("R", "MEM", "BR", "DIR")

#: The list whose word accumulates the operand-dependent cycles of the blocks' unit calls.
DYNAMIC_CYCLES = "CYCLES"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


@dataclass(frozen=True)
class BlockPlace:
    """Where a line of generated code came from."""

    pc: int
    index: int          # instructions of the block completed before this one
    cycles_before: int  # their cycles


@dataclass
class CompiledBlocks:
    """The blocks of one program for one direction, each generated and compiled when a
    run first enters it (a 289 000-instruction program had taken 12 s and 4 GB to compile
    whole before its first step; a short one pays the same for its blocks either way)."""

    direction: int
    cells: list[Decoded]
    bound_names: frozenset[str]
    gradient: bool
    tangent: bool
    #: where a block may start: a control instruction, the first of a data run, and (found
    #: as blocks are made) the instruction after a block capped at MAX_BLOCK
    starts: set[int]
    #: start -> its compiled function's code, and each code's line -> instruction
    codes: dict[int, CodeType] = field(default_factory=dict)
    line_maps: dict[str, dict[int, BlockPlace]] = field(default_factory=dict)
    #: a bound on every block's length (MAX_BLOCK data instructions and two control ones)
    max_length: int = MAX_BLOCK + 2

    def code(self, start: int) -> CodeType:
        """The compiled function of the block at ``start`` (made once)."""
        code = self.codes.get(start)
        if code is None:
            writer = _Writer(self.gradient, self.tangent)
            _, continuation = _generate_block(self.cells, start, self.direction, writer,
                                              self.bound_names)
            if continuation is not None:
                self.starts.add(continuation)
            source = "\n".join(writer.lines) + "\n"
            mode = "".join((" gradient" if self.gradient else "",
                            " tangent" if self.tangent else ""))
            filename = (f"<revasm block {'forward' if self.direction > 0 else 'backward'}"
                        f"{mode} at pc {start}>")
            code = _CODE_CACHE.get((filename, source))
            if code is None:
                if len(_CODE_CACHE) > 20_000:
                    _CODE_CACHE.clear()
                code = _CODE_CACHE[(filename, source)] = compile(source, filename, "exec")
            self.codes[start] = code
            self.line_maps[filename] = writer.places
        return code

    def functions(self, namespace: dict[str, Any]) -> BlockFunctions:
        """The blocks' functions in ``namespace``, made as they are asked for."""
        return BlockFunctions(self, namespace)


class BlockFunctions:
    """Block start pc -> its function in one machine's namespace (``get``, as a dict's)."""

    def __init__(self, blocks: CompiledBlocks, namespace: dict[str, Any]) -> None:
        self.blocks = blocks
        self.namespace = namespace
        self.made: dict[int, Callable[..., Any]] = {}

    def get(self, pc: int) -> Callable[..., Any] | None:
        function = self.made.get(pc)
        if function is None:
            if pc not in self.blocks.starts:
                return None
            exec(self.blocks.code(pc), self.namespace)  # generated from the ISA table only
            function = self.made[pc] = self.namespace.pop(f"_b{pc}")
        return function


class _Writer:
    def __init__(self, gradient: bool = False, tangent: bool = False) -> None:
        self.lines: list[str] = []
        self.places: dict[int, BlockPlace] = {}
        self.gradient = gradient
        self.tangent = tangent

    def line(self, text: str, place: BlockPlace | None = None) -> None:
        self.lines.append(text)
        if place is not None:
            self.places[len(self.lines)] = place

    def statement(self, decoded: Decoded, direction: int, place: BlockPlace,
                  indent: str = "    ") -> None:
        for text in decoded.statement(direction, self.gradient, self.tangent).split("\n"):
            self.line(f"{indent}{text}  # pc {decoded.pc}", place)
        timed = decoded.cycles_expression(direction, self.gradient)
        if timed is not None:
            self.line(f"{indent}{DYNAMIC_CYCLES}[0] += {timed}  # pc {decoded.pc}: cycles",
                      place)

    def cycles(self, decoded: Decoded, direction: int) -> int:
        return decoded.fixed_cycles(direction, self.gradient)


def _next_pc_expression(pc: int, direction: int | None) -> str:
    """PC after the instruction at ``pc`` (the next-PC rule, ``revasm.machine.next_pc``):
    DIR still the block's ``direction``, or None after RBRA, which turns it."""
    return next_pc_source(str(pc), "BR", "DIR" if direction is None else direction)


def _generate_block(cells: list[Decoded], start: int, direction: int, writer: _Writer,
                    bound_names: frozenset[str]) -> tuple[int, int | None]:
    """Append the function for the block at ``start``; returns (length, capped continuation)."""
    header_at = len(writer.lines)
    writer.line("")  # the def line, filled in once the body's names are known
    body_start = len(writer.lines)
    first = cells[start]
    count = 0
    cycles = 0
    pc = start
    if first.kind in ("branch", "rbra", "swapbr"):
        place = BlockPlace(start, 0, 0)
        writer.line("    _br = BR", place)
        writer.statement(first, direction, place)
        count, cycles = 1, writer.cycles(first, direction)
        if first.kind == "rbra":
            # RBRA always turns the machine around: the block ends here.
            writer.line("    if BR and _br: raise ComeFromViolation"
                        f"({start}, BR, DIR)", place)
            writer.line(f"    return ({_next_pc_expression(start, None)}, BR, DIR, 1, "
                        f"{cycles})", place)
            _finish_header(writer, header_at, body_start, start, bound_names)
            return 1, None
        writer.line("    if BR:", place)
        writer.line(f"        if _br: raise ComeFromViolation({start}, BR, DIR)", place)
        writer.line(f"        return ({_next_pc_expression(start, direction)}, BR, DIR, 1, "
                    f"{cycles})", place)
        pc = start + direction
    else:
        writer.line("    if BR: return None", BlockPlace(start, 0, 0))
    continuation = None
    while True:
        if not 0 <= pc < len(cells):
            writer.line(f"    return ({pc}, 0, {direction}, {count}, {cycles})")
            break
        cell = cells[pc]
        place = BlockPlace(pc, count, cycles)
        if cell.is_data:
            if count >= MAX_BLOCK:
                continuation = pc
                writer.line(f"    return ({pc}, 0, {direction}, {count}, {cycles})")
                break
            writer.statement(cell, direction, place)
            count += 1
            cycles += writer.cycles(cell, direction)
            pc += direction
            continue
        if cell.in_blocks:  # the control instruction that ends the block
            writer.statement(cell, direction, place)
            count += 1
            cycles += writer.cycles(cell, direction)
            if cell.kind == "rbra":
                writer.line(f"    return ({_next_pc_expression(pc, None)}, BR, DIR, {count}, "
                            f"{cycles})", place)
            else:
                writer.line(f"    return ({_next_pc_expression(pc, direction)}, BR, DIR, "
                            f"{count}, {cycles})", place)
        else:  # START, FINISH or an illegal cell: the single-step path takes over
            writer.line(f"    return ({pc}, 0, {direction}, {count}, {cycles})")
        break
    _finish_header(writer, header_at, body_start, start, bound_names)
    return count, continuation


def _finish_header(writer: _Writer, header_at: int, body_start: int, start: int,
                   bound_names: frozenset[str]) -> None:
    """Write the def line, binding the vocabulary names the body uses as locals."""
    body = "\n".join(writer.lines[body_start:])
    used = sorted(set(_IDENTIFIER.findall(body)) & bound_names)
    defaults = "".join(f", {name}={name}" for name in used)
    writer.lines[header_at] = f"def _b{start}(R, MEM, BR, DIR{defaults}):"


def block_starts(cells: list[Decoded], direction: int) -> list[int]:
    """Every control instruction, and every data instruction that begins a run."""
    starts = []
    for pc, cell in enumerate(cells):
        if not cell.in_blocks:
            continue
        if cell.kind != "data":
            starts.append(pc)
            continue
        before = pc - direction
        if not (0 <= before < len(cells) and cells[before].is_data):
            starts.append(pc)
    return starts


#: (filename, source) -> code: the programs of a test run repeat their blocks.
_CODE_CACHE: dict[tuple[str, str], CodeType] = {}


def compile_blocks(cells: list[Decoded], direction: int, bound_names: frozenset[str],
                   gradient: bool = False, tangent: bool = False) -> CompiledBlocks:
    """The blocks of the program for one direction, each generated and compiled as a run
    first enters it (:class:`CompiledBlocks`).

    With ``gradient`` / ``tangent`` (gradient mode) every instruction's line
    also carries its adjoint / tangent templates (``isa/adjoint.py``); the
    banks ``G``, ``GM``, ``T``, ... are bound like the vocabulary's names.
    """
    return CompiledBlocks(direction, cells, bound_names, gradient, tangent,
                          set(block_starts(cells, direction)))


def block_source(cells: list[Decoded], direction: int, bound_names: frozenset[str],
                 gradient: bool = False, tangent: bool = False) -> str:
    """The generated Python text (for reading and debugging)."""
    writer = _Writer(gradient, tangent)
    for start in block_starts(cells, direction):
        _generate_block(cells, start, direction, writer, bound_names)
    return "\n".join(writer.lines) + "\n"
