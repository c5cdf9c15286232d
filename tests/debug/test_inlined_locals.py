"""``print NAME`` finds a local of a call the compiler inlined: its home is named
``NAME__FUNCTION<line>_<col>`` (``compiler/ir/inline_functions.py``), which a person at the
callee's line does not type."""
from __future__ import annotations

from pathlib import Path

from revasm.debug import Session, SourceMap
from revasm.debug.commands import Interpreter, inlined_homes
from revasm.loading import load_program
from revasm.sim.host import initial_words

SOURCE = """\
procedure bump(int a)
    local int k = 2
    a += k
    delocal int k = 2

procedure twice(int a)
    local int k = 3
    a += k
    delocal int k = 3

procedure main()
    int x
    int y
    call bump(x)
    call twice(y)
"""


def _interpreter(tmp_path: Path) -> Interpreter:
    path = tmp_path / "inlined.ja"
    path.write_text(SOURCE)
    loaded = load_program(str(path))
    registers, memory = initial_words(loaded.image, {})
    return Interpreter(Session(loaded.image, registers=registers, memory=memory,
                               source=SourceMap(loaded.image, loaded.program)))


def test_the_homes_of_a_name_are_its_inlined_copies_only():
    names = ["k__bump14_5", "k__twice15_5", "kk__bump14_5", "k", "k__bump", "x"]
    assert inlined_homes("k", names) == ["k__bump14_5", "k__twice15_5"]
    assert inlined_homes("kk", names) == ["kk__bump14_5"]
    assert inlined_homes("x", names) == []


def test_print_finds_the_one_inlined_home_and_names_the_others(tmp_path):
    interpreter = _interpreter(tmp_path)
    interpreter.execute("break :3")
    interpreter.execute("continue")
    [ambiguous] = interpreter.execute("print k")
    assert ambiguous["event"] == "error"
    assert "k__bump14_5" in ambiguous["message"] and "k__twice15_5" in ambiguous["message"]
    [value] = interpreter.execute("print k__bump14_5")
    assert value["value"] == 2
    [missing] = interpreter.execute("print nothing")
    assert missing["event"] == "error" and "is not $N" in missing["message"]


def test_print_resolves_a_name_with_one_inlined_home(tmp_path):
    path = tmp_path / "one.ja"
    path.write_text(SOURCE.replace("    call twice(y)\n", ""))
    loaded = load_program(str(path))
    registers, memory = initial_words(loaded.image, {})
    interpreter = Interpreter(Session(loaded.image, registers=registers, memory=memory,
                                      source=SourceMap(loaded.image, loaded.program)))
    interpreter.execute("break :3")
    interpreter.execute("continue")
    [value] = interpreter.execute("print k")
    assert value["event"] == "value", value
    assert value["value"] == 2 and value["name"].startswith("k (k__bump14_5")
