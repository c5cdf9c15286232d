"""The reversible debugger: a session that runs the reference machine forward and backward.

``Session`` (session.py) is the core, with no user interface; ``commands.py`` reads the
debugger's command language, ``repl.py`` is the interactive terminal, ``dap.py`` the
Debug Adapter Protocol server for editors, ``pal_lexer.py`` the Pygments lexer of PAL.
docs/debugger.md documents all of it.
"""
from .breakpoints import Breakpoint, DebugError, Watchpoint
from .session import Frame, Session, Stop
from .source_map import SourceMap

__all__ = ["Breakpoint", "DebugError", "Frame", "Session", "SourceMap", "Stop", "Watchpoint"]
