"""What the front end's static checks proved about a module, for the backend.

The checks (``compiler/frontend/checks.py``) fill a :class:`Proofs`; the lowering
(``compiler/backend/lowering.py``) reads it to drop the runtime guards it makes redundant.
It lives with the IR, which both sides share, so the backend never imports the front end.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import nodes as ir


@dataclass
class Proofs:
    """What the checks proved, for the backend to drop runtime guards it makes redundant.

    ``proven``: (function, ancilla, line, column) of every free whose value the
    symbolic proof establishes, in every place the statement occurs (forward, or
    inverted by ~routine / ``with inverse()``); ``unproven``: the same keys for frees
    it does not (``checked=True``, or no matching allocation), and ``unproven_names``
    (function, ancilla) for ancillas with any such free, whose guards stay.
    """

    proven: set = field(default_factory=set)
    unproven: set = field(default_factory=set)
    unproven_names: set = field(default_factory=set)
    #: function -> the indices of the parameters it may change (``written_params``)
    written: dict[str, set[int]] = field(default_factory=dict)

    def free_is_proven(self, function: str, s: ir.Free) -> bool:
        key = (function, s.name, s.pos.line, s.pos.column)
        return not s.checked and key in self.proven and key not in self.unproven

    def alloc_is_proven(self, function: str, s: ir.Alloc) -> bool:
        return not s.checked and (function, s.name) not in self.unproven_names and \
            any(k[:2] == (function, s.name) for k in self.proven)
