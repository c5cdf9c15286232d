"""A program whose stack climbs just above the image: the compiled engine's window.

The compiled engine keeps the words just above the image in a window that doubles as a
lane climbs (``sim/compiled/vocab.window_slot``), and every other address in a table.
Four lanes push 130, 20, 90 and 1 words upward from different places; a word 100 above
the image is written first (a table slot then), and the window grown past it must take
it in.  Both kernels run it (tests/sim/compiled/test_engine.py,
tests/sim/compiled/test_interpreter.py).
"""
from __future__ import annotations

import numpy as np
from lane_checks import assert_same, gradient_pass
from program_generators import ProgramCase

from revasm.assembler import assemble
from revasm.sim.reference.engine import ReferenceLanes

WINDOW_PROGRAM = """;; pendulum pal file
        start
        addi  $7 9
        exch  $7 $3         ; a word far above the image (a table slot at first)
top:    bne   $6 $0 bottom
        addi  $2 1
        add   $2 $6
        exch  $2 $1         ; push i + 1 just above the image, upward
        addi  $1 1
        addi  $6 1
bottom: bne   $6 $5 top
        finish
"""

def check_window_program(kernel: str, gradient: bool = True):  # -> CompiledLanes
    """Run the program forward, then its gradient pass with tangents (the Hessian
    kernels; without ``gradient`` a plain backward run), on ``kernel`` and on the
    reference, the two the same after each (every lane's state, the memory and gradient
    banks).  The compiled lanes are returned."""
    from revasm.sim.compiled.machine import CompiledLanes

    image = assemble(WINDOW_PROGRAM, width=64)
    top = len(image.words)
    compiled = CompiledLanes(image, 4, memory_words=128, kernel=kernel)
    reference = ReferenceLanes(image, 4, memory_words=128)
    registers = {1: [top, top + 3, top + 50, top + 7], 3: [top + 100] * 4,
                 5: [130, 20, 90, 1]}
    for machine in (compiled, reference):
        for r, values in registers.items():
            machine.set_bank_word("R", r, np.array(values, dtype=np.uint64))
        machine.run(1)
    addresses = range(top, top + 200)
    assert_same(compiled, reference, banks=("MEM",), addresses=addresses)
    assert int(compiled.bank_word("MEM", top + 100)[2]) == 51  # lane 2 pushed 51 over the 9
    if not gradient:
        for machine in (compiled, reference):
            machine.run(-1)
        assert_same(compiled, reference, banks=("MEM",), addresses=addresses)
        assert not compiled.bank_word("MEM", top + 100).any()  # every push undone
        return compiled
    gradient_pass(ProgramCase(image), compiled, reference, 5, tangent=True)
    assert_same(compiled, reference, banks=("G", "GM", "T", "TM"), addresses=addresses)
    return compiled
