"""Every accumulate instruction's adjoint against its derivative, at W = 32 and 64.

For ``a ±= phi(b[, c])`` the machine runs the one instruction forward, seeds
``G[a] = g`` and runs it backward in gradient mode; ``G[b]`` (and ``G[c]``)
must equal ``g * d a / d b``.  Two references:

* **Central differences in exact rational arithmetic on the fixed-point
  values**: ``D = (a(b+h) - a(b-h)) / 2h`` where ``a(.)`` is what the machine
  computes (a word, read as an exact fraction) and ``h = 2**-k`` is a word, so
  ``D`` carries no error of its own.  Its distance from the true derivative
  is at most ``E_f u s / h`` (both values within ``E_f`` units ``u = 2**-F``
  in the function's ERROR_METRIC, ``s = max(1, |phi|)`` for "mixed", else 1)
  plus the stencil's truncation ``|(phi(b+h) - phi(b-h))/2h - phi'(b)|``,
  which the test evaluates in float64 (its own error ~1e-12 is negligible).
* **The analytic derivative in float64**: the adjoint is ``fmul(g, p~)``,
  where ``p~`` is the partial computed in fixed point by at most three rounded
  operations (ERROR_BOUND_ULP of the functions it calls, 1/2 ulp for products
  and quotients) whose errors the outer operations multiply by at most
  ``A = 4`` on the sample domains below.  So
  ``|adjoint - g p| <= |g| * 3 (E + 1/2) A max(1, |p|) u + u/2``.

The tangent rule (``T[a]`` after a forward pass with ``T[b] = 1``) must give
the same partial, and the gradient-tangent rule the second partials, within
the same bound with ``A**2`` (one more level of composition).
"""
from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pytest
from program_generators import ProgramBuilder

from revasm.isa import INSTRUCTIONS, WordFormat
from revasm.isa.elementary import ERROR_BOUND_ULP, ERROR_METRIC
from revasm.sim.reference import Machine

_UPDATE = re.compile(r"^R\[\{a\}\] = \(R\[\{a\}\] ([+-]) (.+)\) & M$")
_TERM = re.compile(r"^_term = (.+)$")


class _Accumulate:
    """``a ±= term`` read off a forward template: one update line, or (an instruction
    that counts overflow events) ``_term = term``, the OV update, ``a ±= _term``."""

    def match(self, forward: str):
        lines = forward.split("\n")
        if len(lines) == 1:
            return _UPDATE.match(forward)
        first, last = _TERM.match(lines[0]), _UPDATE.match(lines[-1])
        if len(lines) == 3 and first and last and last.group(2) == "_term":
            return {1: last.group(1), 2: first.group(1)}
        return None


_ACCUMULATE = _Accumulate()


def _family(ins) -> str:
    """The function phi of an accumulate entry, read off its forward template."""
    term = _ACCUMULATE.match(ins.forward)[2]
    if m := re.match(r"fn_(\w+)\(", term):
        return m.group(1)
    if term.startswith("fmul("):
        return "mul"
    if term.startswith("fdiv("):
        return "div"
    assert term == "R[{b}]", term
    return "copy"


ACCUMULATE = [i for i in INSTRUCTIONS if i.adjoint and _ACCUMULATE.match(i.forward)]

def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


