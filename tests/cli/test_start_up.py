"""Start-up cost (issue #41): ``revasm --help`` and a small ``revasm run`` import only
what they use -- the subcommands load on first use (cli/main.py ``COMMANDS``) and the API's
names on first access (``revasm/__init__.py``).  Checked by the modules a fresh process
has imported, which does not depend on the machine's load as a timing would."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from revasm.cli.main import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]

#: What neither ``--help`` nor ``run examples/fib.pal`` needs.
HEAVY = ("numba", "amaranth", "revasm.bench", "revasm.rtl", "revasm.compiler",
         "revasm.batching", "revasm.report", "revasm.debug", "dask", "matplotlib")


def modules_after(*args: str) -> set[str]:
    """The modules a fresh ``revasm ARGS`` process has imported when it ends."""
    code = ("import sys\nfrom revasm.cli.main import cli\n"
            f"try:\n    cli.main({list(args)!r}, prog_name='revasm')\n"
            "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stderr.split())


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


def test_help_imports_no_command_and_no_numpy():
    modules = modules_after("--help")
    assert heavy(modules) == []
    assert "numpy" not in modules
    assert not any(m.startswith("revasm.cli.commands_") for m in modules)


@pytest.mark.parametrize("recorded", [False, True], ids=["new", "run-compiled-before"])
def test_a_small_run_imports_only_the_assembler_and_the_reference_engine(tmp_path, monkeypatch,
                                                                         recorded):
    """Also once the compiled engine has run the program (``auto`` reads its run record
    then: a file, not the engine)."""
    monkeypatch.setenv("REVASM_CACHE_DIR", str(tmp_path))
    if recorded:
        from types import SimpleNamespace

        from revasm.assembler import assemble_file
        from revasm.sim.compiled import cache
        from revasm.sim.reference import DEFAULT_MEMORY_WORDS

        image = assemble_file(ROOT / "examples" / "fib.pal")
        record = cache.run_record(image, DEFAULT_MEMORY_WORDS)
        record.parent.mkdir(parents=True, exist_ok=True)
        cache.record_run(record, SimpleNamespace(__file__=str(tmp_path / "kernel_x.py")), 134)
        assert record.exists()
    modules = modules_after("run", "examples/fib.pal")
    assert heavy(modules) == []
    assert {"revasm.cli.commands_run", "revasm.sim.reference"} <= modules


def test_import_revasm_is_light_and_every_api_name_resolves():
    proc = subprocess.run([sys.executable, "-c", "import sys, revasm\n"
                           "print('numpy' in sys.modules, 'revasm.sim' in sys.modules)"],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False", "False"], proc.stderr
    import revasm
    for name in revasm.__all__:
        assert getattr(revasm, name) is not None, name
    assert set(dir(revasm)) >= set(revasm.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        revasm.nonesuch  # noqa: B018


def test_the_submodule_rtl_sim_does_not_hide_the_function_rtl_sim():
    code = ("import revasm.rtl_sim, revasm\nfrom revasm.rtl_sim import rtl_sim\n"
            "assert revasm.rtl_sim is rtl_sim, revasm.rtl_sim\nprint('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_its_commands_own_short_help(name):
    """``revasm --help`` lists the summaries of COMMANDS without importing the commands;
    each must read as the command's own help would, at any terminal width."""
    command = cli.commands[name]
    assert command.name == name
    for limit in (30, 45, 60, 80, 200):
        assert click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit) == \
            command.get_short_help_str(limit), (name, limit)


def test_every_command_is_listed_and_reachable():
    assert sorted(cli.commands) == sorted(COMMANDS)
    assert set(cli.list_commands(click.Context(cli))) == set(COMMANDS)
    assert "run" in cli.commands and cli.commands.get("nonesuch") is None
    with pytest.raises(KeyError):
        cli.commands["nonesuch"]
