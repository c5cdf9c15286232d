"""`revasm run --state FILE`: a backward run from a forward run's `--json` result (or a
plain {NAME: VALUE} object, Janus arrays and stacks as lists), instead of one `--set` per
word; and `revasm.run` on a Janus program taking and giving lists."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import revasm
from revasm.cli.main import cli
from revasm.compiler.api import compile_janus_source
from revasm.compiler.frontend.janus import check_program, parse_janus_file
from revasm.compiler.frontend.janus.interpreter import initial_store

ROOT = Path(__file__).resolve().parents[2]
RLE = ROOT / "examples" / "janus" / "rle.ja"


def _run(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["run", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_janus_run_is_undone_from_its_own_json_output(tmp_path):
    """rle.ja's 30 array words: the forward run's --json is the backward run's state."""
    forward = _run(str(RLE))
    state = tmp_path / "end.json"
    state.write_text(json.dumps(forward))
    backward = _run(str(RLE), "--reverse", "--state", str(state))
    start = {name: (list(v) if isinstance(v, list) else v.value if hasattr(v, "value") else v)
             for name, v in initial_store(check_program(parse_janus_file(str(RLE)))).items()}
    assert backward["named"] == json.loads(json.dumps(start))
    assert backward["named"] != forward["named"]


def test_a_plain_state_takes_janus_lists_and_set_overrides_it(tmp_path):
    state = tmp_path / "s.json"
    state.write_text(json.dumps({"text": [0] * 14, "arc": [4, 3, 9, 2, 1, 1, 7, 4, 3, 2, 0, 0,
                                                           0, 0], "i": 12, "j": 10}))
    backward = _run(str(RLE), "--reverse", "--state", str(state))
    assert backward["named"]["text"] == [4, 4, 4, 9, 9, 1, 7, 7, 7, 7, 3, 3, 0, 0]
    state.write_text(json.dumps({"text": [0] * 14, "arc": [0] * 14, "i": 0, "j": 0}))
    forward = _run(str(RLE), "--state", str(state), "--set", "text.0=5")
    assert forward["named"]["arc"][:2] == [5, 1]


def test_a_fixed_name_at_w64_comes_back_word_for_word(tmp_path):
    """The registers and memory load as raw words: a Q32.32 real that a JSON float cannot
    hold exactly still restores the start state bit for bit."""
    program = tmp_path / "p.pal"
    program.write_text(";; pendulum pal file\n.width 64\n.input x $1 fixed = 0.1\n"
                       ".output y $2 fixed\nstart\naddmul $2 $1 $1\nfinish\n")
    start = _run(str(program))
    state = tmp_path / "end.json"
    state.write_text(json.dumps(start))
    back = _run(str(program), "--reverse", "--state", str(state))
    assert back["registers"]["$2"] == 0
    assert back["registers"]["$1"] == revasm.run(revasm.assemble_file(str(program)),
                                                 engine="reference").registers["$1"]


def test_an_edited_name_in_a_json_state_is_applied(tmp_path):
    program = tmp_path / "p.pal"
    program.write_text(";; pendulum pal file\n.input n $1 int = 3\n.output m $2 int\n"
                       "start\nadd $2 $1\nfinish\n")
    end = _run(str(program))
    assert end["named"] == {"n": 3, "m": 3}
    end["named"]["m"] = 7  # the registers still say 3: the edit wins
    state = tmp_path / "end.json"
    state.write_text(json.dumps(end))
    back = _run(str(program), "--reverse", "--state", str(state))
    assert back["named"] == {"n": 3, "m": 4}


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "not an object"),
    ("{nope", "is not JSON"),
    ('{"text": [1, 2, 3]}', "text has 14 elements; the list gives 3"),
    ('{"i": 2.5}', "2.5 is not a whole number"),
])
def test_a_bad_state_is_a_usage_error(tmp_path, content: str, message: str):
    state = tmp_path / "s.json"
    state.write_text(content)
    result = CliRunner().invoke(cli, ["run", str(RLE), "--reverse", "--state", str(state)])
    assert result.exit_code == 2 and message in result.output, result.output


def test_revasm_run_takes_and_gives_janus_lists():
    program = compile_janus_source("procedure main()\n    int a[2][2]\n    stack s\n"
                                   "    int x\n    pop(x, s)\n    x += a[1][0]\n", "l.ja")
    result = revasm.run(program.image, {"a": [[1, 2], [3, 0]], "s": [5]}, engine="reference")
    assert result.status == "finished"
    assert result.named == {"a": [[1, 2], [3, 0]], "s": [], "x": 8}
    with pytest.raises(ValueError, match="holds at most 64"):
        revasm.run(program.image, {"s": [1] * 65}, engine="reference")
