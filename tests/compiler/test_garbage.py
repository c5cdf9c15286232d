"""A compilation leaves no reference cycles behind: with the cyclic collector off, dropping
the compiled program frees its IR at once.  A recursive closure over the module kept a
10^5-statement program's 900 000 objects alive, and the collection that found them cost
0.55 s on every command after it."""
from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from revasm.compiler import compile_file
from revasm.compiler.api import compile_janus_file

EXAMPLES = Path(__file__).parents[2] / "examples"
SOURCES = ["janus/factor.ja", "janus/fib_pair.ja", "janus/isqrt.ja", "nilang/gmm.py",
           "nilang/qr.py", "nilang/rfibn.py", "nilang/sparse_dot.py"]


def _compile(name: str):
    path = EXAMPLES / name
    return compile_janus_file(path) if path.suffix == ".ja" else compile_file(path)


@pytest.mark.parametrize("name", SOURCES)
def test_dropping_a_compiled_program_frees_its_ir_without_the_collector(name):
    _compile(name)  # imports and caches first
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        program = _compile(name)
        module = weakref.ref(program.module)
        body = weakref.ref(program.module.functions[program.entry])
        del program
        assert module() is None and body() is None
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        ours = [type(o).__qualname__ for o in gc.garbage
                if type(o).__module__.startswith("revasm")]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_on:
            gc.enable()
