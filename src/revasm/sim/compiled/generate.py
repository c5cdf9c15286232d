"""An image -> the source of one numba kernel module (``print(kernel_source(image))``).

The kernel (``lane_run``) runs one lane from its saved state until it halts, faults or
stops for the host:

* the lane's registers (and, in gradient mode, its G/T/TG registers) are locals --
  machine registers -- loaded at entry and stored at exit; memory words are
  ``MEM[lane, slot]`` (the image's DATA cells dense, other addresses in a per-lane
  window above the image and an open-addressing table, ``vocab.window_slot``);
* the program is a ``while True`` loop over an ``if pc == ...`` chain per direction
  (LLVM turns it into a jump table) whose cases are *blocks*: a control instruction
  (branch, RBRA, SWAPBR) or the first data instruction of a run, through the following
  data run -- straight-line code that ends in a jump to the next block; a data cell
  that may need room in a per-lane table (EXCH, SHOW, EMIT) also starts a block of its
  own, so a lane paused there resumes in compiled code, while the block running into
  it goes on through it (the rest of such a run is compiled twice, every other
  instruction once per direction);
* START and FINISH step in a small generic tail; every other step that is not a block
  -- a jump landing on a data cell (which faults), the last steps before ``max_steps``
  -- is *handed off*: the host finishes that lane's run on the reference machine,
  the oracle (``machine.CompiledLanes._hand_off``), so those rare paths need no code;
* every instruction's code is its table template for the direction and mode
  (``Decoded.statement``), translated by :mod:`.translate`: there is no opcode list here.

A large program's kernel is split into *regions* (more than :data:`WHOLE_LINES` lines of
blocks in all): runs of blocks of one direction, at most :data:`REGION_LINES` lines each
and cut where the fewest branch arcs cross, so that loops rarely span two.  Each region
is a function of its own (``region_<k>``: the registers its blocks touch as locals, run
until the lane leaves its blocks), and ``lane_run`` dispatches on the PC
(``FORWARD_REGION``/``BACKWARD_REGION``) and takes the single steps.  numba's front end
and LLVM cost more than linearly in one function's size; regions keep compile time about
linear and memory bounded (sim/compiled/README.md, "Compile time").

A fault leaves the loop with a code, the value its message needs and an exit *site*
(``SITES``: the PC, instructions and cycles of the block completed before it), so the
host (``machine.py``) reports the reference's PC, step and cycle counts and message.  A
full per-lane table (memory, output log, EMIT tape) pauses the lane *before* the
instruction (status ``NEEDS_ROOM``, code 100 + the table): the host grows it and resumes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.machine.next_pc import halts_source, next_pc_source
from revasm.sim.reference.blocks import block_starts as reference_block_starts
from revasm.sim.reference.machine import Program
from revasm.sim.reference.predecode import Decoded

from .translate import F_ILLEGAL, F_JUMP, F_STEPS, Translator

RUNNING, HALTED, FAULTED, IDLE, NEEDS_ROOM, HANDOFF = 0, 1, 2, 3, 4, 5
#: Fields (rows) of the control array ``CTL[field, lane]``.
PC, BR, DIR, STEPS, CYCLES, STATUS, FCODE, FAUX, FAUX2, OVERFLOWS, STRICT = range(11)
CONTROL_COLUMNS = 11
BLOCK_CONTROL = ("branch", "rbra", "swapbr")
#: Control instructions whose block runs on through the data run after them (an RBRA's
#: block is itself alone: DIR may have turned).
EXTENDING_CONTROL = ("branch", "swapbr")
#: Ranges of lanes a parallel run hands out (a few per thread, for the load's balance).
PARALLEL_CHUNKS = 256
KERNEL_ARGS = ("R", "G", "T", "TG", "MEM", "GM", "TM", "TGM", "KEYS", "CTL", "OUT", "OUTLEN",
               "TAPE", "TAPELEN", "limit")
#: A kernel whose blocks take more lines than this in all is split into region functions.
#: numba's front end and LLVM grow faster than linearly with one function's size (rfib's
#: 2631 lines: 19 CPU-s and 862 MB whole, 13 CPU-s and 229 MB in regions; qr's 11195
#: lines exhausted 12 GB whole), but a loop that crosses regions pays a call per crossing
#: (rfib's run took 3.4x the CPU time split): so only kernels too large to compile whole
#: are split (sim/compiled/README.md, "Compile time").
WHOLE_LINES = 3000
#: The most lines of blocks a region function holds (a longer block alone).
REGION_LINES = 400
#: Pause cells a block runs on through (``_Kernel.members``): one keeps J2's loop body one
#: dispatch, and every instruction is compiled at most twice more than once per direction.
CHAINED_PAUSES = 1
#: Kernel functions only other kernel functions call: no wrappers for Python or C callers,
#: and numba's pipeline without SSA (:mod:`.pipeline`: a third less compile time).
INNER_JIT = ("cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, "
             "pipeline_class=KernelCompiler")
#: A region function's status when the lane left its blocks (it is still running).
_LEFT = -1
_CONTROL_LOCALS = ((PC, "pc"), (BR, "br"), (DIR, "d"), (STEPS, "steps"), (CYCLES, "cycles"),
                   (STATUS, "status"), (FCODE, "fcode"), (FAUX, "faux"), (FAUX2, "faux2"))
_REGISTER_BANKS = {"r": "R", "g": "G", "t": "T", "tg": "TG"}


def block_starts(cells: list[Decoded], direction: int) -> list[int]:
    """The reference's block starts (``sim/reference/blocks.py``) but the data runs that
    follow a branch or SWAPBR, and every data cell a lane may pause before for room in a
    per-lane table (a paused lane resumes there).

    A block that starts at a branch or SWAPBR runs on through the data run after it
    (:meth:`_Kernel.members`), and nothing else enters that run at its first cell: a jump
    lands on a control instruction (a landing on a data cell faults, a single step), a
    paused lane resumes at its pause cell, a region ends before a block start.  So a block
    of its own there would only compile the run twice (about half of a kernel's lines)."""
    starts = set(reference_block_starts(cells, direction)) - _runs_after_control(cells, direction)
    return sorted(starts | pause_cells(cells, direction))


def _runs_after_control(cells: list[Decoded], direction: int) -> set[int]:
    """The first data cells of runs that a branch's or SWAPBR's block runs on into."""
    return {pc for pc, cell in enumerate(cells)
            if cell.in_blocks and cell.kind == "data"
            and 0 <= pc - direction < len(cells)
            and cells[pc - direction].in_blocks
            and cells[pc - direction].kind in EXTENDING_CONTROL}


def pause_cells(cells: list[Decoded], direction: int) -> frozenset[int]:
    """The data cells a lane may pause before, for room in a per-lane table."""
    return frozenset(pc for pc, cell in enumerate(cells)
                     if cell.in_blocks and cell.kind == "data"
                     and _may_pause(cell.statement(direction)))


def _may_pause(statement: str) -> bool:
    """Whether a template may need room in a per-lane table (memory, output, tape)."""
    return any(name in statement for name in ("addr(", "show(", "emit("))


@dataclass
class _Block:
    """One block's translation: its lines (at indent 0), the registers they touch."""

    start: int
    lines: list[str]
    used: dict[str, set[int]]
    reverses: bool  # an RBRA: DIR may change


class _Kernel:
    def __init__(self, image: Image, gradient: bool, tangent: bool) -> None:
        self.image = image
        self.cells = Program.of(image).cells
        self.gradient = gradient
        self.tangent = tangent
        fmt = word_format(image.width)
        self.translator = Translator(image.width, {
            "M": fmt.mask, "W": fmt.width, "F": fmt.frac_bits, "one": fmt.one})
        self.lines: list[str] = []
        self.sites: dict[tuple[int, int, int], int] = {}
        #: Region functions of the last source (0: one ``lane_run`` holds every block).
        self.region_count = 0
        self._pause_starts: dict[int, frozenset[int]] = {}

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
            room=lambda code, aux: self.leave(100 + code, aux, site))
        self.out(indent, f"# pc {cell.pc}: {cell.text}")
        for line in lines:
            self.out(indent, line)
        timed = cell.cycles_expression(direction, self.gradient)
        if timed is not None:  # its unit calls' cycles, from registers it did not write
            for line in self.translator.cycles(timed):
                self.out(indent, line)

    def cycles(self, cell: Decoded, direction: int) -> int:
        """The instruction's fixed cycles (``isa/timing``) in the kernel's mode."""
        return cell.fixed_cycles(direction, self.gradient)

    def next_pc(self, indent: int, pc: int) -> None:
        """Move on from the instruction at ``pc`` by the next-PC rule and dispatch again."""
        self.out(indent, f"pc = {next_pc_source(f'I({pc})', 'br', 'd')}")
        self.out(indent, "continue")

    # --- blocks -------------------------------------------------------------------------

    def members(self, start: int, direction: int) -> tuple[list[int], int | None]:
        """The PCs of the block at ``start`` and where it ends without a control
        instruction (the PC after it), else None.

        A block runs on through the data cells a lane may pause before: they start
        blocks of their own only for a paused lane to resume in compiled code, so the
        run through them is one dispatch, not one per cell (J2's loop: two per iteration
        instead of three, ~15% of its gradient's time).  It stops before a control
        instruction, which starts a block anyway (one dispatch more, no instruction
        compiled twice); chaining through untaken branches as well measured no faster
        on J2 and made random structured programs' kernels 50% longer.  It runs through at
        most :data:`CHAINED_PAUSES` pause cells: each of them starts a block that runs on
        too, so a straight run of n EXCH would otherwise compile ~n^2/2 instructions (39
        of them took 119 s to compile); J2's loop passes one."""
        cells = self.cells
        pcs = [start]
        if cells[start].kind == "rbra":
            return pcs, None
        pc = start + direction
        passed = 0
        while 0 <= pc < len(cells) and cells[pc].is_data:
            if pc in self.pause_starts(direction):
                if passed == CHAINED_PAUSES:
                    break
                passed += 1
            pcs.append(pc)
            pc += direction
        return pcs, pc

    def pause_starts(self, direction: int) -> frozenset[int]:
        """The data cells that start a block of their own because a lane may pause there."""
        found = self._pause_starts.get(direction)
        if found is None:
            found = self._pause_starts[direction] = pause_cells(self.cells, direction)
        return found

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
                jump = self.leave(F_JUMP, "br_in", self.site(pc, 1, self.cycles(cell, direction)),
                                  aux2=f"I({direction})")
                if cell.kind == "rbra":
                    self.out(body, "if br_in != 0 and br != 0:")
                    for line in jump:
                        self.out(body + 1, line)
                    self.out(body, "steps += 1")
                    self.out(body, f"cycles += {self.cycles(cell, direction)}")
                    self.next_pc(body, pc)
                    return
                self.out(body, "if br != 0:")
                self.out(body + 1, "if br_in != 0:")
                for line in jump:
                    self.out(body + 2, line)
                self.out(body + 1, "steps += 1")
                self.out(body + 1, f"cycles += {self.cycles(cell, direction)}")
                self.next_pc(body + 1, pc)
            else:
                self.instruction(cell, direction, body, self.site(pc, done, spent))
            done += 1
            spent += self.cycles(cell, direction)
        self.out(body, f"steps += {done}")
        self.out(body, f"cycles += {spent}")
        if after is None:
            self.next_pc(body, pcs[-1])
        else:
            self.out(body, f"pc = I({after})")
            self.out(body, "continue")

    def blocks(self, direction: int) -> list[_Block]:
        """Every block of one direction, each translated on its own (its lines at
        indent 0, the registers it touches)."""
        blocks = []
        translator = self.translator
        everything = translator.used
        for pc in block_starts(self.cells, direction):
            self.lines = []
            translator.used = {prefix: set() for prefix in everything}
            self.block(pc, direction, 0)
            for prefix, numbers in translator.used.items():
                everything[prefix] |= numbers
            blocks.append(_Block(pc, self.lines, translator.used,
                                 self.cells[pc].kind == "rbra"))
        translator.used = everything
        self.lines = []
        return blocks

    def chain(self, blocks: list[_Block], indent: int) -> None:
        """The ``if pc == ...`` chain over ``blocks`` (LLVM makes it a jump table)."""
        prefix = "    " * (indent + 1)
        for i, block in enumerate(blocks):
            self.out(indent, f"{'if' if i == 0 else 'elif'} pc == {block.start}:")
            self.lines += [prefix + line for line in block.lines]
        if not blocks:
            self.out(indent, "pass")

    def single_step(self, indent: int) -> None:
        """START and FINISH step here; any other instruction that is not a block (a landing
        on a data cell, the last steps before the limit) is handed to the reference
        machine, the oracle, which finishes the lane's run.  Touches no register."""
        out = self.out
        out(indent, "if steps >= limit:")
        out(indent + 1, f"fcode = I({F_STEPS})")
        out(indent + 1, "break")
        out(indent, "if pc < 0 or pc >= CODE_LENGTH or ILLEGAL[pc]:")
        out(indent + 1, f"fcode = I({F_ILLEGAL})")
        out(indent + 1, "break")
        out(indent, "if not (STARTS[pc] or FINISHES[pc]):")
        out(indent + 1, f"status = I({HANDOFF})")
        out(indent + 1, "break")
        out(indent, "br_in = br")
        out(indent, "dir_in = d")
        out(indent, "steps += 1")
        out(indent, "cycles += CYCLES_OF[pc]")
        # START and FINISH are not come-from checked: they halt keeping BR (a jump onto
        # FINISH, docs/simulator.md) or pass it on to the next landing, as the reference.
        out(indent, f"if {halts_source('d', 'FINISHES[pc]', 'STARTS[pc]')}:")
        out(indent + 1, f"status = I({HALTED})")
        out(indent + 1, "break")
        out(indent, f"pc = {next_pc_source('pc', 'br', 'd')}")

    # --- functions ------------------------------------------------------------------------

    def entry(self, used: dict[str, set[int]]) -> None:
        """A kernel function's prologue: the lane's control state and the registers its
        blocks touch, loaded into locals."""
        out = self.out
        for column, name in _CONTROL_LOCALS[:5]:
            out(1, f"{name} = CTL[{column}, lane]")
        for name in ("status", "fcode", "faux", "faux2"):
            out(1, f"{name} = I(0)")
        out(1, "site = I(-1)")
        out(1, "br_in = I(0)")
        out(1, "dir_in = I(0)")
        out(1, "outlen = OUTLEN[lane]")
        out(1, "tapelen = TAPELEN[lane]")
        out(1, f"strict = CTL[{STRICT}, lane] != 0")
        if used["ov"]:  # the overflow counter OV (a word, kept in CTL)
            out(1, f"ov0 = U(CTL[{OVERFLOWS}, lane])")
        for prefix, bank in _REGISTER_BANKS.items():
            for n in sorted(used[prefix]):
                out(1, f"{prefix}{n} = {bank}[lane, {n}]")

    def exit(self, used: dict[str, set[int]]) -> None:
        """A kernel function's epilogue: the fault or pause it left with (its PC and counts
        from the exit site), the locals stored back."""
        out = self.out
        out(1, "if status == 0:")
        out(2, f"status = I({FAULTED}) if fcode < 100 else I({NEEDS_ROOM})")
        out(1, "if site >= 0:")
        out(2, "pc = SITES[site, 0]")
        out(2, "steps += SITES[site, 1]")
        out(2, "cycles += SITES[site, 2]")
        for prefix, bank in _REGISTER_BANKS.items():
            for n in sorted(used[prefix]):
                out(1, f"{bank}[lane, {n}] = {prefix}{n}")
        if used["ov"]:
            out(1, f"CTL[{OVERFLOWS}, lane] = I(ov0)")
        for column, name in _CONTROL_LOCALS:
            out(1, f"CTL[{column}, lane] = {name}")
        out(1, "OUTLEN[lane] = outlen")
        out(1, "TAPELEN[lane] = tapelen")

    def whole(self, forward: list[_Block], backward: list[_Block]) -> None:
        """``lane_run`` as one function: both directions' blocks and the single step."""
        args = ", ".join(KERNEL_ARGS)
        out = self.out
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def lane_range(active, first, last, {args}):")
        out(1, "for j in range(first, last):")
        out(2, "lane = active[j]")
        body = len(self.lines)
        self.entry(self.translator.used)
        out(1, "while True:")
        out(2, "# blocks: straight-line runs, entered when they fit below the step limit")
        out(2, "if d > 0:")
        self.chain(forward, 3)
        out(2, "else:")
        self.chain(backward, 3)
        self.single_step(2)
        self.exit(self.translator.used)
        # The lane's code runs once per lane of the range: one call (and one reference
        # count of each array argument) per range of lanes, not per lane.
        self.lines[body:] = ["    " + line if line else line for line in self.lines[body:]]

    def region(self, index: int, direction: int, blocks: list[_Block]) -> None:
        """``region_<index>``: the blocks of one region, run until the lane leaves them
        (returns True, its state in ``CTL``, status RUNNING) or stops (returns False)."""
        used: dict[str, set[int]] = {prefix: set() for prefix in self.translator.used}
        for block in blocks:
            for prefix, numbers in block.used.items():
                used[prefix] |= numbers
        out = self.out
        first, last = blocks[0].start, blocks[-1].start
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def region_{index}(lane, {', '.join(KERNEL_ARGS)}):")
        out(1, f'"""Blocks at pc {first}..{last}, DIR = {direction:+d}."""')
        self.entry(used)
        out(1, "while True:")
        if any(block.reverses for block in blocks):  # an RBRA turns the lane around
            out(2, f"if d != {direction}:")
            out(3, f"status = I({_LEFT})")
            out(3, "break")
        self.chain(blocks, 2)
        out(2, "# no block of this region here, or none that fits below the step limit")
        out(2, f"status = I({_LEFT})")
        out(2, "break")
        out(1, f"moved = status == {_LEFT}")
        out(1, "if moved:")
        out(2, f"status = I({RUNNING})")
        self.exit(used)
        out(1, "return moved")
        out(0, "")
        out(0, "")

    def dispatcher(self, count: int) -> None:
        """``lane_run`` over regions: the region of the lane's block start, else the
        single step, until the lane stops."""
        args = ", ".join(KERNEL_ARGS)
        out = self.out
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def lane_run(lane, {args}):")
        out(1, "region = I(-1)  # the region that just returned (its blocks declined)")
        for name in ("status", "fcode", "faux", "faux2", "br_in", "dir_in"):
            out(1, f"{name} = I(0)")
        for column, name in _CONTROL_LOCALS[:5]:
            out(1, f"{name} = CTL[{column}, lane]")
        out(1, "while True:")
        out(2, f"pc = CTL[{PC}, lane]")
        out(2, f"d = CTL[{DIR}, lane]")
        out(2, "here = I(-1)")
        out(2, "if 0 <= pc < CODE_LENGTH:")
        out(3, "here = FORWARD_REGION[pc] if d > 0 else BACKWARD_REGION[pc]")
        out(2, "if here >= 0 and here != region:")
        out(3, "region = here")
        for index in range(count):
            out(3, f"{'if' if index == 0 else 'elif'} here == {index}:")
            out(4, f"moved = region_{index}(lane, {args})")
        out(3, "else:")
        out(4, "moved = False")
        out(3, "if not moved:")
        out(4, "return")
        out(3, "continue")
        out(2, "region = I(-1)")
        for column, name in _CONTROL_LOCALS[1:5]:
            if name != "d":
                out(2, f"{name} = CTL[{column}, lane]")
        self.single_step(2)
        for column, name in _CONTROL_LOCALS[:5]:
            out(2, f"CTL[{column}, lane] = {name}")
        out(1, "if status == 0:")
        out(2, f"status = I({FAULTED})")
        for column, name in _CONTROL_LOCALS:
            out(1, f"CTL[{column}, lane] = {name}")
        out(0, "")
        out(0, "")
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def lane_range(active, first, last, {args}):")
        out(1, "for j in range(first, last):")
        out(2, f"lane_run(active[j], {args})")

    # --- the module -----------------------------------------------------------------------

    def source(self, header: str, memory_words: int, whole_lines: int,
               region_lines: int) -> str:
        forward = self.blocks(1)
        backward = self.blocks(-1)
        size = sum(len(block.lines) for block in forward + backward)
        functions: list[str] = []
        self.lines = functions
        region_of = {1: [-1] * len(self.cells), -1: [-1] * len(self.cells)}
        if size <= whole_lines:
            self.whole(forward, backward)
            self.region_count = 0
        else:
            count = 0
            for direction, blocks in ((1, forward), (-1, backward)):
                for members in regions(blocks, direction, self.cells, region_lines):
                    self.region(count, direction, members)
                    for block in members:
                        region_of[direction][block.start] = count
                    count += 1
            self.dispatcher(count)
            self.region_count = count
        args = ", ".join(KERNEL_ARGS)
        functions += [
            "",
            "",
            "@njit(cache=True, parallel=True)",
            f"def run_parallel(active, {args}):",
            "    n = active.shape[0]",
            f"    chunks = min(n, {PARALLEL_CHUNKS})",
            "    for c in prange(chunks):",
            f"        lane_range(active, c * n // chunks, (c + 1) * n // chunks, {args})",
            "",
            "",
            "@njit(cache=True, nogil=True, pipeline_class=KernelCompiler)",
            f"def run_serial(active, {args}):",
            f"    lane_range(active, 0, active.shape[0], {args})",
        ]
        image = self.image
        cells = self.cells
        code = [bool(flag) for flag in image.is_code]
        dense = []
        count = 0
        for flag in code:
            dense.append(-1 if flag else count)
            count += 0 if flag else 1
        sites = sorted(self.sites, key=self.sites.__getitem__) or [(0, 0, 0)]
        single_cycles = [cell.fixed_cycles(1, self.gradient) for cell in cells]

        def array(values: list, dtype: str) -> str:
            return f"np.array({[int(v) for v in values]!r}, dtype=np.{dtype})"

        lines = [
            f'"""{header}"""',
            *MODULE_PRELUDE,
            f"MEMORY_WORDS = {memory_words}",
            f"CODE_LENGTH = {len(code)}",
            f"CODE = {array(code, 'bool_')}",
            f"ILLEGAL = {array([c.illegal is not None for c in cells] or [0], 'bool_')}",
            # START and FINISH (the single step): the same both ways, no unit call
            f"CYCLES_OF = {array(single_cycles or [0], 'int64')}",
            f"STARTS = {array([c.kind == 'start' for c in cells] or [0], 'bool_')}",
            f"FINISHES = {array([c.kind == 'finish' for c in cells] or [0], 'bool_')}",
            f"DENSE_LENGTH = {len(dense)}",
            f"DENSE = {array(dense or [0], 'int64')}",
            f"DENSE_WORDS = {count}",
            "# exit places inside blocks: (pc, instructions done, cycles spent) before them",
            f"SITES = np.array({[list(s) for s in sites]!r}, dtype=np.int64)",
        ]
        if self.region_count:
            lines += [
                "# the region whose function runs the block at each pc (-1: none), by direction",
                f"FORWARD_REGION = {array(region_of[1], 'int64')}",
                f"BACKWARD_REGION = {array(region_of[-1], 'int64')}",
            ]
        constants, body = hoist_constants("\n".join(functions))
        lines += constants + ["", ""]
        return "\n".join(lines) + "\n" + body + "\n"


