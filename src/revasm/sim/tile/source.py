"""The tile interpreter's source: one numba module per width and mode that runs any image.

A *tile* is a run of consecutive lanes (``lo .. hi - 1``).  ``tile_run`` runs one tile
until every lane of it has halted, faulted or paused: each round it picks the *group* --
the tile's running lanes at the first (DIR, PC) in program order, forward lanes by lowest
PC, then backward lanes by highest, as the vector engine's scheduler does -- and runs it
instruction after instruction for as long as it stays together.  An instruction is
fetched and dispatched once for the group (its table entry through a binary tree of
comparisons, its operands from ``PROG``), then executed by one loop over the group's
lanes.  Registers and memory are lane-innermost (``R[register, lane]``), so the loop over
a tile reads and writes contiguous words: LLVM vectorises it where the template allows.

The loop's body is the entry's template for the direction and mode, translated by the
compiled engine's :class:`~revasm.sim.compiled.translate.Translator` exactly as for its
interpreter kernel -- the operand placeholders are locals, the banks the lane-major views
``R[lane, o_a]`` the translator writes, which are the transposes of the kernel's
``[register, lane]`` arrays -- so there is still one definition of the semantics and no
opcode list.  A fault or a pause for room leaves the *lane* (its state written, status
set, the rest of the group runs on); the host builds the fault's message from its code
(``machine.CompiledLanes.fault``), as for the compiled interpreter kernel, whose per-lane
step this is.

Divergence: a branch that sends the group's lanes different ways ends the round, and the
next round picks the first (DIR, PC) again, so a tile runs as masks of lanes over the
branches of a structured program and its lanes meet again where their paths do (the
come-from rule's landings, which are control instructions: a partial group that reaches
one first lets the tile pick again, so lanes waiting there join it).  Step and cycle
counts are added to a group's lanes only when it ends (:func:`cycle_count` says what an
instruction costs).  ``regroup`` (the host's choice) makes a tile return once its groups
have held at most half its lanes for :data:`THIN_STEPS` instructions in a row, so the host
can pack lanes at one PC into the same tiles (``regroup.py``).
"""
from __future__ import annotations

from revasm.isa.adjoint import mode_template
from revasm.isa.fixed_point import WordFormat
from revasm.isa.table import INSTRUCTIONS
from revasm.sim.compiled.generate import (
    BR,
    CYCLES,
    DIR,
    FAULTED,
    FAUX,
    FAUX2,
    FCODE,
    HALTED,
    INNER_JIT,
    NEEDS_ROOM,
    OVERFLOWS,
    PC,
    RUNNING,
    STATUS,
    STEPS,
    hoist_constants,
)
from revasm.sim.compiled.interpreter import (
    AMT,
    CYC,
    FINISH_FLAG,
    FLAGS,
    ILLEGAL_FLAG,
    OFF,
    OP,
    START_FLAG,
    A,
    B,
    C,
    K,
)
from revasm.sim.compiled.translate import F_ILLEGAL, F_JUMP, F_STEPS, Translator, Value

#: What the host passes the kernel's entry points, after the tiles, the tile size and the
#: lane count.  Banks are ``[register or slot, lane]`` (C order): the kernel takes their
#: transposes, the lane-major views the translated templates index.
KERNEL_ARGS = ("Rs", "Gs", "Ts", "TGs", "MEMs", "GMs", "TMs", "TGMs", "KEYSs", "CTL", "OUT",
               "OUTLEN", "TAPE", "TAPELEN", "limit", "PROG", "IMM", "CODE", "DENSE",
               "dense_words", "strict_flag", "regroup", "STATS")
#: Operand placeholders of the table and the kernel locals that hold them (as in the
#: compiled interpreter kernel).
_OPERANDS = {"a": Value("o_a", "i"), "b": Value("o_b", "i"), "c": Value("o_c", "i"),
             "amt": Value("o_amt", "i"), "k": Value("o_k", "i"), "off": Value("o_off", "i"),
             "imm": Value("o_imm", "w")}
