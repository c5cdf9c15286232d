"""The co-processor's design: one Amaranth component per unit, generated from the ISA table.

Everything that elaborates into the core lives here (and only that): the decoder, the ALU
(``semantics`` translates the table's templates into its datapath), the multiply/divide,
function and gradient units, the memories, register files, control unit and host port,
their parameters, and ``core.Core`` wiring them.  It imports nothing else of the RTL.
"""
