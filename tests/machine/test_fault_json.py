"""A machine fault as JSON (``revasm.machine.fault_json``): one shape, every field, every user.

The shape is ``kind``, ``pc``, ``file``, ``line``, ``source`` (the source line's text),
``message`` (a compiled program's fault adds ``check`` and its ``pal_*`` lines);
the command line (``run --json``, ``grad --json``), the Python API's results, reports,
batches and the debugger write it (adding their own context), so a fault reads the same
wherever it is reported.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import revasm
from revasm.assembler import assemble
from revasm.debug.commands import fault_event
from revasm.debug.session import Session
from revasm.machine import MachineFault, fault_json
from revasm.machine.fault_json import FAULT_JSON_KEYS
from revasm.report import build_value_report, bundled_models, validate_report
from revasm.sim.reference import Machine

SOURCE = """\
;; pendulum pal file
.input  x $1 fixed = 1.0
.output y $2
        start
        addi   $3 5
        adddiv $2 $3 $4   ; $4 = 0: divide by zero
        finish
"""
#: the fault every run of SOURCE stops with, as JSON
EXPECTED = {"kind": "divide-by-zero", "pc": 2, "file": "div.pal", "line": 6,
            "source": "adddiv $2 $3 $4   ; $4 = 0: divide by zero"}


@pytest.fixture(scope="module")
def image():
    return assemble(SOURCE, "div.pal")


def _reference_fault(image) -> MachineFault:
    machine = Machine(image)
    with pytest.raises(MachineFault) as info:
        machine.run(1)
    return info.value


def test_a_fault_as_json_names_kind_pc_line_source_and_message(image):
    fault = _reference_fault(image)
    shape = fault_json(fault)
    assert tuple(shape) == FAULT_JSON_KEYS == ("kind", "pc", "file", "line", "source",
                                               "message")
    assert shape == {**EXPECTED, "message": fault.message}
    assert shape["message"] == ("ADDDIV $2 $3 $4 at line 6 (pc 2): division by zero "
                                "(raw dividend 5)")
    assert json.loads(json.dumps(shape)) == shape


def test_a_fault_without_a_source_line_has_null_line_and_source():
    fault = MachineFault("no-finish", "a backward run was asked of a program without FINISH")
    assert fault_json(fault) == {"kind": "no-finish", "pc": None, "file": None, "line": None,
                                 "source": None, "message": fault.message}


def test_the_api_report_batch_and_debugger_write_the_one_shape(image):
    expected = fault_json(_reference_fault(image))
    result = revasm.run(image, engine="reference")
    assert result.to_json()["fault"] == expected
    check = revasm.check(image, random=1, engine="reference")
    assert check.states
    assert all(trip.to_json()["fault"] == expected for trip in check.states)
    models = bundled_models()
    report = build_value_report(image, prepare=lambda machine: None,
                                models=list(models.values()), all_models=models)
    assert report["fault"] == expected
    assert validate_report(report) == []
    batch = revasm.batch(image, {"x": [0.5, 2.0]}, engine="vector")
    assert batch.faults == [{"lane": 0, **expected}, {"lane": 1, **expected}]
    stop = Session(image).cont()
    assert stop.fault is not None
    event = fault_event(stop.fault)
    assert {key: event[key] for key in FAULT_JSON_KEYS} == expected
    assert set(event) == {*FAULT_JSON_KEYS, "br", "dir", "report"}


def test_the_report_schema_requires_the_source(image):
    models = bundled_models()
    report = build_value_report(image, prepare=lambda machine: None,
                                models=list(models.values()), all_models=models)
    del report["fault"]["source"]
    assert validate_report(report)


def test_the_command_line_writes_the_one_shape(image, tmp_path):
    from revasm.cli.main import cli

    path = tmp_path / "div.pal"
    path.write_text(SOURCE)
    expected = fault_json(_reference_fault(image))
    out = CliRunner().invoke(cli, ["run", str(path), "--json", "--engine", "reference"])
    assert out.exit_code == 1
    assert json.loads(out.stdout)["fault"] == {**expected, "file": str(path)}
