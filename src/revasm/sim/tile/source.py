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

import ast
import re
from collections.abc import Callable

from revasm.isa.adjoint import mode_template
from revasm.isa.fixed_point import word_format
from revasm.isa.primitives import operations
from revasm.isa.step_order import FAULTING_CALLS
from revasm.isa.table import INSTRUCTIONS
from revasm.isa.timing import step_timing
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
    CYC_BACK,
    FINISH_FLAG,
    FLAGS,
    GCYC,
    GCYC_BACK,
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
OPERAND_ROWS = {"o_a": A, "o_b": B, "o_c": C, "o_amt": AMT, "o_k": K, "o_off": OFF}
#: With regrouping on, a tile returns to the host after this many instructions in a row
#: run by groups of at most half its lanes (the host packs lanes at one PC together).
THIN_STEPS = 32
#: The arguments a data step function may take (``TileSource.data_function``: those its
#: step uses).
LEAF_ARGS = ("lo, n, idx, full, strict, ps, pcyc, pc, gd, o_a, o_b, o_c, o_amt, o_k, o_off, "
             "o_imm, R, G, T, TG, MEM, GM, TM, TGM, KEYS, CTL, OUT, OUTLEN, TAPE, TAPELEN, "
             "CODE, DENSE, dense_words, SLOTS")
#: Memory slots a step's guard keeps per lane for its fast loop (``remembered_slots``).
SLOT_COLUMNS = 4


#: (arguments: names, or calls of names such as ``U(4294967296)``)
_ARGUMENTS = r"((?:[^()]|\([^()]*\))*)"
_DIVISION = re.compile(rf"^(\s*)(\w+), \w+ = fdiv_ovf\({_ARGUMENTS}, 64\)$")
#: The names a line assigns (``x = ...``, ``q, f = ...``, ``r6 += ...``).
_ASSIGNED = re.compile(r"^\s*(\w+(?:\s*,\s*\w+)*)\s*(?:[-+*/|&^%]|<<|>>|//)?=(?!=)")
_DIVISION_CALL = re.compile(rf"\bfdiv_ovf\({_ARGUMENTS}, 64\)")


def short_divisions(lines: list[str]) -> list[str]:
    """Lines with each W = 64 division (``fdiv_ovf(x, y, 64)``, the translator's one
    division for a quotient and its overflow flag) made the division without a divide
    instruction (``vocab.fdiv_short64(x, y)``), for a fast loop whose guard admitted it."""
    return [_DIVISION_CALL.sub(r"fdiv_short64(\1)", line) for line in lines]


def short_division_checks(lines: list[str]) -> list[str]:
    """A guard's lines with, after each W = 64 division, the check that the fast loop's
    division without a divide instruction (``vocab.fdiv_short64``) gives its words: a
    lane whose quotient is too long for it sends the group to the exact loop.  The guard
    divides that way too (its quotients only feed later checks, if any).  The check adds
    to ``bad`` without a branch: with ``if not ...: bad += 1`` after each of the gradient
    mode's three divisions (ADDDIV's quotient, ``1/c`` and ``-(b/c)/c``) LLVM left the
    guard scalar -- 4.6 ns a lane against 1.5 (``docs/decisions.md``).  A division of an
    earlier division's quotient (``-(b/c)/c``) is admitted from the lengths of that one's
    operands (``vocab.fdiv_chain_ok64``), so no quotient feeds a check and LLVM drops the
    guard's divisions: the gradient pass's ADDDIV then divides three times a lane, not
    four."""
    out = []
    operands: dict[str, str] = {}  # a guard division's quotient -> its operands
    for line in lines:
        found = _DIVISION.match(line)
        out.append(short_divisions([line])[0] if found else line)
        assigned = _ASSIGNED.match(line)
        if assigned:  # a quotient whose operands (or name) change: their lengths are gone
            names = set(re.findall(r"\w+", assigned[1]))
            operands = {q: args for q, args in operands.items()
                        if q not in names and not names & set(re.findall(r"\w+", args))}
        if not found:
            continue
        dividend, divisor = _split_arguments(found[3])
        check = f"fdiv_short_ok64({found[3]})"
        if dividend in operands:
            check = f"fdiv_chain_ok64({operands[dividend]}, {divisor})"
        out.append(f"{found[1]}bad += 0 if {check} else 1")
        operands[found[2]] = found[3]
    return out


def _split_arguments(text: str) -> tuple[str, str]:
    """A division's two arguments (``x, y``: names or calls such as ``U(4294967296)``)."""
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            return text[:position].strip(), text[position + 1:].strip()
    raise ValueError(f"not two arguments: {text!r}")


_SLOT = re.compile(r"^(\s*)(_slot\d+) = window_slot\(.*\)$")
_DENSE_SLOT = re.compile(r"^(\s*)(_slot\d+) = DENSE\[\w+\]$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index of the first line after ``start`` indented at most ``indent`` (or the end),
    an ``else`` of the ``if`` at ``start`` part of its block."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent
                                or lines[end].strip().startswith(("else:", "elif "))):
        end += 1
    return end


