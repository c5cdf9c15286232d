"""Checks of the co-processor's design against the table and the reference simulator.

Lockstep co-simulation (``cosim``, on Amaranth's simulator or a Verilator model,
``verilator`` and ``harness/``), the formal proofs per instruction (``formal``, its
specification side ``table_rendering``) and per unit (``unit_proofs``, ``unit_exhaustive``),
the registry of every proof (``proof_registry``), and the core's waveforms from a reference
run (``waveform``).  Imports :mod:`revasm.rtl.hardware`, never :mod:`revasm.rtl.synthesis`.
"""
