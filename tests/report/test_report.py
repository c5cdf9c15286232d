"""Reports (report): counts checked by hand, totals against the simulator, models, schema."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_generators import ProgramCase, straight_line_programs, structured_programs

from revasm.assembler import assemble
from revasm.isa.table import INSTRUCTIONS
from revasm.machine import MachineFault
from revasm.report import (
    REPORT_CLASSES,
    ModelError,
    ReportError,
    access_of,
    build_report,
    build_value_report,
    bundled_models,
    gradient_mode_available,
    load_model,
    report_class,
    validate_report,
)
from revasm.report.access import analyse_adjoint, call_classes, gradient_writes
from revasm.report.energy_models import adiabatic_factor, landauer_joules_per_bit
from revasm.report.schema import REPORT_SCHEMA
from revasm.sim.engine import Lanes
from revasm.sim.host import load_inputs
from revasm.sim.reference import Machine

EXAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("examples").glob("*.pal"))
MODELS = bundled_models()
HEADER = ";; pendulum pal file\n"
NO_GRADIENT_TRAFFIC = {"gradient_reads": 0, "gradient_writes": 0, "memory_gradient_reads": 0,
                       "memory_gradient_writes": 0}


def report_of(source: str, *, width: int = 32, models=None, **registers: int) -> dict:
    image = assemble(HEADER + source, "t.pal", width=width)

    def prepare(machine: Lanes) -> None:
        load_inputs(machine, image, dict(registers))

    chosen = list(MODELS.values()) if models is None else [MODELS[m] for m in models]
    return build_value_report(image, prepare=prepare, models=chosen, all_models=MODELS)


def energy(report: dict, name: str) -> dict:
    return next(m for m in report["energy"] if m["name"] == name)


# --- two small programs, counted by hand -----------------------------------------------

STRAIGHT = """\
.input  x $1 int = 5
.output y $2 int
        start
        addi $3 7       ; ancilla $3 = 7
        add  $2 $1      ; y += x
        add  $2 $3      ; y += 7
        addi $3 -7      ; $3 = 0 again
        finish
"""


def test_straight_line_program_counts_checked_by_hand():
    report = report_of(STRAIGHT)
    assert report["status"] == "finished" and report["restored"] is True
    assert report["outputs"] == {"y": 12}
    forward, backward = report["runs"]
    # START, 2 ADDI, 2 ADD, FINISH; 6 cycles each on the RTL core (FETCH .. WAIT, NEXT).
    assert (forward["steps"], forward["cycles"]) == (6, 36)
    assert forward["by_instruction"] == {"START": 1, "ADDI": 2, "ADD": 2, "FINISH": 1}
    assert forward["by_class"] == {"alu": 4, "branch": 2}
    # Register ports: ADDI reads/writes $3; ADD reads $2,$1 (then $2,$3), writes $2.
    assert forward["traffic"] == {"register_reads": 6, "register_writes": 4,
                                  "memory_reads": 0, "memory_writes": 0,
                                  "instruction_fetches": 6, **NO_GRADIENT_TRAFFIC}
    # Live registers: {$1} -> {$1,$3} -> {$1,$2,$3} -> {$1,$2}; $3 is an ancilla.
    assert forward["occupancy"] == {"peak_live_registers": 3, "peak_data_words": 0,
                                    "highest_data_address": None, "ancilla_words": 1,
                                    "ancilla_registers": ["$3"], "peak_ancilla_words": 1}
    assert backward["by_instruction"] == forward["by_instruction"]
    assert report["totals"]["steps"] == 12
    scenarios = report["erasure"]["scenarios"]
    assert scenarios["reversible"]["bits_erased"] == 32            # y copied out
    assert scenarios["reversible_forward_only"]["bits_erased"] == 32  # no garbage left
    assert scenarios["irreversible"]["bits_erased"] == 4 * 32 + 32  # 4 overwrites + y
    # Tape: 4 words pushed; adjoints g[x] += g[y], g[$3] += g[y]; y copied out.
    assert scenarios["tape"]["bits_stored"] == 4 * 32
    assert scenarios["tape"]["bits_erased"] == 4 * 32 + 2 * 32 + 32
    # 45 nm: 4 adds x 0.1 + 10 register accesses x 1.25 + 6 fetches x 10 = 72.9 pJ per run.
    cmos = energy(report, "cmos45")
    assert cmos["by_run"] == pytest.approx({"forward/value": 72.9e-12,
                                            "backward/value": 72.9e-12})
    assert cmos["total_J"] == pytest.approx(145.8e-12)


MEMORY = """\
.input  a $1 fixed = 1.5
.output p $5
        start
        addi   $4 cell      ; pointer
        exch   $6 $4        ; $6 = 2.0, cell = 0
        addmul $5 $1 $6     ; p += a * 2.0
        exch   $6 $4        ; cell = 2.0, $6 = 0
        addi   $4 -cell
        finish
