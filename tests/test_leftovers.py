"""A command's leftovers (revasm/leftovers.py): ``revasm compile`` leaves its program to the
process's end -- which ends without freeing it -- and still writes, flushes and exits as
before; a command run inside another program keeps nothing."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from revasm import leftovers
from revasm.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "janus" / "fib_pair.ja"


def _revasm(*args: object, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "revasm", *map(str, args)],
                          stdin=subprocess.DEVNULL, capture_output=True, cwd=ROOT,
                          timeout=120, **kwargs)  # type: ignore[call-overload]


def test_compile_writes_its_files_and_says_so_before_the_process_ends(tmp_path):
    out = tmp_path / "fib.pal"
    done = _revasm("compile", PROGRAM, "-o", out)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert err.endswith(f"instructions -> {out}\n")
    assert out.read_text().startswith(";; pendulum pal file")
    assert json.loads((tmp_path / "fib.pal.map.json").read_text())  # the whole map


def test_compile_json_is_one_whole_object_on_a_pipe(tmp_path):
    done = _revasm("compile", PROGRAM, "--json")  # the PAL text inside: kilobytes
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    assert answer["status"] == "ok" and answer["text"].startswith(";; pendulum pal file")


def test_a_command_run_inside_another_program_keeps_nothing(tmp_path):
    before = list(leftovers._kept)
    result = CliRunner().invoke(cli, ["compile", str(PROGRAM), "-o", str(tmp_path / "f.pal")])
    assert result.exit_code == 0, result.output
    assert leftovers._kept == before and not leftovers.kept()
