"""The stack slots' scan run in the compiled pair scans (``pair_scans.pairs_cancelled(...,
stack=True)``, ``lowering._stack_pairs_cancelled``) leaves the code the Python passes leave
(``cancel_stack_exchanges`` of the Python ``_pairs_cancelled``): the same instructions, the
same objects, in the same order -- on random code dense in pushes and passes through the
stack pointer, with whatever may stop or end a partner's search among it, and on a
compiled program with calls."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.compiler.backend import lowering, pair_scans, stack_slots
from revasm.compiler.backend.code import Instr
from revasm.compiler.backend.stack_slots import cancel_stack_exchanges

NEVER = 1 << 62


def _i(text: str, label: str = "") -> Instr:
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


#: Pushes and passes: a few registers, the stack pointer itself among them.
EXCHANGES = [_i("exch $3 $1"), _i("exch $4 $1"), _i("exch $5 $1"), _i("exch $1 $1"),
             _i("exch $4 $1", "L4")]
#: The stack pointer moved: by integers (zero, hex, signed, with an underscore) and by what
#: is not one (a symbol, a register: a stop).
STEPS = [_i(f"addi $1 {c}") for c in
         ["1", "-1", "2", "-2", "0", "0x1", "-0x1", "+1", "1_0", "-0x10", "v_a.0", "$4"]]
#: What may stand between: exchanges through other registers, data instructions touching
#: a pushed register or the stack pointer or neither, inverse pairs for the pair scans,
#: labels, branches.
OTHERS = [_i("exch $4 $8"), _i("exch $6 $7"), _i("exch $3 $9"), _i("add $3 $5"),
          _i("add $5 $1"), _i("add $1 $5"), _i("li $4 7"), _i("add $6 $7"), _i("sub $6 $7"),
          _i("xori $7 1"), _i("addi $3 1"), _i("addi $6 1"), _i("addi $6 -1"),
          _i("addi $1 1", "L1"), _i("exch $3 $1", "L2"), _i("add $6 $7", "L3"),
          _i("bra top"), _i("bne $4 $0 L1")]
#: Touches none of the registers and pairs with nothing: a stretch of it about as long as
#: the window puts a pass just within or just beyond its push's reach.
FILLER = _i("addmul $6 $7 $8")


@st.composite
def frame(draw: st.DrawFn) -> list[Instr]:
    """A call's shape: registers pushed one slot apart, the stack pointer moved back, and
    registers passed from the slots (the same ones in the same order, or not)."""
    pushed = draw(st.lists(st.sampled_from(["$3", "$4", "$5", "$1"]), min_size=1,
                           max_size=4))
    passed = draw(st.permutations(pushed)) if draw(st.booleans()) else pushed
    back = str(-len(pushed)) if draw(st.booleans()) else hex(-len(pushed))
    code = [i for r in pushed for i in (_i(f"exch {r} $1"), _i("addi $1 1"))]
    code.append(_i(f"addi $1 {back}"))
    code += [i for r in passed for i in (_i(f"exch {r} $1"), _i("addi $1 1"))]
    return code


@st.composite
def nest(draw: st.DrawFn, depth: int = 2) -> list[Instr]:
    """A push and a pass of one register around what may or may not let them cancel:
    other pushes and passes (nested), steps, fillers, what stops the search."""
    push = draw(st.sampled_from(EXCHANGES[:4]))
    inner: list[Instr] = []
    for piece in draw(st.lists(st.integers(0, 9), max_size=3)):
        if piece < 4 and depth:
            inner += draw(nest(depth - 1))
        elif piece < 6:
            inner.append(draw(st.sampled_from(EXCHANGES + STEPS[:6])))
        elif piece < 7:
            inner.append(FILLER)
        else:
            inner.append(draw(st.sampled_from(OTHERS)))
    return [push, *inner, push]


@st.composite
def stack_code(draw: st.DrawFn) -> list[Instr]:
    code: list[Instr] = []
    for piece in draw(st.lists(st.integers(0, 39), max_size=120)):
        if piece < 12:
            code.append(draw(st.sampled_from(EXCHANGES)))
        elif piece < 22:
            code.append(draw(st.sampled_from(STEPS)))
        elif piece < 25:
            code += draw(frame())
        elif piece < 28:
            code += draw(nest())
        elif piece < 32:
            code.append(FILLER)
        elif piece < 38:
            code.append(draw(st.sampled_from(OTHERS)))
        else:
            code += [FILLER] * (stack_slots.WINDOW + draw(st.integers(-2, 1)))
    # each position its own object, told apart by its note (the scans read no note)
    return [replace(instr, note=str(k)) for k, instr in enumerate(code)]


def _python(code: list[Instr]) -> list[Instr]:
    return cancel_stack_exchanges(lowering._pairs_cancelled(code, compiled_from=NEVER))


@settings(max_examples=400, deadline=None)
@given(stack_code())
def test_the_compiled_scan_drops_the_stack_pairs_the_python_scan_drops(code):
    python = _python(code)
    compiled = pair_scans.pairs_cancelled(code, exchanges=True, stack=True)
    assert compiled is not None  # (nothing here is left to Python)
    assert compiled == python
    assert all(a is b for a, b in zip(compiled, python))
    assert lowering._stack_pairs_cancelled(code, compiled_from=0) == python
    assert lowering._stack_pairs_cancelled(code, compiled_from=NEVER) == python


@pytest.mark.parametrize("between", [*OTHERS, *STEPS, *EXCHANGES, FILLER])
def test_each_instruction_between_a_push_and_its_pass(between):
    """Whether one instruction between lets a push and its pass cancel (at the same slot,
    and at another slot: one step each way around it)."""
    for code in [[_i("exch $3 $1"), between, _i("exch $3 $1")],
                 [_i("exch $4 $1"), _i("addi $1 1"), between, _i("addi $1 -1"),
                  _i("exch $4 $1")],
                 [_i("exch $1 $1"), between, _i("exch $1 $1")]]:
        compiled = pair_scans.pairs_cancelled(code, exchanges=True, stack=True)
        assert compiled == _python(code)


def test_the_scan_goes_on_after_a_pair_without_looking_back():
    """``$4``'s pair goes; ``$3``'s push had stopped at ``$4``'s push and is not asked again."""
    code = [_i("exch $3 $1"), _i("exch $4 $1"), _i("exch $4 $1"), _i("exch $3 $1")]
    assert pair_scans.pairs_cancelled(code, exchanges=True, stack=True) == _python(code) == \
        [code[0], code[3]]


