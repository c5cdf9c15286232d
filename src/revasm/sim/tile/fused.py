"""Per-program tile kernels: a straight run of a program's data instructions fused into one
loop over the tile, its registers held in locals (vector registers) across the run.

The tile interpreter (``source.py``) runs one instruction per loop over a tile and loads
and stores each word it touches every time.  For one image, width, mode and direction,
:func:`program_source` writes a module whose ``tile_fused`` walks a tile as long as the
tile stays whole and simple, and otherwise stops where it stands so that the interpreter
finishes the run (``TileLanes._go`` calls it first, then the interpreter for the lanes
still running):

* a *block* -- a maximal run (at most :data:`BLOCK_MAX` cells) of data cells in the run's
  direction that touch only registers (no memory, output or tape, no operand-dependent
  cycles, no elementary function whose guard must stop a lane) -- is one function
  (``fused_<n>``): the rows it writes saved, then one loop over the tile computing every
  instruction of the block in locals with the templates' fault checks (and, at W = 64,
  the fast quotient's admission, ``vocab.fdiv_short_ok64``) counted instead of taken;
  if no lane counted one, the block is done, else the saved rows are put back and the
  walker stops before the block (the interpreter then runs it exactly, lane by lane where
  it must);
* any other data cell runs through the interpreter's own step function for its entry
  (guard, fast and exact loops: a lane that faults or pauses leaves, and the walker stops
  after the cell);
* a branch that sends every lane the same way moves on; any other control step, a lane
  not running with the others, a strict machine or the step limit stops the walker.

So a lane's state when the walker stops is exactly the state the interpreter would have
reached there, and the interpreter carries on from it: the per-program kernel changes
only how fast the common case runs.  Bits: the block's statements are the table's
templates through the compiled engine's ``Translator`` (its program-kernel form, with
registers as locals), the same words the interpreter computes
(``tests/sim/tile/test_engine.py`` runs both on the same lanes).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.isa.table import INSTRUCTIONS
from revasm.sim.compiled.generate import (
    BR,
    CYCLES,
    DIR,
    HALTED,
    INNER_JIT,
    OVERFLOWS,
    PC,
    RUNNING,
    STATUS,
    STEPS,
    hoist_constants,
)
from revasm.sim.compiled.interpreter import FINISH_FLAG, FLAGS, ILLEGAL_FLAG, OP, START_FLAG
from revasm.sim.compiled.translate import Translator
from revasm.sim.reference.machine import Program
from revasm.sim.reference.predecode import Decoded

from .source import (
    CONTROL_KINDS,
    DOMAIN_CALLS,
    KERNEL_ARGS,
    MODULE_PRELUDE,
    OPERAND_ROWS,
    SLOT_COLUMNS,
    TileSource,
    cycle_count,
    short_division_checks,
)

#: Cells per fused block at most (a longer run is cut): the loop's locals stay in registers.
BLOCK_MAX = 24
#: Programs with more blocks than this get no per-program kernel (its compile time grows
#: with the blocks; large programs run on the interpreter).
MAX_BLOCKS = 96
#: Register banks as the translator names their locals (``r3``) and the kernel's arrays.
_BANKS = {"r": "R", "g": "G", "t": "T", "tg": "TG"}
_LOCAL = re.compile(r"\b(r|g|t|tg)(\d+)\b")
_ASSIGNED = re.compile(r"^\s*([\w, ]+?)\s*=[^=]")
#: What a fusable cell's translated statement must not mention: memory, output, tape.
_FORBIDDEN = re.compile(r"\b(MEM|GM|TM|TGM|KEYS|OUT|TAPE|outlen|tapelen|window_slot|CODE|"
                        r"DENSE)\b")


@dataclass
class Block:
    """A fused run of data cells: its first PC, its cells in the run's direction, and the
    function's text."""

    number: int
    cells: list[Decoded]
    lines: list[str]
    arguments: list[str]  # what the walker passes: the rows, one argument each
    written: list[str]  # the rows the block writes


