"""A branch of plain registers and a label in range is encoded by ``_Assembly._branch``
(its registers' part kept per spelling); every other by ``_operands``.  Both must give the
same image, and the same errors, for any program: held here to the general path -- as are
the other fast paths a compiled program takes: an instruction spelt in upper or lower case
and its labels collected without ``_item`` and ``_define_label`` (``_collect``), a jump
caught by its partner told without ``catch_problem`` (``_caught_by_partner``)."""
from __future__ import annotations

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from revasm.assembler import AssemblyError, assemble
from revasm.isa.codec import BY_MNEMONIC

_assemble_module = __import__("revasm.assembler.assemble", fromlist=["_Assembly"])
BRANCHES = sorted(_assemble_module._BRANCHES)
LABELS = ["top", "mid", "end", "far"]
HEADER = ";; pendulum pal file\nstart\n"


def _outcome(source: str) -> tuple[str, object]:
    try:
        return "image", assemble(HEADER + source, filename="b.pal")
    except AssemblyError as exc:
        return "error", [(d.line, d.column, d.message) for d in exc.diagnostics]


def _general(monkeypatch: pytest.MonkeyPatch, source: str) -> tuple[str, object]:
    with monkeypatch.context() as m:
        m.setattr(_assemble_module._Assembly, "_branch", lambda *args: None)
        m.setattr(_assemble_module._Assembly, "FAST_LINES", False)
        m.setattr(_assemble_module, "_caught_by_partner", lambda *args: False)
        return _outcome(source)


def test_the_branches_are_every_register_and_offset_instruction():
    assert BRANCHES == sorted(
        ins.mnemonic for ins in set(BY_MNEMONIC.values())
        if ins.operand_kinds and ins.operand_kinds[-1] == "off"
        and set(ins.operand_kinds[:-1]) <= {"reg"})
    assert {"BEQ", "BGEZ"} <= set(BRANCHES)


registers = st.sampled_from(["$1", "$2", "$3", "$31", "$0", "$32", "$07", "r3"])
odd_targets = st.sampled_from(["nowhere", "K", "-top0", "3", "-2", "0x10", "$4"])


@st.composite
def programs(draw: st.DrawFn) -> str:
    """Branches in pairs, each landing on the other (as the machine asks), with plain or
    odd registers and now and then an odd target, a wrong operand count, a free label."""
    lines = [".const K 2"]
    pairs = draw(st.integers(1, 5))
    slots = draw(st.permutations(list(range(2 * pairs))))
    body: list[str] = ["addi $2 1"] * draw(st.integers(0, 4))
    for slot in slots:
        pair, side = divmod(slot, 2)
        mnemonic = draw(st.sampled_from(BRANCHES))
        ins = BY_MNEMONIC[mnemonic]
        operands = [draw(registers) if draw(st.integers(0, 3)) == 0 else "$1"
                    for _ in ins.operand_kinds[:-1]]
        if draw(st.integers(0, 19)) == 0:  # a wrong operand count
            operands = operands[:-1]
        target = f"{'ba'[side]}{pair}"
        if draw(st.integers(0, 9)) == 0:
            target = draw(odd_targets)
        spelled = draw(st.sampled_from([mnemonic, mnemonic.lower(), mnemonic.title()]))
        at = draw(st.integers(0, len(body)))
        body.insert(at, f"{'ab'[side]}{pair}: {spelled} {' '.join(operands)} {target}")
    if draw(st.booleans()):
        body.insert(0, "top0: addi $3 1")
    for _ in range(draw(st.integers(0, 2))):  # a label defined twice, or as the constant
        label = draw(st.sampled_from(["a0", "b0", "K", "top0", "x"]))
        body.insert(draw(st.integers(0, len(body))), f"{label}: ADDI $2 1")
    return "\n".join(lines + body + ["finish"]) + "\n"


@pytest.mark.parametrize("kind", ["image", "error"])
def test_the_programs_hold_images_and_errors_both(kind):
    assert _outcome(find(programs(), lambda source: _outcome(source)[0] == kind))[0] == kind


@given(programs())
@settings(max_examples=300, deadline=None)
def test_a_branch_encodes_as_the_general_path_encodes_it(source):
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _outcome(source) == _general(monkeypatch, source)


def test_the_fast_path_encodes_most_branches_of_a_plain_program(monkeypatch):
    calls: list[object] = []
    fast = _assemble_module._Assembly._branch

    def counted(self, *args):
        out = fast(self, *args)
        calls.append(out)
        return out
    monkeypatch.setattr(_assemble_module._Assembly, "_branch", counted)
    source = ("top: beq $1 $2 end\nc: bgez $3 d\n addi $2 1\nd: bgez $3 c\n"
              "end: beq $1 $2 top\nfinish\n")
    kind, image = _outcome(source)
    assert kind == "image" and len(calls) == 4 and all(c is not None for c in calls)
    monkeypatch.undo()
    assert _general(monkeypatch, source) == (kind, image)


def test_a_branch_beyond_its_offset_field_is_reported_as_before(monkeypatch):
    filler = "addi $2 1\n" * 33000
    for source in (f"near: beq $1 $2 far\n{filler}far: beq $1 $2 near\nfinish\n",
                   f"near: bne $1 $2 far\n{filler}far: bne $1 $2 near\nfinish\n"):
        kind, diagnostics = _outcome(source)
        assert kind == "error" and any("branch offset" in d[2] for d in diagnostics)
        assert _general(monkeypatch, source) == (kind, diagnostics)
