"""An image -> the source of one numba kernel module (``print(kernel_source(image))``).

The kernel (``lane_run``) runs one lane from its saved state until it halts, faults or
stops for the host:

* the lane's registers (and, in gradient mode, its G/T/TG registers) are locals --
  machine registers -- loaded at entry and stored at exit; memory words are
  ``MEM[lane, slot]`` (the image's DATA cells dense, other addresses in a per-lane
  open-addressing table, ``vocab.find_slot``);
* the program is a ``while True`` loop over an ``if pc == ...`` chain per direction
  (LLVM turns it into a jump table) whose cases are *blocks*: a control instruction
  (branch, RBRA, SWAPBR) or the first data instruction of a run, through the following
  data run -- straight-line code that ends in a jump to the next block, so every
  instruction is compiled once per direction; a data cell that may need room in a
  per-lane table (EXCH, SHOW, EMIT) starts a block of its own, so a lane paused there
  resumes in compiled code;
* START and FINISH step in a small generic tail; every other step that is not a block
  -- a jump landing on a data cell (which faults), the last steps before ``max_steps``
  -- is *handed off*: the host finishes that lane's run on the reference machine,
  the oracle (``machine.CompiledLanes._hand_off``), so those rare paths need no code;
* every instruction's code is its table template for the direction and mode
  (``Decoded.statement``), translated by :mod:`.translate`: there is no opcode list here.

A fault leaves the loop with a code, the value its message needs and an exit *site*
(``SITES``: the PC, instructions and cycles of the block completed before it), so the
host (``machine.py``) reports the reference's PC, step and cycle counts and message.  A
full per-lane table (memory, output log, EMIT tape) pauses the lane *before* the
instruction (status ``NEEDS_ROOM``, code 100 + the table): the host grows it and resumes.
"""
from __future__ import annotations

from revasm.assembler.image import Image
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference.blocks import block_starts as reference_block_starts
from revasm.sim.reference.machine import Program
from revasm.sim.reference.predecode import Decoded

from .translate import F_ILLEGAL, F_JUMP, F_STEPS, Translator

RUNNING, HALTED, FAULTED, IDLE, NEEDS_ROOM, HANDOFF = 0, 1, 2, 3, 4, 5
#: Columns of the per-lane control array ``CTL``.
PC, BR, DIR, STEPS, CYCLES, STATUS, FCODE, FAUX, FAUX2, OVERFLOWS, STRICT = range(11)
CONTROL_COLUMNS = 11
BLOCK_CONTROL = ("branch", "rbra", "swapbr")
KERNEL_ARGS = ("R", "G", "T", "TG", "MEM", "GM", "TM", "TGM", "KEYS", "CTL", "OUT", "OUTLEN",
               "TAPE", "TAPELEN", "limit")


def block_starts(cells: list[Decoded], direction: int) -> list[int]:
    """The reference's block starts (``sim/reference/blocks.py``), and every data cell a
    lane may pause before for room in a per-lane table (a paused lane resumes there)."""
    starts = set(reference_block_starts(cells, direction))
    starts.update(pc for pc, cell in enumerate(cells)
                  if cell.in_blocks and cell.kind == "data"
                  and _may_pause(cell.statement(direction)))
    return sorted(starts)


def _may_pause(statement: str) -> bool:
    """Whether a template may need room in a per-lane table (memory, output, tape)."""
    return any(name in statement for name in ("addr(", "show(", "emit("))


