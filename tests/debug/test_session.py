"""The debugger's core (revasm.debug.Session): time runs both ways without a trace.

The law: every step undone restores the state before it bit for bit -- registers, memory,
BR, DIR, PC, the gradient bank and the call stack -- on every example, in gradient mode
too, and on hypothesis-generated programs.  Then: next, finish and their reverse forms
over portal calls, breakpoints on labels, PAL and Python lines, watchpoints, faults.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_generators import straight_line_programs, structured_programs

import revasm
from revasm.assembler import assemble_file
from revasm.compiler import compile_file
from revasm.debug import DebugError, Session, SourceMap
from revasm.sim.host import initial_words

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def session_of(image, **options) -> Session:
    registers, memory = initial_words(image)
    return Session(image, registers=registers, memory=memory, **options)


def state(session: Session) -> tuple:
    """Everything a step may change: the snapshot, the banks (an all-zero bank is the same
    as none), halted, the calls, the time and the pass."""
    machine = session.machine
    banks = {name: bank for name, bank in machine.bank_snapshot().items() if any(bank)}
    return (machine.snapshot(), machine.halted, banks, tuple(session.stack), session.time,
            session.phase)


def walk_there_and_back(session: Session) -> int:
    """Step to the end recording every state, then undo every step, comparing."""
    states = [state(session)]
    while session.step().reason in ("step", "switch"):
        states.append(state(session))
    assert session.at_end, session.fault
    for expected in reversed(states[:-1]):
        assert session.step(backward=True).reason in ("step", "switch")
        assert state(session) == expected
    assert session.step(backward=True).reason == "beginning"
    return len(states)


@pytest.mark.parametrize("name", ["fib", "procedure", "multiply", "diamonds", "exch_data",
                                  "nested_loops", "apex"])
def test_every_step_undone_restores_the_state_before_it(name):
    walk_there_and_back(session_of(assemble_file(EXAMPLES / f"{name}.pal")))


@pytest.mark.parametrize("name", ["bessel_j2", "umm", "x1_plus_x1x2"])
def test_the_gradient_pass_is_undone_step_by_step_too(name):
    image = assemble_file(EXAMPLES / f"{name}.pal", width=64)
    session = session_of(image, grad=True)
    steps = walk_there_and_back(session)
    assert steps > 2 * 4


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.one_of(straight_line_programs(), structured_programs()))
def test_backward_undoes_forward_step_by_step_for_every_generated_program(case):
    """Calls, uncalls, loops and diamonds: each undo restores the state before the step,
    the call stack included; an arithmetic fault leaves the way back open."""
    session = Session(case.image, registers=case.registers, memory=case.memory)
    states = [state(session)]
    stop = session.step()
    while stop.reason == "step":
        states.append(state(session))
        stop = session.step()
    assert stop.reason in ("end", "fault"), stop
    if stop.reason == "end":
        assert session.stack == []
    for expected in reversed(states[:-1]):
        assert session.step(backward=True).reason == "step"
        assert state(session) == expected
    assert session.step(backward=True).reason == "beginning"


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.one_of(straight_line_programs(), structured_programs()))
def test_gradient_mode_is_undone_step_by_step_for_every_generated_program(case):
    """Every instruction's adjoint rule, run backward in time, takes its update back: the
    gradient bank as well as the values come back bit for bit (the loss: $1)."""
    session = Session(case.image, registers=case.registers, memory=case.memory, grad=True,
                      loss="$1")
    states = [state(session)]
    stop = session.step()
    while stop.reason in ("step", "switch"):
        states.append(state(session))
        stop = session.step()
    assert stop.reason in ("end", "fault"), stop
    for expected in reversed(states[:-1]):
        assert session.step(backward=True).reason in ("step", "switch")
        assert state(session) == expected
    assert session.step(backward=True).reason == "beginning"


@pytest.mark.parametrize("name", ["bessel_j2", "umm", "x1_plus_x1x2"])
def test_the_end_of_the_gradient_pass_holds_the_gradient_of_revasm_grad(name):
    image = assemble_file(EXAMPLES / f"{name}.pal", width=64)
    session = session_of(image, grad=True)
    assert session.cont().reason == "switch"
    assert session.phase == "gradient" and session.machine.gradient
    assert session.cont().reason == "end"
    expected = revasm.grad(image, engine="reference")
    gradient = session.named("G")
    assert {n: gradient[n] for n in expected.gradient} == \
        {n: float(g) for n, g in expected.gradient.items()}
    assert session.cont(backward=True).reason == "switch"  # back over the switch
    assert not session.machine.gradient
    assert set(session.named("G").values()) == {0.0}
    assert session.cont(backward=True).reason == "beginning"


def test_next_steps_over_a_portal_call_and_finish_leaves_it():
    session = session_of(assemble_file(EXAMPLES / "procedure.pal"))
    session.step()  # START
    assert session.pc == 1 and session.stack == []
    stop = session.step_line(over=True)  # bra f: the whole call
    assert stop.reason == "step" and session.pc == 2 and session.stack == []
    assert session.named()["y"] == 21
    session.step_line(backward=True, over=True)  # back over the whole call
    assert session.pc == 1 and session.named()["y"] == 0
    session.step(3)  # into f: bra, swapbr, neg
    assert [f.function for f in session.stack] == ["f"] and session.stack[0].call_pc == 1
    assert session.finish().reason == "step"
    assert session.stack == [] and session.named()["y"] == 21
    session.step(4)
    assert len(session.stack) == 1 and session.machine.direction == -1  # the uncall runs f back
    assert session.finish(backward=True).reason == "step"
    assert session.stack == [] and session.pc == 2
    with pytest.raises(DebugError, match="not inside a portal call"):
        session.finish()


def test_breakpoints_on_labels_pcs_and_lines_stop_in_both_directions():
    session = session_of(assemble_file(EXAMPLES / "fib.pal"))
    top = session.add_breakpoint("top")
    assert top.kind == "label" and top.pcs == {session.source.code_label("top")}
    stop = session.cont()
    assert stop.reason == "breakpoint" and stop.breakpoint is top
    session.delete(top.number)
    line = session.add_breakpoint(":13")
    assert session.cont().breakpoint is line
    time = session.time
    assert session.cont().breakpoint is line and session.time > time
    assert session.cont(backward=True).breakpoint is line and session.time == time
    assert session.add_breakpoint("3").kind == "pc"
    for bad, message in (("nowhere", "not a label"), (":2", "no instruction"),
                         ("999", "not an instruction"), ("x.py:3", "not compiled from Python")):
        with pytest.raises(DebugError, match=message):
            session.add_breakpoint(bad)


def test_a_watchpoint_stops_where_its_word_changes_either_way():
    session = session_of(assemble_file(EXAMPLES / "fib.pal"))
    point = session.add_watchpoint("fib")
    stop = session.cont()
    assert stop.reason == "watchpoint" and stop.changes[0][0] is point
    assert (stop.changes[0][1], stop.changes[0][2]) == (0, 1)
    stop = session.cont()
    later, (old, new) = session.time, stop.changes[0][1:]
    stop = session.cont(backward=True)  # undoing the step that changed it
    assert stop.reason == "watchpoint" and stop.changes[0][1:] == (new, old)
    assert session.time == later - 1
    memory = session.add_watchpoint("[n_cell]")
    assert memory.address == session.image.symbols["n_cell"]
    for bad in ("$0", "nothing", "[nowhere]"):
        with pytest.raises(DebugError):
            session.add_watchpoint(bad)


def test_a_fault_stops_the_session_and_the_way_back_is_open():
    session = session_of(assemble_file(EXAMPLES / "errors" / "broken.pal"))
    stop = session.cont()
    assert stop.reason == "fault" and stop.fault.kind == "uncaught-jump"
    assert stop.fault.pc == 5 and stop.fault.line == 8
    with pytest.raises(DebugError, match="faulted"):
        session.cont()
    assert session.step(backward=True).reason == "step"
    assert session.fault is None
    assert session.cont(backward=True).reason == "beginning"
    assert session.machine.snapshot() == session_of(session.image).machine.snapshot()


def test_a_fault_stop_counts_the_steps_the_fault_report_counts():
    """An uncaught jump's landing instruction ran: the stop and the report both say 5
    steps, as `revasm run` does (issue #41: they said "after 4 step(s)" and "after 5
    steps" together)."""
    from click.testing import CliRunner

    from revasm.cli.main import cli

    session = session_of(assemble_file(EXAMPLES / "errors" / "broken.pal"))
    stop = session.cont()
    assert stop.steps == session.time == stop.fault.step == 5
    result = CliRunner().invoke(cli, ["debug", str(EXAMPLES / "errors" / "broken.pal")],
                                input="continue\nstep\n")
    assert "continue: machine fault after 5 steps\n" in result.output
    assert "BR = 2, DIR = +1, after 5 steps" in result.output
    assert "step(s)" not in result.output


def test_python_lines_and_variables_of_a_compiled_program():
    program = compile_file(EXAMPLES / "nilang" / "rfib.py", "rfib")
    registers, memory = initial_words(program.image, {"n": 4})
    session = Session(program.image, registers=registers, memory=memory,
                      source=SourceMap(program.image, program))
    point = session.add_breakpoint(":19")  # out += 1
    assert point.kind == "python-line" and point.pcs
    stop = session.cont()
    assert stop.reason == "breakpoint" and session.source.python_line(session.pc) == 19
    assert session.python_variables()["n"] in (1, 2)
    assert len(session.stack) >= 2  # rfib called from the stub, then recursively
    before = session.python_variables()["out"]
    session.step_line()
    assert session.source.python_line(session.pc) != 19 or session.python_variables()["out"] \
        == before + 1
    session.step_line(backward=True)
    assert session.source.python_line(session.pc) == 19
    assert session.python_variables()["out"] == before
    assert session.cont(backward=True).reason in ("breakpoint", "beginning")


def test_a_python_line_breakpoint_stops_once_each_time_the_line_is_entered():
    program = compile_file(EXAMPLES / "nilang" / "rfib.py", "rfib")
    registers, memory = initial_words(program.image, {"n": 5})
    source = SourceMap(program.image, program)
    session = Session(program.image, registers=registers, memory=memory, source=source)
    line_pcs = set(source.pcs_of_python_line(21))  # rfib(out, n1): a whole call sequence
    assert len(line_pcs) > 10
    entries, previous = 0, None
    while session.step().reason == "step":  # count the entries one instruction at a time
        entries += session.pc in line_pcs and previous not in line_pcs
        previous = session.pc
    session.restart()
    session.add_breakpoint("rfib.py:21")
    stops = []
    while session.cont().reason == "breakpoint":
        stops.append(session.time)
    assert len(stops) == entries > 1
    with pytest.raises(DebugError, match="comes from"):
        session.add_breakpoint("other.py:21")


def test_restart_goes_back_to_start_through_the_switch_past_every_stop():
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    session = session_of(image, grad=True, step_budget=100)
    start = state(session)
    session.add_breakpoint("top")
    session.add_watchpoint("$9")
    while session.cont().reason != "end":
        pass
    stop = session.restart()
    assert stop.reason == "beginning" and stop.steps == 570
    assert state(session) == start
    session.cont()  # the switch
    session.cont()  # in the gradient pass: $9 changes at once, or the loop's top
    session.restart()
    stop = session.cont()  # the watchpoint's value was refreshed: $9's first change
    assert stop.reason == "watchpoint" and stop.changes[0][1] == 0
    assert session.time == session.source.pcs_of_pal_line(26)[0] + 1  # sum = term, straight on


def test_memory_queries_see_the_whole_address_space():
    from revasm.assembler import assemble
    source = (";; pendulum pal file\n.input v $5 int = 9\n        start\n"
              "        li    $4 0x7fff0000\n        exch  $5 $4\n        finish\n")
    session = session_of(assemble(source))
    session.cont()
    assert session.nonzero_memory() == {0x7FFF0000: 9}
    assert session.memory_word(0x7FFF0000) == 9


def test_step_takes_a_whole_line_and_reverse_step_goes_back_to_its_start():
    image = assemble_file(EXAMPLES / "bessel_j2.pal", width=64)
    session = session_of(image)
    source = session.source
    session.step(3)  # START, li $4 1.0, li $5 2.0
    li = source.pcs_of_pal_line(source.pal_line(session.pc))
    assert len(li) > 1  # li $8 0.5 is two instructions at W = 64
    stop = session.step_line()
    assert stop.steps == len(li) and session.pc == max(li) + 1
    session.step_line()
    stop = session.step_line(backward=True)
    assert stop.steps == 1 and session.pc == max(li) + 1
    stop = session.step_line(backward=True)
    assert stop.steps == len(li) and session.pc == min(li)


def test_a_jump_onto_finish_halts_keeping_br_and_both_passes_undo():
    from revasm.assembler import assemble
    source = (";; pendulum pal file\n.input x $1 fixed = 0.5\n.loss y $2\n        start\n"
              "        addmul $2 $1 $1\n        bra    done\n        addi   $3 1\n"
              "done:   finish\n")
    session = session_of(assemble(source, width=64), grad=True)
    assert walk_there_and_back(session) == 10  # START, ADDMUL, BRA, FINISH twice, the switch
    assert session.cont().reason == "switch"
    assert session.machine.br == 2 and session.pc == 4  # the jump's offset, kept
    assert session.cont().reason == "end"
    assert session.named("G")["x"] == 1.0  # d(x*x)/dx at 0.5


def test_an_instruction_that_faults_in_gradient_mode_has_no_effect_and_the_way_back_is_true():
    """SUBATAN2's adjoint divides by x^2 + y^2, which is 0 for a tiny x = y: the reference
    machine raises after the value statement wrote $10; the debugger puts it back, as
    MachineFault promises, so going back from the fault retraces the true past."""
    from revasm.assembler import assemble
    source = (";; pendulum pal file\n.input a $4 int = 379\n.loss l $1\n        start\n"
              "        rbra   f\n        finish\nf_top:  bra    f_bot\nf:      swapbr $31\n"
              "        neg    $31\n        subatan2 $10 $4 $4\nf_bot:  bra    f_top\n")
    session = session_of(assemble(source, width=64), grad=True)
    start = state(session)
    assert session.cont().reason == "switch"
    before = None
    while (stop := session.step()).reason == "step":
        before = session.machine.snapshot()
    assert stop.reason == "fault" and stop.fault.kind == "divide-by-zero"
    assert "SUBATAN2" in stop.fault.message and session.machine.snapshot() == before
    assert session.cont(backward=True).reason == "switch"
    assert session.cont(backward=True).reason == "beginning"
    assert state(session) == start
