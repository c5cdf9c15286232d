"""The entry point (revasm/launch.py): Ctrl-C while the command line loads exits 130 saying
so -- with ``--json`` as the one error object -- never with a traceback of an import."""
from __future__ import annotations

import json
import sys
import types

import pytest

from revasm import launch
from revasm.cli.json_mode import error_object
from revasm.interrupts import caused_by_ctrl_c


class _Interrupting(types.ModuleType):
    def __getattr__(self, name: str):
        raise KeyboardInterrupt  # as if Ctrl-C came while the module loaded


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_while_the_command_line_loads_exits_130_saying_so(
        monkeypatch, capsys, as_json):
    monkeypatch.setitem(sys.modules, "revasm.cli.main", _Interrupting("revasm.cli.main"))
    monkeypatch.setattr(sys, "argv", ["revasm", "run", "x.pal", *(["--json"] if as_json
                                                                   else [])])
    with pytest.raises(SystemExit) as stopped:
        launch.main()
    assert stopped.value.code == 130
    out, err = capsys.readouterr()
    assert err == launch.MESSAGE + "\n" and "Traceback" not in err
    if as_json:
        printed = json.loads(out)
        expected = error_object("interrupted", launch.MESSAGE, 130)
        assert printed == expected  # the shape every other JSON error has
    else:
        assert out == ""


def test_the_command_and_python_m_revasm_start_here():
    """Both entry points go through launch.main (pyproject's script, __main__.py)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert 'revasm = "revasm.launch:main"' in (root / "pyproject.toml").read_text()
    assert "from revasm.launch import main" in (root / "src" / "revasm" / "__main__.py").read_text()


def _wrapped_ctrl_c() -> RuntimeError:
    """What Python raises when Ctrl-C comes while a class is made: a RuntimeError from
    ``__set_name__`` whose cause is the KeyboardInterrupt."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from interrupt
    except RuntimeError as wrapped:
        return wrapped


def test_ctrl_c_wrapped_by_python_is_still_ctrl_c():
    assert caused_by_ctrl_c(KeyboardInterrupt())
    assert caused_by_ctrl_c(_wrapped_ctrl_c())
    assert not caused_by_ctrl_c(RuntimeError("a bug"))
    looped = ValueError("x")
    looped.__context__ = looped  # a cycle ends the walk
    assert not caused_by_ctrl_c(looped)


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_wrapped_in_a_runtime_error_exits_130_not_internal_error(
        monkeypatch, capsys, as_json):
    """Found by the signals campaign: Ctrl-C during a lazy import that defined a dataclass
    reached the command line as "internal error: RuntimeError" (exit 1)."""
    from revasm.cli import commands_run, main

    def interrupted(*args, **kwargs):
        raise _wrapped_ctrl_c()

    monkeypatch.setattr(commands_run, "load_program", interrupted)
    monkeypatch.setattr(sys, "argv", ["revasm", "run", "examples/fib.pal",
                                      *(["--json"] if as_json else [])])
    with pytest.raises(SystemExit) as stopped:
        main.main()
    assert stopped.value.code == 130
    out, err = capsys.readouterr()
    assert "revasm: interrupted" in err and "internal error" not in err + out
    if as_json:
        assert json.loads(out)["error"]["kind"] == "interrupted"
