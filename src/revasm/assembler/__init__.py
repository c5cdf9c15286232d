"""The assembler: PAL text to program images, and back.

``assemble``/``assemble_file`` turn PAL source into an :class:`Image`;
``disassemble`` turns an image back into PAL text that re-assembles to the
same words; ``image_io`` and ``listing`` write and read the image formats.
"""
from .assemble import assemble, assemble_file
from .diagnostics import AssemblyError, Diagnostic
from .disassemble import disassemble, disassemble_word
from .image import DeclaredName, Image, SourceLocation, SourceOrigin
from .image_io import (
    ImageFormatError,
    apply_sidecar,
    bin_bytes,
    hex_text,
    image_from_bin_bytes,
    image_from_hex_text,
    read_bin,
    read_hex,
    read_sidecar,
    sidecar_dict,
    sidecar_path,
    write_bin,
    write_hex,
    write_sidecar,
)
from .listing import listing_text, write_listing

__all__ = [
    "AssemblyError", "DeclaredName", "Diagnostic", "Image", "ImageFormatError", "SourceLocation",
    "SourceOrigin",
    "apply_sidecar", "assemble", "assemble_file", "bin_bytes", "disassemble", "disassemble_word",
    "hex_text", "image_from_bin_bytes", "image_from_hex_text", "listing_text", "read_bin",
    "read_hex", "read_sidecar", "sidecar_dict", "sidecar_path", "write_bin", "write_hex",
    "write_listing", "write_sidecar",
]
