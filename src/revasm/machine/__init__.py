"""The machine's own concepts, shared by every engine, the RTL, the debugger and the reports.

What a running program is, independent of how an engine runs it:

* ``faults.py`` -- :class:`MachineFault` (the one exception a program raises) and
  :data:`FAULT_KINDS`; ``fault_messages.py`` -- their wording, one for every engine;
  ``fault_json.py`` -- a fault as JSON;
* ``snapshot.py`` -- :class:`Snapshot`, the architectural state as one comparable value;
* ``trace.py`` -- :class:`TraceRecord`, what one executed instruction did;
* ``next_pc.py`` -- the next-PC rule (docs/simulator.md "Execution model"), where the
  machine goes after each instruction.

Layering (``tests/test_import_graph.py``): this package imports only ``revasm.isa`` and
``revasm.assembler``; the simulators, the RTL, the debugger, the reports, the command line
and the Python API import it.
"""
from .fault_json import fault_json
from .faults import FAULT_KINDS, MachineFault
from .next_pc import halts, next_pc, previous_pc
from .snapshot import Snapshot
from .trace import TraceRecord, format_trace_line

__all__ = ["FAULT_KINDS", "MachineFault", "Snapshot", "TraceRecord", "fault_json",
           "format_trace_line", "halts", "next_pc", "previous_pc"]
