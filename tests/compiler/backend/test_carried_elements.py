"""``backend/carried_elements.py``: the element one iteration stores and the next loads stays in
its register, the loop unrolled by two with a plain iteration for an odd trip count (-O2).

Pinned on PAL (what the rewrite removes, what keeps a loop as it is) and on programs:
every trip count (0 to 11, odd and even, forward and backward walks) gives -O0's values,
loss and gradient words, the backward run restores the machine and ``revasm check``
passes; a hypothesis property runs random walks of that shape.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import revasm
from revasm.compiler import compile_source
from revasm.compiler.backend.carried_elements import carry_elements
from revasm.compiler.backend.code import Instr
from revasm.programs import grad_program, read_values, run_program

N = 12
HEADER = ("from revasm.compiler import ROT, Array, Fixed, Int, Loss, ancilla, free, reversible\n\n"
          f"N = {N}\n\n")

GIVENS_ROW = """@reversible
def f(out: Loss, x: Array[Fixed, N], t: Array[Fixed, N], w: Array[Fixed, N], j: Int[0, 11]):
    k = ancilla(0)
    for i in range(N - 2, j - 1, -1):
        ROT(x[i], x[i + 1], t[k])
        k += 1
    free(k, N - 1 - j, checked=True)
    for i in range(N):
        out += w[i] * x[i]
"""

FORWARD_WALK = """@reversible
def f(out: Loss, x: Array[Fixed, N], t: Array[Fixed, N], w: Array[Fixed, N], j: Int[0, 11]):
    k = ancilla(0)
    for i in range(j, N - 1):
        x[i + 1] += x[i] * t[k]
        k += 1
    free(k, N - 1 - j, checked=True)
    for i in range(N):
        out += w[i] * x[i]
