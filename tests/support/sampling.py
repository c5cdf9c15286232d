"""``make test``'s bounded samples and ``make test-long``'s full ones, one test body for both.

A test that runs a campaign (random programs, hypothesis examples over whole programs, a
hardware simulation of many programs) takes a ``sample`` parameter, ``"bounded"`` or
``"full"``; ``"full"`` is marked ``long``, so ``make test`` (``-m "not long"``) runs the
bounded sample and ``make test-long`` (``-m long``) the full one, through the same code.
A hypothesis property over whole programs says so with :func:`sampled` in place of its
``@settings``/``@given`` pair::

    @sampled(many, straight_line_programs(), bounded=150, full=700)
    def test_backward_run_undoes_forward_run(case):
        ...

The bounded counts are chosen so that the sample still reaches every instruction, engine
and mode the test is about; the full counts are the ones the suite ran before it was split
(docs/decisions.md, "make test in 8 minutes").
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

#: The ``sample`` parameter of a sampled test: the bounded sample in ``make test``, the
#: full one (marked ``long``) in ``make test-long``.
SAMPLES = ["bounded", pytest.param("full", marks=pytest.mark.long)]


def count(sample: str, *, bounded: int, full: int) -> int:
    """The number of examples (programs, runs) of ``sample``."""
    if sample not in ("bounded", "full"):
        raise ValueError(f"sample must be 'bounded' or 'full', not {sample!r}")
    return bounded if sample == "bounded" else full


def sampled(settings: Callable[[int], Any], *strategies: Any, bounded: int, full: int,
            **named: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A hypothesis test run as a pytest test per sample: ``settings(n)`` (a function of the
    example count, e.g. the file's ``many``) and ``given(*strategies, **named)`` applied to
    the body at each run, with ``n`` the sample's count (:func:`count`).  The body's other
    arguments (before the drawn ones) stay pytest's: ``parametrize`` them as before."""
    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        parameters = list(inspect.signature(body).parameters.values())
        # hypothesis fills the named arguments and, for positional strategies, the last ones
        last = parameters[len(parameters) - len(strategies):] if strategies else []
        drawn = set(named) | {p.name for p in last}
        kept = [p for p in parameters if p.name not in drawn]

        def test(sample: str, **arguments: Any) -> None:
            examples = count(sample, bounded=bounded, full=full)
            settings(examples)(given(*strategies, **named)(body))(**arguments)

        test.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter("sample", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in kept])
        test.__name__ = test.__qualname__ = body.__name__
        test.__doc__ = body.__doc__
        test.__module__ = body.__module__
        return pytest.mark.parametrize("sample", SAMPLES)(test)
    return decorate