_OPERAND_ROWS = {"o_a": A, "o_b": B, "o_c": C, "o_amt": AMT, "o_k": K, "o_off": OFF}
#: With regrouping on, a tile returns to the host after this many instructions in a row
#: run by groups of at most half its lanes (the host packs lanes at one PC together).
THIN_STEPS = 32
#: Table entries whose step decides BR or DIR (executed with the come-from check).
CONTROL_KINDS = ("branch", "rbra", "swapbr")
#: The vocabulary the tile kernels call: the compiled engine's scalar functions, with the
#: tile engine's own versions of those it replaces (``vocab.py``) imported after them.
MODULE_PRELUDE = (
    "import numpy as np",
    "from numba import njit, prange",
    "from revasm.sim.compiled.vocab import *  # noqa: F401,F403 - the vocabulary",
    "from revasm.sim.compiled.overflow import *  # noqa: F401,F403 - its ovf_* names",
    "from revasm.sim.tile.vocab import *  # noqa: F401,F403 - the tile engine's versions",
    "from revasm.sim.compiled.pipeline import KernelCompiler",
    "",
    "U = np.uint64",
    "I = np.int64",
)


def cycle_count(cycles: str) -> str:
    """The kernel expression of what one instruction adds to a lane's cycle count, given
    the expression of its table cost (``PROG[CYC, pc]``): today that cost itself.  The one
    place the tile kernels account cycles, so that a cost model that depends on the
    operands (the RTL's exact cycles) changes this function only."""
    return cycles


