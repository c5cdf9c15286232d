"""The interpreter kernel: one numba kernel per width and mode that runs *any* image.

A program's own kernel (``generate.py``) is the fastest code for it, but numba's front end
costs about 10 ms of CPU per generated line, so a program of a thousand instructions
takes minutes to compile (sparse_dot's 1115 words: ~40 000 lines per mode).  The
interpreter kernel is compiled once per width and mode and cached on disk like any
kernel; it reads the image at run time: each step fetches the cell's table entry and
operands from ``PROG`` (decoded once by the host, :func:`program_arrays`) and runs the
entry's template, translated by the same :class:`~.translate.Translator` with the operand
placeholders (``{a}``, ``{imm}``, ...) as locals -- so there is still one definition of
the semantics -- and registers named by an operand live in the bank arrays
(``R[lane, a]``) instead of machine registers.

Every step is a single step: a fault leaves with the PC and counts of the faulting
instruction (no exit sites), a lane paused for room resumes at any PC (no block starts),
and nothing is handed to the reference machine.  The come-from rule is checked after
every instruction: one entered with BR != 0 that leaves BR != 0 faults there with the
jump's BR and DIR, as a block's landing does.  The kernels have the signature of a
program's kernels plus the program's arrays (:data:`PROGRAM_ARGS`); ``machine.py``
runs either kind through the same host loop.
"""
from __future__ import annotations

from typing import Any

import numpy

from revasm.assembler.image import Image
from revasm.isa.adjoint import mode_template
from revasm.isa.fixed_point import word_format
from revasm.isa.table import INSTRUCTIONS
from revasm.isa.timing import step_timing
from revasm.machine.next_pc import halts_source, next_pc_source
from revasm.sim.reference.machine import Program

from .generate import (
    CONTROL_COLUMNS,
    FAULTED,
    HALTED,
    INNER_JIT,
    KERNEL_ARGS,
    MODULE_PRELUDE,
    NEEDS_ROOM,
    OVERFLOWS,
    PARALLEL_CHUNKS,
    STRICT,
    hoist_constants,
)
from .translate import F_ILLEGAL, F_JUMP, F_STEPS, Translator, Value

#: Rows of ``PROG[field, pc]``: the cell's table entry (its index in ``INSTRUCTIONS``),
#: its operands, its flags and its fixed cycles (``isa/timing``) forward and backward, in
#: value and in gradient mode (a unit call whose cycles depend on its operands adds
#: them in the entry's case, ``timing.py``).
OP, A, B, C, AMT, K, OFF, FLAGS, CYC, CYC_BACK, GCYC, GCYC_BACK = range(12)
PROGRAM_FIELDS = 12
#: ``PROG[FLAGS, pc]`` bits.
ILLEGAL_FLAG, START_FLAG, FINISH_FLAG = 1, 2, 4
#: What the host passes after :data:`~.generate.KERNEL_ARGS`.
PROGRAM_ARGS = ("PROG", "IMM", "CODE", "DENSE", "dense_words")
#: Operand placeholders of the table and the kernel locals that hold them at run time.
_OPERANDS = {"a": Value("o_a", "i"), "b": Value("o_b", "i"), "c": Value("o_c", "i"),
             "amt": Value("o_amt", "i"), "k": Value("o_k", "i"), "off": Value("o_off", "i"),
             "imm": Value("o_imm", "w")}
_OPERAND_ROWS = {"a": A, "b": B, "c": C, "amt": AMT, "k": K, "off": OFF}
_CONTROL = (("pc", 0), ("br", 1), ("d", 2), ("steps", 3), ("cycles", 4))


