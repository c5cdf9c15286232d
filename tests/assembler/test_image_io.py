"""Image files: bin + sidecar and hex load back to the same image; listings show every address."""
from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revasm.assembler import (
    DeclaredName,
    Image,
    ImageFormatError,
    SourceLocation,
    assemble,
    bin_bytes,
    hex_text,
    image_from_bin_bytes,
    image_from_hex_text,
    listing_text,
    read_bin,
    read_hex,
    read_sidecar,
    sidecar_dict,
    sidecar_path,
    write_bin,
    write_hex,
    write_sidecar,
)

PROGRAM = """\
;; pendulum pal file
.input  x $1 fixed = 1.5
.output y cell int
        start
loop:   li $2 0x12345
        addi $2 -1
        finish
cell:   data -3
end:
"""


@pytest.fixture
def image() -> Image:
    return assemble(PROGRAM, "prog.pal")


@st.composite
def images(draw):
    width = draw(st.sampled_from([32, 64]))
    count = draw(st.integers(0, 40))
    words = draw(st.lists(st.integers(0, 2**width - 1), min_size=count, max_size=count))
    is_code = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    names = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
    symbols = draw(st.dictionaries(names, st.integers(0, count), max_size=5))
    locations = {pc: SourceLocation("f.pal", draw(st.integers(1, 99)), draw(st.integers(1, 9)),
                                    draw(st.text(max_size=12)))
                 for pc in range(count) if draw(st.booleans())}
    declared = {}
    for name in draw(st.lists(names, max_size=3, unique=True)):
        in_register = draw(st.booleans())
        declared[name] = DeclaredName(
            name, draw(st.sampled_from(["input", "output", "loss", "name"])),
            register=draw(st.integers(1, 31)) if in_register else None,
            address=None if in_register else draw(st.integers(0, 500)),
            fixed=draw(st.booleans()),
            default=draw(st.none() | st.integers(0, 2**width - 1)))
    finish = draw(st.none() | st.integers(0, max(count - 1, 0)))
    return Image(width=width, words=words, is_code=is_code, entry=draw(st.integers(0, 1000)),
                 finish=finish, symbols=symbols, locations=locations, names=declared,
                 source_file="f.pal")


@settings(max_examples=100, deadline=None)
@given(images())
def test_bin_and_sidecar_load_back_to_an_equal_image(original):
    loaded = image_from_bin_bytes(bin_bytes(original))
    from revasm.assembler import apply_sidecar
    data = json.loads(json.dumps(sidecar_dict(original)))  # through JSON text
    assert apply_sidecar(loaded, data) == original


@settings(max_examples=100, deadline=None)
@given(images())
def test_hex_loads_back_to_the_same_words_and_code_map(original):
    loaded = image_from_hex_text(hex_text(original), entry=original.entry)
    assert loaded.words == original.words and loaded.is_code == original.is_code
    if original.words:
        assert loaded.width == original.width


def test_files_round_trip_with_the_sidecar_found_beside_the_image(tmp_path, image):
    write_bin(image, tmp_path / "prog.bin")
    write_sidecar(image, sidecar_path(tmp_path / "prog.bin"))
    assert sidecar_path(tmp_path / "prog.bin").name == "prog.bin.json"
    assert read_bin(tmp_path / "prog.bin") == image
    bare = read_bin(tmp_path / "prog.bin", sidecar=None)
    assert bare.words == image.words and bare.symbols == {} and bare.entry == image.entry
    write_hex(image, tmp_path / "prog.hex")
    write_sidecar(image, tmp_path / "prog.hex.json")
    assert read_hex(tmp_path / "prog.hex") == image


def test_the_bin_header_is_magic_version_width_entry_finish_count(image):
    data = bin_bytes(image)
    assert struct.unpack_from("<4sHHIII", data) == (b"RVIM", 1, 32, 0, 4, 6)
    words = data[20:20 + 4 * 6]
    assert words[:4] == bytes.fromhex("00000088")  # START, little-endian
    assert data[20 + 24:] == bytes([0b00011111])  # five code words, then the DATA cell
    assert len(data) == 20 + 24 + 1


def test_a_64_bit_image_stores_8_bytes_per_word_and_no_finish_as_all_ones():
    image = assemble(";; pendulum pal file\n.width 64\nstart\ndata -1\n")
    data = bin_bytes(image)
    assert struct.unpack_from("<4sHHIII", data)[2:] == (64, 0, 0xFFFFFFFF, 2)
    assert data[28:36] == b"\xff" * 8