cell:   data   2.0
"""


def test_memory_and_multiply_program_counts_checked_by_hand():
    report = report_of(MEMORY)
    assert report["outputs"] == {"p": 3.0}
    forward = report["runs"][0]
    # Cycles on the RTL core: 6 each, and ADDMUL's product on the function unit (IDLE,
    # BEGIN (2), 33 multiplier steps and the return, ARITH_MUL (2): 39).
    assert (forward["steps"], forward["cycles"]) == (7, 6 * 7 + 39)
    assert forward["by_class"] == {"alu": 2, "memory": 2, "multiply": 1, "branch": 2}
    # Reads: ADDI 1, EXCH 2, ADDMUL 3, EXCH 2, ADDI 1; writes: one per instruction.
    assert forward["traffic"] == {"register_reads": 9, "register_writes": 5,
                                  "memory_reads": 2, "memory_writes": 2,
                                  "instruction_fetches": 7, **NO_GRADIENT_TRAFFIC}
    assert forward["occupancy"]["peak_live_registers"] == 4      # $1 $4 $6 $5
    assert forward["occupancy"]["peak_data_words"] == 1          # the cell
    assert forward["occupancy"]["ancilla_registers"] == ["$4", "$6"]
    assert forward["occupancy"]["peak_ancilla_words"] == 2
    # Irreversibly: 3 overwrites + 2 exchanges through a temporary; tape: 3 pushed words.
    assert forward["irreversible_overwrites"] == 5 and forward["tape_words"] == 3
    assert forward["adjoint_updates"] == 2                       # g[a], g[$6]
    # 45 nm, W = 32: 2 x 0.1 + 3.2 + 14 x 1.25 + 4 x 10 + 7 x 10 = 130.9 pJ.
    assert energy(report, "cmos45")["by_run"]["forward/value"] == pytest.approx(130.9e-12)
    # W = 64: adds x2, multiply x4 (W^2), register file x sqrt 2, memory and fetch x1.
    wide = report_of(MEMORY, width=64)
    expected = (2 * 0.2 + 3.2 * 4 + 14 * 1.25 * math.sqrt(2) + 40 + 70) * 1e-12
    assert energy(wide, "cmos45")["by_run"]["forward/value"] == pytest.approx(expected)


def test_emit_moves_a_word_off_the_machine_which_the_reversible_run_erases():
    report = report_of("""\
        start
        addi $2 4
        xor  $3 $2
        emit $3          ; tape <- 4, $3 = 0
        addi $2 -4
        finish
""")
    assert report["restored"] is True
    parts = report["erasure"]["scenarios"]["reversible"]["parts"]
    assert parts["emitted"] == 32
    assert report["runs"][0]["by_class"]["io"] == 1


def test_a_fault_stops_the_protocol_and_its_changed_words_are_erased_on_reset():
    report = report_of("""\
