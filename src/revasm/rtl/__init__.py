"""The co-processor in Amaranth 0.5: one component per unit, generated from the ISA table.

``core.Core`` wires the units; ``cosim`` runs it in lockstep with the reference
simulator; ``formal`` proves per-instruction reversibility with sby + z3;
``synth`` gives iCE40 and ECP5 estimates (``synth_targets`` names the parts).
Needs the ``rtl`` extra (docs/rtl.md).
"""
