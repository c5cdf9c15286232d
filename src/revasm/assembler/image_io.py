"""Image files: raw binary, hex for RTL memory init, and the JSON sidecar.

Formats (docs/image.md has the full description):

* **bin** -- a 20-byte little-endian header (magic ``RVIM``, format version,
  width, entry, finish, word count), the words at W/8 bytes each, then a code
  bitmap (bit ``i % 8`` of byte ``i // 8`` is set when address ``i`` holds code).
* **hex** -- one line per address: a tag digit (1 code, 0 data) and the word in
  W/4 hex digits, so ``$readmemh`` loads it into a (W+4)-bit-wide memory whose
  bit W is the code flag.
* **sidecar** -- JSON beside the image (``prog.bin`` -> ``prog.bin.json``):
  width, entry, finish, symbols, declared names and the PC -> source map.
"""
from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

from revasm.isa.fixed_point import WIDTHS, widths_text

from .files import write_atomic
from .image import DeclaredName, Image, SourceLocation, SourceOrigin, require_encodable

MAGIC = b"RVIM"
FORMAT_VERSION = 1
#: magic, format version, width, entry, finish, word count
HEADER = struct.Struct("<4sHHIII")
NO_FINISH = 0xFFFFFFFF
SIDECAR_FORMAT = "revasm-image-sidecar"
SIDECAR_VERSION = 1
AUTO = "auto"


class ImageFormatError(ValueError):
    """A file that is not a well-formed image, hex file or sidecar."""


# --- raw binary ---------------------------------------------------------------