.input  x $1 fixed = 1.0
.output y $2
        start
        addi   $3 5
        adddiv $2 $1 $4   ; $4 = 0: divide by zero
        finish
""")
    assert report["status"] == "fault" and report["fault"]["kind"] == "divide-by-zero"
    assert report["restored"] is None and len(report["runs"]) == 1
    assert report["runs"][0]["steps"] == report["runs"][0]["machine_steps"] == 2
    assert report["erasure"]["scenarios"]["reversible"]["parts"]["fault_reset"] == 32
    assert validate_report(report) == []


# --- the counts agree with the simulator -----------------------------------------------

def _untraced(case_image, load) -> tuple[int, int, int, int]:
    machine = Machine(case_image, memory_words=1024, max_steps=200_000)
    load(machine)
    machine.run(1)
    forward = (machine.steps, machine.cycles)
    machine.run(-1)
    return (*forward, machine.steps, machine.cycles)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(straight_line_programs(), structured_programs()))
def test_count_totals_equal_the_simulator_steps_and_cycles_for_every_program(case: ProgramCase):
    try:
        expected = _untraced(case.image, case.load)
    except MachineFault:
        return  # data-dependent arithmetic faults: covered by the fault test above
    report = build_value_report(case.image, prepare=case.load, models=[MODELS["cmos45"]],
                                all_models=MODELS, memory_words=1024, max_steps=200_000)
    forward, backward = report["runs"]
    assert (forward["steps"], forward["cycles"], backward["steps"], backward["cycles"]) == expected
    for run in report["runs"]:
        assert sum(run["by_instruction"].values()) == run["steps"]
        assert sum(run["by_class"].values()) == run["steps"]
        assert sum(run["cycles_by_energy_class"].values()) == run["cycles"]
        assert run["traffic"]["instruction_fetches"] == run["steps"]
    assert forward["by_instruction"] == backward["by_instruction"]
    assert report["totals"]["steps"] == expected[0] + expected[2]
    assert report["restored"] is True
    assert validate_report(report) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_reports_with_totals_equal_to_the_simulator(path: Path):
    source = path.read_text()
    report = report_of(source)  # at W = 32, whatever the file's .width
    image = assemble(source, path.name, width=32)
    machine = Machine(image)
    for declared in image.names.values():
        if declared.default is not None:
            if declared.register is not None:
                machine.registers[declared.register] = declared.default
            else:
                machine.memory[declared.address] = declared.default
    machine.run(1)
    assert report["runs"][0]["steps"] == machine.steps
    assert report["runs"][0]["cycles"] == machine.cycles
    assert report["status"] == "finished" and report["restored"] is True
    assert validate_report(report) == []
    json.dumps(report)  # JSON-ready


# --- the table drives the classes and the accesses ---------------------------------------

def test_every_energy_class_of_the_table_has_a_report_class_and_a_cmos45_price():
    classes = {ins.energy_class for ins in INSTRUCTIONS}
    grouped = {e for _, members in REPORT_CLASSES.values() for e in members}
    assert classes <= grouped
    assert classes <= set(MODELS["cmos45"].data["operations"])
    assert report_class("mul") == "multiply" and report_class("func") == "function"


def test_accesses_are_read_off_the_semantics_templates():
    by_name = {ins.mnemonic: ins for ins in INSTRUCTIONS}
    add = access_of(by_name["ADD"], 1)
    assert set(add.register_reads) == {"a", "b"} and add.register_writes == ("a",)
    assert add.accumulated == ("a",) and not add.permutation
    exch = access_of(by_name["EXCH"], 1)
    assert (exch.memory_reads, exch.memory_writes, exch.permutation) == (1, 1, True)
    assert access_of(by_name["SWAP"], 1).permutation
    rot = access_of(by_name["ROT"], 1)
    assert set(rot.register_writes) == {"a", "b"} and rot.accumulated == ()
    emit_back = access_of(by_name["EMIT"], -1)  # R[a] ^= unemit() reads a
    assert emit_back.register_reads == ("a",) and emit_back.register_writes == ("a",)


def test_unit_calls_take_their_energy_class_from_the_primitives_and_isa_tables():
    # the classes a hand-kept dict gave before (fmul mul, fdiv div, rot/irot and fn_* func),
    # now derived from the primitives' units and the table's instructions that call them
    classes = call_classes()
    assert {name: classes[name] for name in ("fmul", "fdiv", "rot", "irot")} == {
        "fmul": "mul", "fdiv": "div", "rot": "func", "irot": "func"}
    functions = {name for name in classes if name.startswith("fn_")}
    assert len(functions) >= 13 and {classes[name] for name in functions} == {"func"}
    assert "fadd" not in classes and "shl" not in classes  # the ALU's rows
    rule = analyse_adjoint("G[{b}] = fadd(G[{b}], fmul(fdiv(G[{a}], R[{c}]), fn_cos(R[{b}])))")
    assert dict(rule.operations) == {"mul": 1, "div": 1, "func": 1, "alu": 1}


def test_a_gradient_tuple_assignment_from_a_non_gradient_value_writes_its_targets():
    # an exchange of gradient words writes none; a tuple assignment whose sources are not
    # all gradient words writes every target (it used to raise a TypeError sorting None
    # with the word names)
    assert gradient_writes("G[{a}], G[{b}] = G[{b}], G[{a}]") == 0
    assert gradient_writes("G[{a}], G[{b}] = G[{b}], 0") == 2


# --- models --------------------------------------------------------------------------------

def test_bundled_models_cite_their_sources_and_carry_horowitz_figures():
    assert list(MODELS) == ["cmos45", "adiabatic", "landauer"]
    cmos = MODELS["cmos45"].data
    assert "Horowitz" in cmos["source"] and "ISSCC 2014" in cmos["source"]
    assert cmos["operations"]["alu"]["pJ"] == 0.1
    assert cmos["operations"]["mul"]["pJ"] == pytest.approx(3.1 + 0.1)
    assert cmos["memory_access"]["pJ"] == 10.0
    assert "Landauer" in MODELS["landauer"].source


def test_landauer_bound_is_2_87_zeptojoules_per_bit_at_300_kelvin():
    assert landauer_joules_per_bit(300) == pytest.approx(2.87e-21, rel=1e-3)
    report = report_of(STRAIGHT, models=["landauer"])
    model = report["energy"][0]
    assert model["total_J"] == pytest.approx(32 * landauer_joules_per_bit(300))
    assert model["scenarios_J"]["irreversible"] == pytest.approx(160 * model["J_per_bit"])


def test_adiabatic_energy_falls_with_switching_time_until_leakage_dominates():
    data = MODELS["adiabatic"].data
    tau = data["rc_time_constant_s"]
    assert adiabatic_factor(data, tau) == pytest.approx(1 + tau / data["leakage_time_s"])
    report = report_of(STRAIGHT)
    model = energy(report, "adiabatic")
    optimum = model["optimal_switching_time_s"]
    assert optimum == pytest.approx(math.sqrt(2 * tau * data["leakage_time_s"]))
    before = [p["total_J"] for p in model["sweep"] if 2 * tau <= p["switching_time_s"] <= optimum]
    after = [p["total_J"] for p in model["sweep"] if p["switching_time_s"] >= optimum]
    assert before == sorted(before, reverse=True) and len(before) > 3
    assert after == sorted(after) and len(after) > 3
    cmos = energy(report, "cmos45")["total_J"]
    assert model["total_J"] == pytest.approx(cmos * model["factor"] + model["landauer_floor_J"])
    assert model["total_J"] < cmos


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"),
    ('{"kind": "landauer", "temperature_K": 300}', "missing 'name'"),
    ('{"name": "x", "kind": "magic"}', "'kind' must be one of"),
    ('{"name": "x", "kind": "landauer", "temperature_K": -1}', "'temperature_K' must be positive"),
    ('{"name": "x", "kind": "per_operation", "reference_width": 32, "operations": '
     '{"alu": {"pJ": "cheap"}}}', "operations.alu: 'pJ' must be a number"),
])
def test_model_files_are_checked_and_the_bad_field_is_named(tmp_path, text, message):
    path = tmp_path / "model.json"
    path.write_text(text)
    with pytest.raises(ModelError, match=message):
        load_model(path)


def test_an_edited_model_file_changes_the_energy_accordingly(tmp_path):
    data = json.loads(json.dumps(MODELS["cmos45"].data))
    data["name"] = "cheap_fetch"
    data["instruction_fetch"]["pJ"] = 0.0
    path = tmp_path / "cheap.json"
    path.write_text(json.dumps(data))
    model = load_model(path)
    image = assemble(HEADER + STRAIGHT, "t.pal")
    report = build_value_report(image, prepare=lambda m: None, models=[model],
                                all_models={model.name: model})
    # Without fetch energy: 72.9 - 60 pJ per run.
    assert report["energy"][0]["by_run"]["forward/value"] == pytest.approx(12.9e-12)


# --- schema --------------------------------------------------------------------------------

def test_the_schema_rejects_reports_that_break_it():
    report = report_of(STRAIGHT)
    assert validate_report(report) == []
    broken = json.loads(json.dumps(report))
    del broken["runs"][0]["traffic"]["memory_reads"]
    broken["width"] = 48
    broken["erasure"]["scenarios"]["tape"]["bits_erased"] = -1
    broken["surprise"] = 1
    problems = validate_report(broken)
    assert "$.runs[0].traffic: missing 'memory_reads'" in problems
    assert any(p.startswith("$.width:") for p in problems)
    assert any("bits_erased: -1 is below 0" in p for p in problems)
    assert "$: unexpected 'surprise'" in problems


def test_docs_describe_every_field_of_the_schema():
    docs = Path(__file__).resolve().parents[2].joinpath("docs", "energy.md").read_text()
    names: set[str] = set()

    def collect(schema: dict) -> None:
        for key, sub in schema.get("properties", {}).items():
            names.add(key)
            collect(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                collect(schema[key])

    collect(REPORT_SCHEMA)
    missing = sorted(name for name in names if f"`{name}`" not in docs)
    assert not missing, f"docs/energy.md does not describe: {missing}"


# --- gradient mode ----------------------------------------------------------------------

SQUARE = """\
.input  x $1 fixed = 0.5
.loss   y $2
        start
        addmul $2 $1 $1     ; y += x * x
        finish
