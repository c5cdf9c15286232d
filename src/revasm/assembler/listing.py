"""The listing: every address with its word in hex and the source line it came from.

::

    ;; revasm listing of fib.pal: W = 32, 16 words, entry 0, finish 14
    ;;  addr  word          line  source
         0  88000000         3  start
         1  0c400001         4          addi $2 1         ; b = 1

Words beyond the first of a multi-word line (an ``LI`` expansion) show their
disassembly after ``+``; an image without a source map shows the disassembly
of every word.
"""
from __future__ import annotations

from pathlib import Path

from revasm.isa.fixed_point import word_format

from .disassemble import disassemble_word
from .files import write_atomic
from .image import Image


def listing_text(image: Image) -> str:
    digits = image.width // 4
    finish = "none" if image.finish is None else str(image.finish)
    lines = [f";; revasm listing of {image.source_file}: W = {image.width}, "
             f"{len(image.words)} words, entry {image.entry}, finish {finish}",
             f";; {'addr':>5}  {'word':<{digits}}  {'line':>5}  source"]
    fmt = word_format(image.width)
    by_address: dict[int, list[str]] = {}
    for name, address in image.symbols.items():
        by_address.setdefault(address, []).append(name)
    labels = {address: names[0] for address, names in by_address.items()}
    previous_line = None
    for pc, (word, code) in enumerate(zip(image.words, image.is_code)):
        location = image.locations.get(pc)
        text = location.text if location else ""
        for name in by_address.get(pc, ()):
            if f"{name}:" not in text:
                lines.append(f"{'':>{digits + 19}}{name}:")
        if location is None:
            number = ""
            text = disassemble_word(word, pc, labels) if code else f"DATA {fmt.signed(word)}"
        elif (location.file, location.line) == previous_line:
            number = ""
            text = "+ " + disassemble_word(word, pc, labels)
        else:
            number = str(location.line)
        previous_line = (location.file, location.line) if location else None
        lines.append(f"{pc:>8}  {word:0{digits}x}  {number:>5}  {text}".rstrip())
    for name in by_address.get(len(image.words), ()):
        lines.append(f"{len(image.words):>8}  {'':<{digits}}  {'':>5}  {name}:")
    return "\n".join(lines) + "\n"


def write_listing(image: Image, path: str | Path) -> None:
    """Write the listing atomically."""
    write_atomic(path, listing_text(image))
