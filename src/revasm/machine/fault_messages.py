"""The words every engine gives for its control faults: one wording, in the programmer's terms.

A fault's message names lines, not only PCs ("jump from line 5 (pc 2) landed on line 8
(pc 5), which does not catch it: ..."), so every engine -- the reference, vector and
compiled engines -- builds its messages here from the image's PC -> source-line map.
"""
from __future__ import annotations

from revasm.assembler.image import Image

from .next_pc import previous_pc


def where(image: Image, pc: int) -> str:
    """``line L (pc P)``, ``FILE:L (pc P)`` at a compiled program's user line, or ``pc P``
    where the image has no source line."""
    location = image.location(pc)
    if location is not None and location.origin is not None:  # compiled: the user's line
        name = location.origin.file.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{name}:{location.origin.line} (pc {pc})"
    return f"line {location.line} (pc {pc})" if location else f"pc {pc}"


def step_limit_message(image: Image, max_steps: int | None, pc: int) -> str:
    """The message of a ``step-limit`` fault: the limit and where the run was."""
    return f"the run did not halt within {max_steps} steps; it was at {where(image, pc)}"


def illegal_message(image: Image, illegal: str | None, pc: int, br: int,
                    direction: int) -> tuple[str, dict]:
    """An illegal cell (``illegal``: its reason; None for a PC outside the program), reached
    by a jump when ``br`` is not 0: the message and the fault's jump fields."""
    if illegal is None:
        what = f"pc {pc} is outside the program (0..{len(image) - 1})"
    else:
        what = f"{where(image, pc)} {illegal}"
    extra: dict = {}
    if br:
        source = previous_pc(pc, br, direction)
        what += f" (reached by the jump from {where(image, source)})"
        extra = dict(landing_pc=pc, jump_source_pc=source,
                     jump_source_location=image.location(source))
    elif illegal is None:
        what += " (the program ran off its end: no FINISH/START stopped it)"
    return what, extra


def uncaught_jump_message(image: Image, landing: int, br_in: int, direction: int,
                          br_after: int) -> tuple[str, dict]:
    """A jump whose landing instruction left BR = ``br_after`` != 0: the message and the
    fault's jump fields (the jump moved the PC by BR·DIR from its source)."""
    source = previous_pc(landing, br_in, direction)
    message = (f"jump from {where(image, source)} landed on {where(image, landing)}, which "
               f"does not catch it: BR is still {br_after} after the landing instruction")
    return message, dict(landing_pc=landing, jump_source_pc=source,
                         jump_source_location=image.location(source))


def overflow_detail(format_name: str) -> str:
    """The detail of an ``overflow`` fault (a strict machine's overflow event)."""
    return (f"the exact result does not fit the word ({format_name}): an overflow event, "
            "and the machine is strict")
