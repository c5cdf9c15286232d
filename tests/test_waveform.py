"""`revasm run --vcd`: the reference's waveforms, named and timed as the RTL's.

Both runs of examples/fib.pal (and of a program with a second register write, memory,
output and a loop) are written as VCDs -- ``revasm run --vcd`` from the reference,
``revasm rtl sim --vcd`` from Amaranth's simulation of the core -- read back with vcdvcd,
and every signal of the reference's file must exist in the RTL's and hold the same value
at every moment up to the end of the reference's run.
"""
from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

from click.testing import CliRunner  # noqa: E402
from vcdvcd import VCDVCD  # noqa: E402

from revasm.cli.main import cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

BUSY = """;; pendulum pal file
.input n $5 int = 3
        start
        addi   $1 7
        addi   $2 -2
top:    bne    $6 $0 bot        ; from i = 0
        swap   $1 $2            ; a second register write (WRITEB)
        show   $1
        addi   $6 1
bot:    bne    $6 $5 top        ; until i = n
        addi   $3 200
        exch   $1 $3            ; [200] = the last $1
        emit   $2
        finish
"""


def _value(changes: list[tuple[int, str]], time: int) -> int:
    index = bisect_right([t for t, _ in changes], time) - 1
    return int(changes[index][1], 2)


def _agree(reference: Path, rtl: Path) -> tuple[int, int]:
    ours, theirs = VCDVCD(str(reference), store_tvs=True), VCDVCD(str(rtl), store_tvs=True)
    end = ours.endtime
    assert theirs.endtime > end  # the RTL's file goes on: read-back, the backward run
    compared = 0
    for name in ours.references_to_ids:
        assert name in theirs.references_to_ids, name
        mine, other = ours[name].tv, theirs[name].tv
        for time in sorted({t for t, _ in mine} | {t for t, _ in other if t <= end}):
            assert _value(mine, time) == _value(other, time), (name, time)
            compared += 1
    return len(ours.references_to_ids), compared


@pytest.mark.parametrize("source", ["examples/fib.pal", "busy.pal"])
def test_the_reference_waveforms_equal_the_rtl_ones_on_every_shared_signal(tmp_path, source):
    runner = CliRunner()
    if source == "busy.pal":
        (tmp_path / source).write_text(BUSY)
        path = str(tmp_path / source)
    else:
        path = str(ROOT / source)
    ours, theirs = tmp_path / "reference.vcd", tmp_path / "rtl.vcd"
    result = runner.invoke(cli, ["run", path, "--vcd", str(ours), "--json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.output)["steps"]
    result = runner.invoke(cli, ["rtl", "sim", path, "--vcd", str(theirs)])
    assert result.exit_code == 0, result.output
    signals, compared = _agree(ours, theirs)
    assert signals == 19 + 32  # bench.top's and the register file's
    pulses = VCDVCD(str(ours), store_tvs=True)["bench.top.retire__valid"].tv
    assert sum(value == "1" for _, value in pulses) == steps
    assert compared > 4 * steps


def test_a_unit_instruction_is_refused_not_mistimed(tmp_path):
    out = tmp_path / "apex.vcd"
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples/apex.pal"), "--vcd",
                                      str(out)])
    assert result.exit_code == 1
    assert "--vcd: ADDDIV $3 $1 $2 at line 8: ADDDIV waits for a unit" in result.output
    assert "not modelled" in result.output and not out.exists()
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples/fib.pal"), "--vcd",
                                      str(ROOT / "examples/fib.pal")])
    assert result.exit_code == 2 and "--vcd" in result.output  # never over the program