def bin_bytes(image: Image) -> bytes:
    """The raw binary image; raises :class:`~revasm.assembler.image.NotEncodable` for an
    image with a wide immediate (PendVM-compatibility mode), which no word can hold."""
    require_encodable(image, "a .bin image")
    count = len(image.words)
    finish = NO_FINISH if image.finish is None else image.finish
    parts = [HEADER.pack(MAGIC, FORMAT_VERSION, image.width, image.entry, finish, count)]
    size = image.width // 8
    parts.extend(word.to_bytes(size, "little") for word in image.words)
    bitmap = bytearray((count + 7) // 8)
    for address, code in enumerate(image.is_code):
        if code:
            bitmap[address // 8] |= 1 << (address % 8)
    parts.append(bytes(bitmap))
    return b"".join(parts)


def image_from_bin_bytes(data: bytes, source_file: str = "<image>") -> Image:
    """An image from raw binary bytes (no symbols or source map: see the sidecar)."""
    if len(data) < HEADER.size:
        raise ImageFormatError(f"too short for an image header ({len(data)} bytes, "
                               f"need {HEADER.size})")
    magic, version, width, entry, finish, count = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ImageFormatError(f"bad magic {magic!r} (a revasm image starts with {MAGIC!r})")
    if version != FORMAT_VERSION:
        raise ImageFormatError(f"image format version {version}; this revasm reads "
                               f"version {FORMAT_VERSION}")
    if width not in WIDTHS:
        raise ImageFormatError(f"word width {width} (must be {widths_text()})")
    size = width // 8
    expected = HEADER.size + count * size + (count + 7) // 8
    if len(data) != expected:
        raise ImageFormatError(f"{len(data)} bytes, but a {count}-word image at W = {width} "
                               f"has {expected}")
    body = data[HEADER.size:]
    words = [int.from_bytes(body[i * size:(i + 1) * size], "little") for i in range(count)]
    bitmap = body[count * size:]
    is_code = [bool(bitmap[i // 8] >> (i % 8) & 1) for i in range(count)]
    return Image(width=width, words=words, is_code=is_code, entry=entry,
                 finish=None if finish == NO_FINISH else finish, source_file=source_file)


def write_bin(image: Image, path: str | Path) -> None:
    """Write the raw binary image atomically (the old file stays whole on a failure)."""
    write_atomic(path, bin_bytes(image))


def read_bin(path: str | Path, sidecar: str | Path | dict | None = AUTO) -> Image:
    """Load a raw binary image, with its sidecar's metadata.

    ``sidecar`` is a path, an already-loaded dict, None (no sidecar), or
    ``"auto"``: use ``<path>.json`` if that file exists.
    """
    path = Path(path)
    image = image_from_bin_bytes(path.read_bytes(), source_file=str(path))
    return _with_sidecar(image, path, sidecar)


def _with_sidecar(image: Image, path: Path, sidecar: str | Path | dict | None,
                  has_header: bool = True) -> Image:
    if sidecar == AUTO:
        candidate = sidecar_path(path)
        sidecar = candidate if candidate.exists() else None
    if sidecar is None:
        return image
    data = sidecar if isinstance(sidecar, dict) else read_sidecar(sidecar)
    return apply_sidecar(image, data, has_header)


# --- hex ------------------------------------------------------------------------

def hex_text(image: Image) -> str:
    """One line per address: tag digit (1 code, 0 data) then W/4 hex digits; raises
    :class:`~revasm.assembler.image.NotEncodable` as :func:`bin_bytes` does."""
    require_encodable(image, "a .hex image")
    digits = image.width // 4
    return "".join(f"{int(code)}{word:0{digits}x}\n"
                   for word, code in zip(image.words, image.is_code))


def write_hex(image: Image, path: str | Path) -> None:
    """Write the hex image atomically."""
    write_atomic(path, hex_text(image))


def image_from_hex_text(text: str, entry: int = 0, source_file: str = "<hex>") -> Image:
    """Words and code map from a hex file (which has no entry: give it, or use a sidecar)."""
    words: list[int] = []
    is_code: list[bool] = []
    width = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        line_width = (len(line) - 1) * 4
        if line_width not in WIDTHS:
            expected = " or ".join(f"{w // 4 + 1} (W = {w})" for w in WIDTHS)
            raise ImageFormatError(f"line {number}: {len(line)} hex digits; expected {expected}")
        if width is not None and line_width != width:
            raise ImageFormatError(f"line {number}: a {line_width}-bit word in a {width}-bit "
                                   "image")
        width = line_width
        if line[0] not in "01":
            raise ImageFormatError(f"line {number}: tag {line[0]!r} (1 = code, 0 = data)")
        try:
            words.append(int(line[1:], 16))
        except ValueError:
            raise ImageFormatError(f"line {number}: {line!r} is not hexadecimal") from None
        is_code.append(line[0] == "1")
    return Image(width=width or 32, words=words, is_code=is_code, entry=entry,
                 source_file=source_file)


def read_hex(path: str | Path, sidecar: str | Path | dict | None = AUTO) -> Image:
    """Load a hex image; the sidecar (``<path>.json``) supplies entry, finish and symbols."""
    path = Path(path)
    image = image_from_hex_text(_text(path, "hex image"), source_file=str(path))
    return _with_sidecar(image, path, sidecar, has_header=False)


def _text(path: Path, what: str) -> str:
    """A text file's contents; an :class:`ImageFormatError` at the line of a byte that is
    not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImageFormatError(f"{path}:{line}: not a {what}: byte {data[exc.start]:#04x} is "
                               "not UTF-8 text") from None


# --- sidecar ----------------------------------------------------------------------

def sidecar_path(image_path: str | Path) -> Path:
    """Where an image's sidecar lives: ``prog.bin`` -> ``prog.bin.json``."""
    image_path = Path(image_path)
    return image_path.with_name(image_path.name + ".json")


def sidecar_dict(image: Image) -> dict[str, Any]:
    """The image's metadata as JSON-ready data."""
    return {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "source_file": image.source_file,
        "width": image.width,
        "entry": image.entry,
        "finish": image.finish,
        "length": len(image.words),
        "symbols": dict(image.symbols),
        "names": {
            name: {"role": d.role, "register": d.register, "address": d.address,
                   "type": "fixed" if d.fixed else "int", "default": d.default,
                   **({"domain": list(d.domain)} if d.domain is not None else {})}
            for name, d in image.names.items()},
        "lines": {
            str(pc): {"file": loc.file, "line": loc.line, "column": loc.column,
                      "text": loc.text,
                      **({"origin": _origin_dict(loc.origin)} if loc.origin else {})}
            for pc, loc in sorted(image.locations.items())},
    }


def sidecar_text(image: Image) -> str:
    """The JSON sidecar's text."""
    return json.dumps(sidecar_dict(image), indent=1) + "\n"


def write_sidecar(image: Image, path: str | Path) -> None:
    """Write the JSON sidecar atomically."""
    write_atomic(path, sidecar_text(image))


def read_sidecar(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(_text(Path(path), "JSON sidecar"))
    except json.JSONDecodeError as exc:
        raise ImageFormatError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise ImageFormatError(f"{path}: not a revasm sidecar (nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise ImageFormatError(f"{path}: not a revasm sidecar (no \"format\": "
                               f"\"{SIDECAR_FORMAT}\")")
    return data


def apply_sidecar(image: Image, data: dict[str, Any], has_header: bool = True) -> Image:
    """The image with the sidecar's symbols, names and source map.

    The sidecar must describe this image: same width and length, and, when
    the image has a header that records them (a bin file; a hex file has
    none), the same entry and finish.
    """
    if data.get("version") != SIDECAR_VERSION:
        raise ImageFormatError(f"sidecar version {data.get('version')}; this revasm reads "
                               f"version {SIDECAR_VERSION}")
    checked: list[tuple[str, int | None]] = [("width", image.width), ("length", len(image.words))]
    if has_header:
        checked += [("entry", image.entry), ("finish", image.finish)]
    for key, mine in checked:
        if data.get(key) != mine:
            raise ImageFormatError(f"the sidecar is for another image: {key} "
                                   f"{data.get(key)}, the image has {mine}")
    try:
        names = {
            _str(name, "a name"): _declared(_str(name, "a name"), d, image.width)
            for name, d in _dict(data.get("names", {}), "names").items()}
        locations = {
            _int(pc, "a pc", 0): SourceLocation(
                _str(_dict(loc, "a line")["file"], "file"),
                _int(loc["line"], "line", 1), _int(loc.get("column", 1), "column", 1),
                _str(loc.get("text", ""), "text"),
                _origin(loc["origin"]) if loc.get("origin") is not None else None)
            for pc, loc in _dict(data.get("lines", {}), "lines").items()}
        symbols = {_str(name, "a symbol"): _int(address, "a symbol's address", 0)
                   for name, address in _dict(data.get("symbols", {}), "symbols").items()}
        entry = _int(data.get("entry", image.entry), "entry", 0)
        finish = data.get("finish", image.finish)
        finish = None if finish is None else _int(finish, "finish", 0)
        source_file = _str(data.get("source_file", image.source_file), "source_file")
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ImageFormatError):
            raise
        raise ImageFormatError(f"malformed sidecar: {exc!r}") from None
    return replace(image, entry=entry, finish=finish, symbols=symbols,
                   locations=locations, names=names, source_file=source_file)


def _origin_dict(origin: SourceOrigin) -> dict[str, Any]:
    """A compiled instruction's user-source origin as the sidecar stores it."""
    return {"file": origin.file, "line": origin.line, "column": origin.column,
            "text": origin.text, "note": origin.note, "check": origin.check,
            "role": origin.role}


def _origin(data: Any) -> SourceOrigin:
    origin = _dict(data, "an origin")
    return SourceOrigin(_str(origin["file"], "file"), _int(origin["line"], "line", 1),
                        _int(origin.get("column", 1), "column", 1),
                        _str(origin.get("text", ""), "text"), _str(origin.get("note", ""), "note"),
                        _str(origin.get("check", ""), "check"),
                        _str(origin.get("role", ""), "role"))


_ROLES = ("input", "output", "loss", "name")


def _declared(name: str, d: Any, width: int) -> DeclaredName:
    """One entry of the sidecar's ``names``, checked: where it lives, its type and default."""
    d = _dict(d, f"name {name!r}")
    role = d["role"]
    if role not in _ROLES:
        raise ImageFormatError(f"malformed sidecar: name {name!r} has role {role!r} (one of "
                               f"{', '.join(_ROLES)})")
    register = d.get("register")
    address = d.get("address")
    if (register is None) == (address is None):
        raise ImageFormatError(f"malformed sidecar: name {name!r} needs a register or an "
                               "address (one of them)")
    if register is not None:
        register = _int(register, f"{name!r}'s register", 0, 31)
    if address is not None:
        address = _int(address, f"{name!r}'s address", 0)
    kind = d.get("type", "fixed")
    if kind not in ("fixed", "int"):
        raise ImageFormatError(f"malformed sidecar: name {name!r} has type {kind!r} (fixed "
                               "or int)")
    default = d.get("default")
    if default is not None:
        default = _int(default, f"{name!r}'s default", -(1 << (width - 1)),
                       (1 << width) - 1) & ((1 << width) - 1)
    return DeclaredName(name, role, register, address, kind == "fixed", default,
                        _domain(d.get("domain")))


def _dict(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise ImageFormatError(f"malformed sidecar: {what} must be a JSON object, not "
                               f"{json.dumps(value)[:40]}")
    return value


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ImageFormatError(f"malformed sidecar: {what} must be a string, not "
                               f"{json.dumps(value)[:40]}")
    return value


def _int(value: Any, what: str, low: int, high: int | None = None) -> int:
    """A whole number in low..high (JSON keys are strings: "12" is 12)."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
            high is not None and value > high):
        where = f"{low}..{high}" if high is not None else f">= {low}"
        raise ImageFormatError(f"malformed sidecar: {what} must be a whole number {where}, "
                               f"not {json.dumps(value)[:40]}")
    return value


def _domain(value: Any) -> tuple[int, int] | None:
    """A sidecar's ``"domain": [low, high]`` (absent: None)."""
    if value is None:
        return None
    low, high = value
    return int(low), int(high)
