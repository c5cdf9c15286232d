"""The fixed-point elementary functions: accuracy bounds, exact identities, faults.

The accuracy tests measure every function against Python's float ``math`` on a
fixed, seeded set of inputs (dense in the useful domain, plus the hard spots:
huge arguments, the neighbourhoods of poles and zeros, saturation edges, axes)
and assert the documented ``ERROR_BOUND_ULP``.  Inputs are chosen so that
``x / 2**F`` is exactly a float, hence the reference is accurate to ~2**-53.

Run as a script to print the measured maxima on a denser set (the numbers in
docs/elementary.md)::

    python tests/isa/test_elementary.py --points 200000
"""
from __future__ import annotations

import argparse
import hashlib
import math
import random
import time
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.isa.elementary import (
    BINARY_FUNCTIONS,
    ERROR_BOUND_ULP,
    ERROR_METRIC,
    FUNCTIONS,
    DivideByZero,
    DomainError,
    fx_abs,
    fx_atan,
    fx_atan2,
    fx_cos,
    fx_cosh,
    fx_div,
    fx_exp,
    fx_log,
    fx_mul,
    fx_pow,
    fx_sin,
    fx_sinh,
    fx_sqrt,
    fx_tan,
    fx_tanh,
)
from revasm.isa.fixed_point import WordFormat

WIDTHS = (32, 64)
FORMATS = {w: WordFormat(w) for w in WIDTHS}
UNARY = sorted(FUNCTIONS)
BINARY = sorted(BINARY_FUNCTIONS)
POINTS_PER_TEST = 20000  # per (function, width) in the suite; the script uses more

REFERENCE: dict[str, Callable[..., float]] = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "tanh": math.tanh,
    "exp": math.exp,
    "log": math.log,
    "sqrt": math.sqrt,
    "abs": abs,
    "atan": math.atan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "sigmoid": lambda x: 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x)),
    "atan2": math.atan2,
    "pow": math.pow,
}


# --------------------------------------------------------------------------
# Inputs and the error metric
# --------------------------------------------------------------------------


def _float_exact(raw: int) -> int:
    """Clear low bits so that ``raw`` (hence ``raw / 2**F``) is exactly a float."""
    mag = abs(raw)
    drop = mag.bit_length() - 53
    if drop > 0:
        mag = (mag >> drop) << drop
    return -mag if raw < 0 else mag


def _clamp(raw: int, fmt: WordFormat) -> int:
    return max(fmt.min_signed, min(fmt.max_signed, raw))