def test_pairs_within_the_window_go_and_beyond_it_stay():
    """A push and its pass with the window's last position between them, and one more."""
    for between, dropped in [(stack_slots.WINDOW - 1, True), (stack_slots.WINDOW, False)]:
        code = [_i("exch $3 $1"), *[FILLER] * between, _i("exch $3 $1")]
        compiled = pair_scans.pairs_cancelled(code, exchanges=True, stack=True)
        assert compiled == _python(code)
        assert (compiled == code[1:-1]) == dropped


def _outcome(run):
    try:
        return run()
    except Exception as error:  # (the same exception either way)
        return type(error)


@pytest.mark.parametrize("odd", [
    _i("exch $03 $1"),            # a pushed register not spelled $n: Python compares names
    _i("exch $63 $1"),            # beyond the bits
    _i("add $03 $5"),             # names Python tells from $3 and $1, the masks do not
    _i("add $01 $5"),
    _i(f"addi $1 {1 << 55}"),     # a step the int64 sum could not hold WINDOW of
    _i(f"addi $1 {-(1 << 60):#x}"),
    Instr("ADDI", ("$1",)),       # too few operands: Python raises where it reaches them
    Instr("ADDI", ()),
    Instr("EXCH", ("$3",)),
    Instr("ADD", ()),
])
def test_code_the_codes_cannot_say_is_left_to_the_python_scan(odd):
    code = [_i("exch $3 $1"), _i("addi $1 1"), odd, _i("addi $1 -1"), _i("exch $3 $1")]
    assert _outcome(lambda: pair_scans.pairs_cancelled(code, exchanges=True, stack=True)) \
        is None
    assert _outcome(lambda: lowering._stack_pairs_cancelled(code, compiled_from=0)) == \
        _outcome(lambda: _python(code))


def test_a_step_just_within_the_bound_is_compiled():
    big = (1 << 55) - 1
    code = [_i("exch $3 $1"), _i(f"addi $1 {big}"), _i("exch $4 $1"), _i(f"addi $1 {-big}"),
            _i("exch $3 $1")]
    compiled = pair_scans.pairs_cancelled(code, exchanges=True, stack=True)
    assert compiled == _python(code) == code[1:4]


#: Calls whose arguments sit in the callee's parameter registers, in its order or not.
PASSED_ON = """procedure p(int x, int y)
    x += y + 1

procedure q(int x, int y)
    call p(x, y)
    x += 2
    call p(x, y)
    y += x
    uncall p(x, y)

procedure r(int y, int x)
    call p(x, y)
    call q(x, y)

procedure main()
    int a
    int b
    call q(a, b)
    a += 1
    call r(a, b)
"""


@pytest.mark.parametrize("shape", ["calls", "passed on"])
def test_a_program_with_calls_compiles_to_the_same_pal_and_map(monkeypatch, shape):
    """Janus calls (not inlined: portal calls, whose pushes and passes may cancel) through
    the compiled path and through Python."""
    from revasm.bench.compile_scale import janus_program
    from revasm.cli.commands_compile import _source_map_text
    from revasm.compiler.api import compile_janus_source

    text = janus_program("calls", 300) if shape == "calls" else PASSED_ON
    python = compile_janus_source(text, "calls.ja", inline=False)
    dropped = []

    def counted(code, exchanges, stack=False):
        out = scans(code, exchanges, stack)
        if stack:
            # (the pushes and passes dropped: what the pair scans alone leave, less out)
            dropped.append(len(lowering._pairs_cancelled(code, compiled_from=NEVER)) - len(out))
        return out
    scans = pair_scans.pairs_cancelled
    monkeypatch.setattr(pair_scans, "pairs_cancelled", counted)
    monkeypatch.setattr(lowering, "COMPILED_FROM", 0)
    compiled = compile_janus_source(text, "calls.ja", inline=False)
    assert compiled.pal == python.pal
    assert compiled.lowered.lines == python.lowered.lines
    assert _source_map_text(compiled) == _source_map_text(python)
    assert len(dropped) > 1 and sum(dropped)  # the compiled scan ran, and dropped pushes

