"""The reversible debugger: a session that runs the reference machine forward and backward.

``Timeline`` (timeline.py) moves the machine either way, ``Session`` (session.py) adds the
stops and the values: the core, with no user interface; ``commands.py`` reads the
debugger's command language, ``repl.py`` is the interactive terminal, ``dap.py`` the
Debug Adapter Protocol server for editors, ``pal_lexer.py`` the Pygments lexer of PAL.
docs/debugger.md documents all of it.
"""
from .breakpoints import Breakpoint, DebugError, Watchpoint
from .session import Session, Stop
from .source_map import SourceMap
from .timeline import Frame, Timeline

__all__ = ["Breakpoint", "DebugError", "Frame", "Session", "SourceMap", "Stop", "Timeline",
           "Watchpoint"]