class _Source:
    def __init__(self, width: int, gradient: bool, tangent: bool) -> None:
        fmt = WordFormat(width)
        self.width, self.gradient, self.tangent = width, gradient, tangent
        self.translator = Translator(width, {"M": fmt.mask, "W": fmt.width,
                                             "F": fmt.frac_bits, "one": fmt.one})
        self.translator.operands = {value.code: value for value in _OPERANDS.values()}
        self.lines: list[str] = []

    def out(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def outs(self, indent: int, lines: list[str]) -> None:
        for line in lines:
            self.out(indent, line)

    # --- one entry's step over the group's lanes -------------------------------------------

    def template(self, number: int, direction: int) -> str:
        ins = INSTRUCTIONS[number]
        if self.gradient or self.tangent:
            text = mode_template(ins, direction, self.gradient, self.tangent)
        else:
            text = ins.forward if direction > 0 else ins.backward
        return text.format(**{name: value.code for name, value in _OPERANDS.items()})

    @staticmethod
    def leave(code: int | str, aux: str, status: int) -> list[str]:
        """A lane leaves the group before the instruction (a fault, or a pause for room):
        its state as it stands, nothing of the instruction done."""
        return [f"CTL[{STEPS}, lane] += ps", f"CTL[{CYCLES}, lane] += pcyc",
                f"CTL[{PC}, lane] = pc", f"CTL[{DIR}, lane] = gd",
                f"CTL[{FCODE}, lane] = {code}", f"CTL[{FAUX}, lane] = {aux}",
                f"CTL[{STATUS}, lane] = {status}", "left += 1", "continue"]

    def body(self, number: int, direction: int) -> list[str]:
        """The translated step of one entry for the lane ``lane``, with the per-lane
        words the translator keeps in locals (OV, the output log's and tape's lengths)
        loaded before and stored after."""
        lines = self.translator.statement(
            self.template(number, direction),
            exit=lambda code, aux: self.leave(code, aux, FAULTED),
            room=lambda code, aux: self.leave(100 + code, aux, NEEDS_ROOM))
        text = "\n".join(lines)
        before, after = [], []
        if "ov0" in text:
            before.append(f"ov0 = U(CTL[{OVERFLOWS}, lane])")
            after.append(f"CTL[{OVERFLOWS}, lane] = I(ov0)")
        for name, array in (("outlen", "OUTLEN"), ("tapelen", "TAPELEN")):
            if name in text:
                before.append(f"{name} = {array}[lane]")
                after.append(f"{array}[lane] = {name}")
        return before + (lines or ["pass"]) + after

    def data_leaf(self, number: int, direction: int, indent: int) -> None:
        """A data entry: one loop over the group (every lane of the tile, or ``idx``)."""
        self.out(indent, "for k in range(n):")
        self.out(indent + 1, "lane = lo + k if full else idx[k]")
        self.outs(indent + 1, self.body(number, direction))

    def control_leaf(self, number: int, direction: int, indent: int) -> None:
        """A control entry: each lane's BR (and DIR) through the template, the come-from
        check (a landing that does not catch its jump faults after executing, its effects
        kept, as the reference's), the lane's next PC, and whether the group stays together."""
        out = self.out
        out(indent, "for k in range(n):")
        inner = indent + 1
        out(inner, "lane = idx[k]")
        out(inner, f"br = CTL[{BR}, lane]")
        out(inner, "br_in = br")
        out(inner, "d = gd")
        self.outs(inner, self.body(number, direction))
        out(inner, f"CTL[{STEPS}, lane] += ps + 1")
        out(inner, f"CTL[{CYCLES}, lane] += pcyc + cyc")
        out(inner, f"CTL[{BR}, lane] = br")
        out(inner, f"CTL[{DIR}, lane] = d")
        out(inner, "if br_in != 0 and br != 0:  # a landing that does not catch its jump")
        out(inner + 1, f"CTL[{PC}, lane] = pc")
        out(inner + 1, f"CTL[{FCODE}, lane] = {F_JUMP}")
        out(inner + 1, f"CTL[{FAUX}, lane] = br_in")
        out(inner + 1, f"CTL[{FAUX2}, lane] = gd")
        out(inner + 1, f"CTL[{STATUS}, lane] = {FAULTED}")
        out(inner + 1, "left += 1")
        out(inner + 1, "continue")
        out(inner, "following = pc + br * d if br != 0 else pc + d")
        out(inner, f"CTL[{PC}, lane] = following")
        out(inner, "if m == 0:")
        out(inner + 1, "next_pc = following")
        out(inner + 1, "next_d = d")
        out(inner, "elif following != next_pc or d != next_d:")
        out(inner + 1, "together = False")
        out(inner, "if br != 0:")
        out(inner + 1, "br_any = True")
        out(inner, f"if CTL[{STEPS}, lane] > top:")
        out(inner + 1, f"top = CTL[{STEPS}, lane]")
        out(inner, "m += 1")

    def tree(self, numbers: list[int], direction: int, indent: int, control: bool) -> None:
        """The entries' leaves, chosen by ``op`` through a binary tree of comparisons."""
        if len(numbers) > 2:
            middle = len(numbers) // 2
            self.out(indent, f"if op < {numbers[middle]}:")
            self.tree(numbers[:middle], direction, indent + 1, control)
            self.out(indent, "else:")
            self.tree(numbers[middle:], direction, indent + 1, control)
            return
        for position, number in enumerate(numbers):
            mnemonic = INSTRUCTIONS[number].mnemonic
            inner = indent + 1
            if position < len(numbers) - 1:
                self.out(indent, f"if op == {number}:  # {mnemonic}")
            elif position:
                self.out(indent, f"else:  # {mnemonic}")
            else:
                self.out(indent, f"# {mnemonic}")
                inner = indent
            if control:
                self.control_leaf(number, direction, inner)
            else:
                self.data_leaf(number, direction, inner)

    def entries(self, control: bool) -> list[int]:
        return [number for number, ins in enumerate(INSTRUCTIONS)
                if (ins.kind in CONTROL_KINDS) == control and ins.kind not in ("start", "finish")]

    # --- the tile's rounds --------------------------------------------------------------------

    def flush(self, indent: int, extra_steps: str = "", extra_cycles: str = "") -> None:
        """The group's lanes take their pending counts, PC and DIR (the group ends)."""
        out = self.out
        out(indent, "for k in range(n):")
        out(indent + 1, "lane = idx[k]")
        out(indent + 1, f"CTL[{STEPS}, lane] += ps{extra_steps}")
        out(indent + 1, f"CTL[{CYCLES}, lane] += pcyc{extra_cycles}")
        out(indent + 1, f"CTL[{PC}, lane] = pc")
        out(indent + 1, f"CTL[{DIR}, lane] = gd")

    def tile_function(self) -> None:
        out = self.out
        args = ", ".join(KERNEL_ARGS)
        out(0, f"@njit({INNER_JIT})")
        out(0, f"def tile_run(t, lo, hi, idx, {args}):")
        for name in ("R", "G", "T", "TG", "MEM", "GM", "TM", "TGM", "KEYS"):
            out(1, f"{name} = {name}s.T  # lane-major views: the templates' R[lane, o_a]")
        out(1, "CODE_LENGTH = CODE.shape[0]")
        out(1, "DENSE_LENGTH = DENSE.shape[0]")
        out(1, "DENSE_WORDS = dense_words")
        out(1, "strict = strict_flag != 0")
        out(1, "cells = CODE_LENGTH")
        out(1, "size = hi - lo")
        out(1, "thin = 0  # instructions run in a row by groups of at most half the tile")
        out(1, "thin_group = False")
        out(1, "thin_from = 0")
        out(1, "dispatched = 0  # instructions fetched for a group (STATS[t])")
        out(1, "while True:")
        body = 2
        out(body, "# the group: the running lanes at the first (DIR, PC)")
        out(body, "best = I(1) << 62")
        out(body, "alive = 0")
        out(body, "for lane in range(lo, hi):")
        out(body + 1, f"if CTL[{STATUS}, lane] != {RUNNING}:")
        out(body + 2, "continue")
        out(body + 1, f"if CTL[{PC}, lane] < 0 or CTL[{PC}, lane] >= cells:  # it faults here")
        out(body + 2, f"CTL[{FCODE}, lane] = {F_STEPS} if CTL[{STEPS}, lane] >= limit "
                      f"else {F_ILLEGAL}")
        out(body + 2, f"CTL[{STATUS}, lane] = {FAULTED}")
        out(body + 2, "continue")
        out(body + 1, "alive += 1")
        out(body + 1, f"key = lane_key(CTL[{PC}, lane], CTL[{DIR}, lane], cells)")
        out(body + 1, "if key < best:")
        out(body + 2, "best = key")
        out(body, "if alive == 0:")
        out(body + 1, "STATS[t] += dispatched")
        out(body + 1, "return")
        out(body, "if thin_group:")
        out(body + 1, "thin += dispatched - thin_from")
        out(body, "else:")
        out(body + 1, "thin = 0")
        out(body, f"if regroup != 0 and thin >= {THIN_STEPS}:")
        out(body + 1, "STATS[t] += dispatched")
        out(body + 1, "return  # the host packs the running lanes into fuller groups")
        out(body, "n = 0")
        out(body, "br_any = False")
        out(body, "top = I(0)")
        out(body, "for lane in range(lo, hi):")
        out(body + 1, f"if CTL[{STATUS}, lane] == {RUNNING} and "
                      f"lane_key(CTL[{PC}, lane], CTL[{DIR}, lane], cells) == best:")
        out(body + 2, "idx[n] = lane")
        out(body + 2, "n += 1")
        out(body + 2, f"if CTL[{BR}, lane] != 0:")
        out(body + 3, "br_any = True")
        out(body + 2, f"if CTL[{STEPS}, lane] > top:")
        out(body + 3, f"top = CTL[{STEPS}, lane]")
        out(body, "full = n == size")
        out(body, "thin_group = 2 * n <= size")
        out(body, "thin_from = dispatched")
        out(body, f"pc = CTL[{PC}, idx[0]]")
        out(body, f"gd = CTL[{DIR}, idx[0]]")
        out(body, "room = limit - top  # steps every lane of the group may still take")
        out(body, "ps = I(0)")
        out(body, "pcyc = I(0)")
        out(body, "fresh = True")
        out(body, "while True:")
        step = body + 1
        out(step, "if ps >= room:  # a lane of the group is at the step limit")
        self.flush(step + 1)
        out(step + 1, "for k in range(n):")
        out(step + 2, "lane = idx[k]")
        out(step + 2, f"if CTL[{STEPS}, lane] >= limit:")
        out(step + 3, f"CTL[{FCODE}, lane] = {F_STEPS}")
        out(step + 3, f"CTL[{STATUS}, lane] = {FAULTED}")
        out(step + 1, "break")
        out(step, f"if pc < 0 or pc >= cells or PROG[{FLAGS}, pc] & {ILLEGAL_FLAG}:")
        self.flush(step + 1)
        out(step + 1, "for k in range(n):")
        out(step + 2, f"CTL[{FCODE}, idx[k]] = {F_ILLEGAL}")
        out(step + 2, f"CTL[{STATUS}, idx[k]] = {FAULTED}")
        out(step + 1, "break")
        out(step, f"flags = PROG[{FLAGS}, pc]")
        out(step, f"cyc = {cycle_count(f'PROG[{CYC}, pc]')}")
        out(step, f"if flags & {START_FLAG | FINISH_FLAG}:")
        # START and FINISH: not come-from checked; they halt keeping BR (a jump onto
        # FINISH) or pass it on to the next landing, as the reference's.
        inner = step + 1
        out(inner, "dispatched += 1")
        out(inner, f"halt = (gd > 0 and flags & {FINISH_FLAG} != 0) or "
                   f"(gd < 0 and flags & {START_FLAG} != 0)")
        self.flush(inner, " + 1", " + cyc")
        out(inner + 1, "if halt:")
        out(inner + 2, f"CTL[{STATUS}, lane] = {HALTED}")
        out(inner + 1, f"elif CTL[{BR}, lane] != 0:")
        out(inner + 2, f"CTL[{PC}, lane] = pc + CTL[{BR}, lane] * gd")
        out(inner + 1, "else:")
        out(inner + 2, f"CTL[{PC}, lane] = pc + gd")
        out(inner, "break")
        out(step, f"op = PROG[{OP}, pc]")
        for local, row in _OPERAND_ROWS.items():
            out(step, f"{local} = PROG[{row}, pc]")
        out(step, "o_imm = IMM[pc]")
        out(step, "left = 0")
        out(step, "if CONTROL[op]:")
        inner = step + 1
        out(inner, "if not fresh and n < alive:  # lanes waiting here may join the group")
        self.flush(inner + 1)
        out(inner + 1, "break")
        out(inner, "dispatched += 1")
        out(inner, "m = 0")
        out(inner, "together = True")
        out(inner, "br_any = False")
        out(inner, "top = I(0)")
        out(inner, "next_pc = pc")
        out(inner, "next_d = gd")
        out(inner, "if gd > 0:")
        self.tree(self.entries(True), 1, inner + 1, control=True)
        out(inner, "else:")
        self.tree(self.entries(True), -1, inner + 1, control=True)
        out(inner, "if left == 0 and together and n == alive:")
        out(inner + 1, "pc = next_pc")
        out(inner + 1, "gd = next_d")
        out(inner + 1, "ps = I(0)")
        out(inner + 1, "pcyc = I(0)")
        out(inner + 1, "room = limit - top")
        out(inner + 1, "fresh = False")
        out(inner + 1, "continue")
        out(inner, "break  # the group parted (or some lanes stopped): pick again")
        out(step, "if gd > 0:")
        self.tree(self.entries(False), 1, step + 1, control=False)
        out(step, "else:")
        self.tree(self.entries(False), -1, step + 1, control=False)
        out(step, "dispatched += 1")
        out(step, "ps += 1")
        out(step, "pcyc += cyc")
        out(step, "fresh = False")
        out(step, "if br_any:  # lanes that jumped onto a data cell: they fault after it")
        out(step + 1, "br_any = False")
        out(step + 1, "for k in range(n):")
        out(step + 2, "lane = idx[k]")
        out(step + 2, f"if CTL[{STATUS}, lane] == {RUNNING} and CTL[{BR}, lane] != 0:")
        inner = step + 3
        out(inner, f"CTL[{STEPS}, lane] += ps")
        out(inner, f"CTL[{CYCLES}, lane] += pcyc")
        out(inner, f"CTL[{PC}, lane] = pc")
        out(inner, f"CTL[{DIR}, lane] = gd")
        out(inner, f"CTL[{FCODE}, lane] = {F_JUMP}")
        out(inner, f"CTL[{FAUX}, lane] = CTL[{BR}, lane]")
        out(inner, f"CTL[{FAUX2}, lane] = gd")
        out(inner, f"CTL[{STATUS}, lane] = {FAULTED}")
        out(inner, "left += 1")
        out(step, "if left:  # lanes that faulted or paused leave the group")
        out(step + 1, "m = 0")
        out(step + 1, "for k in range(n):")
        out(step + 2, f"if CTL[{STATUS}, idx[k]] == {RUNNING}:")
        out(step + 3, "idx[m] = idx[k]")
        out(step + 3, "m += 1")
        out(step + 1, "n = m")
        out(step + 1, "alive -= left")
        out(step + 1, "full = False")
        out(step + 1, "if n == 0:")
        out(step + 2, "break")
        out(step, "pc += gd")

    def entry_points(self) -> None:
        out = self.out
        args = ", ".join(KERNEL_ARGS)
        for name, decorator, loop in (
                ("run_parallel", "@njit(cache=True, parallel=True)", "prange"),
                ("run_serial", "@njit(cache=True, nogil=True)", "range")):
            out(0, "")
            out(0, "")
            out(0, decorator)
            out(0, f"def {name}(tiles, tile, lanes, {args}):")
            out(1, "count = tiles.shape[0]")
            out(1, "chunks = min(count, 256)")
            out(1, f"for c in {loop}(chunks):")
            out(2, "idx = np.empty(tile, dtype=np.int64)")
            out(2, "for j in range(c * count // chunks, (c + 1) * count // chunks):")
            out(3, "lo = tiles[j] * tile")
            out(3, f"tile_run(tiles[j], lo, min(lo + tile, lanes), idx, {args})")

    def source(self) -> str:
        self.tile_function()
        self.entry_points()
        constants, body = hoist_constants("\n".join(self.lines))
        control = ", ".join("True" if ins.kind in CONTROL_KINDS else "False"
                            for ins in INSTRUCTIONS)
        header = [
            f'"""revasm tile interpreter: W = {self.width}, gradient={self.gradient}, '
            f'tangent={self.tangent} (sim/tile/source.py)."""',
            *MODULE_PRELUDE,
            "#: whether each table entry decides BR or DIR (a control step)",
            f"CONTROL = np.array([{control}], dtype=np.bool_)",
            "",
            "",
            "@njit(cache=True, nogil=True)",
            "def lane_key(pc, d, cells):",
            '    """A lane\'s place in the order groups run in: forward lanes by PC, then',
            '    backward lanes by falling PC (a PC inside the program)."""',
            "    return pc if d > 0 else 2 * cells - 1 - pc",
        ]
        return "\n".join(header + constants + ["", ""]) + "\n" + body + "\n"


def tile_source(width: int, gradient: bool = False, tangent: bool = False) -> str:
    """The tile interpreter module for a width and mode (readable: one leaf per entry)."""
    return _Source(width, gradient, tangent).source()