def remembered_slots(guard: list[str], fast: list[str]
                     ) -> tuple[list[str], list[str], list[str] | None]:
    """A guard that keeps each memory slot it looks up (``SLOTS[k, i]``: the i-th look-up
    for the group's k-th lane) and counts in ``varied`` the lanes whose slot is not lane
    ``lo``'s; a fast loop that takes them instead of looking them up again (the guard looks
    up the same addresses first: its statements are the step's first ones, translated
    alike, and the look-up is a hash and a probe per lane); and, when every look-up is the
    translator's ``DENSE`` or ``window_slot`` choice, the *uniform* fast loop, for a guard
    that found one slot per look-up on every lane (``varied == 0``: lanes in lockstep at
    one address, J2's stack): each slot the scalar ``SLOT<i>``, so a word of memory across
    the tile is a contiguous row and LLVM vectorises the loop (scattered rows kept it
    scalar: EXCH 4.9 ns a lane in the gradient pass, 2.9 uniform)."""
    kept: list[str] = []
    index: dict[str, int] = {}
    pending: list[tuple[int, str]] = []  # (indent of the look-up's if, slot): count after it
    for position, line in enumerate(guard):
        while pending and line.strip() and _indent(line) <= pending[-1][0] and \
                not line.strip().startswith(("else:", "elif ")):
            depth, name = pending.pop()
            kept.append(f"{' ' * depth}varied += 0 if {name} == SLOTS[0, {index[name]}] else 1")
        kept.append(line)
        found = _SLOT.match(line) or _DENSE_SLOT.match(line)
        if found:
            name = found[2]
            if name not in index:
                index[name] = len(index)
            kept.append(f"{found[1]}SLOTS[k, {index[name]}] = {name}")
            if _DENSE_SLOT.match(line) and position > 0:
                pending.append((_indent(guard[position - 1]), name))
    for depth, name in reversed(pending):
        kept.append(f"{' ' * depth}varied += 0 if {name} == SLOTS[0, {index[name]}] else 1")
    if len(index) > SLOT_COLUMNS:
        raise ValueError(f"a step looks up {len(index)} memory slots, more than {SLOT_COLUMNS}")
    # the fast loop's look-ups, in the guard's order (the translator names them anew)
    order: dict[str, int] = {}
    for line in fast:
        found = _SLOT.match(line) or _DENSE_SLOT.match(line)
        if found and found[2] not in order and len(order) < len(index):
            order[found[2]] = len(order)
    index = order
    taken = []
    for line in fast:
        found = _SLOT.match(line)
        if found and found[2] in index:
            line = f"{found[1]}{found[2]} = SLOTS[k, {index[found[2]]}]"
        taken.append(line)
    uniform: list[str] | None = []
    position = 0
    covered = set()
    while uniform is not None and position < len(fast):
        line = fast[position]
        following = fast[position + 1] if position + 1 < len(fast) else ""
        found = _DENSE_SLOT.match(following)
        if line.strip().startswith("if ") and found and found[2] in index:
            end = _block_end(fast, position, _indent(line))
            block = "\n".join(fast[position:end])
            if not re.search(rf"\b{found[2]} = window_slot\(", block):
                uniform = None
                break
            uniform.append(f"{' ' * _indent(line)}{found[2]} = SLOT{index[found[2]]}")
            covered.add(found[2])
            position = end
            continue
        uniform.append(line)
        position += 1
    if not index or covered != set(index):
        uniform = None
    return kept, taken, uniform


_CODE_CHECK = re.compile(r"^if (_w\d+) < U\(CODE_LENGTH\) and CODE\[\1\]:$")
_DENSE_CHOICE = re.compile(r"^if (_w\d+) < U\(DENSE_LENGTH\):$")
_ADDRESS = re.compile(r"^_\w+ = [^=]*$")


def shared_slot_check(guard: list[str]) -> list[str] | None:
    """For a guard (``remembered_slots``') of one memory look-up and nothing else that
    could stop a lane: lines that run it for lane ``lo`` alone, then count in ``differ``
    the lanes that would not find the same slot -- another address word, or, for a table
    slot, a table without the word there (a table has no deletions: a word stored at a slot
    is found there) -- in a loop without a probe, which LLVM vectorises.  ``differ == 0``:
    every lane's look-up is lane ``lo``'s (``SLOTS[0, 0]``, already in its table) and none
    faults, so the uniform fast loop may run with no per-lane look-up at all (J2's stack in
    the gradient pass: EXCH 2.9 -> 1.0 ns a lane); a word new to a lane's table counts as
    found when the lane would insert it at lane ``lo``'s slot (``_SHARED_INSERT``: J2's
    forward pushes).  None when the guard is anything else."""
    stripped = [line.strip() for line in guard]
    if sum("window_slot(" in line for line in stripped) != 1:
        return None
    choices = [(i, found) for i, line in enumerate(stripped)
               if (found := _DENSE_CHOICE.match(line)) is not None]
    if len(choices) != 1 or _indent(guard[choices[0][0]]) != 0:
        return None
    choice, word = choices[0][0], choices[0][1][1]
    end = _block_end(guard, choice, 0)
    address, position = [], 0
    while position < choice:  # the address word's lines, then only its CODE check
        line = stripped[position]
        found = _CODE_CHECK.match(line)
        if found and found[1] == word and stripped[position + 1] == "bad += 1" and \
                position + 2 == choice:
            break
        if _indent(guard[position]) or not _ADDRESS.match(line) or "bad" in line or \
                "SLOTS" in line:
            return None
        address.append(line)
        position += 1
    if not address or any("bad" in line or "SLOTS" in line for line in stripped[end:]
                          if not line.startswith("varied += ")):
        return None
    block = "\n".join(stripped[choice:end])
    if block.count("bad += 1") != 1:
        return None
    limit = "MEM.shape[1] - KEYS.shape[1]"  # the table's first slot
    out = ["bad = 0", "varied = 0", "k = 0", "lane = U(lo)", *guard,
           "differ = bad + varied  # lane lo faults or needs room: no shared slot",
           "if differ == 0:",
           f"    W0 = {word}",
           "    S0 = SLOTS[0, 0]",
           f"    if W0 < U(DENSE_LENGTH) or S0 < {limit}:  # the word decides the slot",
           "        for k in range(n):",
           "            lane = U(lo + k)",
           *[f"            {line}" for line in address],
           f"            differ += 0 if {word} == W0 else 1",
           "    else:  # a table slot: every lane's table holds the word there, or gets it",
           "        K0 = table_key(W0)",
           f"        ROW = S0 - ({limit})",
           "        for k in range(n):",
           "            lane = U(lo + k)",
           *[f"            {line}" for line in address],
           f"            differ += 0 if {word} == W0 and (KEYS[lane, ROW] == K0 "
           "or KEYS[lane, ROW] == EMPTY) else 1",
           *_SHARED_INSERT]
    return out


