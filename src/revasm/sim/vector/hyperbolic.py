"""exp, sinh, cosh, tanh and log at W = 32 on lanes: ``isa/elementary.py``'s algorithms, vectorized.

Reduction by ln 2 (``x = k ln2 + r``) and hyperbolic CORDIC (Walther 1971) with the
same constants, repeated iterations and roundings as the scalar functions; every
intermediate fits ``int64`` at W = 32.  Branches of the scalar code become per-lane
selects; lanes whose result saturates compute a harmless value on the side.
"""
from __future__ import annotations

from typing import Any

from revasm.isa import elementary

from .circular import bit_length, cordic

_T = elementary.TABLES[32]  # the one definition of the constants


def _hyperbolic_rotate(z: Any, xp: Any) -> tuple[Any, Any]:
    x = xp.full(z.shape, _T.hyperbolic_x0, dtype=xp.int64)
    x, y, _ = cordic(x, xp.zeros(z.shape, dtype=xp.int64), z, _T.hyperbolic, xp,
                     hyperbolic=True)
    return x, y


def _hyperbolic_vector(x: Any, y: Any, xp: Any) -> Any:
    return cordic(x, y, xp.zeros(x.shape, dtype=xp.int64), _T.hyperbolic, xp,
                  hyperbolic=True, vectoring=True)[2]


def _exp_parts(z: Any, xp: Any) -> tuple[Any, Any, Any]:
    kb = _T.k_bits
    k = ((z >> (_T.prec - kb)) * _T.inv_ln2_k + (1 << (2 * kb - 1))) >> (2 * kb)
    r = z - ((k * _T.ln2_wide + 128) >> 8)
    c, s = _hyperbolic_rotate(r, xp)
    return k, c, s


def _scale_round(v: Any, shift: Any, xp: Any) -> Any:
    """round(v / 2**shift) half-up for shift > 0, ``v << -shift`` otherwise (per lane)."""
    right = xp.clip(shift, 0, 62)
    left = xp.clip(-shift, 0, 62)
    half = xp.where(right > 0, xp.left_shift(xp.ones_like(right), xp.clip(right - 1, 0, 62)), 0)
    return xp.where(shift > 0, (v + half) >> right, v << left)


def fx_exp(x: Any, xp: Any) -> Any:
    """``elementary.fx_exp`` on an int64 array of W = 32 signed words."""
    z = x << _T.guard
    lim = (_T.width + 2) << _T.prec
    k, c, s = _exp_parts(xp.clip(z, -lim, lim), xp)
    ok_k = xp.clip(k, -_T.frac - 2, _T.width - _T.frac)
    v = _scale_round(c + s, _T.guard - ok_k, xp)
    v = xp.where(v > _T.max_signed, _T.max_signed, v)
    v = xp.where(k <= -_T.frac - 2, 0, v)
    v = xp.where(k >= _T.width - _T.frac, _T.max_signed, v)
    v = xp.where(z <= -lim, 0, v)
    return xp.where(z >= lim, _T.max_signed, v)


def _hyperbolic_abs(ax: Any, xp: Any) -> tuple[Any, Any, Any]:
    k, c, s = _exp_parts(ax << _T.guard, xp)
    em = c - s
    sh = xp.clip(2 * k, 0, 62)
    half = xp.where(sh > 0, xp.left_shift(xp.ones_like(sh), xp.clip(sh - 1, 0, 62)), 0)
    return k, c + s, xp.where(sh > 0, (em + half) >> sh, em)


def _sinh_cosh_magnitude(ax: Any, xp: Any) -> tuple[Any, Any, Any, Any]:
    """(k, e**r, 4**-k e**-r) on lanes small enough not to saturate, and that mask."""
    small = ax < ((_T.width + 2) << _T.frac)
    k, ep, em = _hyperbolic_abs(xp.where(small, ax, 0), xp)
    return small & (k <= _T.width - _T.frac), k, ep, em


def fx_sinh(x: Any, xp: Any) -> Any:
    ax = xp.abs(x)
    fits, k, ep, em = _sinh_cosh_magnitude(ax, xp)
    v = _scale_round(ep - em, _T.guard + 1 - xp.where(fits, k, 0), xp)
    v = xp.where(fits, v, _T.max_signed + 1)
    v = xp.where(x < 0, -v, v)
    return xp.clip(v, _T.min_signed, _T.max_signed)


def fx_cosh(x: Any, xp: Any) -> Any:
    ax = xp.abs(x)
    fits, k, ep, em = _sinh_cosh_magnitude(ax, xp)
    v = _scale_round(ep + em, _T.guard + 1 - xp.where(fits, k, 0), xp)
    return xp.where(fits, xp.minimum(v, _T.max_signed), _T.max_signed)


def fx_tanh(x: Any, xp: Any) -> Any:
    ax = xp.abs(x)
    small = ax < ((_T.frac + 4) << _T.frac)
    k, ep, em = _hyperbolic_abs(xp.where(small, ax, 0), xp)
    near = small & (k < _T.frac // 2 + 2)
    num, den = ep - em, ep + em
    den = xp.where(near, den, 1)
    v = ((num << (_T.frac + 1)) + den) // (2 * den)
    v = xp.where(near, v, _T.one)
    return xp.where(x < 0, -v, v)


def ln_p(x: Any, xp: Any) -> Any:
    """``elementary.ln_p`` for an int64 array ``x > 0``: ln(x 2**-F) * 2**P."""
    n = bit_length(x, xp)
    e = n - 1 - _T.frac
    s = _T.prec - 1
    shift = s - (n - 1)
    a = (x << xp.clip(shift, 0, 62)) >> xp.clip(-shift, 0, 62)
    high = a >= _T.sqrt2_s
    e = e + high
    unit = xp.where(high, 2 << s, 1 << s)
    u, v = a + unit, a - unit
    z = xp.where(v != 0, _hyperbolic_vector(u, v, xp), 0)
    return ((e * _T.ln2_wide + 128) >> 8) + 2 * z


def fx_log(x: Any, xp: Any) -> Any:
    """``elementary.fx_log`` for lanes with ``x > 0`` (the caller faults the others)."""
    z = ln_p(xp.where(x > 0, x, 1), xp)
    return (z + _T.half_guard) >> _T.guard