"""


def test_gradient_mode_report_counts_the_adjoint_pass_by_hand():
    image = assemble(HEADER + SQUARE, "t.pal")
    options = dict(prepare=lambda m: load_inputs(m, image, {"x": "0.5"}), models=[MODELS["cmos45"]],
                   all_models=MODELS)
    if not gradient_mode_available():  # before sim/reference has the gradient switch
        with pytest.raises(ReportError, match="gradient mode is not available"):
            build_report(image, grad=True, **options)
        return
    report = build_report(image, grad=True, **options)
    assert report["mode"] == "gradient" and report["restored"] is True
    assert report["outputs"] == {"y": 0.25} and report["gradient"] == {"x": 1.0}
    forward, backward = report["runs"]
    assert (forward["mode"], backward["mode"]) == ("value", "gradient")
    assert forward["adjoint_operations"] == {}
    # Adjoint of y += x*x: g[x] += g[y]*x twice: 2 products, 2 additions;
    # it reads g[y], g[x] and writes g[x].
    assert backward["adjoint_operations"] == {"alu": 2, "mul": 2}
    assert (backward["traffic"]["gradient_reads"], backward["traffic"]["gradient_writes"]) == (2, 1)
    # Forward: 3.2 (multiply-add) + 3 register accesses x 1.25 + 3 fetches x 10 = 36.95 pJ;
    # backward adds 3 gradient accesses x 1.25 and 2 x 3.2 + 2 x 0.1 of adjoint arithmetic.
    cmos = report["energy"][0]["by_run"]
    assert cmos["forward/value"] == pytest.approx(36.95e-12)
    assert cmos["backward/gradient"] == pytest.approx(36.95e-12 + 3.75e-12 + 6.6e-12)
    # Reversible erasure: the loss and the one gradient copied out.
    assert report["erasure"]["scenarios"]["reversible"]["bits_erased"] == 2 * 32
    assert validate_report(report) == []


def test_gradient_mode_report_agrees_with_the_gradient_protocol():
    if not gradient_mode_available():
        return  # the test above checks the message until gradient mode exists
    from revasm.sim.host import gradient

    # A loop with a product and a function: sum_k x * sin(x), k = 1..5.
    image = assemble(HEADER + """\