# phi, (d/db, d/dc), (d2/db2, d2/dbdc, d2/dc2) in float64.
ANALYTIC = {
    "copy": (lambda b, c: b, lambda b, c: (1.0, 0.0), lambda b, c: (0.0, 0.0, 0.0)),
    "mul": (lambda b, c: b * c, lambda b, c: (c, b), lambda b, c: (0.0, 1.0, 0.0)),
    "div": (lambda b, c: b / c, lambda b, c: (1 / c, -b / c ** 2),
            lambda b, c: (0.0, -1 / c ** 2, 2 * b / c ** 3)),
    "sin": (lambda b, c: math.sin(b), lambda b, c: (math.cos(b), 0.0),
            lambda b, c: (-math.sin(b), 0.0, 0.0)),
    "cos": (lambda b, c: math.cos(b), lambda b, c: (-math.sin(b), 0.0),
            lambda b, c: (-math.cos(b), 0.0, 0.0)),
    "tan": (lambda b, c: math.tan(b), lambda b, c: (1 + math.tan(b) ** 2, 0.0),
            lambda b, c: (2 * math.tan(b) * (1 + math.tan(b) ** 2), 0.0, 0.0)),
    "tanh": (lambda b, c: math.tanh(b), lambda b, c: (1 - math.tanh(b) ** 2, 0.0),
             lambda b, c: (-2 * math.tanh(b) * (1 - math.tanh(b) ** 2), 0.0, 0.0)),
    "exp": (lambda b, c: math.exp(b), lambda b, c: (math.exp(b), 0.0),
            lambda b, c: (math.exp(b), 0.0, 0.0)),
    "log": (lambda b, c: math.log(b), lambda b, c: (1 / b, 0.0),
            lambda b, c: (-1 / b ** 2, 0.0, 0.0)),
    "sqrt": (lambda b, c: math.sqrt(b), lambda b, c: (0.5 / math.sqrt(b), 0.0),
             lambda b, c: (-0.25 * b ** -1.5, 0.0, 0.0)),
    "abs": (lambda b, c: abs(b), lambda b, c: (math.copysign(1.0, b), 0.0),
            lambda b, c: (0.0, 0.0, 0.0)),
    "atan": (lambda b, c: math.atan(b), lambda b, c: (1 / (1 + b * b), 0.0),
             lambda b, c: (-2 * b / (1 + b * b) ** 2, 0.0, 0.0)),
    "sinh": (lambda b, c: math.sinh(b), lambda b, c: (math.cosh(b), 0.0),
             lambda b, c: (math.sinh(b), 0.0, 0.0)),
    "cosh": (lambda b, c: math.cosh(b), lambda b, c: (math.sinh(b), 0.0),
             lambda b, c: (math.cosh(b), 0.0, 0.0)),
    "sigmoid": (lambda b, c: _sigmoid(b), lambda b, c: (_sigmoid(b) * (1 - _sigmoid(b)), 0.0),
                lambda b, c: (_sigmoid(b) * (1 - _sigmoid(b)) * (1 - 2 * _sigmoid(b)), 0.0,
                              0.0)),
    "atan2": (lambda b, c: math.atan2(b, c),
              lambda b, c: (c / (b * b + c * c), -b / (b * b + c * c)),
              lambda b, c: (-2 * b * c / (b * b + c * c) ** 2,
                            (b * b - c * c) / (b * b + c * c) ** 2,
                            2 * b * c / (b * b + c * c) ** 2)),
    "pow": (lambda b, c: b ** c, lambda b, c: (c * b ** (c - 1), b ** c * math.log(b)),
            lambda b, c: (c * (c - 1) * b ** (c - 2), b ** (c - 1) * (1 + c * math.log(b)),
                          b ** c * math.log(b) ** 2)),
}

# Sample domains (b, c), chosen where the amplification bound A = 4 holds.
DOMAIN = {
    "copy": ((-2, 2), (0, 0)), "mul": ((-2, 2), (-2, 2)), "div": ((-2, 2), (0.5, 2)),
    "sin": ((-1.5, 1.5), (0, 0)), "cos": ((-1.5, 1.5), (0, 0)), "tan": ((-1, 1), (0, 0)),
    "tanh": ((-1.5, 1.5), (0, 0)), "exp": ((-1.5, 1.2), (0, 0)), "log": ((0.5, 3), (0, 0)),
    "sqrt": ((0.5, 3), (0, 0)), "abs": ((0.2, 2), (0, 0)), "atan": ((-1.5, 1.5), (0, 0)),
    "sinh": ((-1.2, 1.2), (0, 0)), "cosh": ((-1.2, 1.2), (0, 0)), "sigmoid": ((-3, 3), (0, 0)),
    "atan2": ((-1.5, 1.5), (0.5, 2)), "pow": ((0.6, 2), (-1.2, 1.5)),
}
AMPLIFICATION = 4
STEP_BITS = {64: 10, 32: 4}  # h = 2**-10 at Q32.32, 2**-4 at Q16.16


