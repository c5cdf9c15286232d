"""The program image: what the assembler produces and every engine loads.

Memory is one array of W-bit words.  The image gives the initial contents of
addresses ``0 .. len(words)-1`` (instruction words in the low 32 bits, DATA
cells as full words) and says which addresses hold code; all other memory
starts at zero.  The metadata (symbols, declared names, the PC -> source map)
travels with it in the JSON sidecar and is what every error message uses.

In PendVM-compatibility mode (docs/assembly.md, "PendVM variants") an instruction may
carry an immediate wider than its 16-bit field, as the 1997 PendVM reads it: its word
holds the immediate's low 16 bits and ``Image.immediates`` the whole value, which every
engine reads (they execute decoded cells, never the word's bits).  Such an image lives in
memory only: the formats of 32-bit instruction words (bin, hex, the RTL core) refuse it
(:func:`encoding_problem`).
"""
from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field


@dataclass(slots=True, unsafe_hash=True)
class SourceOrigin:
    """Where a compiled program's instruction came from in the user's source (a Janus
    ``.ja`` or Python file): file, 1-based line and column, the line's text, and, for a
    run-time check, what its failure means in the source language's terms (``note``; its
    ``{$r}`` markers are register values, filled in by ``revasm.machine.fault_place``) and
    the check's kind (``check``: bounds, alias, ...; empty for the others)."""

    file: str
    line: int
    column: int = 1
    text: str = ""
    note: str = ""
    check: str = ""
    role: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(slots=True, unsafe_hash=True)
class SourceLocation:
    """Where an address came from: file, 1-based line and column, and the line's text.

    For a compiled program the file is its generated PAL and ``origin`` the user's own
    source (the one source map every surface reads: faults, breakpoints, stack frames,
    reports); for PAL source ``origin`` is None."""

    file: str
    line: int
    column: int = 1
    text: str = ""
    origin: SourceOrigin | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def user(self) -> SourceLocation | SourceOrigin:
        """The place a person reads: the origin of a compiled instruction, else this."""
        return self.origin if self.origin is not None else self


class DeferredLocations(Mapping[int, SourceLocation]):
    """An image's pc -> :class:`SourceLocation` table, made by ``make`` when first read.

    A caller that only writes a compiled program out (``revasm compile``) never reads it:
    on a 10^5-statement program, making its 4*10^5 locations and the source map they
    carry took 0.8 s of a 10 s compilation.  It reads as the dict ``make`` returns (and
    pickles as that dict); ``make`` runs once, and is then let go."""

    __slots__ = ("_make", "_table")

    def __init__(self, make: Callable[[], dict[int, SourceLocation]]) -> None:
        self._make: Callable[[], dict[int, SourceLocation]] | None = make
        self._table: dict[int, SourceLocation] | None = None

    def table(self) -> dict[int, SourceLocation]:
        """The locations, made now if they are not yet."""
        table = self._table
        if table is None:
            assert self._make is not None  # (let go only once the table is made)
            table = self._table = self._make()
            self._make = None
        return table

    def __getitem__(self, pc: int) -> SourceLocation:
        return self.table()[pc]

    def __iter__(self) -> Iterator[int]:
        return iter(self.table())

    def __len__(self) -> int:
        return len(self.table())

    def __contains__(self, pc: object) -> bool:
        return pc in self.table()

    def get(self, pc: int,  # type: ignore[override]  # (one signature: what is read)
            default: SourceLocation | None = None) -> SourceLocation | None:
        return self.table().get(pc, default)

    def keys(self) -> KeysView[int]:
        return self.table().keys()

    def items(self) -> ItemsView[int, SourceLocation]:
        return self.table().items()

    def values(self) -> ValuesView[SourceLocation]:
        return self.table().values()

    def __eq__(self, other: object) -> bool:
        return self.table() == (other.table() if isinstance(other, DeferredLocations)
                                else other)

    def __repr__(self) -> str:
        return repr(self.table())

    def __reduce__(self) -> tuple[type, tuple[dict[int, SourceLocation]]]:
        return dict, (self.table(),)


