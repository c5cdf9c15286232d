"""The one value rule (machine/values.py), from every place a user gives a value.

The rule's table is asserted word for word at W = 32 (``test_the_rule``); then every entry
point -- ``run --set``, ``--mem``, ``grad-expr --at``, batch columns (Python lists, CSV),
the debugger's ``set``, the DAP ``launch`` ``set`` and ``setVariable``, the Python API
(``revasm.run`` inputs, ``Machine.set``, ``run_program``) and a Janus program's inputs --
must store the same word, or refuse with the same message, for every (place kind, input
kind) pair of the table (docs/cli.md "Values").
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import revasm
from revasm.cli.main import cli
from revasm.compiler import Fixed, Int, Out, reversible
from revasm.compiler.api import compile_janus_source
from revasm.isa.fixed_point import word_format
from revasm.machine.values import FIXED, INT, WORD, ValueRuleError, word_of

FMT = word_format(32)
MASK = FMT.mask

PAL = """;; pendulum pal file
.input n $1 int = 0
.input x $2 fixed = 0
.input m cell int = 0
.input y ycell fixed = 0
        start
        finish
cell:   data 0
ycell:  data 0
"""

#: (place, kind, input, the word stored -- or a piece of the error message)
TABLE = [
    # an int name: integers (whole reals too), the signed range, raw words by raw:
    ("n", INT, "2", 2),
    ("n", INT, "-7", MASK - 6),
    ("n", INT, "2.0", 2),
    ("n", INT, "2.5", "2.5 is not a whole number, and n is an integer (int)"),
    ("n", INT, "0x10", 16),
    ("n", INT, "raw:0xffffffff", MASK),
    ("n", INT, "2147483648", "2147483648 does not fit a 32-bit int (from -2147483648 to "
                             "2147483647)"),
    ("n", INT, "abc", "'abc' is not a number"),
    ("n", INT, "nan", "nan is not a finite number"),
    # a fixed name: reals (integers are reals too), Q16.16, raw words by raw:
    ("x", FIXED, "1", 1 << 16),
    ("x", FIXED, "1.0", 1 << 16),
    ("x", FIXED, "-0.5", MASK + 1 - (1 << 15)),
    ("x", FIXED, "1e-3", 66),
    ("x", FIXED, "raw:5", 5),
    ("x", FIXED, "40000.0", "40000.0 does not fit Q16.16 (from -32768 to 32767.99998)"),
    ("x", FIXED, "40000", "40000 does not fit Q16.16"),
    ("x", FIXED, "raw:0x100000000", "does not fit a 32-bit word (from -2147483648 to "
                                    "4294967295)"),
    ("x", FIXED, "abc", "'abc' is not a number"),
    # a memory name: its declared type, as for a register name
    ("m", INT, "3.0", 3),
    ("m", INT, "0.5", "0.5 is not a whole number, and m is an integer (int)"),
    ("y", FIXED, "3", 3 << 16),
    # a register: a raw word, signed or its unsigned bits
    ("$3", WORD, "7", 7),
    ("$3", WORD, "7.0", 7),
    ("$3", WORD, "-1", MASK),
    ("$3", WORD, "0xffffffff", MASK),
    ("$3", WORD, "1.5", "1.5 is not a whole number, and $3 is a raw word (an integer)"),
    ("$3", WORD, "99999999999", "99999999999 does not fit a 32-bit word"),
    ("$3", WORD, "1.5e99", "1.5e99 does not fit a 32-bit word"),
    ("$3", WORD, "raw:-1", MASK),
    ("$3", WORD, "raw:zz", "a raw word is an integer"),
    ("$3", WORD, "", "is not a number"),
]


@reversible
def add_n(out: Out[Int], n: Int, x: Fixed):
    out += n


IDS = [f"{place}={text}" for place, _, text, _ in TABLE]
REGISTERS = {"n": 1, "x": 2, "$3": 3}


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("values") / "values.pal"
    path.write_text(PAL)
    return path


def outcome(act) -> int | str:
    """The word an entry point stored, or its error message."""
    try:
        return act()
    except Exception as exc:  # every entry point's own error type carries the message
        return f"error: {exc}"


def check(got: int | str, expected: int | str, entry: str) -> None:
    if isinstance(expected, int):
        assert got == expected, f"{entry}: {got!r}"
    else:
        assert isinstance(got, str) and expected in got, f"{entry}: {got!r}"


@pytest.mark.parametrize("place, kind, text, expected", TABLE, ids=IDS)
def test_the_rule(place, kind, text, expected):
    check(outcome(lambda: word_of(text, FMT, kind, place)), expected, "word_of")


def _stored(image: revasm.Image, machine, place: str) -> int:
    declared = image.resolve_name(place)
    if declared.register is not None:
        return int(machine.registers[declared.register])
    return int(machine.get_memory(declared.address, signed=False))


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _run_set(program: Path, place: str, text: str) -> int | str:
    code, out, err = _cli("run", program, "--set", f"{place}={text}", "--json")
    if code:
        return f"error: {err}"
    data = json.loads(out)
    image = revasm.load(program)
    declared = image.resolve_name(place)
    if declared.register is not None:
        return data["registers"][f"${declared.register}"] & MASK
    return data["memory"].get(str(declared.address), 0) & MASK


def _mem(program: Path, place: str, text: str) -> int | str:
    declared = revasm.load(program).resolve_name(place)
    code, out, err = _cli("run", program, "--mem", f"{declared.address}={text}", "--json")
    if code:
        return f"error: {err}"
    return json.loads(out)["memory"].get(str(declared.address), 0) & MASK


def _debugger(program: Path, place: str, text: str) -> int:
    from revasm.cli.commands_debug import open_session
    session = open_session(str(program))
    session.set_value(place, text)
    return _stored(session.image, session.machine, place)


class _Client:
    """A DAP adapter driven in process: requests in, messages out."""

    def __init__(self) -> None:
        from revasm.cli.commands_debug import _dap_session
        from revasm.debug.dap import Adapter
        self.messages: list[dict] = []
        self.adapter = Adapter(self.messages.append, _dap_session)

    def request(self, command: str, **arguments) -> dict:
        self.adapter.handle({"seq": 1, "type": "request", "command": command,
                             "arguments": arguments})
        response = [m for m in self.messages if m["type"] == "response"][-1]
        if not response["success"]:
            raise ValueError(response["message"])
        return response


def _dap_launch(program: Path, place: str, text: str) -> int:
    client = _Client()
    client.request("launch", program=str(program), set=[f"{place}={text}"])
    session = client.adapter.session
    return _stored(session.image, session.machine, place)


def _dap_set_variable(program: Path, place: str, text: str) -> int:
    client = _Client()
    client.request("launch", program=str(program))
    reference = 1 if place.startswith("$") else 2  # the Registers scope, the Names scope
    client.request("setVariable", variablesReference=reference, name=place, value=text)
    session = client.adapter.session
    return _stored(session.image, session.machine, place)


def _api_run(program: Path, place: str, text: str) -> int:
    image = revasm.load(program)
    result = revasm.run(image, {place: text}, engine="reference")
    declared = image.resolve_name(place)
    if declared.register is not None:
        return result.registers[f"${declared.register}"] & MASK
    return result.memory.get(str(declared.address), 0) & MASK


def _machine_set(program: Path, place: str, text: str) -> int:
    from revasm.sim.reference import Machine
    machine = Machine(revasm.load(program))
    machine.set(place, text)
    return _stored(machine.image, machine, place)


def _batch_list(program: Path, place: str, text: str) -> int:
    image = revasm.load(program)
    result = revasm.batch(image, {place: [text]}, engine="vector")
    return _batch_word(image, result, place)


def _batch_word(image, result, place: str) -> int:
    declared = image.resolve_name(place)
    if declared.register is not None:
        return int(result.registers[f"${declared.register}"][0]) & MASK
    value = result.named[place][0]
    return word_of(value.item(), FMT, FIXED if declared.fixed else INT)


def _batch_csv(program: Path, place: str, text: str, tmp_path: Path) -> int:
    from revasm.batching.inputs import column_words, read_columns, resolve_column
    path = tmp_path / "inputs.csv"
    with path.open("w", newline="") as stream:
        csv.writer(stream).writerows([[place], [text]])
    image = revasm.load(program)
    values = read_columns(path)[place]
    return int(column_words(resolve_column(place, image), values, FMT)[0])


ENTRIES = {"run --set": _run_set, "run --mem": _mem, "debugger set": _debugger,
           "dap launch set": _dap_launch, "dap setVariable": _dap_set_variable,
           "revasm.run inputs": _api_run, "Machine.set": _machine_set,
           "revasm.batch list": _batch_list}


#: which places each entry point sets: --mem memory words, Machine.set declared names
APPLIES = {"run --mem": ("m", "y"), "Machine.set": ("n", "x", "m", "y")}
CASES = [pytest.param(entry, *row, id=f"{entry}:{ident}") for entry in sorted(ENTRIES)
         for row, ident in zip(TABLE, IDS) if row[0] in APPLIES.get(entry, row[0])]


@pytest.mark.parametrize("entry, place, kind, text, expected", CASES)
def test_every_entry_point_stores_the_same_word_or_refuses_alike(program, entry, place,
                                                                  kind, text, expected):
    check(outcome(lambda: ENTRIES[entry](program, place, text)), expected, entry)


@pytest.mark.parametrize("place, kind, text, expected",
                         [row for row in TABLE if row[2]],  # an empty cell is a missing value
                         ids=[ident for row, ident in zip(TABLE, IDS) if row[2]])
def test_a_csv_batch_column_reads_by_the_rule(program, tmp_path, place, kind, text,
                                              expected):
    # a CSV cell that is not an integer is read as a float, and shown as one
    expected = {"abc": "not a number", "raw:zz": "a raw word is an integer",
                "nan": "not a finite number",
                "1.5e99": "1.5e+99 does not fit a 32-bit word"}.get(text, expected)
    check(outcome(lambda: _batch_csv(program, place, text, tmp_path)), expected, "csv")


NUMBERS = [("n", 2.0, 2), ("n", 2.5, "2.5 is not a whole number"), ("n", True, "not a number"),
           ("x", 1, 1 << 16), ("x", 0.5, 1 << 15), ("x", 40000.0, "does not fit Q16.16"),
           ("$3", 7.0, 7), ("$3", 0.5, "not a whole number"), ("$3", float("inf"),
                                                               "not a finite number")]


@pytest.mark.parametrize("entry", ["revasm.run inputs", "revasm.batch list"])
@pytest.mark.parametrize("place, value, expected", NUMBERS)
def test_python_numbers_follow_the_same_rule(program, entry, place, value, expected):
    check(outcome(lambda: ENTRIES[entry](program, place, value)), expected, entry)


@pytest.mark.parametrize("text, expected", [(t, e) for p, _, t, e in TABLE if p == "x"])
def test_grad_expr_at_reads_a_fixed_value(text, expected):
    code, out, err = _cli("grad-expr", "x + 0", "--at", f"x={text}", "--width", "32",
                          "--json")
    got: int | str = f"error: {err}" if code else \
        word_of(json.loads(out)["value"], FMT, FIXED)
    check(got, expected, "grad-expr --at")


INT_ROWS = [(t, e) for p, _, t, e in TABLE if p == "n"]


@pytest.mark.parametrize("text, expected", INT_ROWS)
def test_a_compiled_program_and_janus_read_their_ints_by_the_rule(text, expected):
    def compiled() -> int:
        return revasm.run_program(add_n, {"n": text}).values["out"] & MASK

    check(outcome(compiled), expected, "run_program")
    janus = compile_janus_source("procedure main()\n    int n\n    int out\n    out += n\n",
                                 "t.ja").image

    def janus_run() -> int:
        return revasm.run(janus, {"n": text}).named["out"] & MASK

    check(outcome(janus_run), expected, "janus")
    assert ValueRuleError.__mro__[1] is ValueError