def test_every_accumulate_family_has_a_reference():
    assert {_family(i) for i in ACCUMULATE} == set(ANALYTIC)
    assert len(ACCUMULATE) == 2 * len(ANALYTIC)


def _image(ins, width: int):
    registers = (1, 2, 3)[:len(ins.operand_names)]
    return ProgramBuilder(width).op("START").op(ins.mnemonic, *registers).op("FINISH").build()


def _run(image, b: int, c: int, *, g: int = 0, tb: int = 0, tc: int = 0):
    """(a, T[a], G[b], G[c], TG[b], TG[c]) as words after forward, then gradient backward."""
    machine = Machine(image, memory_words=16, tangent=True)
    machine.registers[2], machine.registers[3] = b, c
    machine.tangents[2], machine.tangents[3] = tb, tc
    machine.run(1)
    a, ta = machine.registers[1], machine.tangents[1]
    machine.gradient = True
    machine.gradients[1] = g
    machine.run(-1)
    return (a, ta, machine.gradients[2], machine.gradients[3], machine.gradient_tangents[2],
            machine.gradient_tangents[3])


def _error_ulps(ins, width: int) -> float:
    """E: the largest documented error of a function the rules call (1/2 for mul/div)."""
    names = set(re.findall(r"fn_(\w+)\(", ins.adjoint + ins.adjoint_tangent))
    return max([ERROR_BOUND_ULP[(n, width)] for n in names] + [0.5])


def _samples(family: str, width: int, rng: random.Random, count: int):
    fmt = WordFormat(width)
    (b_lo, b_hi), (c_lo, c_hi) = DOMAIN[family]
    for _ in range(count):
        b, c = rng.uniform(b_lo, b_hi), rng.uniform(c_lo, c_hi)
        if family in ("abs", "div") and rng.random() < 0.5:
            b, c = (-b, c) if family == "abs" else (b, -c)
        yield fmt.from_real(b) & fmt.mask, fmt.from_real(c) & fmt.mask


def _setup(ins, width: int) -> tuple:
    """What both derivative checks start from: the word format, its unit in the last place,
    the instruction's family, its accumulation sign (+= or -=), its one-instruction image,
    the operands it reads and its error bound in ulps."""
    fmt = WordFormat(width)
    sign = 1 if _ACCUMULATE.match(ins.forward)[1] == "+" else -1
    operands = ("b", "c") if "c" in ins.operand_names else ("b",)
    return (fmt, 2.0 ** -fmt.frac_bits, _family(ins), sign, _image(ins, width), operands,
            _error_ulps(ins, width))


@pytest.mark.parametrize("width", [64, 32])
@pytest.mark.parametrize("ins", ACCUMULATE, ids=lambda i: i.mnemonic)
def test_adjoint_matches_exact_central_differences_and_the_analytic_derivative(ins, width):
    fmt, u, family, sign, image, operands, error = _setup(ins, width)
    phi, first, _ = ANALYTIC[family]
    e_f = ERROR_BOUND_ULP.get((family, width), 0.5 if family in ("mul", "div") else 0.0)
    h_bits = STEP_BITS[width]
    h = Fraction(1, 1 << h_bits)
    h_word = 1 << (fmt.frac_bits - h_bits)
    rng = random.Random(f"{ins.mnemonic}{width}")
    for b_word, c_word in _samples(family, width, rng, 4):
        b, c = float(fmt.to_fraction(b_word)), float(fmt.to_fraction(c_word))
        g = rng.choice([1.0, -0.75, 1.5])
        g_word = fmt.from_real(g) & fmt.mask
        _, _, grad_b, grad_c, _, _ = _run(image, b_word, c_word, g=g_word)
        adjoint = {"b": float(fmt.to_fraction(grad_b)), "c": float(fmt.to_fraction(grad_c))}
        partials = dict(zip(("b", "c"), first(b, c)))
        scale = max(1.0, abs(phi(b, c))) if ERROR_METRIC.get(family) == "mixed" else 1.0
        for x in operands:
            p = sign * partials[x]
            bound = abs(g) * 3 * (error + 0.5) * AMPLIFICATION * max(1.0, abs(p)) * u + u / 2
            assert abs(adjoint[x] - g * p) <= bound + 1e-12, (x, b, c, adjoint[x], g * p)
            # exact central difference of the machine's own values
            up = (b_word + h_word, c_word) if x == "b" else (b_word, c_word + h_word)
            down = (b_word - h_word, c_word) if x == "b" else (b_word, c_word - h_word)
            a_up = fmt.to_fraction(_run(image, up[0] & fmt.mask, up[1] & fmt.mask)[0])
            a_down = fmt.to_fraction(_run(image, down[0] & fmt.mask, down[1] & fmt.mask)[0])
            difference = (a_up - a_down) / (2 * h)
            hf = float(h)
            if x == "b":
                stencil = (phi(b + hf, c) - phi(b - hf, c)) / (2 * hf)
            else:
                stencil = (phi(b, c + hf) - phi(b, c - hf)) / (2 * hf)
            truncation = abs(stencil - partials[x])
            rounding = e_f * u * scale / hf
            assert abs(adjoint[x] - g * float(difference)) <= (
                bound + abs(g) * (rounding + 1.01 * truncation) + 1e-12), (x, b, c)