#: The imports and type names every kernel module starts with (after its docstring).
MODULE_PRELUDE = (
    "import numpy as np",
    "from numba import njit, prange",
    "from revasm.sim.compiled.vocab import *  # noqa: F401,F403 - the vocabulary",
    "from revasm.sim.compiled.overflow import *  # noqa: F401,F403 - its ovf_* names",
    "from revasm.sim.compiled.timing import *  # noqa: F401,F403 - the unit timers",
    "from revasm.sim.compiled.pipeline import KernelCompiler",
    "",
    "U = np.uint64",
    "I = np.int64",
)
#: ``U(<digits>)``: a uint64 constant of the generated code (hoisted to a global).
_WORD_CONSTANT = re.compile(r"\bU\((\d+)\)")
#: ``I(<literal>)``: an int64 constant; a plain literal is typed int64 by numba.
_INTEGER_CONSTANT = re.compile(r"\bI\((-?\d+)\)")


def hoist_constants(code: str) -> tuple[list[str], str]:
    """Kernel code with its constants typed once: ``I(<literal>)`` as the literal (numba
    types an int literal as int64) and ``U(<digits>)`` as a module global ``U_<digits>``;
    returns the globals' definitions and the code.  Thousands of constant calls in a large
    kernel each cost numba's front end a typing and a lowering."""
    code = _INTEGER_CONSTANT.sub(r"\1", code)
    words = sorted({int(n) for n in _WORD_CONSTANT.findall(code)})
    definitions = ["# the code's uint64 constants, typed once"] if words else []
    definitions += [f"U_{n} = U({n})" for n in words]
    return definitions, _WORD_CONSTANT.sub(r"U_\1", code)


