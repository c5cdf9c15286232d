"""`pip install .` builds without warnings, and the installed package works from elsewhere.

The wheel is built the way pip builds it for a user (an isolated build environment with
the setuptools pyproject.toml asks for), then unpacked into a folder that is not the
repository and imported from a third directory: the installed layout (src/revasm:
``revasm.cli``, ``revasm.isa``, ..., the data packages) must be complete on its own.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-cache-dir",
         "-w", str(out), "-v"],
        capture_output=True, text=True, timeout=600, cwd=out)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (path,) = out.glob("revasm-*.whl")
    return path, built.stdout + built.stderr


def test_the_build_prints_no_setuptools_warning(wheel):
    _, log = wheel
    warnings = [line.strip() for line in log.splitlines()
                if re.search(r"Warning\b|deprecated|is absent from the `packages`", line)]
    assert not warnings, "\n".join(warnings)


def test_the_wheel_holds_every_package_and_data_file(wheel):
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    for expected in ("revasm/__init__.py", "revasm/cli/main.py", "revasm/sim/engine.py",
                     "revasm/sim/reference/machine.py", "revasm/report/models/cmos45.json",
                     "revasm/rtl/verification/harness/harness.cpp", "revasm/bench/__init__.py",
                     "revasm/compiler/api.py", "revasm/isa/table.py"):
        assert expected in names, expected
    assert not any(name.startswith(("tests/", "examples/", "src/", "bench/")) for name in names)


def test_the_installed_package_runs_from_another_directory(wheel, tmp_path):
    path, _ = wheel
    target = tmp_path / "site"
    zipfile.ZipFile(path).extractall(target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "fib.pal").write_text((ROOT / "examples" / "fib.pal").read_text())
    script = ("import revasm, revasm.cli.main as m; "
              "print(revasm.__file__); "
              "print(revasm.run(revasm.assemble_file('fib.pal')).named['fib'])")
    env = dict(os.environ, PYTHONPATH=str(target))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=elsewhere, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    location, fib = done.stdout.split()
    assert Path(location).is_relative_to(target)
    assert fib == "2584"