#: ``shared_slot_check``'s lines for a word new to some lanes' tables (J2's forward pushes:
#: lanes in lockstep insert the same words in the same order, so their tables are alike).
#: Lane lo's look-up has just put the word at ``ROW``; a lane whose slot ``ROW`` is empty
#: puts it there too when its probe passes the same keys on the way (lane lo's cells from
#: the probe's start up to ``ROW``: none empty, none the word) -- the slot ``find_slot``
#: would give it.  Only when every lane qualifies is the word stored in every table, and
#: the uniform loop runs; otherwise nothing is written and the per-lane guard inserts it.
_SHARED_INSERT = [
    "        if differ == 0:  # each probe passes lane lo's keys before ROW",
    "            MASK = KEYS.shape[1] - 1",
    "            j = I(probe_start(K0, KEYS.shape[1]))",
    "            while j != ROW:",
    "                P = KEYS[U(lo), j]",
    "                for k in range(n):",
    "                    differ += 0 if KEYS[U(lo + k), j] == P else 1",
    "                j = (j + 1) & MASK",
    "        if differ == 0:",
    "            for k in range(n):",
    "                KEYS[U(lo + k), ROW] = K0"]


#: A branch function's arguments (``TileSource.branch_function``).
BRANCH_ARGS = "lo, n, idx, full, o_a, o_b, o_off, R, CTL"


def branch_name(number: int, direction: int) -> str:
    """The name of a branch's every-lane function for a direction."""
    return f"branch_{INSTRUCTIONS[number].mnemonic.lower()}_{'f' if direction > 0 else 'b'}"


def step_name(number: int, direction: int) -> str:
    """The name of a data entry's step function for a direction."""
    return f"step_{INSTRUCTIONS[number].mnemonic.lower()}_{'f' if direction > 0 else 'b'}"


#: The calls whose fault checks a fast loop's guard runs first (``overflow`` faults only
#: on a strict machine, which runs no fast loop).
GUARDED_CALLS = FAULTING_CALLS - {"overflow"}
#: The calls a guard must not make on a word its check found outside their domain.
DOMAIN_CALLS = frozenset({"fn_log", "fn_sqrt", "fn_pow"})
#: The function unit's calls (the elementary functions, the rotations): a step that makes one
#: runs only the lane-by-lane loop (``TileSource.data_function``) -- each is a scalar call per
#: lane, which no vector loop speeds up, and the guard and fast loop would triple the step's
#: code that numba compiles (a third of the tile interpreter's compile time).
SCALAR_CALLS = frozenset(operations("function"))
#: The function unit's rotations: by an angle the tile's lanes share, one plan serves every
#: lane and the shears run as vector code (``TileSource.shared_angles``).
ROTATION_CALLS = frozenset({"rot", "irot"})
#: Table entries whose step decides BR or DIR (executed with the come-from check).
CONTROL_KINDS = ("branch", "rbra", "swapbr")
#: ``tile_run`` compiles with numba's ``error_model="numpy"``: its default checks every
#: float division inlined into a loop (``vocab.fdiv_ovf64``) for a zero divisor, a branch
#: out of the loop that keeps LLVM from vectorising it; the kernel itself divides nothing.
#: The vocabulary the tile kernels call: the compiled engine's scalar functions, with the
#: tile engine's own versions of those it replaces (``vocab.py``) imported after them.
MODULE_PRELUDE = (
    "import numpy as np",
    "from numba import njit, prange",
    "from revasm.sim.compiled.vocab import *  # noqa: F401,F403 - the vocabulary",
    "from revasm.sim.compiled.overflow import *  # noqa: F401,F403 - its ovf_* names",
    "from revasm.sim.compiled.timing import *  # noqa: F401,F403 - the unit timers",
    "from revasm.sim.tile.vocab import *  # noqa: F401,F403 - the tile engine's versions",
    "from revasm.sim.compiled.pipeline import KernelCompiler",
    "",
    "U = np.uint64",
    "I = np.int64",
)


