"""Parsing the command line's NAME=VALUE and ADDR=VALUE arguments.

A NAME is a register (``$5``) or a name the source declares; a VALUE reads by the one
rule of :mod:`revasm.machine.values` (docs/cli.md "Values"): an ``int`` name takes an
integer, a ``fixed`` name a real, a register or a bare address a raw word, ``raw:N`` the
raw word N anywhere.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import click

from revasm.assembler.image import Image, UnknownName
from revasm.isa.fixed_point import WIDTHS, WordFormat, word_format
from revasm.machine.values import WORD, ValueRuleError, name_kind, word_of

T = TypeVar("T")

@dataclass(frozen=True)
class Location:
    """A register or a memory word, and whether its value reads as fixed point."""

    register: int | None = None
    address: int | None = None
    fixed: bool = False
    label: str = ""
    #: how a value given to it reads (:mod:`revasm.machine.values`): ``int``, ``fixed`` or
    #: ``word`` (a register)
    kind: str = WORD


def parse_value(text: str, fmt: WordFormat, kind: str = WORD, place: str = "") -> int:
    """The W-bit word VALUE stores at a place of ``kind`` (the one rule,
    :mod:`revasm.machine.values`); raises click.BadParameter."""
    try:
        return word_of(text, fmt, kind, place)
    except ValueRuleError as exc:
        raise click.BadParameter(str(exc)) from None


def real_range_text(fmt: WordFormat) -> str:
    """"does not fit Q16.16 (...)": the message of a real out of the word's range."""
    widest = max(WIDTHS)
    wider = f"; use --width {widest} for a wider range" if fmt.width < widest else ""
    return f"does not fit {fmt.name} ({fmt.range_text()}){wider}"


def resolve_name(name: str, image: Image) -> Location:
    """Where NAME lives: ``$n`` or a declared name; raises click.BadParameter."""
    try:
        place = image.resolve_name(name)
    except UnknownName as exc:
        raise click.BadParameter(str(exc)) from None
    return Location(register=place.register, address=place.address, fixed=place.fixed,
                    label=name, kind=name_kind(place))


def _for_option(option: str, parse: Callable[[str, Image], T], text: str, image: Image) -> T:
    """``parse(text, image)``, its errors naming ``option`` unless they name one already."""
    try:
        return parse(text, image)
    except click.BadParameter as exc:
        exc.param_hint = exc.param_hint or option
        raise


def parse_assignment(text: str, image: Image) -> tuple[Location, int]:
    """``NAME=VALUE`` -> (location, word)."""
    return _for_option("--set", _parse_assignment, text, image)


def _parse_assignment(text: str, image: Image) -> tuple[Location, int]:
    if "=" not in text:
        raise click.BadParameter(f"{text!r}: expected NAME=VALUE, e.g. $3=5 or x=0.5")
    name, value = text.split("=", 1)
    location = resolve_name(name.strip(), image)
    if location.register == 0:
        raise click.BadParameter("$0 always reads 0 and cannot be set")
    word = parse_value(value, word_format(image.width), location.kind, name.strip())
    return location, word


def parse_memory_assignment(text: str, image: Image) -> tuple[int, int]:
    """``ADDR=VALUE`` (ADDR an integer or a label) -> (address, word)."""
    return _for_option("--mem", _parse_memory_assignment, text, image)


def _parse_memory_assignment(text: str, image: Image) -> tuple[int, int]:
    if "=" not in text:
        raise click.BadParameter(f"{text!r}: expected ADDR=VALUE, e.g. 100=7 or cell=0.5")
    addr_text, value = text.split("=", 1)
    addr_text = addr_text.strip()
    if addr_text in image.symbols:
        address = image.symbols[addr_text]
    else:
        try:
            address = int(addr_text, 0)
        except ValueError:
            raise click.BadParameter(f"{addr_text!r} is neither an address nor a label") from None
    top = (1 << image.width) - 1  # memory is the whole address space
    if not 0 <= address <= top:
        raise click.BadParameter(f"address {address} is outside memory (0..{top})")
    if address < len(image) and image.is_code[address]:
        raise click.BadParameter(f"address {address} holds an instruction, not data")
    declared = next((d for d in image.names.values() if d.address == address), None)
    kind = WORD if declared is None else name_kind(declared)
    return address, parse_value(value, word_format(image.width), kind,
                                addr_text if declared is None else declared.name)


def parse_name_list(text: str | None) -> list[str] | None:
    """``--wrt x,y`` -> ['x', 'y']; None when the option was not given."""
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("expected NAME,... e.g. --wrt x,y", param_hint="--wrt")
    return names