class _Fuser:
    def __init__(self, image: Image, gradient: bool, tangent: bool, direction: int) -> None:
        self.image, self.width = image, image.width
        self.gradient, self.tangent, self.direction = gradient, tangent, direction
        self.cells = Program.of(image).cells
        self.interp = TileSource(self.width, gradient, tangent)
        fmt = WordFormat(self.width)
        self.constants = {"M": fmt.mask, "W": fmt.width, "F": fmt.frac_bits, "one": fmt.one}
        self.number = {id(ins): n for n, ins in enumerate(INSTRUCTIONS)}

    # --- which cells fuse -------------------------------------------------------------

    def entry(self, cell: Decoded) -> int | None:
        return None if cell.instruction is None else self.number[id(cell.instruction)]

    def is_data(self, cell: Decoded) -> bool:
        return cell.illegal is None and cell.instruction is not None and \
            cell.kind not in (*CONTROL_KINDS, "start", "finish")

    def translate(self, cell: Decoded, translator: Translator) -> list[str] | None:
        """The cell's statement in fused form (faults counted in ``bad``), or None when
        the cell does not fuse."""
        if not self.is_data(cell) or cell.cycles_expression(self.direction, self.gradient):
            return None
        number = self.entry(cell)
        assert number is not None
        guard = self.interp.guard(number, self.direction)
        if guard is None:  # a device that writes before its check
            return None
        called = {node.func.id for node in ast.walk(ast.parse(guard))
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        if called & DOMAIN_CALLS:
            return None
        text = cell.statement(self.direction, self.gradient, self.tangent)
        counted = ["bad += 1"]
        lines = translator.statement(text, exit=lambda code, aux: counted,
                                     room=lambda code, aux: counted)
        joined = "\n".join(lines)
        if _FORBIDDEN.search(joined) or "continue" in joined or "break" in joined:
            return None
        if self.width == 64:
            lines = short_division_checks(lines)
        return lines

    def runs(self) -> list[list[Decoded]]:
        """The maximal runs of fusable cells in the direction (each at most BLOCK_MAX)."""
        order = range(len(self.cells)) if self.direction > 0 else \
            range(len(self.cells) - 1, -1, -1)
        probe = self.translator()
        out: list[list[Decoded]] = []
        current: list[Decoded] = []
        for pc in order:
            cell = self.cells[pc]
            if self.translate(cell, probe) is None or len(current) == BLOCK_MAX:
                if len(current) > 1:
                    out.append(current)
                current = []
                if self.translate(cell, probe) is None:
                    continue
            current.append(cell)
        if len(current) > 1:
            out.append(current)
        return out

    def translator(self) -> Translator:
        translator = Translator(self.width, self.constants)
        translator.operands = {}  # registers as locals: the operands are the cell's numbers
        return translator

    # --- a block ----------------------------------------------------------------------

    def block(self, number: int, cells: list[Decoded]) -> Block:
        translator = self.translator()
        body: list[str] = []
        for cell in cells:
            lines = self.translate(cell, translator)
            assert lines is not None
            body.append(f"# pc {cell.pc}: {cell.text}")
            body += lines
        text = "\n".join(body)
        used = sorted({(prefix, int(reg)) for prefix, reg in _LOCAL.findall(text)},
                      key=lambda item: (list(_BANKS).index(item[0]), item[1]))
        written: set[tuple[str, int]] = set()
        for line in body:
            found = _ASSIGNED.match(line)
            if found:
                for target in found[1].split(","):
                    local = _LOCAL.fullmatch(target.strip())
                    if local:
                        written.add((local[1], int(local[2])))
        overflow = "ov0" in text
        saved = [(prefix, reg) for prefix, reg in used if (prefix, reg) in written]
        # each row its own argument (``pipeline.NoAliasCompiler``: LLVM then knows the
        # rows apart and vectorises the loop); the walker passes ``Rs[3]``, ``CTL[9]``...
        rows = {(prefix, reg): f"{_BANKS[prefix]}_{reg}" for prefix, reg in used}
        loads = [f"{prefix}{reg} = {rows[prefix, reg]}[lane]" for prefix, reg in used]
        stores = [f"{rows[key]}[lane] = {key[0]}{key[1]}" for key in saved]
        params = ["lo", "n", *rows.values()]
        arguments = ["lo", "n", *(f"{_BANKS[prefix]}s[{reg}]" for prefix, reg in used)]
        if overflow:
            loads.append("ov0 = U(OV_ROW[lane])")
            stores.append("OV_ROW[lane] = I(ov0)")
            params.append("OV_ROW")
            arguments.append(f"CTL[{OVERFLOWS}]")
        kept = [rows[key] for key in saved] + (["OV_ROW"] if overflow else [])
        name = f"fused_{number}"
        first, last = cells[0].pc, cells[-1].pc
        # the second loop: the exits ruled out by the first (LLVM drops the dead checks)
        quiet = [re.sub(r"\bbad \+= 1$", "pass", line) for line in body]
        out = [f"@njit({INNER_JIT.replace('KernelCompiler', 'NoAliasCompiler')}, "
               "error_model='numpy')",
               f"def {name}({', '.join(params)}):",
               f'    """pc {first}..{last}: {len(cells)} cells in one loop; True when no '
               'lane faults or leaves the fast quotient (else nothing is written)."""',
               "    strict = False",
               "    bad = 0  # the guard: the block without its stores (LLVM keeps only what",
               "    for k in range(n):  # its checks need); a count, which LLVM vectorises",
               "        lane = U(lo + k)"]
        out += ["        " + line for line in loads + body]
        out += ["    if bad != 0:", "        return False",
                "    for k in range(n):",
                "        lane = U(lo + k)  # (unsigned: no wraparound, so LLVM vectorises)"]
        out += ["        " + line for line in loads + quiet + stores]
        out += ["    return True", "", ""]
        return Block(number, cells, out, arguments, kept)

    # --- the module -------------------------------------------------------------------

    def source(self) -> str | None:
        runs = self.runs()
        if not runs or len(runs) > MAX_BLOCKS:
            return None
        blocks = [self.block(number, cells) for number, cells in enumerate(runs)]
        block_of = [-1] * max(len(self.cells), 1)
        lengths = []
        for block in blocks:
            block_of[block.cells[0].pc] = block.number
            lengths.append(len(block.cells))
        data = sorted({self.number[id(cell.instruction)] for cell in self.cells
                       if self.is_data(cell)})
        branches = sorted({self.number[id(cell.instruction)] for cell in self.cells
                           if cell.illegal is None and cell.kind == "branch"})
        interp = self.interp
        for number in data:
            interp.data_function(number, self.direction)
        for number in branches:
            interp.branch_function(number, self.direction)
        lines = [line for block in blocks for line in block.lines] + interp.lines
        interp.lines = []
        self.walker(blocks, data, branches)
        lines += interp.lines
        lines += self.entry_points()
        constants, body = hoist_constants("\n".join(lines))
        control = ", ".join("True" if ins.kind in CONTROL_KINDS else "False"
                            for ins in INSTRUCTIONS)
        branch = ", ".join("True" if ins.kind == "branch" else "False" for ins in INSTRUCTIONS)
        header = [
            f'"""revasm per-program tile kernel: W = {self.width}, gradient={self.gradient}, '
            f'tangent={self.tangent}, direction {self.direction} (sim/tile/fused.py)."""',
            *MODULE_PRELUDE,
            "from revasm.sim.tile.pipeline import NoAliasCompiler",
            f"CONTROL = np.array([{control}], dtype=np.bool_)",
            f"BRANCH = np.array([{branch}], dtype=np.bool_)",
            "#: the block starting at each PC (-1: none), and each block's length",
            f"BLOCK = np.array([{', '.join(map(str, block_of))}], dtype=np.int64)",
            f"BLOCK_LENGTH = np.array([{', '.join(map(str, lengths))}], dtype=np.int64)",
        ]
        return "\n".join(header + constants + ["", ""]) + "\n" + body + "\n"

    def walker(self, blocks: list[Block], data: list[int], branches: list[int]) -> None:
        interp = self.interp
        out = interp.out
        d = self.direction
        args = ", ".join(KERNEL_ARGS)
        out(0, f"@njit({INNER_JIT}, error_model='numpy')")
        out(0, f"def tile_fused(t, lo, hi, idx, SLOTS, {args}):")
        out(1, '"""Run the tile while it stays whole and simple; stop where it stands."""')
        for name in ("R", "G", "T", "TG", "MEM", "GM", "TM", "TGM", "KEYS"):
            out(1, f"{name} = {name}s.T")
        out(1, "CODE_LENGTH = CODE.shape[0]")
        out(1, "DENSE_LENGTH = DENSE.shape[0]")
        out(1, "DENSE_WORDS = dense_words")
        out(1, "strict = strict_flag != 0")
        out(1, "if strict or hi <= lo:")
        out(2, "return")
        out(1, "cells = CODE_LENGTH")
        out(1, f"pc = CTL[{PC}, lo]")
        out(1, f"gd = CTL[{DIR}, lo]")
        out(1, f"if gd != {d}:")
        out(2, "return")
        out(1, "top = I(0)")
        out(1, "whole = 0")
        out(1, "jumps = 0")
        interp.whole_tile(1)  # the interpreter's own pass: every lane running, at one PC?
        out(1, "n = hi - lo")
        out(1, "if whole != n:")
        out(2, "return")
        out(1, "br_any = jumps != 0")
        out(1, "for k in range(n):")
        out(2, "idx[k] = lo + k")
        out(1, "full = True")
        out(1, "room = limit - top")
        out(1, "ps = I(0)")
        out(1, "pcyc = I(0)")
        out(1, "dispatched = 0")
        out(1, "while True:")
        s = 2
        out(s, "if ps >= room or pc < 0 or pc >= cells:")
        out(s + 1, "break")
        out(s, f"flags = PROG[pc, {FLAGS}]")
        out(s, f"if flags & {ILLEGAL_FLAG}:")
        out(s + 1, "break")
        out(s, f"cyc = {cycle_count(self.gradient)}")
        out(s, f"if flags & {START_FLAG | FINISH_FLAG}:")
        out(s + 1, "if br_any:")
        out(s + 2, "break")
        out(s + 1, "dispatched += 1")
        halt = FINISH_FLAG if d > 0 else START_FLAG
        out(s + 1, f"if flags & {halt}:  # the run ends here")
        out(s + 2, "for k in range(n):")
        out(s + 3, "lane = U(lo + k)")
        out(s + 3, f"CTL[{STEPS}, lane] += ps + 1")
        out(s + 3, f"CTL[{CYCLES}, lane] += pcyc + cyc")
        out(s + 3, f"CTL[{PC}, lane] = pc")
        out(s + 3, f"CTL[{DIR}, lane] = gd")
        out(s + 3, f"CTL[{STATUS}, lane] = {HALTED}")
        out(s + 2, "STATS[t] += dispatched")
        out(s + 2, "return")
        out(s + 1, "ps += 1")
        out(s + 1, "pcyc += cyc")
        out(s + 1, "pc += gd")
        out(s + 1, "continue")
        out(s, f"op = PROG[pc, {OP}]")
        for local, row in OPERAND_ROWS.items():
            out(s, f"{local} = PROG[pc, {row}]")
        out(s, "o_imm = IMM[pc]")
        out(s, "if CONTROL[op]:")
        out(s + 1, "if not BRANCH[op]:")
        out(s + 2, "break")
        out(s + 1, "lowest = I(0)")
        out(s + 1, "highest = I(1)")
        out(s + 1, "uncaught = 0")
        if branches:
            interp.tree(branches, d, s + 1, interp.branch_call)
        out(s + 1, "if lowest != highest or uncaught != 0:  # the lanes part")
        out(s + 2, "break")
        out(s + 1, "if lowest != 0 or br_any:")
        out(s + 2, "for k in range(n):")
        out(s + 3, f"CTL[{BR}, U(lo + k)] = lowest")
        out(s + 1, "br_any = lowest != 0")
        out(s + 1, "pc = pc + lowest * gd if lowest != 0 else pc + gd")
        out(s + 1, "ps += 1")
        out(s + 1, "pcyc += cyc")
        out(s + 1, "dispatched += 1")
        out(s + 1, "continue")
        out(s, "if br_any:  # lanes that jumped onto a data cell: the interpreter faults them")
        out(s + 1, "break")
        out(s, "b = BLOCK[pc]")
        out(s, "if b >= 0 and ps + BLOCK_LENGTH[b] <= room:")
        out(s + 1, "done = False")
        self.block_tree(blocks, s + 1)
        out(s + 1, "if not done:  # a lane would fault in it: the interpreter runs it")
        out(s + 2, "break")
        out(s + 1, "for i in range(BLOCK_LENGTH[b]):")
        out(s + 2, f"pcyc += {cycle_count(self.gradient, 'pc + i * gd')}")
        out(s + 1, "ps += BLOCK_LENGTH[b]")
        out(s + 1, "dispatched += BLOCK_LENGTH[b]")
        out(s + 1, "pc += BLOCK_LENGTH[b] * gd")
        out(s + 1, "continue")
        out(s, "left = 0")
        interp.tree(data, d, s, interp.data_call)
        out(s, "dispatched += 1")
        out(s, "ps += 1")
        out(s, "pcyc += cyc")
        out(s, "pc += gd")
        out(s, "if left:  # lanes that faulted or paused left: the others stop after it")
        out(s + 1, "break")
        out(1, "for k in range(n):  # the running lanes take their counts, PC and DIR")
        out(2, "lane = U(lo + k)")
        out(2, f"if CTL[{STATUS}, lane] == {RUNNING}:")
        out(3, f"CTL[{STEPS}, lane] += ps")
        out(3, f"CTL[{CYCLES}, lane] += pcyc")
        out(3, f"CTL[{PC}, lane] = pc")
        out(3, f"CTL[{DIR}, lane] = gd")
        out(1, "STATS[t] += dispatched")
        out(0, "")
        out(0, "")

    def block_tree(self, blocks: list[Block], indent: int) -> None:
        out = self.interp.out
        if len(blocks) > 2:
            middle = len(blocks) // 2
            out(indent, f"if b < {blocks[middle].number}:")
            self.block_tree(blocks[:middle], indent + 1)
            out(indent, "else:")
            self.block_tree(blocks[middle:], indent + 1)
            return
        for position, block in enumerate(blocks):
            inner = indent + 1
            if position < len(blocks) - 1:
                out(indent, f"if b == {block.number}:")
            elif position:
                out(indent, "else:")
            else:
                inner = indent
            out(inner, f"done = fused_{block.number}({', '.join(block.arguments)})")

    @staticmethod
    def entry_points() -> list[str]:
        args = ", ".join(KERNEL_ARGS)
        lines = []
        for name, decorator, loop in (
                ("run_parallel", "@njit(cache=True, parallel=True)", "prange"),
                ("run_serial", "@njit(cache=True, nogil=True)", "range")):
            lines += ["", "", decorator, f"def {name}(tiles, tile, lanes, {args}):",
                      "    count = tiles.shape[0]",
                      "    chunks = min(count, 256)",
                      f"    for c in {loop}(chunks):",
                      "        idx = np.empty(tile, dtype=np.int64)",
                      f"        SLOTS = np.empty((tile, {SLOT_COLUMNS}), dtype=np.int64)",
                      "        for j in range(c * count // chunks, (c + 1) * count // chunks):",
                      "            lo = tiles[j] * tile",
                      "            tile_fused(tiles[j], lo, min(lo + tile, lanes), idx, SLOTS, "
                      f"{args})"]
        return lines


def program_source(image: Image, gradient: bool, tangent: bool, direction: int) -> str | None:
    """The per-program tile kernel's module text for an image, mode and run direction, or
    None when the program has no block to fuse or too many (:data:`MAX_BLOCKS`)."""
    return _Fuser(image, gradient, tangent, direction).source()


def describe(image: Image, gradient: bool, tangent: bool, direction: int) -> dict[str, Any]:
    """The blocks a per-program kernel would fuse: how many, and the cells in them."""
    runs = _Fuser(image, gradient, tangent, direction).runs()
    return {"blocks": len(runs), "cells": sum(len(run) for run in runs),
            "lengths": [len(run) for run in runs]}
