"""The co-processor in Amaranth 0.5, in three parts by job, each importing only those below it.

- :mod:`revasm.rtl.hardware`: the design itself -- one component per unit, generated from
  the ISA table; ``hardware.core.Core`` wires the units.
- :mod:`revasm.rtl.verification`: checks of the design -- ``cosim`` runs it in lockstep
  with the reference simulator (on Amaranth's simulator or Verilator, ``verilator``),
  ``formal``/``unit_proofs``/``unit_exhaustive`` prove it (``proof_registry`` lists every
  proof), ``waveform`` writes the core's signals from a reference run.
- :mod:`revasm.rtl.synthesis`: iCE40 and ECP5 estimates (``synth``; ``synth_targets``
  names the parts; ``area`` attributes LUTs to registers).

Verification and synthesis import the hardware, never the reverse, and never each other;
:mod:`revasm.rtl.tools` (where the outside programs are and what they cache) serves both.
Needs the ``rtl`` extra (docs/rtl.md).
"""