@pytest.mark.parametrize("width", [64, 32])
@pytest.mark.parametrize("ins", ACCUMULATE, ids=lambda i: i.mnemonic)
def test_tangent_and_gradient_tangent_rules_give_first_and_second_partials(ins, width):
    fmt, u, family, sign, image, operands, error = _setup(ins, width)
    phi, first, second = ANALYTIC[family]
    rng = random.Random(f"{ins.mnemonic}{width}t")
    for b_word, c_word in _samples(family, width, rng, 3):
        b, c = float(fmt.to_fraction(b_word)), float(fmt.to_fraction(c_word))
        g = -1.25
        partials = dict(zip(("b", "c"), first(b, c)))
        hb = dict(zip((("b", "b"), ("b", "c"), ("c", "c")), second(b, c)))
        hb[("c", "b")] = hb[("b", "c")]
        for direction in operands:
            tb, tc = (fmt.one, 0) if direction == "b" else (0, fmt.one)
            _, ta, _, _, tg_b, tg_c = _run(image, b_word, c_word, g=fmt.from_real(g) & fmt.mask,
                                           tb=tb, tc=tc)
            p = sign * partials[direction]
            bound = 3 * (error + 0.5) * AMPLIFICATION * max(1.0, abs(p)) * u + u / 2
            assert abs(float(fmt.to_fraction(ta)) - p) <= bound + 1e-12
            found = {"b": float(fmt.to_fraction(tg_b)), "c": float(fmt.to_fraction(tg_c))}
            for x in operands:
                pp = sign * hb[(x, direction)]
                bound2 = (abs(g) * 3 * (error + 0.5) * AMPLIFICATION ** 2 * max(1.0, abs(pp)) * u
                          + u)
                assert abs(found[x] - g * pp) <= bound2 + 1e-12, (x, direction, b, c)


# --- structural instructions: NEG, SWAP, ROT, IROT (EXCH: tests/sim/test_gradient.py) ---------

STRUCTURAL = [i for i in INSTRUCTIONS if (i.adjoint or i.rules_from)
              and not _ACCUMULATE.match(i.forward) and "GM" not in i.adjoint]


def _structural_reference(mnemonic: str, v: dict[str, float], w: dict[str, float]) -> dict:
    """d/d input of loss = sum_r w_r * R_r(after), in float64, by hand."""
    if mnemonic == "NEG":
        return {"a": -w["a"]}
    if mnemonic == "SWAP":
        return {"a": w["b"], "b": w["a"]}
    sign = 1 if mnemonic == "ROT" else -1  # IROT rotates by -c
    c, s = math.cos(v["c"]), sign * math.sin(v["c"])
    x2, y2 = c * v["a"] - s * v["b"], s * v["a"] + c * v["b"]
    return {"a": w["a"] * c + w["b"] * s, "b": -w["a"] * s + w["b"] * c,
            "c": w["c"] + sign * (-w["a"] * y2 + w["b"] * x2)}


