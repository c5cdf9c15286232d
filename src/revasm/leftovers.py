"""What a command leaves for the process's end: a large result freed by the exit itself.

A 10^5-statement compilation leaves ~10^7 small objects (the program's instructions, its
source map, the image); freeing them one by one when the command returns took 0.6 s of a
15 s ``revasm compile``, and the interpreter would free what is still held once more as it
shuts down.  A command hands such a result to :func:`keep`.  When the process's own entry
point runs the command (``launch.py`` calls :func:`end_here` first), the result is held,
and the entry point, once the command has written and flushed everything, ends the process
with ``os._exit``: the operating system takes the memory back at once.  A command run
inside another program (a test's ``CliRunner``, the API) keeps nothing and frees as usual.
Imports nothing (``launch.py`` reads it before anything loads).
"""
from __future__ import annotations

_kept: list[object] = []
_ending_here = [False]


def end_here() -> None:
    """This process ends when its command does (``launch.py``): :func:`keep` holds."""
    _ending_here[0] = True


def keep(value: object) -> None:
    """Hold ``value`` until the process ends, when the process ends with the command; and
    then take every object made so far out of the cyclic collector's sight (``gc.freeze``):
    a command that made millions with the collector paused would otherwise have its first
    collection after the pause walk them all (1.5 s after a 10^5-statement compilation),
    for garbage the exit frees anyway."""
    if _ending_here[0]:
        import gc  # (built in: no import window for Ctrl-C)

        _kept.append(value)
        gc.freeze()


def kept() -> bool:
    """Whether a command of this process kept a result for its end."""
    return bool(_kept)