def program_arrays(image: Image) -> tuple[Any, ...]:
    """The image decoded for the interpreter kernel (the values of :data:`PROGRAM_ARGS`)."""
    cells = Program.of(image).cells
    mask = word_format(image.width).mask
    index = {id(ins): n for n, ins in enumerate(INSTRUCTIONS)}
    prog = numpy.zeros((PROGRAM_FIELDS, max(len(cells), 1)), dtype=numpy.int64)
    imm = numpy.zeros(max(len(cells), 1), dtype=numpy.uint64)
    for pc, cell in enumerate(cells):
        if cell.illegal is not None or cell.instruction is None:
            prog[FLAGS, pc] = ILLEGAL_FLAG
            continue
        prog[OP, pc] = index[id(cell.instruction)]
        for name, row in _OPERAND_ROWS.items():
            prog[row, pc] = cell.operands.get(name, 0)
        imm[pc] = cell.values.get("imm", 0) & mask
        for row, direction, gradient in ((CYC, 1, False), (CYC_BACK, -1, False),
                                         (GCYC, 1, True), (GCYC_BACK, -1, True)):
            prog[row, pc] = cell.fixed_cycles(direction, gradient)
        prog[FLAGS, pc] = (START_FLAG if cell.kind == "start" else 0) | \
            (FINISH_FLAG if cell.kind == "finish" else 0)
    code = numpy.array([bool(flag) for flag in image.is_code] or [False], dtype=numpy.bool_)
    dense = numpy.full(max(len(image), 1), -1, dtype=numpy.int64)
    count = 0
    for address, flag in enumerate(image.is_code):
        if not flag:
            dense[address] = count
            count += 1
    return prog, imm, code[:len(image)], dense[:len(image)], numpy.int64(count)


