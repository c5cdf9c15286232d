"""DAP values (issue #41): Variables, hovers and evaluate read each word as its place is
declared (machine/values.py: a fixed name a real, an int name an integer, a register or
word with no name a signed word); words on request (``raw:NAME``, ``format: {"hex": true}``,
launch ``"display": "words"``); setVariable takes a value as the view shows it."""
from __future__ import annotations

from pathlib import Path

import pytest

from revasm.cli.commands_debug import dap_session
from revasm.debug.dap import SCOPES, Adapter

ROOT = Path(__file__).resolve().parents[2]
BESSEL = ROOT / "examples" / "bessel_j2.pal"  # .width 64: 1.0 is the word 2**32
DIAMONDS = ROOT / "examples" / "diamonds.pal"


class Driver:
    """Requests to an :class:`Adapter`, each answered by its response message."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.adapter = Adapter(self.sent.append, dap_session)
        self.seq = 0

    def send(self, command: str, **arguments) -> dict:
        self.seq += 1
        self.adapter.handle({"seq": self.seq, "type": "request", "command": command,
                             "arguments": arguments})
        [answer] = [m for m in self.sent if m["type"] == "response"
                    and m["request_seq"] == self.seq]
        return answer

    def variables(self, scope: str, **arguments) -> dict[str, dict]:
        reference = SCOPES.index(scope) + 1
        listed = self.send("variables", variablesReference=reference, **arguments)
        return {v["name"]: v for v in listed["body"]["variables"]}

    def evaluate(self, expression: str, **arguments) -> str:
        answer = self.send("evaluate", expression=expression, context="hover", **arguments)
        assert answer["success"], answer
        return answer["body"]["result"]


def _at_the_loop(**launch) -> Driver:
    driver = Driver()
    assert driver.send("initialize")["body"]["supportsValueFormattingOptions"] is True
    assert driver.send("launch", program=str(BESSEL), set={"x": 1.0}, **launch)["success"]
    driver.send("setBreakpoints", source={"path": str(BESSEL)}, breakpoints=[{"line": 37}])
    driver.send("configurationDone")
    return driver


def test_fixed_names_show_as_reals_in_variables_and_hovers_and_words_on_request():
    driver = _at_the_loop()
    registers = driver.variables("Registers")
    assert registers["$1"]["value"] == "1.0" and registers["$1"]["type"] == "fixed x"
    assert registers["$4"]["value"] == "4294967296"  # li $4 1.0: a register, no name
    assert registers["$4"]["type"] == "word (as a real: 1.0)"
    assert registers["$16"]["value"] == "16" and registers["$14"]["type"] == "word"
    assert driver.variables("Names")["x"] == {"name": "x", "value": "1.0", "type": "fixed",
                                              "variablesReference": 0}
    assert driver.evaluate("x") == "1.0"
    assert driver.evaluate("$1") == "1.0 (x; word 4294967296)"
    assert driver.evaluate("$4") == "4294967296 (as a real: 1.0)"
    assert driver.evaluate("raw:x") == "4294967296"
    assert driver.evaluate("raw: $1") == "4294967296"
    assert driver.evaluate("x", format={"hex": True}) == "0x0000000100000000"
    assert driver.evaluate("$7", format={"hex": True}) == "0xfffffffffd555555"
    assert driver.evaluate("PC", format={"hex": True}) == "0x15"
    hexed = driver.variables("Registers", format={"hex": True})
    assert hexed["$1"]["value"] == "0x0000000100000000"
    assert driver.variables("Names", format={"hex": False})["x"]["value"] == "1.0"
    assert not driver.send("evaluate", expression="raw:nowhere")["success"]


def test_the_words_display_shows_words_and_set_variable_takes_what_is_shown():
    driver = _at_the_loop(display="words")
    assert driver.variables("Names")["x"]["value"] == "4294967296"
    assert driver.variables("Registers")["$1"]["value"] == "4294967296"
    assert driver.evaluate("x") == "4294967296"
    answer = driver.send("setVariable", variablesReference=SCOPES.index("Names") + 1,
                         name="x", value="8589934592")  # a word, as shown: x = 2.0
    assert answer["success"] and answer["body"]["value"] == "8589934592"
    driver.adapter.display = "values"
    assert driver.evaluate("x") == "2.0"
    refused = driver.send("launch", program=str(BESSEL), display="reals")
    assert not refused["success"] and '"display" is' in refused["message"]


def test_set_variable_on_a_register_reads_the_value_as_its_name_is_declared():
    driver = _at_the_loop()
    registers = SCOPES.index("Registers") + 1
    answer = driver.send("setVariable", variablesReference=registers, name="$1", value="2.5")
    assert answer["success"] and answer["body"]["value"] == "2.5"  # x is fixed: a real
    assert driver.evaluate("x") == "2.5"
    word = driver.send("setVariable", variablesReference=registers, name="$4", value="2.5")
    assert not word["success"] and "not a whole number" in word["message"]  # $4: a word
    assert driver.send("setVariable", variablesReference=registers, name="$4",
                       value="7")["body"]["value"] == "7"


def test_int_names_show_integers_and_gradients_show_reals():
    driver = Driver()
    driver.send("launch", program=str(DIAMONDS), stopOnEntry=True)
    driver.send("configurationDone")
    assert driver.variables("Names")["x"]["value"] == "-3"
    assert driver.variables("Registers")["$1"] == {"name": "$1", "value": "-3",
                                                   "type": "int x", "variablesReference": 0}
    assert driver.evaluate("$2") == "4 (y)" and driver.evaluate("y") == "4"

    grad = Driver()
    grad.send("launch", program=str(BESSEL), grad=True, set=["x=1.0"])
    grad.send("configurationDone")  # stops at the gradient switch
    assert grad.variables("Gradient")["dj2"]["value"] == "1.0"
    assert grad.evaluate("j2").endswith("(gradient 1.0)")
    assert grad.evaluate("raw:j2").endswith("(gradient 4294967296)")


@pytest.mark.parametrize("fmt", [None, 1, "hex", {"hex": 1}, {"hex": "yes"}, []])
def test_a_format_that_is_not_hex_true_shows_values(fmt):
    driver = _at_the_loop()
    assert driver.variables("Names", format=fmt)["x"]["value"] == "1.0"
