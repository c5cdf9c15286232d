"""``compiler/api.py``: compiling a ``@reversible`` function object (``compile_function``),
including one defined where no file holds it -- a Jupyter/IPython cell, whose text IPython
keeps in :mod:`linecache` under a made-up file name, or a plain prompt, which keeps none."""
from __future__ import annotations

import linecache
from pathlib import Path

import pytest

import revasm
from revasm.compiler import CompileError, compile_function

CELL = """\
from revasm.compiler import Int, reversible

print("a cell may hold any Python beside the function")


@reversible
def triple(x: Int, y: Int):
    y += x
    y += x
    y += x
"""


def define(source: str, filename: str, *, keep: bool) -> object:
    """Run ``source`` as IPython runs a cell: compiled under ``filename`` (a file that does
    not exist), with its lines in linecache when ``keep`` (IPython's cell cache)."""
    if keep:
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    else:
        linecache.cache.pop(filename, None)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


@pytest.fixture
def cell_name(tmp_path: Path):
    name = str(tmp_path / "ipykernel_4242" / "2718281828.py")  # ipykernel's naming; no file
    yield name
    linecache.cache.pop(name, None)


def test_a_function_from_a_notebook_cell_compiles_from_the_cell_text(cell_name):
    triple = define(CELL, cell_name, keep=True)["triple"]
    assert not Path(cell_name).exists()
    program = compile_function(triple)
    assert program.entry == "triple"
    assert revasm.run_program(triple, {"x": 7}).values["y"] == 21


def test_a_gradient_of_a_cell_function(cell_name):
    source = ("from revasm.compiler import Fixed, Loss, reversible, sin\n\n@reversible\n"
              "def f(loss: Loss, x: Fixed):\n    loss += sin(x)\n")
    f = define(source, cell_name, keep=True)["f"]
    assert revasm.grad_program(f, {"x": 0.5}, width=64).gradient["x"] == \
        pytest.approx(0.8775825618903728, abs=1e-8)


def test_a_compile_error_in_a_cell_points_into_the_cell(cell_name):
    source = CELL.replace("    y += x\n    y += x\n    y += x\n", "    y += y\n")
    broken = define(source, cell_name, keep=True)["triple"]
    with pytest.raises(CompileError) as info:
        compile_function(broken)
    assert info.value.pos.file == cell_name
    assert info.value.pos.line == source.splitlines().index("    y += y") + 1


def test_a_function_whose_source_nothing_kept_is_a_clear_error_naming_compile_source():
    linecache.cache.pop("<stdin>", None)
    triple = define(CELL, "<stdin>", keep=False)["triple"]
    with pytest.raises(CompileError) as info:
        compile_function(triple)
    message = info.value.format()
    assert "cannot read the source of triple" in message
    assert "revasm.compile_source(text, 'triple')" in message
    assert "No such file" not in message
    with pytest.raises(CompileError, match="cannot read the source of triple"):
        revasm.run_program(triple, {"x": 1})


def test_compile_source_is_the_way_out_the_error_names():
    program = revasm.compile_source(CELL, "triple")
    assert revasm.run_program(program, {"x": 2}).values["y"] == 6