"""


def _inputs(seed: int, j: int) -> dict:
    rng = random.Random(seed)
    return {"x": [rng.uniform(-2, 2) for _ in range(N)],
            "t": [rng.uniform(-1.5, 1.5) for _ in range(N)],
            "w": [rng.uniform(-1, 1) for _ in range(N)], "j": j}


def _words(source: str, inputs: dict, level: int) -> tuple[tuple, int, object]:
    program = compile_source(HEADER + source, "f", "t.py", width=64, for_gradient=True,
                             level=level)
    result = run_program(program, inputs, width=64, reverse_check=True)
    gradient = grad_program(program, inputs, width=64).exact
    return ((read_values(program, result.machine, exact=True), gradient.loss,
             dict(gradient.gradient)), result.steps, program)


def _same_words_at_every_trip_count(source: str) -> list[tuple[int, int]]:
    steps = []
    for j in range(N):  # N - 1 - j iterations: 11 down to 0 (and one empty range)
        inputs = _inputs(j, j)
        plain, plain_steps, _ = _words(source, inputs, 0)
        lean, lean_steps, program = _words(source, inputs, 2)
        assert lean == plain, j
        assert revasm.check(program.image, random=2, seed=j).failures == []
        steps.append((plain_steps, lean_steps))
    return steps


# --- on PAL ---------------------------------------------------------------------------------

def _i(text: str, label: str = "") -> Instr:
    mnemonic, *operands = text.split()
    return Instr(mnemonic.upper(), tuple(operands), label=label)


LOOP = [_i("bne $26 $24 L2", "L1"), _i("exch $2 $26"), _i("exch $3 $27"), _i("exch $4 $20"),
        _i("rot $2 $3 $4"), _i("exch $4 $20"), _i("exch $3 $27"), _i("exch $2 $26"),
        _i("addi $20 1"), _i("addi $26 -1"), _i("addi $27 -1"), _i("bne $26 $25 L1", "L2")]
POINTERS = {"$26": (("x", (("i", 1),)), 0), "$27": (("x", (("i", 1),)), 1),
            "$20": (("t", (("k", 1),)), 0)}


def _labels():
    count = iter(range(100, 200))
    return lambda kind: f"L{next(count)}_{kind}"


def _texts(code: list[Instr]) -> list[str]:
    return [(f"{i.label}: " if i.label else "") + " ".join(i.text().split()) for i in code]


def test_a_pair_of_iterations_loads_and_stores_one_element_each():
    out = _texts(carry_elements(LOOP, {"L1": POINTERS}, "$28", _labels()))
    start = out.index("L106_ptop: bne $26 $24 L107_pbottom")
    end = out.index("L107_pbottom: bne $26 $25 L106_ptop")
    assert out[start + 1:end] == [
        "exch $2 $26", "exch $4 $20", "rot $2 $3 $4", "exch $4 $20", "exch $3 $27",
        "addi $20 1", "addi $26 -1", "addi $27 -1",
        "exch $3 $26", "exch $4 $20", "rot $3 $2 $4", "exch $4 $20", "exch $2 $27",
        "addi $20 1", "addi $26 -1", "addi $27 -1"]
    # the carried element: loaded into B before the pairs, stored from B after them
    assert out[start - 1] == out[end + 1] == "exch $3 $27"
    # the trip count's parity, set before and cleared after (ANDIX is its own inverse)
    assert out[:2] == out[-2:] == ["andix $28 $24 1", "andix $28 $25 1"]
    assert "sub $24 $28" in out and "add $24 $28" in out  # counting down: the start moves


def test_loops_that_do_not_qualify_stay_as_they_are():
    same = {"L1": POINTERS}
    # no free register for the parity; no record of the loop's pointers
    assert carry_elements(LOOP, same, None, _labels()) == LOOP
    assert carry_elements(LOOP, {}, "$28", _labels()) == LOOP
    # the pointers' distance is not the step's opposite (x[i] and x[i + 2])
    apart = {**POINTERS, "$27": (("x", (("i", 1),)), 2)}
    assert carry_elements(LOOP, {"L1": apart}, "$28", _labels()) == LOOP
    # a third access into x (it could read the word that holds a leftover meanwhile)
    third = {**POINTERS, "$20": (("x", (("k", 1),)), 0)}
    assert carry_elements(LOOP, {"L1": third}, "$28", _labels()) == LOOP
    # an exchange through an address the lowering did not record
    moved = [*LOOP[:3], _i("exch $4 $13"), *LOOP[4:5], _i("exch $4 $13"), *LOOP[6:]]
    assert carry_elements(moved, same, "$28", _labels()) == moved
    # B used before its element is loaded
    early = [LOOP[0], _i("addi $3 1"), *LOOP[1:7], _i("addi $3 -1"), *LOOP[7:]]
    assert carry_elements(early, same, "$28", _labels()) == early
    # the body reads the start bound (it moves while the pairs run)
    reads = [*LOOP[:4], _i("add $5 $24"), *LOOP[4:]]
    assert carry_elements(reads, same, "$28", _labels()) == reads


# --- on programs ----------------------------------------------------------------------------

def test_a_givens_row_carries_its_element_at_every_trip_count():
    program = compile_source(HEADER + GIVENS_ROW, "f", "t.py", width=64, level=2)
    assert "_ptop:" in program.pal
    steps = _same_words_at_every_trip_count(GIVENS_ROW)
    assert steps[0][1] < steps[0][0]


def test_a_forward_walk_carries_its_element_at_every_trip_count():
    program = compile_source(HEADER + FORWARD_WALK, "f", "t.py", width=64, level=2)
    assert "_ptop:" in program.pal
    _same_words_at_every_trip_count(FORWARD_WALK)


def test_the_givens_network_loses_four_instructions_a_rotation_and_keeps_its_words():
    from pathlib import Path

    from revasm.compiler import compile_file
    from revasm.programs import load_inputs
    from revasm.sim.engines import engine
    from revasm.sim.host import batch_gradient
    root = Path(__file__).resolve().parents[3]
    path = root / "examples" / "nilang" / "givens100.py"
    rng = random.Random(7)
    inputs = {"x": [rng.uniform(-1, 1) for _ in range(100)],
              "theta": [rng.uniform(-1.5, 1.5) for _ in range(4950)],
              "w": [rng.uniform(-1, 1) for _ in range(100)]}
    results = []
    for level in (0, 2):
        program = compile_file(path, "givens_loss", width=64, for_gradient=True, level=level)
        machine = engine("reference").load(program.image, 1)
        load_inputs(program, machine, inputs)
        wrt = [f"x.{n}" for n in range(100)] + [f"theta.{n}" for n in range(4950)]
        result = batch_gradient(machine, loss="out", wrt=wrt)
        results.append((int(result.loss[0]), [int(result.gradient[w][0]) for w in wrt],
                        int(result.forward_steps[0]) + int(result.machine.steps[0])))
    assert results[1][:2] == results[0][:2]
    assert results[1][2] <= 120_000 < results[0][2]


WALK = """@reversible
def f(out: Loss, x: Array[Fixed, N], t: Array[Fixed, N], w: Array[Fixed, N], j: Int[0, 11]):
{body}    for i in range(N):
        out += w[i] * x[i]
"""


def _random_walk(seed: int) -> str:
    """Loops over a variable range (forward or backward) whose body updates x[i] from
    x[i + 1] or the other way round (or rotates them), reading t at i or at a counter k
    stepped alongside, maybe with one more statement."""
    rng = random.Random(seed)
    lines = []
    for n in range(rng.randint(1, 2)):
        backward = rng.random() < 0.5
        counter = rng.random() < 0.5
        angle = f"t[k{n}]" if counter else "t[i]"
        header = ("    for i in range(N - 2, j - 1, -1):\n" if backward
                  else "    for i in range(j, N - 1):\n")
        a, b = ("x[i]", "x[i + 1]") if rng.random() < 0.5 else ("x[i + 1]", "x[i]")
        body = rng.choice([f"        {a} += {b} * {angle}\n", f"        {a} -= {b} * 0.375\n",
                           f"        ROT({a}, {b}, {angle})\n"])
        if rng.random() < 0.3:
            body += rng.choice([f"        {angle} += w[i] * 0.5\n",
                                f"        {b} += w[i] * {angle}\n"])
        if counter:
            header = f"    k{n} = ancilla(0)\n" + header
            body += f"        k{n} += 1\n    free(k{n}, N - 1 - j, checked=True)\n"
        lines.append(header + body)
    return WALK.format(body="".join(lines))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, N - 1))
def test_random_walks_give_the_same_words_at_every_level(seed, j):
    source = _random_walk(seed)
    inputs = _inputs(seed, j)
    plain, _, _ = _words(source, inputs, 0)
    lean, _, program = _words(source, inputs, 2)
    assert lean == plain, source
    assert revasm.check(program.image, random=2, seed=seed).failures == [], source