def test_hex_lines_are_a_tag_digit_then_w_over_4_hex_digits(image):
    assert hex_text(image).splitlines() == [
        "188000000",   # START
        "10c402345",   # ADDI $2 0x2345
        "1a4410001",   # ADDIS $2 1 1
        "10c40ffff",   # ADDI $2 -1
        "18c000000",   # FINISH
        "0fffffffd",   # DATA -3
    ]
    wide = assemble(";; pendulum pal file\n.width 64\nstart\nfinish\ndata -2\n")
    assert hex_text(wide).splitlines()[2] == "0fffffffffffffffe"
    assert hex_text(wide).splitlines()[0] == "10000000088000000"


def test_the_sidecar_holds_width_entry_finish_symbols_names_and_lines(image):
    data = sidecar_dict(image)
    assert data["width"] == 32 and data["entry"] == 0 and data["finish"] == 4
    assert data["symbols"] == {"loop": 1, "cell": 5, "end": 6}
    assert data["names"]["x"] == {"role": "input", "register": 1, "address": None,
                                  "type": "fixed", "default": 0x18000}
    assert data["names"]["y"]["address"] == 5 and data["names"]["y"]["type"] == "int"
    assert data["lines"]["2"] == {"file": "prog.pal", "line": 5, "column": 9,
                                  "text": "loop:   li $2 0x12345"}
    assert set(data["lines"]) == {str(pc) for pc in range(6)}


@pytest.mark.parametrize("data, message", [
    (b"RVI", "too short"),
    (b"XXXX" + bytes(16), "bad magic"),
    (struct.pack("<4sHHIII", b"RVIM", 9, 32, 0, 0, 0), "format version 9"),
    (struct.pack("<4sHHIII", b"RVIM", 1, 16, 0, 0, 0), "word width 16"),
    (struct.pack("<4sHHIII", b"RVIM", 1, 32, 0, 0, 2) + bytes(4), "but a 2-word image"),
])
def test_malformed_bin_files_are_refused_with_the_reason(data, message):
    with pytest.raises(ImageFormatError, match=message):
        image_from_bin_bytes(data)


def test_a_sidecar_for_another_image_is_refused(tmp_path, image):
    other = assemble(";; pendulum pal file\nstart\nfinish\n")
    write_bin(other, tmp_path / "a.bin")
    write_sidecar(image, tmp_path / "a.bin.json")
    with pytest.raises(ImageFormatError, match="the sidecar is for another image"):
        read_bin(tmp_path / "a.bin")
    (tmp_path / "b.json").write_text("{}")
    with pytest.raises(ImageFormatError, match="not a revasm sidecar"):
        read_sidecar(tmp_path / "b.json")


@pytest.mark.parametrize("text, message", [
    ("1234\n", "4 hex digits"), ("288000000\n", "tag '2'"), ("18800000g\n", "not hexadecimal"),
    ("188000000\n10000000088000000\n", "a 64-bit word in a 32-bit image"),
])
def test_malformed_hex_files_are_refused_with_the_line(text, message):
    with pytest.raises(ImageFormatError, match=message):
        image_from_hex_text(text)


def test_the_listing_shows_every_address_with_its_word_and_source(image):
    text = listing_text(image)
    assert text.splitlines() == [
        ";; revasm listing of prog.pal: W = 32, 6 words, entry 0, finish 4",
        ";;  addr  word       line  source",
        "       0  88000000      4          start",
        "       1  0c402345      5  loop:   li $2 0x12345",
        "       2  a4410001         + ADDIS $2 1 1",
        "       3  0c40ffff      6          addi $2 -1",
        "       4  8c000000      7          finish",
        "       5  fffffffd      8  cell:   data -3",
        "       6                   end:",
    ]


@settings(max_examples=50, deadline=None)
@given(images())
def test_the_listing_contains_every_address(original):
    lines = listing_text(original).splitlines()
    listed = {int(line.split()[0]) for line in lines[2:] if line.split() and
              line.split()[0].isascii() and line.split()[0].isdigit()}
    assert set(range(len(original.words))) <= listed


def test_a_listing_without_a_source_map_shows_the_disassembly(image):
    from dataclasses import replace
    text = listing_text(replace(image, locations={}))
    assert "       2  a4410001         ADDIS $2 1 1" in text
    assert "       5  fffffffd         DATA -3" in text
    assert "loop:" in text