class _Source:
    def __init__(self, width: int, gradient: bool, tangent: bool) -> None:
        fmt = word_format(width)
        self.width, self.gradient, self.tangent = width, gradient, tangent
        self.translator = Translator(width, {"M": fmt.mask, "W": fmt.width,
                                             "F": fmt.frac_bits, "one": fmt.one})
        self.translator.operands = {value.code: value for value in _OPERANDS.values()}
        self.lines: list[str] = []

    def out(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    @staticmethod
    def leave(code: int, aux: str) -> list[str]:
        return [f"fcode = I({code})", f"faux = {aux}", "break"]

    def template(self, number: int, direction: int) -> str:
        ins = INSTRUCTIONS[number]
        if self.gradient or self.tangent:
            text = mode_template(ins, direction, self.gradient, self.tangent)
        else:
            text = ins.forward if direction > 0 else ins.backward
        return text.format(**{name: value.code for name, value in _OPERANDS.items()})

    def cases(self, direction: int, indent: int) -> None:
        """Every entry's step in one direction, chosen by ``op`` through a binary tree of
        comparisons (a step costs ~log2(entries) of them; a chain of ``op == n`` tests
        cost up to one per entry)."""
        numbers = [number for number, ins in enumerate(INSTRUCTIONS)
                   if ins.kind not in ("start", "finish")]  # stepped before (they may halt)
        self._tree(numbers, direction, indent)

    def _tree(self, numbers: list[int], direction: int, indent: int) -> None:
        if len(numbers) > 2:
            middle = len(numbers) // 2
            self.out(indent, f"if op < {numbers[middle]}:")
            self._tree(numbers[:middle], direction, indent + 1)
            self.out(indent, "else:")
            self._tree(numbers[middle:], direction, indent + 1)
            return
        for position, number in enumerate(numbers):
            lines = self.translator.statement(
                self.template(number, direction),
                exit=lambda code, aux: self.leave(code, aux),
                room=lambda code, aux: self.leave(100 + code, aux))
            mnemonic = INSTRUCTIONS[number].mnemonic
            inner = indent + 1
            if position < len(numbers) - 1:
                self.out(indent, f"if op == {number}:  # {mnemonic}")
            elif position:  # the other entry of the pair
                self.out(indent, f"else:  # {mnemonic}")
            else:  # the one entry left
                self.out(indent, f"# {mnemonic}")
                inner = indent
            timing = step_timing(INSTRUCTIONS[number], direction < 0, self.gradient,
                                 self.width)
            if timing.timed:  # its unit calls' cycles, from registers it did not write
                lines = lines + self.translator.cycles(timing.expression(
                    {name: value.code for name, value in _OPERANDS.items()}))
            for line in lines or ["pass"]:
                self.out(inner, line)

    def source(self) -> str:
        out = self.out
        args = ", ".join(KERNEL_ARGS + PROGRAM_ARGS)
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def lane_range(active, first, last, {args}):")
        out(1, "CODE_LENGTH = CODE.shape[0]")
        out(1, "DENSE_LENGTH = DENSE.shape[0]")
        out(1, "DENSE_WORDS = dense_words")
        out(1, "for j in range(first, last):")
        out(2, "lane = active[j]")
        for name, column in _CONTROL:
            out(2, f"{name} = CTL[{column}, lane]")
        for name in ("status", "fcode", "faux", "faux2"):
            out(2, f"{name} = I(0)")
        out(2, "outlen = OUTLEN[lane]")
        out(2, "tapelen = TAPELEN[lane]")
        out(2, f"strict = CTL[{STRICT}, lane] != 0")
        out(2, f"ov0 = U(CTL[{OVERFLOWS}, lane])")
        out(2, "while True:")
        body = 3
        out(body, "if steps >= limit:")
        out(body + 1, f"fcode = I({F_STEPS})")
        out(body + 1, "break")
        out(body, f"if pc < 0 or pc >= CODE_LENGTH or PROG[{FLAGS}, pc] & {ILLEGAL_FLAG}:")
        out(body + 1, f"fcode = I({F_ILLEGAL})")
        out(body + 1, "break")
        out(body, f"flags = PROG[{FLAGS}, pc]")
        out(body, f"if flags & {START_FLAG | FINISH_FLAG}:")
        # START and FINISH, as the program kernels' single step: not come-from checked;
        # they halt keeping BR (a jump onto FINISH) or pass it on to the next landing.
        out(body + 1, "steps += 1")
        out(body + 1, f"cycles += PROG[{CYC}, pc]")
        halting = halts_source("d", f"flags & {FINISH_FLAG}", f"flags & {START_FLAG}")
        out(body + 1, f"if {halting}:")
        out(body + 2, f"status = I({HALTED})")
        out(body + 2, "break")
        out(body + 1, f"pc = {next_pc_source('pc', 'br', 'd')}")
        out(body + 1, "continue")
        out(body, f"op = PROG[{OP}, pc]")
        for name, value in _OPERANDS.items():
            if name == "imm":
                out(body, "o_imm = IMM[pc]")
            else:
                out(body, f"{value.code} = PROG[{_OPERAND_ROWS[name]}, pc]")
        out(body, "br_in = br")
        out(body, "dir_in = d")
        out(body, "if d > 0:")
        self.cases(+1, body + 1)
        out(body, "else:")
        self.cases(-1, body + 1)
        out(body, "steps += 1")
        forward, backward = (GCYC, GCYC_BACK) if self.gradient else (CYC, CYC_BACK)
        out(body, f"cycles += PROG[{forward}, pc] if dir_in > 0 else PROG[{backward}, pc]")
        out(body, "if br_in != 0 and br != 0:  # a landing that does not catch its jump")
        out(body + 1, f"fcode = I({F_JUMP})")
        out(body + 1, "faux = br_in")
        out(body + 1, "faux2 = dir_in")
        out(body + 1, "break")
        out(body, f"pc = {next_pc_source('pc', 'br', 'd')}")
        out(2, "if status == 0:")
        out(3, f"status = I({FAULTED}) if fcode < 100 else I({NEEDS_ROOM})")
        out(2, f"CTL[{OVERFLOWS}, lane] = I(ov0)")
        for name, column in _CONTROL + (("status", 5), ("fcode", 6), ("faux", 7),
                                        ("faux2", 8)):
            out(2, f"CTL[{column}, lane] = {name}")
        out(2, "OUTLEN[lane] = outlen")
        out(2, "TAPELEN[lane] = tapelen")
        out(0, "")
        out(0, "")
        out(0, "@njit(cache=True, parallel=True)")
        out(0, f"def run_parallel(active, {args}):")
        out(1, "n = active.shape[0]")
        out(1, f"chunks = min(n, {PARALLEL_CHUNKS})")
        out(1, "for c in prange(chunks):")
        out(2, f"lane_range(active, c * n // chunks, (c + 1) * n // chunks, {args})")
        out(0, "")
        out(0, "")
        out(0, "@njit(cache=True, nogil=True)")
        out(0, f"def run_serial(active, {args}):")
        out(1, f"lane_range(active, 0, active.shape[0], {args})")
        constants, body_text = hoist_constants("\n".join(self.lines))
        header = [
            f'"""revasm interpreter kernel: W = {self.width}, gradient={self.gradient}, '
            f'tangent={self.tangent} (sim/compiled/interpreter.py)."""',
            *MODULE_PRELUDE,
            "#: this module runs any image: the host passes the program's arrays",
            "INTERPRETER = True",
            f"CONTROL_COLUMNS = {CONTROL_COLUMNS}",
        ]
        return "\n".join(header + constants + ["", ""]) + "\n" + body_text + "\n"


def interpreter_source(width: int, gradient: bool = False, tangent: bool = False) -> str:
    """The interpreter kernel module for a width and mode (readable: one case per entry)."""
    return _Source(width, gradient, tangent).source()
