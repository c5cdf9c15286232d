"""A lane's status: running, halted (at FINISH, or at START running backward),
faulted, or idle (made, not yet run).  ``VectorMachine.status`` holds one per lane."""
from __future__ import annotations

RUNNING, HALTED, FAULTED, IDLE = 0, 1, 2, 3