def test_structural_entries_are_neg_swap_and_the_rotations():
    assert sorted(i.mnemonic for i in STRUCTURAL) == ["IROT", "NEG", "ROT", "SWAP"]


@pytest.mark.parametrize("width", [64, 32])
@pytest.mark.parametrize("ins", STRUCTURAL, ids=lambda i: i.mnemonic)
def test_structural_adjoints_match_central_differences_and_the_analytic_derivative(ins, width):
    """Loss = sum of w_r * (operand register r after the instruction).

    A rotation's outputs are within ~30 u of exact (three shears of u/2 each, plus
    the tan(c/2) and sin c coefficients' errors, <= 4 u and 0.51 u, times |x|, |y|
    <= 2), so each value error is <= 30 u (|w| summed), the exact central
    difference is within 2 * 30 u / 2h plus float64-evaluated truncation, and the
    adjoint (an exact rotation of G plus two rounded products) within 40 u.
    """
    fmt = WordFormat(width)
    u = 2.0 ** -fmt.frac_bits
    rng = random.Random(f"{ins.mnemonic}{width}s")
    names = [n for n, k in zip(ins.operand_names, ins.operand_kinds) if k == "reg"]
    registers = dict(zip(names, (1, 2, 3)))
    image = ProgramBuilder(width).op("START").op(ins.mnemonic, *registers.values()) \
        .op("FINISH").build()
    h_bits = STEP_BITS[width]
    h_word = 1 << (fmt.frac_bits - h_bits)

    def run(words: dict[str, int], seed: dict[str, int] | None = None):
        machine = Machine(image, memory_words=16)
        for name, word in words.items():
            machine.registers[registers[name]] = word & fmt.mask
        machine.run(1)
        after = {name: machine.registers[r] for name, r in registers.items()}
        if seed is None:
            return after, None
        machine.gradient = True
        for name, word in seed.items():
            machine.gradients[registers[name]] = word & fmt.mask
        machine.run(-1)
        return after, {name: machine.gradients[r] for name, r in registers.items()}

    for _ in range(4):
        v = {name: rng.uniform(-2, 2) for name in names}
        w = {name: rng.choice([1.0, -0.5, 1.25]) for name in names}
        words = {name: fmt.from_real(x) for name, x in v.items()}
        v = {name: float(fmt.to_fraction(word & fmt.mask)) for name, word in words.items()}
        _, grads = run(words, {name: fmt.from_real(x) for name, x in w.items()})
        expected = _structural_reference(ins.mnemonic, v, w)
        weight = sum(abs(x) for x in w.values())
        for name in names:
            got = float(fmt.to_fraction(grads[name]))
            assert abs(got - expected.get(name, w[name])) <= 40 * u * weight + 1e-12, name

            # loss and real_loss are called only in the iteration that defines them, so
            # reading the loop variables (B023) is intended: no late binding.
            def loss(delta: int) -> Fraction:
                after, _ = run(words | {name: words[name] + delta})  # noqa: B023
                return sum(Fraction(w[r]) * fmt.to_fraction(after[r])  # noqa: B023
                           for r in names)
            hf = 2.0 ** -h_bits
            difference = float((loss(h_word) - loss(-h_word)) / (2 * Fraction(hf)))
            truncation = 0.0
            if ins.mnemonic in ("ROT", "IROT"):
                def real_loss(x: float) -> float:
                    sign = 1 if ins.mnemonic == "ROT" else -1
                    p = v | {name: x}  # noqa: B023
                    c, s = math.cos(p["c"]), sign * math.sin(p["c"])
                    return (w["a"] * (c * p["a"] - s * p["b"])  # noqa: B023
                            + w["b"] * (s * p["a"] + c * p["b"])  # noqa: B023
                            + w["c"] * p["c"])  # noqa: B023
                truncation = abs((real_loss(v[name] + hf) - real_loss(v[name] - hf)) / (2 * hf)
                                 - expected[name])
            assert abs(got - difference) <= (40 * u * weight + 30 * u * weight / hf
                                              + 1.01 * truncation + 1e-12), name
