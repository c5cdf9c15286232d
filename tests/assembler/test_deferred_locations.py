"""An image's locations are made when first read (``image.DeferredLocations``): the same
table the assembler would have made at once, read and pickled as that dict."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import revasm.compiler.api as api
from revasm.assembler import assemble
from revasm.assembler.image import DeferredLocations, SourceLocation, SourceOrigin
from revasm.compiler.api import compile_janus_file

EXAMPLES = Path(__file__).parents[2] / "examples"

SOURCE = """;; pendulum pal file
start:  start
        li    $1 0x12345   ; two words
        addi  $2 3
here:   data  7
        finish
"""


def _eager(image_text: str, origins: dict[int, SourceOrigin] | None) -> dict:
    """The table as the assembler made it before it was deferred: each address -> its
    line's location, every address of a multi-word line sharing one."""
    lines = image_text.splitlines()
    table = {}
    pc = 0
    for number, text in enumerate(lines, 1):
        words = text.split(";")[0].split()
        if number == 1 or not words:
            continue
        head = next(w for w in words if not w.endswith(":"))
        after = text.index(words[0]) + len(words[0]) if words[0].endswith(":") else 0
        size = 2 if head == "li" else 1
        for _ in range(size):
            table[pc] = SourceLocation("t.pal", number, text.index(head, after) + 1, text,
                                       origins.get(number) if origins else None)
            pc += 1
    return table


def test_the_table_is_the_one_made_at_once_and_reads_as_a_dict():
    origin = SourceOrigin("t.ja", 9, 2, "x += 1", "", "", "compute")
    made = []

    def origins():
        made.append(1)
        return {3: origin}
    image = assemble(SOURCE, "t.pal", origins=origins)
    assert isinstance(image.locations, DeferredLocations) and not made  # nothing made yet
    expected = _eager(SOURCE, {3: origin})
    assert image.locations == expected and len(made) == 1
    assert dict(image.locations) == expected and list(image.locations) == list(expected)
    assert image.locations.get(1) is image.locations[2]  # (li's two words: one line)
    assert image.locations.get(99) is None and 99 not in image.locations
    assert image.location(3).origin is None and image.locations[1].origin == origin
    assert len(made) == 1  # made once
    again = pickle.loads(pickle.dumps(image))
    assert type(again.locations) is dict and again.locations == image.locations
    assert again == image


def test_a_plain_origins_map_gives_the_same_table():
    origin = SourceOrigin("t.ja", 9, 2, "x += 1")
    assert assemble(SOURCE, "t.pal", origins={4: origin}).locations == \
        _eager(SOURCE, {4: origin})
    assert assemble(SOURCE, "t.pal").locations == _eager(SOURCE, None)


def test_a_compile_makes_no_source_map_until_the_locations_are_read(
        monkeypatch: pytest.MonkeyPatch):
    program = compile_janus_file(EXAMPLES / "janus" / "factor.ja")
    expected = dict(program.image.locations)
    called = []

    def counted(*args, **kwargs):
        called.append(1)
        return source_origins(*args, **kwargs)
    source_origins = api.source_origins
    monkeypatch.setattr(api, "source_origins", counted)
    again = compile_janus_file(EXAMPLES / "janus" / "factor.ja")
    assert not called
    assert again.image.locations == expected and called == [1]
    assert any(location.origin is not None for location in expected.values())