@dataclass(frozen=True)
class DeclaredName:
    """A name the source declares for a register or memory word.

    ``role`` is ``input``, ``output``, ``loss`` or ``name``; ``register`` or
    ``address`` says where the value lives; ``fixed`` says whether it is read
    and written as a fixed-point real (else as an integer); ``default`` is the
    W-bit word an input holds when the user gives no value (``= VALUE`` in the
    declaration), loaded by the host before the run, not by instructions; ``domain``
    is an input's ``in LO..HI`` (signed words, both ends included), the values
    ``revasm check --random`` draws from.
    """

    name: str
    role: str
    register: int | None = None
    address: int | None = None
    fixed: bool = True
    default: int | None = None
    domain: tuple[int, int] | None = None


class UnknownName(ValueError):
    """A NAME that is neither a register ``$0``..``$31`` nor a name the source declares."""


@dataclass
class Image:
    """An assembled program for a machine of word width ``width``."""

    width: int
    words: list[int]
    is_code: list[bool]
    entry: int
    finish: int | None = None
    symbols: dict[str, int] = field(default_factory=dict)
    locations: Mapping[int, SourceLocation] = field(default_factory=dict)
    names: dict[str, DeclaredName] = field(default_factory=dict)
    source_file: str = "<source>"
    #: PendVM-compatibility mode: pc -> the immediate (a signed 32-bit value) of an
    #: instruction whose immediate does not fit its 16-bit field (module docstring).
    immediates: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.words) != len(self.is_code):
            raise ValueError("words and is_code differ in length")
        for pc in self.immediates:
            if not (0 <= pc < len(self.words) and self.is_code[pc]):
                raise ValueError(f"a wide immediate at pc {pc}, which holds no instruction")

    def __len__(self) -> int:
        return len(self.words)

    def resolve_name(self, name: str) -> DeclaredName:
        """Where a NAME of the tools lives: ``$n`` (role ``register``, read as an
        integer) or a declared name; raises :class:`UnknownName` with the message."""
        if name.startswith("$"):
            try:
                number = int(name[1:])
            except ValueError:
                number = -1
            if not 0 <= number <= 31:
                raise UnknownName(f"{name} is not a register ($0..$31)")
            return DeclaredName(name, "register", register=number, fixed=False)
        declared = self.names.get(name)
        if declared is None:
            known = ", ".join(sorted(self.names)) or "none declared"
            raise UnknownName(f"{name!r} is neither a register ($n) nor a declared name "
                              f"(declared: {known})")
        return declared

    def location(self, address: int) -> SourceLocation | None:
        return self.locations.get(address)

    def describe(self, address: int) -> str:
        """``pc 5 (fib.pal:12: add $2 $1)`` — how messages name an address."""
        loc = self.locations.get(address)
        if loc is None:
            return f"pc {address}"
        return f"pc {address} ({loc.file}:{loc.line}: {loc.text.strip()})"


class NotEncodable(ValueError):
    """An image that a format of 32-bit instruction words cannot hold (a wide immediate)."""


def encoding_problem(image: Image, what: str, remedy: str) -> str | None:
    """Why ``what`` (a format or machine of 32-bit instruction words: a ``.bin`` image, the
    RTL core) cannot hold ``image``, ending with ``remedy`` (what to do instead), or None:
    a wide immediate of PendVM-compatibility mode has no place in an instruction word."""
    if not image.immediates:
        return None
    pc = min(image.immediates)
    more = len(image.immediates) - 1
    others = f" (and {more} more instruction(s))" if more else ""
    return (f"{what} holds 32-bit instruction words, and {image.describe(pc)} has the "
            f"immediate {image.immediates[pc]} ({image.immediates[pc] & 0xFFFFFFFF:#010x})"
            f"{others}, wider than its signed 16-bit field: PendVM-compatibility mode "
            f"(.pendvm or --pendvm) keeps such an immediate beside the word, in memory only; "
            f"{remedy}")


def require_encodable(image: Image, what: str) -> None:
    """Raise :class:`NotEncodable` with :func:`encoding_problem`'s message, if any."""
    problem = encoding_problem(image, what, "run the PAL source itself")
    if problem is not None:
        raise NotEncodable(problem)
