"""rtl/synthesis/area.py: a netlist's LUT4 counted by the registers they feed."""
from __future__ import annotations

from revasm.rtl.synthesis.area import register_breakdown


def _lut(inputs: list[int], output: int) -> dict:
    return {"type": "SB_LUT4", "port_directions": {"I0": "input", "O": "output"},
            "connections": {"I0": inputs, "O": [output]}}


def _flop(d: int, q: int) -> dict:
    return {"type": "SB_DFF", "port_directions": {"D": "input", "C": "input", "Q": "output"},
            "connections": {"D": [d], "C": [1], "Q": [q]}}


def test_a_lut_counts_for_each_register_it_feeds() -> None:
    """LUT a feeds acc alone; b feeds c, which feeds acc and count: b and c are shared."""
    cells = {"a": _lut([2], 10), "b": _lut([3], 11), "c": _lut([11], 12),
             "acc_ff": _flop(10, 20), "acc_ff2": _flop(12, 21), "count_ff": _flop(12, 22)}
    netlist = {"modules": {"top": {
        "ports": {"clk": {"direction": "input", "bits": [1]}},
        "netnames": {"acc": {"bits": [20, 21]}, "count": {"bits": [22]},
                     "$auto$1": {"bits": [10], "hide_name": 1}},
        "cells": cells}}}
    rows, unreached = register_breakdown(netlist)
    by_name = {row.register: row for row in rows}
    assert unreached == 0
    acc, count = by_name["acc"], by_name["count"]
    assert (acc.split, acc.only, acc.flip_flops) == (2.0, 1, 2)
    assert (count.split, count.only, count.flip_flops) == (1.0, 0, 1)
    assert [row.register for row in rows] == ["acc", "count"]


def test_a_lut_reaching_an_output_is_counted_for_it() -> None:
    netlist = {"modules": {"top": {
        "ports": {"y": {"direction": "output", "bits": [5]}},
        "netnames": {"y": {"bits": [5]}},
        "cells": {"a": _lut([2], 5), "dead": _lut([2], 6)}}}}
    rows, unreached = register_breakdown(netlist)
    assert [(row.register, row.split) for row in rows] == [("output y", 1.0)]
    assert unreached == 1
