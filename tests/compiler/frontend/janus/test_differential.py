"""The Janus interpreter and the machine agree, forward and backward (a bounded sample).

Random well-formed programs (tests/support/janus_programs.py) and hand-written ones run on the
tree-walking interpreter and, compiled, on the reference machine: forward from main's
declared values, the machine's run back again, and backward from a random state.  The
final stores agree word for word, or both runs fault.  ``python bench/janus_campaign.py``
runs the same check on 500 and more programs.
"""
from __future__ import annotations

import pytest
from janus_programs import differential, random_program

#: The sample: enough programs to meet every statement kind, within the time budget; make
#: test runs the first 20 (each program has most statement kinds), make test-long the rest.
SEEDS = [seed if seed < 20 else pytest.param(seed, marks=pytest.mark.long)
         for seed in range(40)]

HAND_WRITTEN = {
    "nested loops and a do-part": """procedure main()
    int x = 3
    int y
    int a[3] = {4, -5, 6}
    local int i = 0
        from i = 0 do
            y += a[i] * x
        loop
            a[i] <=> a[0]
            x += i
        until i = 2 || y > 100
    delocal int i = 2
""",
    "procedures, uncall and a stack": """procedure twist(int u, int v, stack s)
    u += v / 3
    push(u, s)
    u += v % 5
    v ^= u
    pop(u, s)

procedure main()
    int p = -17
    int q = 40
    stack s
    call twist(p, q, s)
    call twist(q, p, s)
    uncall twist(p, q, s)
""",
    "a condition that changes in its branch": """procedure main()
    int x = 5
    int y = 0
    if x > 3 then
        x -= 10
        y += 1
    else
        y -= 1
    fi y = 1
""",
    "an element read twice and wrapping words": """procedure main()
    int a[2] = {2147483647, 3}
    int k
    int z
    z += (a[k] * a[k]) - (a[0] & a[k])
    z ^= a[1] * 1000000
""",
}


@pytest.mark.parametrize("seed", SEEDS)
def test_interpreter_and_machine_agree_on_random_programs(seed):
    assert differential(random_program(seed), seed) == []


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_interpreter_and_machine_agree_on_hand_written_programs(name):
    assert differential(HAND_WRITTEN[name], 7) == []