def sample_unary(name: str, fmt: WordFormat, n: int, seed: int) -> list[int]:
    """Deterministic inputs for a unary function: the domain plus its hard spots."""
    rng = random.Random(f"{name}/{fmt.width}/{seed}")
    one = fmt.one
    lo, hi = fmt.min_signed, fmt.max_signed
    big = hi / one  # largest representable real

    def uniform(a: float, b: float) -> int:
        return rng.randint(math.ceil(max(a, lo / one) * one), math.floor(min(b, big) * one))

    def log_uniform() -> int:  # magnitudes spread over every binade
        return int(2 ** rng.uniform(0, fmt.width - 1)) - 1

    def signed(v: int) -> int:
        return -v if rng.random() < 0.5 else v

    def near(center: float, spread: int) -> int:
        return round(center * one) + rng.randint(-spread, spread)

    out: list[int] = []
    for _ in range(n):
        u = rng.random()
        if name in ("sin", "cos"):
            if u < 0.7:
                x = uniform(-8 * math.pi, 8 * math.pi)
            elif u < 0.85:
                x = rng.randint(lo, hi)
            else:  # zeros of sin/cos, small and huge
                k = rng.randint(0, int(big / (math.pi / 2))) if u < 0.95 else rng.randint(0, 40)
                x = signed(near(k * math.pi / 2, 4))
        elif name == "tan":
            if u < 0.6:
                x = uniform(-8 * math.pi, 8 * math.pi)
            elif u < 0.9:  # next to the poles, where |tan| is near saturation
                k = rng.randint(0, 40) if u < 0.8 else rng.randint(0, int(big / math.pi) - 1)
                x = signed(near((k + 0.5) * math.pi, 64))
            else:
                x = rng.randint(lo, hi)
        elif name == "tanh":
            x = uniform(-20, 20) if u < 0.8 else signed(log_uniform())
        elif name == "exp":
            x = (uniform(-(fmt.frac_bits + 3) * math.log(2), math.log(big) + 1) if u < 0.9
                 else signed(log_uniform()))
        elif name in ("sinh", "cosh"):
            edge = math.log(2 * big) + 1
            x = uniform(-edge, edge) if u < 0.9 else signed(log_uniform())
        elif name == "log":
            if u < 0.7:
                x = log_uniform() + 1
            elif u < 0.9:
                x = one + rng.randint(-(1 << (fmt.frac_bits // 2)), 1 << (fmt.frac_bits // 2))
            else:
                x = rng.randint(1, 1000)
        elif name == "sqrt":
            x = log_uniform() if u < 0.9 else rng.randint(0, 1000)
        elif name == "abs":
            x = rng.randint(lo, hi)
        elif name == "atan":
            x = signed(log_uniform()) if u < 0.7 else uniform(-4, 4)
        elif name == "sigmoid":
            x = uniform(-45, 45) if u < 0.8 else signed(log_uniform())
        else:
            raise KeyError(name)
        out.append(_float_exact(_clamp(x, fmt)))
    return out


def sample_binary(name: str, fmt: WordFormat, n: int, seed: int) -> list[tuple[int, int]]:
    """Deterministic (first, second) argument pairs of atan2(y, x) or pow(x, y)."""
    rng = random.Random(f"{name}/{fmt.width}/{seed}")
    one = fmt.one
    big = fmt.max_signed / one

    def log_uniform() -> int:
        return int(2 ** rng.uniform(0, fmt.width - 1)) - 1

    def signed(v: int) -> int:
        return -v if rng.random() < 0.5 else v

    out: list[tuple[int, int]] = []
    for _ in range(n):
        u = rng.random()
        if name == "atan2":
            y, x = signed(log_uniform()), signed(log_uniform())
            if u < 0.05:
                y = 0
            elif u < 0.1:
                x = 0
            elif u < 0.15:
                x = signed(abs(y))
            elif u < 0.4:  # comparable magnitudes: every angle is hit densely
                x = signed(max(1, int(abs(y) * 2 ** rng.uniform(-3, 3))))
        elif name == "pow":
            if u < 0.6:  # any base, exponent so that the result is near the format
                x = log_uniform() + 1
                lx = math.log(_float_exact(x) / one)
                target = rng.uniform(-(fmt.frac_bits + 2) * math.log(2), math.log(big) + 0.5)
                y = round(target / lx * one) if lx else rng.randint(-4 * one, 4 * one)
            elif u < 0.8:  # base within a hair of 1, huge exponent: the hardest case
                y = signed(log_uniform())
                reach = min(max(1, 22 * one * one // max(abs(y), 1)), one // 2)  # |y ln x| <= ~22
                x = one + rng.randint(-reach, reach)
            else:
                x = log_uniform() + 1
                y = rng.randint(-4 * one, 4 * one)
        else:
            raise KeyError(name)
        out.append((_float_exact(_clamp(y if name == "atan2" else x, fmt)),
                    _float_exact(_clamp(x if name == "atan2" else y, fmt))))
    return out


def error_units(name: str, got: int, args: tuple[int, ...], fmt: WordFormat) -> float:
    """Error of ``got`` in the function's documented metric (see ERROR_METRIC).

    "abs": |got - f(x) 2**F|; "mixed": the same divided by max(1, |f(x)|).  The
    reference is clamped to the format first: saturation is part of the contract.
    """
    scale = float(fmt.one)
    if name == "sqrt":  # exact: |got - sqrt(N)| = |got^2 - N| / (got + sqrt(N))
        n = args[0] << fmt.frac_bits
        return abs(got * got - n) / (got + math.sqrt(n)) if n else float(abs(got))
    if name == "abs":
        return float(abs(got - _clamp(abs(args[0]), fmt)))
    try:
        ref = REFERENCE[name](*(a / scale for a in args)) * scale
    except OverflowError:  # exp, sinh, cosh, pow of a large argument
        ref = -math.inf if name == "sinh" and args[0] < 0 else math.inf
    target = min(max(ref, float(fmt.min_signed)), float(fmt.max_signed))
    err = abs(got - target)
    if ERROR_METRIC[name] == "mixed":
        err /= max(1.0, abs(target) / scale)
    return err


def measure(name: str, width: int, n: int,
            seed: int = 0) -> tuple[float, tuple[int, ...] | None, float]:
    """Largest error of ``name`` at ``width`` over the seeded sample, where, and time per call."""
    fmt = FORMATS[width]
    if name in FUNCTIONS:
        fn = FUNCTIONS[name]
        cases = [(x,) for x in sample_unary(name, fmt, n, seed)]
    else:
        fn = BINARY_FUNCTIONS[name]
        cases = sample_binary(name, fmt, n, seed)
    worst, where = 0.0, None
    spent = 0.0
    clock = time.perf_counter
    for args in cases:
        start = clock()
        try:
            got = fn(*args, fmt)
        except DomainError:
            continue
        finally:
            spent += clock() - start
        err = error_units(name, got, args, fmt)
        if err > worst:
            worst, where = err, args
    return worst, where, spent / len(cases)


# --------------------------------------------------------------------------
# Accuracy
# --------------------------------------------------------------------------


def test_every_function_has_a_bound_and_a_metric() -> None:
    for name in UNARY + BINARY:
        assert ERROR_METRIC[name] in ("abs", "mixed")
        for width in WIDTHS:
            assert ERROR_BOUND_ULP[(name, width)] >= 0
    assert set(FUNCTIONS) == {"sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "abs", "atan",
                              "sinh", "cosh", "sigmoid"}
    assert set(BINARY_FUNCTIONS) == {"atan2", "pow"}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_error_within_documented_bound(name: str, width: int) -> None:
    worst, where, _ = measure(name, width, POINTS_PER_TEST)
    bound = ERROR_BOUND_ULP[(name, width)]
    assert worst <= bound, f"{name} W={width}: error {worst:.4f} > {bound} at raw {where}"


@pytest.mark.parametrize("width", WIDTHS)
def test_sqrt_is_correctly_rounded(width: int) -> None:
    fmt = FORMATS[width]
    rng = random.Random(width)
    xs = [rng.randint(0, fmt.max_signed) for _ in range(2000)] + [fmt.max_signed, 0, 1, 2, 3]
    for x in xs:
        n = x << fmt.frac_bits
        r = math.isqrt(n)
        expected = r + 1 if n - r * r > r else r  # round(sqrt(n)); ties cannot occur
        assert fx_sqrt(x, fmt) == expected, x


@pytest.mark.parametrize("width", WIDTHS)
def test_sqrt_of_perfect_squares_is_exact(width: int) -> None:
    fmt = FORMATS[width]
    step = 1 << (fmt.frac_bits // 2)  # r = k*step makes r*r / 2**F an integer
    rng = random.Random(width)
    randoms = [rng.randint(0, 1 << (fmt.width // 4 + 6)) for _ in range(300)]
    for k in [0, 1, 2, 3, 255, 256] + randoms:
        r = k * step
        x = (r * r) >> fmt.frac_bits
        if x <= fmt.max_signed:
            assert fx_sqrt(x, fmt) == r
    assert fx_sqrt(fmt.one, fmt) == fmt.one
    assert fx_sqrt(4 * fmt.one, fmt) == 2 * fmt.one


# --------------------------------------------------------------------------
# Identities that hold exactly, by construction
# --------------------------------------------------------------------------


def _random_raws(fmt: WordFormat, n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    wide = [int(2 ** rng.uniform(0, fmt.width - 1)) for _ in range(n)]
    return wide + [rng.randint(1, 40 * fmt.one) for _ in range(n)]


@pytest.mark.parametrize("width", WIDTHS)
def test_symmetries_are_exact(width: int) -> None:
    fmt = FORMATS[width]
    for x in _random_raws(fmt, 150, width):
        assert fx_sin(-x, fmt) == -fx_sin(x, fmt)
        assert fx_cos(-x, fmt) == fx_cos(x, fmt)
        assert fx_atan(-x, fmt) == -fx_atan(x, fmt)
        assert fx_tanh(-x, fmt) == -fx_tanh(x, fmt)
        assert fx_cosh(-x, fmt) == fx_cosh(x, fmt)
        t = fx_tan(x, fmt)
        if t not in (fmt.max_signed, fmt.min_signed):
            assert fx_tan(-x, fmt) == -t
        s = fx_sinh(x, fmt)
        if s != fmt.max_signed:
            assert fx_sinh(-x, fmt) == -s
        y = x // 3 + 1
        assert fx_atan2(-y, x, fmt) == -fx_atan2(y, x, fmt)
        assert fx_atan2(-y, -x, fmt) == -fx_atan2(y, -x, fmt)


@pytest.mark.parametrize("width", WIDTHS)
def test_exact_values(width: int) -> None:
    fmt = FORMATS[width]
    one = fmt.one
    pi = fmt.from_real(Fraction(math.pi))  # no tie near pi * 2**F at either width
    half_pi = fmt.from_real(Fraction(math.pi / 2))
    assert fx_sin(0, fmt) == 0 and fx_tan(0, fmt) == 0 and fx_atan(0, fmt) == 0
    assert fx_cos(0, fmt) == one and fx_cosh(0, fmt) == one
    assert fx_tanh(0, fmt) == 0 and fx_sinh(0, fmt) == 0
    assert fx_exp(0, fmt) == one
    assert fx_log(one, fmt) == 0
    for k in range(-fmt.frac_bits, fmt.width - fmt.frac_bits - 1):
        x = one << k if k >= 0 else one >> -k
        assert fx_log(x, fmt) == fmt.from_real(Fraction(k * math.log(2)))
    assert fx_sqrt(0, fmt) == 0
    assert fx_atan(one, fmt) == fmt.from_real(Fraction(math.pi / 4))
    # atan2 on the axes and diagonals
    for m in (1, 3, one, fmt.max_signed):
        assert fx_atan2(0, m, fmt) == 0
        assert fx_atan2(0, -m, fmt) == pi
        assert fx_atan2(m, 0, fmt) == half_pi
        assert fx_atan2(-m, 0, fmt) == -half_pi
        assert fx_atan2(m, m, fmt) == fmt.from_real(Fraction(math.pi / 4))
        assert fx_atan2(-m, -m, fmt) == -fmt.from_real(Fraction(3 * math.pi / 4))
    assert fx_atan2(0, fmt.min_signed, fmt) == pi
    assert fx_atan2(fmt.min_signed, 0, fmt) == -half_pi
    assert fx_atan2(0, 0, fmt) == 0
    # pow
    for v in (1, one // 3, one, 5 * one, fmt.max_signed):
        assert fx_pow(v, 0, fmt) == one
        assert (fx_pow(v, one, fmt) == v
                or abs(fx_pow(v, one, fmt) - v) <= max(1, v >> fmt.frac_bits))
    for y in (1, one, -one, fmt.max_signed, fmt.min_signed):
        assert fx_pow(one, y, fmt) == one
    assert fx_pow(0, 0, fmt) == one
    assert fx_pow(0, one, fmt) == 0 and fx_pow(0, 1, fmt) == 0
    assert fx_pow(4 * one, one // 2, fmt) == 2 * one
    assert fx_pow(2 * one, 10 * one, fmt) == min(1024 * one, fmt.max_signed)


@pytest.mark.parametrize("width", WIDTHS)
def test_abs(width: int) -> None:
    fmt = FORMATS[width]
    assert fx_abs(0, fmt) == 0
    assert fx_abs(-5, fmt) == 5 and fx_abs(5, fmt) == 5
    assert fx_abs(fmt.max_signed, fmt) == fmt.max_signed
    assert fx_abs(-fmt.max_signed, fmt) == fmt.max_signed
    assert fx_abs(fmt.min_signed, fmt) == fmt.max_signed  # saturates


@pytest.mark.parametrize("width", WIDTHS)
def test_deterministic_and_in_range(width: int) -> None:
    fmt = FORMATS[width]
    xs = _random_raws(fmt, 40, 99 + width) + [fmt.min_signed, fmt.max_signed, -1, 1, 0]
    xs += [-x for x in xs if x != fmt.min_signed]
    first = {}
    for name in UNARY:
        for x in xs:
            try:
                first[(name, x)] = FUNCTIONS[name](x, fmt)
            except DomainError:
                first[(name, x)] = None
    for name in reversed(UNARY):  # a different call order gives the same bits
        for x in reversed(xs):
            try:
                v = FUNCTIONS[name](x, fmt)
            except DomainError:
                v = None
            assert v == first[(name, x)]
            if v is not None:
                assert type(v) is int and fmt.min_signed <= v <= fmt.max_signed, (name, x, v)
    for y in xs[::7]:
        for x in xs[::5]:
            assert fmt.min_signed <= fx_atan2(y, x, fmt) <= fmt.max_signed
            if x > 0:
                assert fmt.min_signed <= fx_pow(x, y, fmt) <= fmt.max_signed


# A digest of the outputs on fixed inputs.  Every engine (vector simulator, RTL)
# must produce these same bits, so a change here is a change of the ISA: update
# the engines and the digest together (print it with `_output_digest(width, names)`).
# The inputs come from integer-only random draws, so they are the same everywhere.
# A function added later gets a digest of its own (ADDED_DIGEST), so the first one
# still pins the bits of the functions it was taken over.
GOLDEN_DIGEST = {
    32: "0dad6aba374411e2ae8d42f0b8fa20fd62d89d921f8f7a773af2d65bc544d970",
    64: "8a2b36815338096c06022c0935a8f60f82efeb32b591dd4c908370a28709b5ea",
}
#: the functions GOLDEN_DIGEST covers
GOLDEN_FUNCTIONS = ("abs", "atan", "atan2", "cos", "cosh", "exp", "log", "pow", "sin", "sinh",
                    "sqrt", "tan", "tanh")
ADDED_DIGEST = {
    ("sigmoid", 32): "8c386db7b3505458b62b37d775dfcd59c04a9889fc5298690b0f36b6501bfd7f",
    ("sigmoid", 64): "6b137362b41176704b5dafee413fbf1e70cdab49c3e4a98aba94e6208fbb6c6d",
}


def golden_inputs(width: int, n: int = 300) -> list[int]:
    """Integer-only inputs spread over every binade, both signs, plus the extremes."""
    fmt = FORMATS[width]
    rng = random.Random(width * 1000 + 7)
    xs = [0, 1, -1, fmt.one, -fmt.one, fmt.max_signed, fmt.min_signed]
    while len(xs) < n:
        xs.append(rng.randint(fmt.min_signed, fmt.max_signed) >> rng.randint(0, width - 1))
    return xs


def _output_digest(width: int, names: tuple[str, ...] = GOLDEN_FUNCTIONS) -> str:
    fmt = FORMATS[width]
    h = hashlib.sha256()
    xs = golden_inputs(width)
    for name in sorted(names, key=(UNARY + BINARY).index):
        pairs = [(x,) for x in xs] if name in UNARY else list(zip(xs, xs[1:] + xs[:1]))
        if name == "pow":  # exponents of modest size, so that not everything saturates
            pairs = [(x, y >> (width // 2)) for x, y in pairs]
        for args in pairs:
            fn = FUNCTIONS.get(name) or BINARY_FUNCTIONS[name]
            try:
                v: int | str = fn(*args, fmt)
            except DomainError as exc:
                v = type(exc).__name__
            h.update(f"{name} {args} {v}\n".encode())
    return h.hexdigest()


@pytest.mark.parametrize("width", WIDTHS)
def test_bits_match_the_golden_digest(width: int) -> None:
    assert _output_digest(width) == GOLDEN_DIGEST[width]
    assert set(GOLDEN_FUNCTIONS) | {name for name, _ in ADDED_DIGEST} == set(UNARY + BINARY)
    for (name, digest_width), digest in ADDED_DIGEST.items():
        if digest_width == width:
            assert _output_digest(width, (name,)) == digest, name


# --------------------------------------------------------------------------
# Faults and saturation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_domain_errors(width: int) -> None:
    fmt = FORMATS[width]
    for x in (0, -1, fmt.min_signed):
        with pytest.raises(DomainError):
            fx_log(x, fmt)
    for x in (-1, fmt.min_signed):
        with pytest.raises(DomainError):
            fx_sqrt(x, fmt)
    with pytest.raises(DomainError):
        fx_pow(-fmt.one, fmt.one, fmt)
    with pytest.raises(DivideByZero):
        fx_pow(0, -fmt.one, fmt)
    with pytest.raises(DivideByZero):
        fx_div(fmt.one, 0, fmt)
    with pytest.raises(DivideByZero):
        fx_div(0, 0, fmt)
    assert issubclass(DivideByZero, DomainError) and issubclass(DomainError, ArithmeticError)


@pytest.mark.parametrize("width", WIDTHS)
def test_saturation(width: int) -> None:
    fmt = FORMATS[width]
    one, hi, lo = fmt.one, fmt.max_signed, fmt.min_signed
    assert fx_exp(hi, fmt) == hi and fx_exp(lo, fmt) == 0
    assert fx_exp(fmt.from_real(math.log(hi / one) + 0.01), fmt) == hi
    assert fx_exp(fmt.from_real(-(fmt.frac_bits + 2) * math.log(2)), fmt) == 0
    assert fx_sinh(hi, fmt) == hi and fx_sinh(lo, fmt) == lo
    assert fx_cosh(hi, fmt) == hi and fx_cosh(lo, fmt) == hi
    assert fx_tanh(hi, fmt) == one and fx_tanh(lo, fmt) == -one
    assert fx_pow(2 * one, 64 * one, fmt) == hi
    assert fx_pow(one // 2, 64 * one, fmt) == 0
    # the representable point nearest to pi/2: |tan| exceeds the format at both widths
    x = fmt.from_real(Fraction(math.pi / 2))
    ref = math.tan(x / one)
    assert abs(ref) > 2 * hi / one
    assert fx_tan(x, fmt) == (hi if ref > 0 else lo)
    assert fx_tan(-x, fmt) == (lo if ref > 0 else hi)


# --------------------------------------------------------------------------
# fx_mul / fx_div: rounding on hand-picked cases, then against Fraction
# --------------------------------------------------------------------------

Q16 = FORMATS[32]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (65536, 65536, 65536),  # 1 * 1
        (3, 32768, 2),  # 1.5 ulp -> 2 (half-up)
        (1, 32768, 1),  # 0.5 ulp -> 1
        (-1, 32768, 0),  # -0.5 ulp -> 0 (half-up, not away from zero)
        (-3, 32768, -1),  # -1.5 ulp -> -1
        (1, 1, 0),  # 2**-32 -> 0
        (98304, -163840, -245760),  # 1.5 * -2.5 = -3.75
        (2147483647, 2147483647, 70368744112128),  # not wrapped: (2**31-1)**2 / 2**16, rounded
    ],
)
def test_mul_hand_cases(a: int, b: int, expected: int) -> None:
    assert fx_mul(a, b, Q16) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (65536, 196608, 21845),  # 1/3 = 21845.33
        (131072, 196608, 43691),  # 2/3 = 43690.67
        (1, 131072, 1),  # 0.5 ulp -> 1 (tie away from zero)
        (-1, 131072, -1),  # -0.5 ulp -> -1
        (1, -131072, -1),
        (-1, -131072, 1),
        (3, 262144, 1),  # 0.75 ulp -> 1
        (1, 262144, 0),  # 0.25 ulp -> 0
        (458752, 131072, 229376),  # 7 / 2 = 3.5
        (0, 5, 0),
        (2147483647, 1, 140737488289792),  # not wrapped: (2**31-1) * 2**16
    ],
)
def test_div_hand_cases(a: int, b: int, expected: int) -> None:
    assert fx_div(a, b, Q16) == expected


def _words(width: int) -> st.SearchStrategy[int]:
    fmt = FORMATS[width]
    return st.integers(fmt.min_signed, fmt.max_signed)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mul_matches_fraction(data: st.DataObject) -> None:
    width = data.draw(st.sampled_from(WIDTHS))
    fmt = FORMATS[width]
    a, b = data.draw(_words(width)), data.draw(_words(width))
    exact = Fraction(a * b, fmt.one) + Fraction(1, 2)
    assert fx_mul(a, b, fmt) == math.floor(exact)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_div_matches_fraction(data: st.DataObject) -> None:
    width = data.draw(st.sampled_from(WIDTHS))
    fmt = FORMATS[width]
    a = data.draw(_words(width))
    b = data.draw(_words(width).filter(lambda v: v != 0))
    q = Fraction(a * fmt.one, b)
    expected = math.floor(abs(q) + Fraction(1, 2))  # ties away from zero
    assert fx_div(a, b, fmt) == (expected if q >= 0 else -expected)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_results_stay_in_the_format(data: st.DataObject) -> None:
    width = data.draw(st.sampled_from(WIDTHS))
    fmt = FORMATS[width]
    name = data.draw(st.sampled_from(UNARY + BINARY))
    args = [data.draw(_words(width))] + ([data.draw(_words(width))] if name in BINARY else [])
    fn = FUNCTIONS.get(name) or BINARY_FUNCTIONS[name]
    try:
        v = fn(*args, fmt)
    except DomainError:
        return
    assert type(v) is int and fmt.min_signed <= v <= fmt.max_signed


# --------------------------------------------------------------------------
# Measurement script
# --------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Measure the max error of every elementary function.")
    parser.add_argument("--points", type=int, default=100_000, help="inputs per (function, width)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("names", nargs="*", default=UNARY + BINARY)
    args = parser.parse_args()
    print(f"{'function':8} {'W':>3} {'metric':6} {'max error':>10} {'bound':>7} {'us/call':>8}"
          "  worst input (raw)")
    for name in args.names:
        for width in WIDTHS:
            worst, where, seconds = measure(name, width, args.points, args.seed)
            per_call = seconds * 1e6
            bound = ERROR_BOUND_ULP.get((name, width), float("nan"))
            print(f"{name:8} {width:>3} {ERROR_METRIC[name]:6} {worst:10.5f} {bound:7.3g} "
                  f"{per_call:8.1f}  {where}", flush=True)


if __name__ == "__main__":
    main()


_FLOAT_REFERENCE: dict[str, Callable[[float], float]] = {
    "sin": math.sin, "cos": math.cos, "tanh": math.tanh, "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "atan": math.atan, "sinh": math.sinh, "cosh": math.cosh,
    "sigmoid": REFERENCE["sigmoid"]}


@pytest.mark.parametrize("width", [6, 8, 12])
def test_the_functions_are_defined_at_a_reduced_width(width: int) -> None:
    """The bounded proofs of the RTL function unit run at a reduced width
    (rtl/verification/unit_proofs.py), so the table's functions must be defined there: on
    every input a word of the format or a domain/divide fault, and (W >= 8) near the real
    function -- within 1.5 units of the last place, or relative above 1 (measured at most
    1.25; tan, pow: no bound here)."""
    from revasm.rtl.hardware.params import word_format
    fmt = word_format(width)
    scale = 1 << fmt.frac_bits
    for name, function in FUNCTIONS.items():
        worst = 0.0
        for word in range(1 << width):
            x = fmt.signed(word)
            try:
                result = function(x, fmt)
            except (DomainError, DivideByZero):
                assert name in ("log", "sqrt") and x <= 0, (name, x)
                continue
            assert fmt.min_signed <= result <= fmt.max_signed, (name, x, result)
            if name in _FLOAT_REFERENCE and not (name == "log" and x <= 0):
                real = _FLOAT_REFERENCE[name](x / scale) * scale
                real = min(max(real, fmt.min_signed), fmt.max_signed)
                worst = max(worst, abs(result - real) / max(1.0, abs(real) / scale))
        if width >= 8:
            assert worst <= 1.5, (name, width, worst)
    for name, function in BINARY_FUNCTIONS.items():
        for a in range(0, 1 << width, 3):
            for b in range(0, 1 << width, 5):
                try:
                    result = function(fmt.signed(a), fmt.signed(b), fmt)
                except (DomainError, DivideByZero):
                    continue
                assert fmt.min_signed <= result <= fmt.max_signed, (name, a, b, result)


@pytest.mark.parametrize("width", WIDTHS)
def test_sigmoid_is_a_monotone_symmetric_probability(width: int) -> None:
    """sigmoid(0) = 1/2; 0 <= sigmoid <= 1; sigmoid(x) + sigmoid(-x) = 1 within one ulp;
    non-decreasing; 1 and 0 at the ends of the range (no saturation event: it never
    leaves the format)."""
    from revasm.isa.functions.hyperbolic import fx_sigmoid

    fmt = FORMATS[width]
    one = fmt.one
    assert fx_sigmoid(0, fmt) == one // 2
    assert fx_sigmoid(fmt.max_signed, fmt) == one and fx_sigmoid(fmt.min_signed, fmt) == 0
    xs = sorted(set(sample_unary("sigmoid", fmt, 4000, 7)) | {0, 1, -1, one, -one})
    values = [fx_sigmoid(x, fmt) for x in xs]
    assert all(0 <= v <= one for v in values)
    assert all(a <= b for a, b in zip(values, values[1:]))
    for x, v in zip(xs, values):
        if x != fmt.min_signed:
            assert abs(v + fx_sigmoid(-x, fmt) - one) <= 1, x
