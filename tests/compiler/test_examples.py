"""The NiLang examples in the eDSL: they compile, run, restore the machine, agree with float64.

Inputs, float64 references and tolerances (with their reasons) live in
examples/nilang/cases.py; the same cases feed examples/nilang/counts.py.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from nilang_examples import program_files

import revasm
from revasm.cli.main import cli
from revasm.compiler import compile_file, compile_source
from revasm.program_counts import count_program as count
from revasm.programs import grad_program as grad
from revasm.programs import run_program as run

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples/nilang" / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


cases = _load("nilang_cases", "cases.py")
CASES = {c.name: c for c in cases.CASES}


def _close(got, want, tolerance):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= tolerance, (got, want)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("name", list(CASES))
def test_example_agrees_with_float64_and_runs_backward_to_its_inputs(name, width):
    case = CASES[name]
    program = compile_file(case.path, case.entry, width=width)
    result = run(program, case.inputs, width=width, reverse_check=True)
    for key, want in case.reference(case.inputs).items():
        _close(result.values[key], want, case.tolerance[width])


def test_every_file_in_examples_nilang_compiles():
    files = program_files()
    workloads = _load("nilang_workloads_files", "workloads.py")
    checked = {c.file for c in CASES.values()} | set(workloads.PROGRAM_FILES)
    assert checked == {p.name for p in files}  # every program has a float64 reference
    for path in files:
        program = compile_file(path)
        assert program.image.finish is not None


def test_rfib_10_is_55_and_rfibn_finds_12():
    assert run(CASES["rfib"].path and compile_file(CASES["rfib"].path), {"n": 10}).values["out"] \
        == 55
    result = run(compile_file(CASES["rfibn"].path), {"n": 0, "z": 100})
    assert result.values == {"n": 12, "z": 100}


def test_uncalling_rfibn_restores_its_inputs():
    source = (CASES["rfibn"].path.read_text() +
              "\n\n@reversible\ndef there_and_back(n: Int, z: Int, m: Int):\n"
              "    rfibn(n, z)\n    m += n\n    ~rfibn(n, z)\n")
    result = run(compile_source(source, "there_and_back", "rfibn2.py"),
                 {"n": 0, "z": 100, "m": 0})
    assert result.values == {"n": 0, "z": 100, "m": 12}


@pytest.mark.parametrize("name", list(CASES))
def test_revasm_check_restores_the_state_of_the_compiled_program(name, tmp_path):
    case = CASES[name]
    out = tmp_path / f"{name}.pal"
    runner = CliRunner()
    compiled = runner.invoke(cli, ["compile", f"{case.path}:{case.entry}", "-o", str(out)])
    assert compiled.exit_code == 0, compiled.output
    sets = []
    for key, value in case.inputs.items():
        flat = np.asarray(value).ravel().tolist() if isinstance(value, list) else None
        if flat is None:
            sets.append(f"{key}={value}")
        else:
            shape = np.asarray(value).shape
            for index, element in zip(np.ndindex(*shape), flat):
                sets.append(f"{key}.{'.'.join(map(str, index))}={element}")
    args = ["check", str(out), "--json"]
    for s in sets:
        args += ["--set", s]
    checked = runner.invoke(cli, args)
    assert checked.exit_code == 0, checked.output
    assert '"restored": 1' in checked.output


def test_petersen_penalty_branch_is_taken_and_still_agrees():
    # a small random embedding: edges and non-edges have about the same length, so
    # m = mean(edges) - mean(non-edges) + 0.1 > 0 and the exp penalty applies
    x = np.array(cases.X_PETERSEN) * 0.05
    program = compile_file(CASES["petersen"].path, "embedding_loss", width=64)
    result = run(program, {"x": x.tolist()}, reverse_check=True)
    d = [np.linalg.norm(x[u] - x[v]) for u, v in zip(cases.PAIR_U, cases.PAIR_V)]
    assert np.mean(d[:15]) - np.mean(d[15:]) + 0.1 > 0
    assert abs(result.values["out"] - cases.petersen_loss(x)) < 1e-6


def _central(f, x, h=1e-6):
    x = np.array(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_gradient_of_the_petersen_loss_agrees_with_float64():
    x = cases.X_PETERSEN
    g = grad(CASES["petersen"].path, {"x": x}, width=64)
    assert abs(g.loss - cases.petersen_loss(x)) < 1e-7
    _close(g.gradient["x"], _central(cases.petersen_loss, x), 1e-5)


def test_gradient_of_bessel_j2_is_j1_minus_2_j2_over_z():
    for z in (0.5, 1.0, 2.5):
        g = grad(f"{CASES['ibesselj'].path}:ibesselj", {"z": z}, width=64)
        j1 = sum((-1) ** k * (z / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
                 for k in range(40))
        j2 = cases._bessel_j2(z)
        assert abs(g.gradient["z"] - (j1 - 2 * j2 / z)) < 1e-5


def test_gradients_of_dot_and_norm2():
    x, y = cases.X4, cases.Y4
    g = grad(f"{CASES['dot'].path}:dot", {"x": x, "y": y}, width=64)
    _close(g.gradient["x"], y, 1e-9)
    _close(g.gradient["y"], x, 1e-9)
    g = grad(f"{CASES['norm2'].path}:norm2", {"x": x}, width=64)
    _close(g.gradient["x"], 2 * np.array(x), 1e-9)


def test_instruction_counts_and_uncomputing_levels():
    levels = {}
    for name in ("dot", "rfib", "qr"):
        case = CASES[name]
        c = count(compile_file(case.path, case.entry), case.inputs)
        assert c.irreversible < c.steps
        assert sum(c.by_role.values()) == c.steps
        levels[name] = c.level
    # a plain loop needs almost no uncomputation; the recursion uncomputes every call
    assert levels["dot"] < 0.5 < levels["qr"] < levels["rfib"]


def test_gradient_of_the_sparse_dot_product_is_the_other_matrix():
    case = CASES["sparse_dot"]
    g = grad(f"{case.path}:sparse_dot", case.inputs, width=64)
    assert abs(g.loss - float((cases.SPARSE_A * cases.SPARSE_B).sum())) < 1e-9
    rows, cols = np.nonzero(cases.SPARSE_A.T)  # CSC order: column by column
    _close(g.gradient["a_nzval"], cases.SPARSE_B[cols, rows], 1e-9)
    rows, cols = np.nonzero(cases.SPARSE_B.T)
    _close(g.gradient["b_nzval"], cases.SPARSE_A[cols, rows], 1e-9)


def test_a_decorated_function_compiles_and_runs_from_python(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples/nilang"))
    module = importlib.import_module("rfib")
    assert run(module.rfib, {"n": 10}).values["out"] == 55
    assert module.rfib.compile().image == run(module.rfib, {"n": 3}).program.image
    with pytest.raises(TypeError, match="is a reversible program.*revasm.run_program"):
        module.rfib(0, 10)


def test_run_program_and_counts_start_from_the_declared_defaults():
    """rfib declares n: Int[1, 16] = 10: with no inputs the run is fib(10), as `revasm run`."""
    program = compile_file(ROOT / "examples/nilang/rfib.py", "rfib")
    assert run(program).values == {"out": 55, "n": 10}
    assert run(program, {"n": 6}).values["out"] == 8
    assert count(program, {}).steps == revasm.run(program.image).steps