class _Kernel:
    def __init__(self, image: Image, gradient: bool, tangent: bool) -> None:
        self.image = image
        self.cells = Program.of(image).cells
        self.gradient = gradient
        self.tangent = tangent
        fmt = WordFormat(image.width)
        self.translator = Translator(image.width, {
            "M": fmt.mask, "W": fmt.width, "F": fmt.frac_bits, "one": fmt.one})
        self.lines: list[str] = []
        self.sites: dict[tuple[int, int, int], int] = {}

    def out(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # --- exits ------------------------------------------------------------------------

    def site(self, pc: int, done: int, spent: int) -> int:
        """The index of a block's exit place (its PC, the instructions and cycles of the
        block completed before it) in the kernel's ``SITES`` table."""
        return self.sites.setdefault((pc, done, spent), len(self.sites))

    def leave(self, code: int, aux: str, site: int, aux2: str | None = None) -> list[str]:
        """Leave the loop with a fault (``code`` < 100) or a pause (100 + room code)."""
        lines = [f"fcode = I({code})", f"faux = {aux}"]
        if aux2 is not None:
            lines.append(f"faux2 = {aux2}")
        lines += [f"site = I({site})", "break"]
        return lines

    def instruction(self, cell: Decoded, direction: int, indent: int, site: int) -> None:
        """One instruction's statements; a fault or pause leaves through ``site``
        (-1: the single step, whose PC and counts are already the fault's)."""
        text = cell.statement(direction, self.gradient, self.tangent)
        lines = self.translator.statement(
            text,
            exit=lambda code, aux: self.leave(code, aux, site),
            room=lambda code: self.leave(100 + code, "I(0)", site))
        self.out(indent, f"# pc {cell.pc}: {cell.text}")
        for line in lines:
            self.out(indent, line)

    def next_pc(self, indent: int, pc: int) -> None:
        self.out(indent, "if br != 0:")
        self.out(indent + 1, f"pc = I({pc}) + br * d")
        self.out(indent, "else:")
        self.out(indent + 1, f"pc = I({pc}) + d")
        self.out(indent, "continue")

    # --- blocks -------------------------------------------------------------------------

    def members(self, start: int, direction: int) -> tuple[list[int], int | None]:
        """The PCs of the block at ``start`` and where it ends without a control
        instruction (the PC after it), else None."""
        cells = self.cells
        pcs = [start]
        if cells[start].kind == "rbra":
            return pcs, None
        pc = start + direction
        while 0 <= pc < len(cells):
            cell = cells[pc]
            if cell.is_data and _may_pause(cell.statement(direction)):
                return pcs, pc  # a block of its own (a lane may pause there and resume)
            if cell.is_data:
                pcs.append(pc)
                pc += direction
                continue
            # A control instruction is a block start anyway: the block stops before it
            # (one dispatch more, no instruction compiled twice).
            return pcs, pc
        return pcs, pc

    def block(self, start: int, direction: int, indent: int) -> None:
        cells = self.cells
        pcs, after = self.members(start, direction)
        first = cells[start]
        n = len(pcs)
        guard = f"steps <= limit - {n}"
        if first.kind == "data":
            guard = "br == 0 and " + guard
        self.out(indent, f"if {guard}:  # block of {n}")
        body = indent + 1
        done = spent = 0
        for index, pc in enumerate(pcs):
            cell = cells[pc]
            if index == 0 and cell.kind != "data":
                self.out(body, "br_in = br")
                self.instruction(cell, direction, body, self.site(pc, 0, 0))
                jump = self.leave(F_JUMP, "br_in", self.site(pc, 1, cell.cycles),
                                  aux2=f"I({direction})")
                if cell.kind == "rbra":
                    self.out(body, "if br_in != 0 and br != 0:")
                    for line in jump:
                        self.out(body + 1, line)
                    self.out(body, "steps += 1")
                    self.out(body, f"cycles += {cell.cycles}")
                    self.next_pc(body, pc)
                    return
                self.out(body, "if br != 0:")
                self.out(body + 1, "if br_in != 0:")
                for line in jump:
                    self.out(body + 2, line)
                self.out(body + 1, "steps += 1")
                self.out(body + 1, f"cycles += {cell.cycles}")
                self.out(body + 1, f"pc = I({pc}) + br * d")
                self.out(body + 1, "continue")
            else:
                self.instruction(cell, direction, body, self.site(pc, done, spent))
            done += 1
            spent += cell.cycles
        self.out(body, f"steps += {done}")
        self.out(body, f"cycles += {spent}")
        if after is None:
            self.next_pc(body, pcs[-1])
        else:
            self.out(body, f"pc = I({after})")
            self.out(body, "continue")

    def blocks(self, direction: int, indent: int) -> None:
        starts = block_starts(self.cells, direction)
        for i, pc in enumerate(sorted(set(starts))):
            self.out(indent, f"{'if' if i == 0 else 'elif'} pc == {pc}:")
            self.block(pc, direction, indent + 1)
        if not starts:
            self.out(indent, "pass")

    # --- the module -----------------------------------------------------------------------

    def source(self, header: str, memory_words: int) -> str:
        self.lines = []
        out = self.out
        out(2, "# blocks: straight-line runs, entered when they fit below the step limit")
        out(2, "if d > 0:")
        self.blocks(1, 3)
        out(2, "else:")
        self.blocks(-1, 3)
        out(2, "# not in a block: START and FINISH step here; any other instruction (a")
        out(2, "# landing on a data cell, the last steps before the limit) is handed to")
        out(2, "# the reference machine, the oracle, which finishes the lane's run")
        out(2, "if steps >= limit:")
        out(3, f"fcode = I({F_STEPS})")
        out(3, "break")
        out(2, "if pc < 0 or pc >= CODE_LENGTH or ILLEGAL[pc]:")
        out(3, f"fcode = I({F_ILLEGAL})")
        out(3, "break")
        out(2, "if not (STARTS[pc] or FINISHES[pc]):")
        out(3, f"status = I({HANDOFF})")
        out(3, "break")
        out(2, "br_in = br")
        out(2, "dir_in = d")
        out(2, "steps += 1")
        out(2, "cycles += CYCLES_OF[pc]")
        # START and FINISH are not come-from checked: they halt keeping BR (a jump onto
        # FINISH, docs/simulator.md) or pass it on to the next landing, as the reference.
        out(2, "if (d > 0 and FINISHES[pc]) or (d < 0 and STARTS[pc]):")
        out(3, f"status = I({HALTED})")
        out(3, "break")
        out(2, "if br != 0:")
        out(3, "pc += br * d")
        out(2, "else:")
        out(3, "pc += d")
        body = self.lines
        used = self.translator.used
        image = self.image
        cells = self.cells
        code = [bool(flag) for flag in image.is_code]
        dense = []
        count = 0
        for flag in code:
            dense.append(-1 if flag else count)
            count += 0 if flag else 1
        sites = sorted(self.sites, key=self.sites.get) or [(0, 0, 0)]
        banks = {"r": "R", "g": "G", "t": "T", "tg": "TG"}
        args = ", ".join(KERNEL_ARGS)

        def array(values: list, dtype: str) -> str:
            return f"np.array({[int(v) for v in values]!r}, dtype=np.{dtype})"

        lines = [
            f'"""{header}"""',
            "import numpy as np",
            "from numba import njit, prange",
            "from revasm.sim.compiled.vocab import *  # noqa: F401,F403 - the vocabulary",
            "from revasm.sim.compiled.overflow import *  # noqa: F401,F403 - its ovf_* names",
            "",
            "U = np.uint64",
            "I = np.int64",
            f"MEMORY_WORDS = {memory_words}",
            f"CODE_LENGTH = {len(code)}",
            f"CODE = {array(code, 'bool_')}",
            f"ILLEGAL = {array([c.illegal is not None for c in cells] or [0], 'bool_')}",
            f"CYCLES_OF = {array([c.cycles for c in cells] or [0], 'int64')}",
            f"STARTS = {array([c.kind == 'start' for c in cells] or [0], 'bool_')}",
            f"FINISHES = {array([c.kind == 'finish' for c in cells] or [0], 'bool_')}",
            f"DENSE_LENGTH = {len(dense)}",
            f"DENSE = {array(dense or [0], 'int64')}",
            f"DENSE_WORDS = {count}",
            "# exit places inside blocks: (pc, instructions done, cycles spent) before them",
            f"SITES = np.array({[list(s) for s in sites]!r}, dtype=np.int64)",
            "",
            "",
            "@njit(cache=True, nogil=True)",
            f"def lane_run(lane, {args}):",
            f"    pc = CTL[lane, {PC}]",
            f"    br = CTL[lane, {BR}]",
            f"    d = CTL[lane, {DIR}]",
            f"    steps = CTL[lane, {STEPS}]",
            f"    cycles = CTL[lane, {CYCLES}]",
            "    status = I(0)",
            "    fcode = I(0)",
            "    faux = I(0)",
            "    faux2 = I(0)",
            "    site = I(-1)",
            "    br_in = I(0)",
            "    dir_in = I(0)",
            "    outlen = OUTLEN[lane]",
            "    tapelen = TAPELEN[lane]",
            f"    strict = CTL[lane, {STRICT}] != 0",
        ]
        if used["ov"]:  # the overflow counter OV (a word, kept in CTL)
            lines.append(f"    ov0 = U(CTL[lane, {OVERFLOWS}])")
        for prefix, bank in banks.items():
            for n in sorted(used[prefix]):
                lines.append(f"    {prefix}{n} = {bank}[lane, {n}]")
        lines.append("    while True:")
        lines += body
        lines += [
            "    if status == 0:",
            f"        status = I({FAULTED}) if fcode < 100 else I({NEEDS_ROOM})",
            "    if site >= 0:",
            "        pc = SITES[site, 0]",
            "        steps += SITES[site, 1]",
            "        cycles += SITES[site, 2]",
        ]
        for prefix, bank in banks.items():
            for n in sorted(used[prefix]):
                lines.append(f"    {bank}[lane, {n}] = {prefix}{n}")
        if used["ov"]:
            lines.append(f"    CTL[lane, {OVERFLOWS}] = I(ov0)")
        for column, name in ((PC, "pc"), (BR, "br"), (DIR, "d"), (STEPS, "steps"),
                             (CYCLES, "cycles"), (STATUS, "status"), (FCODE, "fcode"),
                             (FAUX, "faux"), (FAUX2, "faux2")):
            lines.append(f"    CTL[lane, {column}] = {name}")
        lines += ["    OUTLEN[lane] = outlen", "    TAPELEN[lane] = tapelen", "", ""]
        for name, parallel, loop in (("run_parallel", True, "prange"),
                                     ("run_serial", False, "range")):
            options = "cache=True, parallel=True" if parallel else "cache=True, nogil=True"
            lines += [
                f"@njit({options})",
                f"def {name}(active, {args}):",
                f"    for j in {loop}(active.shape[0]):",
                "        lane_run(active[j], " + args + ")",
                "",
                "",
            ]
        return "\n".join(lines)


def kernel_source(image: Image, gradient: bool = False, tangent: bool = False,
                  memory_words: int = 65536, header: str = "") -> str:
    """The generated module for ``image`` in a mode (readable: one comment per instruction)."""
    kernel = _Kernel(image, gradient, tangent)
    return kernel.source(header or f"revasm compiled kernel: W = {image.width}, "
                                   f"gradient={gradient}, tangent={tangent}", memory_words)


def kernel_uses(image: Image, gradient: bool = False, tangent: bool = False) -> dict:
    """What a kernel touches (output log, tape, memory banks), from its translation."""
    kernel = _Kernel(image, gradient, tangent)
    kernel.source("", 0)
    t = kernel.translator
    return {"output": t.uses_output, "tape": t.uses_tape, "memory": sorted(t.memory_banks)}
