"""`revasm run` / `check` and the step limit every command shares (docs/decisions.md, "No
default step limit"): none unless asked for -- a run ends at FINISH, at a fault or on
Ctrl-C -- so a real program is never stopped by a default (issue #41)."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import click
from click.testing import CliRunner

import revasm
from revasm.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: Commands whose --max-steps is a different thing: the debugger's is a per-command pause
#: (docs/debugger.md), the RTL lockstep's a bound of its simulators.
OWN_LIMITS = {"debug", "rtl sim"}


def _leaves(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_leaves(command, f"{prefix}{name} "))
        else:
            found[prefix + name] = command
    return found


def test_no_command_and_no_api_call_has_a_default_step_limit():
    limited = {}
    for name, command in _leaves(cli).items():
        for param in command.params:
            if param.name == "max_steps" and name not in OWN_LIMITS:
                limited[name] = param.default
    assert set(limited) >= {"run", "check", "grad", "hessian", "batch", "report"}
    assert all(default is None for default in limited.values()), limited
    for function in (revasm.run, revasm.check, revasm.batch, revasm.grad, revasm.hessian,
                     revasm.run_program, revasm.grad_program, revasm.report_program,
                     revasm.count_program):
        default = inspect.signature(function).parameters["max_steps"].default
        assert default is None, (function.__name__, default)


def test_a_run_longer_than_the_old_default_limit_finishes():
    """fib(2 000 000): 14 000 008 steps, beyond the 10 000 000 that used to stop it."""
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "fib.pal"), "--set", "n=2000000",
                                      "--engine", "compiled", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["status"], out["steps"]) == ("finished", 14_000_008)


def test_a_limit_asked_for_still_stops_exactly():
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "fib.pal"), "--max-steps", "10",
                                      "--json"])
    out = json.loads(result.stdout)
    assert result.exit_code == 1
    assert (out["fault"]["kind"], out["steps"]) == ("step-limit", 10)
