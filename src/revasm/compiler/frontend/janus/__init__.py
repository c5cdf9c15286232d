"""Janus, the classic reversible language, as a second front end (docs/janus.md).

The dialect is the jana interpreter's (``procedure main()`` with its variables,
``call``/``uncall``, ``if ... fi``, ``from ... until``, ``local``/``delocal``, stacks):
``parser`` reads it into ``tree``, ``checks`` applies the static rules,
``interpreter`` runs it forward and backward (the oracle), and ``lowering`` turns it
into the same reversible IR as the Python eDSL, which the one backend compiles.
"""
from .checks import check_program
from .parser import parse_janus, parse_janus_file

__all__ = ["check_program", "parse_janus", "parse_janus_file"]