def regions(blocks: list[_Block], direction: int, cells: list[Decoded],
            budget: int) -> list[list[_Block]]:
    """``blocks`` (in PC order) cut into runs of at most ``budget`` lines each (a longer
    block alone), each cut in the second half of its run where the fewest branch arcs
    cross it, so that a loop rarely spans two regions."""
    crossing = _crossings(cells)
    out: list[list[_Block]] = []
    i = 0
    while i < len(blocks):
        size, j = 0, i
        while j < len(blocks) and (j == i or size + len(blocks[j].lines) <= budget):
            size += len(blocks[j].lines)
            j += 1
        if j < len(blocks):
            candidates, size = [], 0
            for k in range(i + 1, j + 1):
                size += len(blocks[k - 1].lines)
                if 2 * size >= budget or k == j:
                    # the first PC after the cut (DIR = -1: a block runs down from its start)
                    boundary = blocks[k].start if direction > 0 else blocks[k - 1].start + 1
                    candidates.append((crossing[boundary], -k))
            j = -min(candidates)[1]
        out.append(blocks[i:j])
        i = j
    return out


def _crossings(cells: list[Decoded]) -> list[int]:
    """For every PC b, how many branch arcs (between a branch and its target) cross from
    below b to b or above."""
    change = [0] * (len(cells) + 2)
    for cell in cells:
        offset = cell.operands.get("off") if cell.kind in ("branch", "rbra") else None
        if not offset:
            continue
        low, high = sorted((cell.pc, cell.pc + offset))
        low, high = max(low, 0), min(high, len(cells))
        change[low + 1] += 1
        change[high + 1] -= 1
    crossing, running = [], 0
    for value in change:
        running += value
        crossing.append(running)
    return crossing


def kernel_source(image: Image, gradient: bool = False, tangent: bool = False,
                  memory_words: int = 65536, header: str = "",
                  whole_lines: int | None = None, region_lines: int | None = None) -> str:
    """The generated module for ``image`` in a mode (readable: one comment per instruction);
    blocks of more than ``whole_lines`` lines in all (:data:`WHOLE_LINES`) are split into
    regions of at most ``region_lines`` (:data:`REGION_LINES`)."""
    kernel = _Kernel(image, gradient, tangent)
    return kernel.source(header or f"revasm compiled kernel: W = {image.width}, "
                                   f"gradient={gradient}, tangent={tangent}", memory_words,
                         WHOLE_LINES if whole_lines is None else whole_lines,
                         REGION_LINES if region_lines is None else region_lines)


def kernel_uses(image: Image, gradient: bool = False, tangent: bool = False) -> dict:
    """What a kernel touches (output log, tape, memory banks), from its translation."""
    kernel = _Kernel(image, gradient, tangent)
    kernel.source("", 0, WHOLE_LINES, REGION_LINES)
    t = kernel.translator
    return {"output": t.uses_output, "tape": t.uses_tape, "memory": sorted(t.memory_banks)}
