"""The host's readings every front end shares (sim/host.py): the declared names' values of
a lane (``named_columns``/``named_values``) and the default loss (``loss_place``)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import revasm
from revasm.assembler import assemble
from revasm.sim.engines import available, load
from revasm.sim.host import (
    GradientError,
    load_inputs,
    loss_place,
    named_columns,
    named_values,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = ";; pendulum pal file\n"


@pytest.mark.parametrize("engine", available())
@pytest.mark.parametrize("name", ["fixed_point.pal", "multiply.pal", "bessel_j2.pal"])
def test_run_batch_and_report_read_the_names_alike(engine, name):
    image = revasm.load(EXAMPLES / name)
    machine = load(image, 3, engine_name=engine)
    load_inputs(machine, image)
    machine.run(1)
    columns = named_columns(machine)
    assert list(columns) == list(image.names)
    for lane in range(3):
        assert named_values(machine, lane) == {n: c[lane].item() for n, c in columns.items()}
    single = revasm.run(image, engine=engine)
    assert single.named == named_values(machine, 0)
    assert all(isinstance(single.named[n], float if d.fixed else int)
               for n, d in image.names.items())
    outputs = {n for n, d in image.names.items() if d.role in ("output", "loss")}
    assert set(named_values(machine, roles=("output", "loss"))) == outputs


def test_a_batch_reads_them_too_with_nan_where_a_lane_faulted():
    image = assemble(HEADER + ".input x $1 fixed = 1.0\n.output y $2\n.output n $3 int\n"
                     "        start\n        addsqrt $2 $1\n        addi $3 7\n        finish\n")
    result = revasm.batch(image, {"x": [4.0, -1.0, 0.25]})
    assert result.status.tolist() == ["finished", "fault", "finished"]
    assert result.named["y"][0] == 2.0 and math.isnan(result.named["y"][1])
    assert result.named["y"][2] == 0.5
    assert result.named["n"].dtype.kind == "i" and result.named["n"][0] == 7
    assert revasm.run(image, {"x": 4.0}).named == {"x": 4.0, "y": 2.0, "n": 7}


def test_the_default_loss_is_the_one_declared():
    one = assemble(HEADER + ".input x $1 fixed\n.loss y $2\nstart\nadd $2 $1\nfinish\n")
    assert (loss_place(one).name, loss_place(one).register) == ("y", 2)
    assert loss_place(one, "$1").register == 1
    none = assemble(HEADER + ".input x $1 fixed\nstart\nfinish\n")
    with pytest.raises(GradientError, match="needs a loss.*declares no .loss"):
        loss_place(none)
    two = assemble(HEADER + ".loss y $2\n.loss z $3\nstart\nfinish\n")
    with pytest.raises(GradientError, match="several: y, z"):
        loss_place(two)
    assert loss_place(two, "z").register == 3