.input  x $1 fixed = 0.75
.loss   s $2
        start
        addi   $5 5
        addsin $3 $1
top:    bne    $4 $0 bottom
        addmul $2 $3 $1
        addi   $4 1
bottom: bne    $4 $5 top
        sub    $4 $5
        subsin $3 $1
        addi   $5 -5
        finish
""", "t.pal")
    report = build_report(image, grad=True, prepare=lambda m: load_inputs(m, image, {"x": "0.75"}),
                          models=[], all_models=MODELS)
    expected = gradient(image, inputs={"x": "0.75"})
    assert report["gradient"] == {"x": float(expected.gradient["x"])}
    assert report["runs"][0]["steps"] == expected.forward.steps
    assert report["runs"][1]["steps"] == expected.backward.steps


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(straight_line_programs(), structured_programs()))
def test_gradient_report_counts_equal_the_simulator_for_every_program(case: ProgramCase):
    if not gradient_mode_available():
        return  # covered by the gradient tests above
    from revasm.sim.host import gradient

    try:
        expected = gradient(case.image, loss="$1", wrt=["$2"], prepare=case.load,
                            memory_words=1024, max_steps=200_000)
    except MachineFault:
        return
    report = build_report(case.image, grad=True, loss="$1", wrt=["$2"], prepare=case.load,
                          models=[MODELS["cmos45"]], all_models=MODELS, memory_words=1024,
                          max_steps=200_000)
    forward, backward = report["runs"]
    assert (forward["steps"], forward["cycles"]) == (expected.forward.steps,
                                                      expected.forward.cycles)
    assert (backward["steps"], backward["cycles"]) == (expected.backward.steps,
                                                        expected.backward.cycles)
    fmt_gradient = float(expected.gradient["$2"])
    assert report["gradient"] == {"$2": fmt_gradient}
    assert report["restored"] is True and validate_report(report) == []


TWO_FINISHES = """\
.input  x $1 fixed = 1.5
.loss   y $2
        start
from:   bra    over      ; jump over the first FINISH
        finish
over:   bra    from
        addmul $2 $1 $1  ; y = x^2
        finish
"""


@pytest.mark.parametrize("grad", [False, True])
def test_the_backward_run_starts_at_the_finish_the_forward_run_reached(grad):
    image = assemble(HEADER + TWO_FINISHES, "t.pal", width=64)
    assert image.finish == 2  # the image's first FINISH is not the one reached
    report = build_report(image, grad=grad, prepare=lambda m: load_inputs(m, image, {"x": "1.5"}),
                          models=[], all_models=MODELS, max_steps=1000)
    assert report["status"] == "finished"
    forward, backward = report["runs"]
    assert forward["steps"] == backward["steps"] == 5
    assert report["restored"] is True and report["outputs"] == {"y": 2.25}
    if grad:
        assert report["gradient"] == {"x": 3.0}
