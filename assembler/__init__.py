"""The assembler: PAL text to program images, and back.

``assemble``/``assemble_file`` turn PAL source into an :class:`Image`;
``disassemble`` turns an image back into PAL text that re-assembles to the
same words; ``image_io`` and ``listing`` write and read the image formats.
"""
from .assemble import assemble, assemble_file
from .diagnostics import AssemblyError, Diagnostic
from .image import DeclaredName, Image, SourceLocation

__all__ = [
    "AssemblyError", "DeclaredName", "Diagnostic", "Image", "SourceLocation", "assemble",
    "assemble_file",
]
