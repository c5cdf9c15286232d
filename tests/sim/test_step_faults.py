"""A faulting instruction has no effect, in every engine, mode and direction.

``MachineFault``'s contract: the machine stops in the state before the faulting step --
registers, the gradient and tangent banks, memory, OV, BR, DIR and PC -- except for an
uncaught jump, whose landing instruction ran.  In gradient or tangent mode one step runs
several templates (``isa/adjoint.mode_statements``), so a later one could fault after
an earlier one wrote (SUBATAN2's inverse adjoint dividing by b^2 + c^2 = 0 after the
value step); ``isa/step_order.py`` runs every fault check first.  Here every data entry
runs alone (START, the entry, FINISH) from lane states that hypothesis draws with the
domain edges (0, +-1, words whose square rounds to 0, the ends of the range, a code
cell's address), forward from START and backward from FINISH, in value, gradient,
tangent and both modes, strict and not, on the reference and the vector engine, and the
entries whose steps can fault on the compiled engine too (one image, one kernel per mode).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import strategies as st
from program_generators import ProgramBuilder, examples

from revasm.isa import INSTRUCTIONS
from revasm.isa.adjoint import banks_needed, mode_sequence, mode_statements, mode_template
from revasm.isa.fixed_point import WordFormat
from revasm.isa.instruction import Instruction
from revasm.isa.step_order import FAULTING_CALLS, StepOrderError, checks_first
from revasm.isa.vocabulary import vocabulary
from revasm.sim.engines import engine

DATA_ENTRIES = [ins for ins in INSTRUCTIONS if ins.kind == "data"]
MODES = [(False, False), (True, False), (False, True), (True, True)]
REGISTERS = (1, 2, 3)
LANES = 24


def _can_fault(ins: Instruction) -> bool:
    """Whether some step of the entry calls a vocabulary name that can fault."""
    text = "\n".join(part for d in (1, -1) for part in mode_statements(ins, d, True, True))
    return any(f"{name}(" in text for name in FAULTING_CALLS)


def _operand_sets(ins: Instruction) -> list[dict[str, int]]:
    """a, b, c = $1, $2, $3, and b = c = $2 where the entry allows it (ADDMUL $1 $2 $2)."""
    base = {"a": 1, "b": 2, "c": 3, "imm": 0x1234, "k": 1, "amt": 3}
    sets = [{name: base[name] for name in ins.operand_names}]
    if "c" in ins.operand_names and ("b", "c") not in ins.distinct:
        sets.append({**sets[0], "c": 2})
    return sets


# --- the step's order, on the templates alone ---------------------------------------------

def _write_before_a_check(template: str) -> str | None:
    """The first line that writes a word before a later line that can fault, if any."""
    written = None
    for line in template.split("\n"):
        target = line.split(" = ")[0] if " = " in line else line
        faults = any(f"{name}(" in line for name in FAULTING_CALLS)
        if faults and written is not None:
            return written
        if "[" in target and written is None:
            written = line
    return None


@pytest.mark.parametrize("ins", INSTRUCTIONS, ids=lambda ins: ins.mnemonic)
def test_every_step_checks_every_fault_before_its_first_write(ins):
    for direction in (1, -1):
        assert mode_template(ins, direction) == (ins.forward if direction > 0 else ins.backward)
        for gradient, tangent in MODES[1:]:
            template = mode_template(ins, direction, gradient, tangent)
            assert _write_before_a_check(template) is None, (ins.mnemonic, direction, template)


def _execute(code, state: dict, words: dict) -> None:
    namespace = dict(words)
    namespace.update(state, addr=lambda word: word % 4, overflow=lambda flag: flag,
                     unemit=lambda: 0, show=lambda word: None, emit=lambda word: None)
    exec(code, namespace)


@pytest.mark.parametrize("width", [32, 64])
def test_checks_first_changes_nothing_when_nothing_faults(width):
    """The reordered step and the templates in order leave the same words."""
    import random
    rng = random.Random(width)
    fmt = WordFormat(width)
    words = vocabulary(fmt)
    compared = 0
    for ins in INSTRUCTIONS:
        values = {"a": 1, "b": 2, "c": 3, "imm": 5, "k": 1, "amt": 3, "off": 1}
        for direction in (1, -1):
            for gradient, tangent in MODES[1:]:
                step = compile(mode_template(ins, direction, gradient, tangent).format(
                    **values), "<step>", "exec")
                plain = compile(mode_sequence(ins, direction, gradient, tangent).format(
                    **values), "<step>", "exec")
                for _ in range(4):
                    state = {bank: [0] + [rng.randrange(fmt.one // 4, 2 * fmt.one)
                                          for _ in range(3)]
                             for bank in ("R", "G", "T", "TG")}
                    state.update({bank: [rng.randrange(fmt.mask + 1) for _ in range(4)]
                                  for bank in ("MEM", "GM", "TM", "TGM")})
                    state.update(OV=[0], BR=0, DIR=direction)
                    ours = {k: list(v) if isinstance(v, list) else v for k, v in state.items()}
                    theirs = {k: list(v) if isinstance(v, list) else v for k, v in state.items()}
                    _execute(step, ours, words)
                    _execute(plain, theirs, words)
                    assert ours == theirs, (ins.mnemonic, direction, gradient, tangent)
                    compared += 1
    assert compared > 500


def test_a_check_that_would_read_an_earlier_write_is_refused():
    first = "R[{a}] = (R[{a}] + 1) & M"
    second = "_d = fdiv(one, R[{b}])\nG[{b}] = (G[{b}] + _d) & M"
    with pytest.raises(StepOrderError, match="reads a word"):
        checks_first([first, second])  # $a and $b may be one register
    assert checks_first([first, second], (("a", "b"),)).split("\n") == [
        "_d = fdiv(one, R[{b}])", first, "G[{b}] = (G[{b}] + _d) & M"]
    with pytest.raises(StepOrderError, match="writes before a fault check"):
        checks_first(["G[{a}] = 0\n_d = fdiv(one, R[{b}])"])
    check = "_x = fdiv(one, R[{b}])"
    with pytest.raises(StepOrderError, match="redefines its local"):  # a repeat may not
        checks_first([f"{check}\nG[{{a}}] = (G[{{a}}] + _x) & M",  # skip a redefinition
                      "_x = fmul(R[{b}], R[{b}])\nT[{a}] = (T[{a}] + _x) & M",
                      f"{check}\nTG[{{a}}] = (TG[{{a}}] + _x) & M"])
    lifted = checks_first([first, "OV[0] = (OV[0] + overflow(R[{b}])) & M"], (("a", "b"),))
    assert lifted.split("\n") == ["_f1_0_0 = overflow(R[{b}])", first,
                                    "OV[0] = (OV[0] + _f1_0_0) & M"]


#: Dense words every image gets (more than the longest layout), and the dense data word
MEMORY_WORDS = 1024
DENSE_DATUM = 1000


@dataclasses.dataclass
class Layout:
    """Programs (START, one entry, FINISH) side by side in one image."""

    image: object
    starts: list[int]  # each program's START
    cases: list[tuple[Instruction, dict[str, int]]]
    data: tuple[int, int]  # the dense and the sparse address the lanes seed


def cases_of(entries: list[Instruction]) -> list[tuple[Instruction, dict[str, int]]]:
    return [(ins, operands) for ins in entries for operands in _operand_sets(ins)]


def layout(cases: list[tuple[Instruction, dict[str, int]]], width: int) -> Layout:
    builder = ProgramBuilder(width=width)
    starts = []
    for ins, operands in cases:
        starts.append(builder.here())
        builder.op("START").op(ins.mnemonic, *operands.values()).op("FINISH")
    image = builder.build()
    assert len(image) < DENSE_DATUM
    return Layout(image, starts, list(cases), (DENSE_DATUM, (1 << width) - 1))


def lane_states(width: int, data: tuple[int, int], seed: int) -> list[dict]:
    """Lane states: R, G, T, TG of $1..$3, the memory banks at ``data``, OV.

    Values at the domain edges (b = c = 0; b, c so small that b^2 + c^2 rounds to 0;
    b < 0; a sum that overflows; an EXCH address on a code cell; 0 ** negative), then
    words hypothesis draws; the banks are drawn words throughout."""
    fmt = WordFormat(width)
    one, mask, top, low = fmt.one, fmt.mask, fmt.max_signed, fmt.min_signed
    tiny = 1 << (fmt.frac_bits // 2 - 1)
    edges = [(top, 0, 0), (low, tiny, tiny), (one, -one, one), (top, one, one),
             (3, 1, 0), (0, 0, -one), (-one, -tiny, tiny & mask)]
    word = st.one_of(st.sampled_from([0, 1, mask, one, tiny, top, low & mask]),
                     st.integers(0, mask))
    register = st.one_of(word, st.sampled_from([1, *data]))
    drawn = examples(st.fixed_dictionaries({
        "R": st.tuples(register, register, register),
        **{bank: st.tuples(word, word, word) for bank in ("G", "T", "TG")},
        **{bank: st.tuples(word, word) for bank in ("MEM", "GM", "TM", "TGM")},
        "OV": st.tuples(st.sampled_from([0, 1, mask])),
    }), len(edges) + 2, seed=seed, distinct=False)
    for state, values in zip(drawn, edges):
        state["R"] = tuple(v & mask for v in values)
    return drawn


def _seed(machine, states: list[dict], data: tuple[int, int], banks: tuple[str, ...]) -> None:
    """Lane ``j`` gets ``states[j % len(states)]``."""
    lanes = machine.lanes

    def column(bank: str, i: int) -> np.ndarray:
        return np.array([states[j % len(states)][bank][i] for j in range(lanes)],
                        dtype=np.uint64)

    for i, register in enumerate(REGISTERS):
        machine.set_bank_word("R", register, column("R", i))
        for bank in ("G", "T", "TG"):
            if bank in banks:
                machine.set_bank_word(bank, register, column(bank, i))
    for i, address in enumerate(data):
        machine.set_bank_word("MEM", address, column("MEM", i))
        for bank in ("GM", "TM", "TGM"):
            if bank in banks:
                machine.set_bank_word(bank, address, column(bank, i))
    machine.set_bank_word("OV", 0, column("OV", 0))


def _words(machine, banks: tuple[str, ...], data: tuple[int, int]) -> dict:
    """The words a step of these entries may write: R and the banks at $1..$3, OV, the
    data words (an EXCH elsewhere writes a word no test seeded: compared by snapshot)."""
    words = {("OV", 0): np.asarray(machine.bank_word("OV", 0)).copy()}
    for bank in ("R", *banks, "MEM"):
        for place in (data if bank.endswith("M") else REGISTERS):
            words[bank, place] = np.asarray(machine.bank_word(bank, place)).copy()
    return words


@dataclasses.dataclass
class Outcome:
    """Every lane after one run: the words, and each fault (kind, pc, step) or None."""

    words: dict
    faults: list


def run(machine, lay: Layout, programs: list[int], states: list[dict], direction: int,
        gradient: bool, tangent: bool, strict: bool) -> tuple[Outcome, Outcome, dict]:
    """One run of lane ``j`` through ``programs[j]``: the lanes before and after, and the
    snapshots before and after of every lane that faulted."""
    machine.gradient, machine.tangent, machine.strict = gradient, tangent, strict
    banks = banks_needed(gradient, tangent)
    _seed(machine, states, lay.data, banks)
    lanes = machine.lanes
    before_snapshots = [machine.snapshot(j) for j in range(lanes)]
    before = Outcome(_words(machine, banks, lay.data), [None] * lanes)
    if len(lay.starts) == 1:  # the vector engine has no ``start``: one program per image
        machine.run(direction)
    else:
        machine.run(direction, start=[lay.starts[k] + (0 if direction > 0 else 2)
                                      for k in programs])
    faults, snapshots = [], {}
    for j in range(lanes):
        fault = machine.fault(j)
        faults.append(None if fault is None else (fault.kind, fault.pc, fault.step))
        if fault is not None:
            snapshots[j] = (before_snapshots[j], machine.snapshot(j))
    return before, Outcome(_words(machine, banks, lay.data), faults), snapshots


def assert_faulting_lanes_unchanged(lay: Layout, programs: list[int], before: Outcome,
                                    after: Outcome, snapshots: dict, direction: int,
                                    what: str) -> int:
    """Every lane that faulted stands on the entry in the state before it; returns how many."""
    for j, (old, new) in snapshots.items():
        kind, pc, step = after.faults[j]
        entry_pc = lay.starts[programs[j]] + 1
        ins, operands = lay.cases[programs[j]]
        where = f"{what}: {ins.mnemonic} {operands}, lane {j}, {kind}"
        assert kind != "uncaught-jump", where
        assert (pc, step) == (entry_pc, 1), where
        assert new == dataclasses.replace(old, pc=entry_pc, br=0, direction=direction), where
        for key, words in before.words.items():
            assert after.words[key][j] == words[j], f"{where}: {key}"
    return len(snapshots)


def assert_same(reference: Outcome, other: Outcome, what: str) -> None:
    """The same lanes fault, the same way, and every lane leaves the same words (a lane
    that does not fault too: the vector engine once lost an EXCH's memory word on the
    lanes beside one whose EXCH faulted)."""
    assert other.faults == reference.faults, what
    for key, words in reference.words.items():
        assert np.array_equal(other.words[key], words), f"{what}: {key}"


#: Forward runs are not strict (a derivative's fault is not masked by an overflow
#: event); backward runs are (the value step, which runs last, can fault that way).
PASSES = [(gradient, tangent, direction, direction < 0)
          for gradient, tangent in MODES for direction in (1, -1)]


def _describe(width: int, gradient: bool, tangent: bool, direction: int) -> str:
    return (f"W={width} {'forward' if direction > 0 else 'backward'} gradient={gradient} "
            f"tangent={tangent}")


@pytest.mark.parametrize("width", [32, 64])
def test_a_faulting_step_leaves_the_machine_as_before_it_on_reference_and_vector(width):
    cases = cases_of([ins for ins in DATA_ENTRIES if _can_fault(ins)])
    lay = layout(cases, width)
    states = lane_states(width, lay.data, seed=width)
    programs = [k for k in range(len(cases)) for _ in states]
    reference = engine("reference").load(lay.image, len(programs), max_steps=10,
                                         memory_words=MEMORY_WORDS)
    # at W = 64 the modes with several templates per step (time); both engines run the
    # same passes in the same order (an EXCH leaves words behind for the next pass)
    passes = PASSES if width == 32 else [p for p in PASSES if p[0] or p[1]]
    outcomes = {}
    faulted = 0
    for gradient, tangent, direction, strict in passes:
        what = _describe(width, gradient, tangent, direction)
        before, after, snapshots = run(reference, lay, programs, states, direction,
                                       gradient, tangent, strict)
        faulted += assert_faulting_lanes_unchanged(lay, programs, before, after, snapshots,
                                                   direction, what)
        outcomes[gradient, tangent, direction] = after
    assert faulted > 0
    for k, case in enumerate(cases):
        # the vector engine has no ``start``: the same image (so the same code cells, which
        # an EXCH address may hit), entered at program k's START and left at its FINISH
        start = lay.starts[k]
        alone = Layout(dataclasses.replace(lay.image, entry=start, finish=start + 2),
                       [start], [case], lay.data)
        vector = engine("vector").load(alone.image, len(states), max_steps=10,
                                       memory_words=MEMORY_WORDS)
        lanes = slice(k * len(states), (k + 1) * len(states))
        for gradient, tangent, direction, strict in passes:
            what = f"vector {_describe(width, gradient, tangent, direction)}"
            before, after, snapshots = run(vector, alone, [0] * len(states), states,
                                           direction, gradient, tangent, strict)
            assert_faulting_lanes_unchanged(alone, [0] * len(states), before, after,
                                            snapshots, direction, what)
            expected = outcomes[gradient, tangent, direction]
            assert_same(Outcome({key: w[lanes] for key, w in expected.words.items()},
                                expected.faults[lanes]), after,
                        f"{what}: {case[0].mnemonic} {case[1]}")


#: The compiled engine's share (each kernel build costs seconds): the entries whose
#: gradient-mode steps can fault in a derivative or (strict) in the value step that runs
#: after the adjoint, one image, gradient mode and both modes.
COMPILED_ENTRIES = ("EXCH", "ADDMUL", "ADDDIV", "SUBDIV", "ADDLOG", "SUBLOG", "ADDSQRT",
                    "SUBSQRT", "ADDATAN", "SUBATAN", "ADDATAN2", "SUBATAN2", "ADDPOW", "SUBPOW")


@pytest.mark.slow
def test_a_faulting_step_leaves_the_machine_as_before_it_on_the_compiled_engine():
    pytest.importorskip("numba")
    width = 32
    cases = cases_of([ins for ins in DATA_ENTRIES if ins.mnemonic in COMPILED_ENTRIES])
    lay = layout(cases, width)
    states = lane_states(width, lay.data, seed=width)
    programs = [k for k in range(len(cases)) for _ in states]
    reference = engine("reference").load(lay.image, len(programs), max_steps=10,
                                         memory_words=MEMORY_WORDS)
    compiled = engine("compiled").load(lay.image, len(programs), max_steps=10,
                                       memory_words=MEMORY_WORDS)
    faulted = 0
    for gradient, tangent, direction, strict in PASSES:
        if not gradient:
            continue
        what = _describe(width, gradient, tangent, direction)
        _, expected, _ = run(reference, lay, programs, states, direction, gradient, tangent,
                             strict)
        before, after, snapshots = run(compiled, lay, programs, states, direction, gradient,
                                       tangent, strict)
        faulted += assert_faulting_lanes_unchanged(lay, programs, before, after, snapshots,
                                                   direction, f"compiled {what}")
        assert_same(expected, after, f"compiled {what}")
    assert faulted > 0