def cycle_count(gradient: bool, pc: str = "pc") -> str:
    """The kernel expression of the fixed cycles the instruction at ``pc`` adds to a lane's
    count (``isa/timing``, decoded into ``PROG``): the column of the group's direction
    ``gd`` in this kernel's mode.  The operand-dependent part (the function unit's calls)
    each step function adds per lane (``TileSource.timed_cycles``)."""
    forward, backward = (GCYC, GCYC_BACK) if gradient else (CYC, CYC_BACK)
    return f"(PROG[{pc}, {forward}] if gd > 0 else PROG[{pc}, {backward}])"


class TileSource:
    def __init__(self, width: int, gradient: bool, tangent: bool) -> None:
        fmt = word_format(width)
        self.width, self.gradient, self.tangent = width, gradient, tangent
        self.translator = Translator(width, {"M": fmt.mask, "W": fmt.width,
                                             "F": fmt.frac_bits, "one": fmt.one})
        self.translator.operands = {value.code: value for value in _OPERANDS.values()}
        self.lines: list[str] = []
        #: each data step function's arguments, by (entry, direction)
        self.leaf_params: dict[tuple[int, int], list[str]] = {}

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

    def body(self, number: int, direction: int, text: str | None = None,
             exits: list[str] | None = None) -> list[str]:
        """The translated step of one entry for the lane ``lane`` (or only ``text``, part of
        it), with the per-lane words the translator keeps in locals (OV, the output log's
        and tape's lengths) loaded before and stored after.  ``exits``: the lines a fault
        or a pause runs instead of leaving the group (a guard's ``bad += 1``, or ``pass``
        where a guard has ruled them out)."""
        leave_fault = (lambda code, aux: self.leave(code, aux, FAULTED)) if exits is None \
            else (lambda code, aux: exits)
        leave_room = (lambda code, aux: self.leave(100 + code, aux, NEEDS_ROOM)) \
            if exits is None else (lambda code, aux: exits)
        lines = self.translator.statement(
            self.template(number, direction) if text is None else text,
            exit=leave_fault, room=leave_room)
        if text is None:  # the whole step: its unit calls' operand-dependent cycles
            lines = lines + self.timed_cycles(number, direction)
        joined = "\n".join(lines)
        before, after = [], []
        if "ov0" in joined:
            before.append(f"ov0 = U(CTL[{OVERFLOWS}, lane])")
            after.append(f"CTL[{OVERFLOWS}, lane] = I(ov0)")
        for name, array in (("outlen", "OUTLEN"), ("tapelen", "TAPELEN")):
            if name in joined:
                before.append(f"{name} = {array}[lane]")
                after.append(f"{array}[lane] = {name}")
        return before + (lines or ["pass"]) + after

    def timed_cycles(self, number: int, direction: int) -> list[str]:
        """The lines that add a step's operand-dependent cycles (``isa/timing``: the unit
        calls whose time depends on the words, from registers the step does not write) to
        its lane's count, after the step -- the fixed part is the group's ``pcyc``."""
        timing = step_timing(INSTRUCTIONS[number], direction < 0, self.gradient, self.width)
        if not timing.timed:
            return []
        lines = self.translator.cycles(timing.expression(
            {name: value.code for name, value in _OPERANDS.items()}))
        *setup, last = lines
        stem = last.lstrip()
        assert stem.startswith("cycles += "), last
        indent = last[:len(last) - len(stem)]
        return [*setup, f"{indent}CTL[{CYCLES}, lane] += {stem[len('cycles += '):]}"]

    def data_function(self, number: int, direction: int) -> None:
        """A data entry's step over a group, as a function of its own (``step_name``): a
        small function LLVM optimises alone, where the tile interpreter's one large
        function defeated its vectoriser.  A group of the whole tile, not strict, runs the
        *fast* loop -- the step with its fault checks ruled out beforehand by a loop of the
        template's guard (``guard``), so no lane leaves it and LLVM vectorises it where the
        template allows; any other group (or a guard that found a lane that faults or needs
        room) runs the loop over the lanes ``idx`` lists, where a lane can leave.  Returns
        how many lanes left the group."""
        outer = self.lines
        self.lines = []
        out = self.out
        indent = 1
        guard = None if self.calls(number, direction) & SCALAR_CALLS \
            else self.guard(number, direction)
        if guard is not None:
            out(indent, "fast = full and not strict")
            fast_lines = self.body(number, direction, exits=["pass"])
            if guard:
                # a lane found to fault stops its guard there where the guard goes on to a
                # function that must not see words outside its domain (the elementary
                # functions); a guard of divisions and memory look-ups only (both take any
                # word) runs on without a branch, so LLVM vectorises it
                partial = {node.func.id for node in ast.walk(ast.parse(guard))
                           if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
                stop = ["continue"] if partial & DOMAIN_CALLS else []
                guard_lines = self.body(number, direction, guard, ["bad += 1", *stop])
                if self.width == 64:  # the fast loop divides without a divide instruction
                    guard_lines = short_division_checks(guard_lines)
                    fast_lines = short_divisions(fast_lines)
                guard_lines, fast_lines, uniform = remembered_slots(guard_lines, fast_lines)
                slots = "varied" in "\n".join(guard_lines)
                shared = None if uniform is None else shared_slot_check(guard_lines)
                if shared is not None and uniform is not None:
                    out(indent, "differ = 1")
                    out(indent, "if fast:  # lane lo's look-up: do all lanes share its slot?")
                    self.outs(indent + 1, shared)
                    out(indent, "if fast and differ == 0:  # one slot, no fault: contiguous rows")
                    self.out_uniform(indent, uniform)
                out(indent, "if fast:  # the guard: would any lane fault or need room?")
                out(indent + 1, "bad = 0  # a count: LLVM vectorises a sum, not a flag")
                if slots:
                    out(indent + 1, "varied = 0  # lanes whose memory slots are not lane lo's")
                out(indent + 1, "for k in range(n):")
                out(indent + 2, "lane = U(lo + k)")
                self.outs(indent + 2, guard_lines)
                out(indent + 1, "fast = bad == 0")
                if uniform is not None:
                    out(indent, "if fast and varied == 0:  # one slot per look-up: contiguous rows")
                    self.out_uniform(indent, uniform)
            out(indent, "if fast:  # every lane of the tile, no exits: vector code")
            out(indent + 1, "for k in range(n):")
            out(indent + 2, "lane = U(lo + k)  # (unsigned: no wraparound, so LLVM vectorises)")
            self.outs(indent + 2, fast_lines)
            out(indent + 1, "return left")
        self.translator.hoisted = [] if guard is None else None
        if guard is None and self.calls(number, direction) & SCALAR_CALLS <= ROTATION_CALLS:
            self.shared_angles(number, direction, indent)
        lane_lines = self.body(number, direction)
        self.outs(indent, self.translator.hoisted or [])
        self.translator.hoisted = None
        out(indent, "for k in range(n):")
        out(indent + 1, "lane = U(idx[k])")
        self.outs(indent + 1, lane_lines)
        out(indent, "return left")
        body, self.lines = self.lines, outer
        # only the arguments the step uses: a call passes every array as a structure
        text = "\n".join(body)
        needed = {"lo", "n", "idx"}
        for local, argument in (("CODE_LENGTH", "CODE"), ("DENSE_LENGTH", "DENSE"),
                                ("DENSE_WORDS", "dense_words")):
            if local in text:
                needed.add(argument)
        params = [name for name in LEAF_ARGS.split(", ")
                  if name in needed or re.search(rf"\b{name}\b", text)]
        self.leaf_params[(number, direction)] = params
        ins = INSTRUCTIONS[number]
        arrow = "forward" if direction > 0 else "backward"
        out(0, f"@njit({INNER_JIT}, error_model='numpy')")
        out(0, f"def {step_name(number, direction)}({', '.join(params)}):")
        out(1, f'"""{ins.mnemonic}, {arrow}."""')
        if "CODE_LENGTH" in text:
            out(1, "CODE_LENGTH = CODE.shape[0]")
        if "DENSE_LENGTH" in text:
            out(1, "DENSE_LENGTH = DENSE.shape[0]")
        if "DENSE_WORDS" in text:
            out(1, "DENSE_WORDS = dense_words")
        out(1, "left = 0")
        self.lines += body
        out(0, "")
        out(0, "")

    def shared_angles(self, number: int, direction: int, indent: int) -> None:
        """A rotation step's loop for a tile whose lanes share every angle (a network's
        parameters): a count of the lanes whose angle word is not lane ``lo``'s, then, when
        none differs (the group the whole tile, not strict), each plan and each angle's
        operand-dependent cycles worked out once before the loop, and the shears over the
        tile with no plan to check (``vocab.rot_planned`` and its kin, products from limbs,
        no branch: vector code).  Otherwise the exact loop re-plans where an angle
        changes."""
        lines = self.body(number, direction, exits=["pass"])
        self.translator.hoisted = []  # (the exact loop's own plans are hoisted after this)
        angles: dict[str, str] = {}  # angle expression -> its local
        plans: list[str] = []
        loop: list[str] = []
        k = 0
        while k < len(lines):
            found = re.fullmatch(r"(\s*)if (.+) != (_angle\d+):", lines[k])
            if found is None:
                loop.append(lines[k])
                k += 1
                continue
            _, expression, local = found.groups()
            first = angles.setdefault(expression, f"_first{len(angles)}")
            plans += [f"{local} = {first}", lines[k + 2].strip()]
            k += 3
        if not angles or any(f"{expression} =" in line for line in loop
                             for expression in angles):
            return  # (an angle the step writes: the table's ``distinct`` rules it out)
        timers: dict[str, str] = {}
        for position, line in enumerate(loop):
            for expression in angles:
                for timer in re.findall(rf"cycles_i?rot\({re.escape(expression)}, \d+\)", line):
                    local = timers.setdefault(timer, f"_cycles{len(timers)}")
                    line = line.replace(timer, local)
            loop[position] = line
        out = self.out
        out(indent, "if full and not strict:  # do the lanes share their angles?")
        out(indent + 1, "lane = U(lo)")
        for expression, first in angles.items():
            out(indent + 1, f"{first} = {expression}")
        out(indent + 1, "differ = 0  # a count: LLVM vectorises a sum, not a flag")
        out(indent + 1, "for k in range(n):")
        out(indent + 2, "lane = U(lo + k)")
        for expression, first in angles.items():
            out(indent + 2, f"differ += 1 if {expression} != {first} else 0")
        out(indent + 1, "if differ == 0:  # one plan per angle for the tile: vector code")
        out(indent + 2, "lane = U(lo)")
        self.outs(indent + 2, plans)
        for timer, local in timers.items():
            out(indent + 2, f"{local} = {timer}")
        out(indent + 2, "for k in range(n):")
        out(indent + 3, "lane = U(lo + k)")
        self.outs(indent + 3, loop)
        out(indent + 2, "return left")

    def out_uniform(self, indent: int, uniform: list[str]) -> None:
        """The uniform fast loop (``remembered_slots``), inside its ``if``: each look-up's
        slot lane ``lo``'s, a scalar."""
        for column in range(SLOT_COLUMNS):
            if f"SLOT{column}" in "\n".join(uniform):
                self.out(indent + 1, f"SLOT{column} = SLOTS[0, {column}]")
        self.out(indent + 1, "for k in range(n):")
        self.out(indent + 2, "lane = U(lo + k)")
        self.outs(indent + 2, uniform)
        self.out(indent + 1, "return left")

    def guard(self, number: int, direction: int) -> str | None:
        """The part of an entry's step up to its last fault check (``""``: none), which
        writes nothing (``isa/step_order.py``'s order); None when the step has a device
        that writes before its check (SHOW, EMIT), so it has no fast loop."""
        statements = ast.parse(self.template(number, direction)).body
        last = -1
        for position, statement in enumerate(statements):
            names = {node.func.id for node in ast.walk(statement)
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
            if names & {"show", "emit", "unemit"}:
                return None
            if names & GUARDED_CALLS:
                last = position
        guard = statements[:last + 1]
        if not all(isinstance(s, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id.startswith("_") for t in s.targets)
                for s in guard):
            return None
        return "\n".join(ast.unparse(s) for s in guard)

    def calls(self, number: int, direction: int) -> set[str]:
        """The names an entry's step calls (its template for the direction and mode)."""
        return {node.func.id for node in ast.walk(ast.parse(self.template(number, direction)))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}

    def control_leaf(self, number: int, direction: int, indent: int) -> None:
        """A control entry: each lane's BR (and DIR) through the template, the come-from
        check (a landing that does not catch its jump faults after executing, its effects
        kept, as the reference's), the lane's next PC, and whether the group stays together."""
        out = self.out
        out(indent, "for k in range(n):")
        inner = indent + 1
        out(inner, "lane = U(idx[k])")
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

    def tree(self, numbers: list[int], direction: int, indent: int,
             leaf: Callable[[int, int, int], None]) -> None:
        """The entries' leaves, chosen by ``op`` through a binary tree of comparisons."""
        if len(numbers) > 2:
            middle = len(numbers) // 2
            self.out(indent, f"if op < {numbers[middle]}:")
            self.tree(numbers[:middle], direction, indent + 1, leaf)
            self.out(indent, "else:")
            self.tree(numbers[middle:], direction, indent + 1, leaf)
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
            leaf(number, direction, inner)

    def data_call(self, number: int, direction: int, indent: int) -> None:
        """A data entry's leaf: its step function over the group (``data_function``)."""
        params = ", ".join(self.leaf_params[(number, direction)])
        self.out(indent, f"left = {step_name(number, direction)}({params})")

    def branch_function(self, number: int, direction: int) -> None:
        """A branch over a group of every running lane of the tile, without writes, as a
        function of its own (``branch_name``; a small function LLVM vectorises): each lane's
        BR after it, and the least and greatest of them and how many lanes landed without
        being caught.  Lanes that all go one way (the usual case) then move on as one: the
        group goes on, its counts pending, no per-lane PC."""
        out = self.out
        lines = self.translator.statement(
            self.template(number, direction),
            exit=lambda code, aux: ["pass"], room=lambda code, aux: ["pass"])
        ins = INSTRUCTIONS[number]
        arrow = "forward" if direction > 0 else "backward"
        out(0, f"@njit({INNER_JIT}, error_model='numpy')")
        out(0, f"def {branch_name(number, direction)}({BRANCH_ARGS}):")
        out(1, f'"""{ins.mnemonic}, {arrow}, every lane at once: (least BR, greatest BR, '
               'uncaught landings)."""')
        out(1, "lowest = I(1) << 62")
        out(1, "highest = -lowest")
        out(1, "uncaught = 0")
        for loop, lane in (("if full:", "U(lo + k)"), ("else:", "U(idx[k])")):
            out(1, loop)
            out(2, "for k in range(n):")
            out(3, f"lane = {lane}")
            out(3, f"br_in = CTL[{BR}, lane]")
            out(3, "br = br_in")
            self.outs(3, lines)
            out(3, "lowest = min(lowest, br)")
            out(3, "highest = max(highest, br)")
            out(3, "uncaught += 1 if br_in != 0 and br != 0 else 0")
        out(1, "return lowest, highest, uncaught")
        out(0, "")
        out(0, "")

    def branch_call(self, number: int, direction: int, indent: int) -> None:
        self.out(indent, f"lowest, highest, uncaught = {branch_name(number, direction)}"
                         f"({BRANCH_ARGS})")

    @staticmethod
    def branches() -> list[int]:
        return [number for number, ins in enumerate(INSTRUCTIONS) if ins.kind == "branch"]

    def entries(self, control: bool) -> list[int]:
        return [number for number, ins in enumerate(INSTRUCTIONS)
                if (ins.kind in CONTROL_KINDS) == control and ins.kind not in ("start", "finish")]

    # --- the tile's rounds --------------------------------------------------------------------

    def flush(self, indent: int, extra_steps: str = "", extra_cycles: str = "") -> None:
        """The group's lanes take their pending counts, PC and DIR (the group ends)."""
        out = self.out
        out(indent, "for k in range(n):")
        out(indent + 1, "lane = U(lo + k) if full else U(idx[k])  # (full: contiguous lanes)")
        out(indent + 1, f"CTL[{STEPS}, lane] += ps{extra_steps}")
        out(indent + 1, f"CTL[{CYCLES}, lane] += pcyc{extra_cycles}")
        out(indent + 1, f"CTL[{PC}, lane] = pc")
        out(indent + 1, f"CTL[{DIR}, lane] = gd")

    def tile_function(self) -> None:
        out = self.out
        args = ", ".join(KERNEL_ARGS)
        out(0, f"@njit({INNER_JIT}, error_model='numpy')")
        out(0, f"def tile_run(t, lo, hi, idx, SLOTS, {args}):")
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
        out(body, "n = 0")
        out(body, "br_any = False")
        out(body, "top = I(0)")
        out(body, "# first, in one vector pass: is every lane running at lane lo's (DIR, PC)?")
        out(body, "whole = 0")
        out(body, "jumps = 0")
        out(body, f"pc = CTL[{PC}, lo]")
        out(body, f"gd = CTL[{DIR}, lo]")
        self.whole_tile(body)
        out(body, "if whole == size:  # one group, the whole tile, in lane order")
        out(body + 1, "alive = size")
        out(body + 1, "n = size")
        out(body + 1, "br_any = jumps != 0")
        out(body + 1, "for k in range(n):")
        out(body + 2, "idx[k] = lo + k")
        out(body, "else:")
        out(body + 1, "top = I(0)")
        self.pick_lanes(body + 1)
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
        out(body, "if n == 0:  # the lanes of the first (DIR, PC)")
        out(body + 1, "for j in range(lo, hi):")
        out(body + 2, f"if CTL[{STATUS}, j] == {RUNNING} and "
                      f"lane_key(CTL[{PC}, j], CTL[{DIR}, j], cells) == best:")
        out(body + 3, "idx[n] = j")
        out(body + 3, "n += 1")
        out(body + 3, f"if CTL[{BR}, j] != 0:")
        out(body + 4, "br_any = True")
        out(body + 3, f"if CTL[{STEPS}, j] > top:")
        out(body + 4, f"top = CTL[{STEPS}, j]")
        self.group_start(body)

    def whole_tile(self, indent: int) -> None:
        """One vector pass over the tile's control rows: ``whole`` counts the lanes running
        at lane ``lo``'s PC and DIR (``pc``, ``gd``), ``jumps`` those with a jump pending,
        ``top`` the most steps any has taken (the interpreter's group pick and the
        per-program walker's entry, ``fused.py``, both start from it)."""
        out = self.out
        out(indent, f"if CTL[{STATUS}, lo] == {RUNNING} and pc >= 0 and pc < cells:")
        out(indent + 1, "for j in range(lo, hi):  # (counts and a maximum: LLVM vectorises them)")
        out(indent + 2, f"whole += 1 if CTL[{STATUS}, j] == {RUNNING} and CTL[{PC}, j] == pc "
                        f"and CTL[{DIR}, j] == gd else 0")
        out(indent + 2, f"jumps += 1 if CTL[{BR}, j] != 0 else 0")
        out(indent + 2, f"top = max(top, CTL[{STEPS}, j])")

    def pick_lanes(self, body: int) -> None:
        """The first scan of a tile whose lanes part: fault the lanes outside the code,
        count the running ones, find the first (DIR, PC)."""
        out = self.out
        out(body, "for j in range(lo, hi):")
        out(body + 1, f"if CTL[{STATUS}, j] != {RUNNING}:")
        out(body + 2, "continue")
        out(body + 1, f"if CTL[{PC}, j] < 0 or CTL[{PC}, j] >= cells:  # it faults here")
        out(body + 2, f"CTL[{FCODE}, j] = {F_STEPS} if CTL[{STEPS}, j] >= limit "
                      f"else {F_ILLEGAL}")
        out(body + 2, f"CTL[{STATUS}, j] = {FAULTED}")
        out(body + 2, "continue")
        out(body + 1, "alive += 1")
        out(body + 1, f"key = lane_key(CTL[{PC}, j], CTL[{DIR}, j], cells)")
        out(body + 1, "if key < best:")
        out(body + 2, "best = key")

    def group_start(self, body: int) -> None:
        """A picked group's run: its instructions until it parts, stops or halts."""
        out = self.out
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
        out(step + 2, "lane = U(idx[k])")
        out(step + 2, f"if CTL[{STEPS}, lane] >= limit:")
        out(step + 3, f"CTL[{FCODE}, lane] = {F_STEPS}")
        out(step + 3, f"CTL[{STATUS}, lane] = {FAULTED}")
        out(step + 1, "break")
        out(step, f"if pc < 0 or pc >= cells or PROG[pc, {FLAGS}] & {ILLEGAL_FLAG}:")
        self.flush(step + 1)
        out(step + 1, "for k in range(n):")
        out(step + 2, f"CTL[{FCODE}, idx[k]] = {F_ILLEGAL}")
        out(step + 2, f"CTL[{STATUS}, idx[k]] = {FAULTED}")
        out(step + 1, "break")
        out(step, f"flags = PROG[pc, {FLAGS}]")
        out(step, f"cyc = {cycle_count(self.gradient)}")
        out(step, f"if flags & {START_FLAG | FINISH_FLAG}:")
        # START and FINISH: not come-from checked; they halt keeping BR (a jump onto
        # FINISH) or pass it on to the next landing, as the reference's.
        inner = step + 1
        out(inner, "dispatched += 1")
        out(inner, f"halt = (gd > 0 and flags & {FINISH_FLAG} != 0) or "
                   f"(gd < 0 and flags & {START_FLAG} != 0)")
        out(inner, "if not halt and not br_any:  # every lane on to the next cell: go on")
        out(inner + 1, "ps += 1")
        out(inner + 1, "pcyc += cyc")
        out(inner + 1, "pc += gd")
        out(inner + 1, "fresh = False")
        out(inner + 1, "continue")
        self.flush(inner, " + 1", " + cyc")
        out(inner + 1, "if halt:")
        out(inner + 2, f"CTL[{STATUS}, lane] = {HALTED}")
        out(inner + 1, f"elif CTL[{BR}, lane] != 0:")
        out(inner + 2, f"CTL[{PC}, lane] = pc + CTL[{BR}, lane] * gd")
        out(inner + 1, "else:")
        out(inner + 2, f"CTL[{PC}, lane] = pc + gd")
        out(inner, "break")
        out(step, f"op = PROG[pc, {OP}]")
        for local, row in OPERAND_ROWS.items():
            out(step, f"{local} = PROG[pc, {row}]")
        out(step, "o_imm = IMM[pc]")
        out(step, "left = 0")
        out(step, "if CONTROL[op]:")
        inner = step + 1
        out(inner, "if not fresh and n < alive:  # lanes waiting here may join the group")
        self.flush(inner + 1)
        out(inner + 1, "break")
        out(inner, "dispatched += 1")
        out(inner, "if BRANCH[op] and n == alive:  # every running lane: one way for all?")
        branch = inner + 1
        out(branch, "if gd > 0:")
        self.tree(self.branches(), 1, branch + 1, self.branch_call)
        out(branch, "else:")
        self.tree(self.branches(), -1, branch + 1, self.branch_call)
        out(branch, "if lowest == highest and uncaught == 0:")
        out(branch + 1, "if full and (lowest != 0 or br_any):  # (contiguous: a vector store)")
        out(branch + 2, "for k in range(n):")
        out(branch + 3, f"CTL[{BR}, U(lo + k)] = lowest")
        out(branch + 1, "elif lowest != 0 or br_any:")
        out(branch + 2, "for k in range(n):")
        out(branch + 3, f"CTL[{BR}, U(idx[k])] = lowest")
        out(branch + 1, "br_any = lowest != 0")
        out(branch + 1, "pc = pc + lowest * gd if lowest != 0 else pc + gd")
        out(branch + 1, "ps += 1")
        out(branch + 1, "pcyc += cyc")
        out(branch + 1, "fresh = False")
        out(branch + 1, "continue")
        out(inner, "m = 0")
        out(inner, "together = True")
        out(inner, "br_any = False")
        out(inner, "top = I(0)")
        out(inner, "next_pc = pc")
        out(inner, "next_d = gd")
        out(inner, "if gd > 0:")
        self.tree(self.entries(True), 1, inner + 1, self.control_leaf)
        out(inner, "else:")
        self.tree(self.entries(True), -1, inner + 1, self.control_leaf)
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
        self.tree(self.entries(False), 1, step + 1, self.data_call)
        out(step, "else:")
        self.tree(self.entries(False), -1, step + 1, self.data_call)
        out(step, "dispatched += 1")
        out(step, "ps += 1")
        out(step, "pcyc += cyc")
        out(step, "fresh = False")
        out(step, "if br_any:  # lanes that jumped onto a data cell: they fault after it")
        out(step + 1, "br_any = False")
        out(step + 1, "for k in range(n):")
        out(step + 2, "lane = U(idx[k])")
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
            out(2, f"SLOTS = np.empty((tile, {SLOT_COLUMNS}), dtype=np.int64)")
            out(2, "for j in range(c * count // chunks, (c + 1) * count // chunks):")
            out(3, "lo = tiles[j] * tile")
            out(3, f"tile_run(tiles[j], lo, min(lo + tile, lanes), idx, SLOTS, {args})")

    def source(self) -> str:
        for direction in (1, -1):
            for number in self.entries(False):
                self.data_function(number, direction)
            for number in self.branches():
                self.branch_function(number, direction)
        self.tile_function()
        self.entry_points()
        constants, body = hoist_constants("\n".join(self.lines))
        control = ", ".join("True" if ins.kind in CONTROL_KINDS else "False"
                            for ins in INSTRUCTIONS)
        branch = ", ".join("True" if ins.kind == "branch" else "False" for ins in INSTRUCTIONS)
        header = [
            f'"""revasm tile interpreter: W = {self.width}, gradient={self.gradient}, '
            f'tangent={self.tangent} (sim/tile/source.py)."""',
            *MODULE_PRELUDE,
            "#: whether each table entry decides BR or DIR (a control step), is a branch",
            f"CONTROL = np.array([{control}], dtype=np.bool_)",
            f"BRANCH = np.array([{branch}], dtype=np.bool_)",
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
    return TileSource(width, gradient, tangent).source()
